"""Benchmark of tables: the memory of one table, and the delay from a click in one browser to the change in another.

``python -m apps._tables_bench [--clicks N] [--tables N] [--games ...]``, per game played at tables. The memory
is measured with ``tracemalloc`` over ``--tables`` tables made in a registry (each played a few moves), so it is
the Python heap a table holds with no page open, and the server's resident memory grows by about as much. The
delay is measured in real Chromium against a server in this process serving the game's page as ``dojo serve``
does: one browser context makes the table and moves (:data:`apps._browser.TABLE_PLAYS`: for Man-Kzin Wars the
decision that needs no card, or New game once the game is over; for Kung Fu 2100 a decision button of the side
to act, the maker holding both seats; for Kung-Fu Zoo a flick committed, the maker holding both teams), another
is at the table (``--others N``: N others, each timed; every browser runs on this machine's cores, so more of them
time the machine's load as much as the server), and the time runs, on the browser's clock, from the moment the
player's page receives the click until the first animation frame of the other page that shows the move: its new
status, or for a Zoo flick the first frame of the flick playing out on that page's arena (its status changes only
once the flick has stopped, so timing the status would time the animation).

``--shared-work`` measures instead the CPU a Zoo table's pages spend on the odds and the heat map of one aim,
with 1 to 4 pages, worked out once for the table (as served) or by each page (as before).
"""

from __future__ import annotations

import argparse
import gc
import os
import socket
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any


def kzin_moves(session: Any, moves: int = 3) -> None:
    """Three decisions that need no card (the rules engine's own commands: no page, no advisor)."""
    for _move in range(moves):
        if session.decision() is None:
            return
        session.fall_back() if session.decision() == "invasion" else session.pass_turn()


def kf2100_moves(session: Any) -> None:
    """The Terminators wait at their entries (the rules engine's own commands)."""
    for fid, entry in (("T1", "disposal"), ("T2", "disposal"), ("T3", "loo")):
        session.wait_at(fid, entry)


ENGINE_MOVES: dict[str, Callable[[Any], None]] = {"kzin": kzin_moves, "kf2100": kf2100_moves}
"""A few cheap moves per game, so a table's figure includes a played log (a game without one is measured as dealt)."""


def table_memory(game: str, n: int) -> dict[str, float]:
    """Heap bytes per table of ``game`` over ``n`` tables (made, then played a few moves each)."""
    from apps._tables import TABLE_GAMES
    from engine.core.seal import Sealer
    from engine.core.tables import TableRegistry, new_token

    folder = Path(tempfile.mkdtemp(prefix="dojo-tables-"))
    reg = TableRegistry(folder / "tables", {game: TABLE_GAMES[game]}, Sealer.in_folder(folder),
                        max_tables=max(200, n + 1))
    reg.create(game, new_token())  # imports and caches out of the figure
    moves = ENGINE_MOVES.get(game, lambda _s: None)
    gc.collect()
    tracemalloc.start()
    start = tracemalloc.get_traced_memory()[0]
    for _ in range(n):
        moves(reg.create(game, new_token()).session)
    gc.collect()
    used = tracemalloc.get_traced_memory()[0] - start
    tracemalloc.stop()
    files = [p.stat().st_size for p in (folder / "tables").glob("*.json")]
    return {"tables": n, "bytes per table": used / n, "file bytes per table": statistics.mean(files) if files else 0.0}


def zoo_work_cpu(pages: int, shared: bool) -> float:
    """CPU seconds (every thread of this process) that ``pages`` Zoo pages at one table spend on the odds and the
    heat map of one aim, their work shared by the table (as served) or each page's own (as before)."""
    import asyncio

    from apps._tables import TablePage
    from apps.zoo import ZooPage, table_work
    from engine.core.seal import Sealer
    from engine.core.tables import TableRegistry, new_token
    from engine.zoo.table import ZOO_TABLE

    folder = Path(tempfile.mkdtemp(prefix="dojo-tables-"))
    reg = TableRegistry(folder / "tables", {"zoo": ZOO_TABLE}, Sealer.in_folder(folder))
    table = reg.create("zoo", new_token())
    s = table.session
    s.choose_die(s.state.flickable()[0])
    built = [TablePage(new_token(), lambda t, _token, may_act: ZooPage(
        session=t.session, may_act=may_act, background=False, shared=table_work(t) if shared else None),
        table=table) for _ in range(pages)]
    panels = [p.game.odds for p in built]

    async def work() -> None:
        await asyncio.gather(*(o._estimate() for o in panels))
        await asyncio.gather(*(o._map() for o in panels))

    start = time.process_time()
    asyncio.run(work())
    used = time.process_time() - start
    for p in built:
        p.close()
    return used


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def light_kzin_pages() -> Callable[[], Any]:
    """``--light``: Man-Kzin Wars table pages whose advisor and running odds use few rollouts (their own registry)."""
    from dataclasses import replace

    from apps import kzin
    from apps._files import data_dir
    from apps._tables import table_page, use_registry
    from engine.core.seal import Sealer
    from engine.core.tables import TableRegistry
    from engine.kzin.table import KZIN_TABLE

    folder = data_dir()
    use_registry(TableRegistry(folder / "tables", {"kzin": replace(KZIN_TABLE, session_options={
        "advisor_rollouts": 200})}, Sealer.in_folder(folder)))

    def page() -> Any:
        return table_page("kzin", lambda t, _token, may_act: kzin.KzinPage(
            session=t.session, may_act=may_act, secret_seed=True, running_rollouts=100))

    return page


def click_delays(game: str, clicks: int, light: bool = False, alone: bool = False,
                 others: int = 1) -> list[tuple[float, bool]]:
    """Seconds from a click in the player's browser to the first change on another browser's page at the same
    table, with whether that change was a flick starting to play out (else the new status), one per click and other
    browser, for ``game`` (an entry of :data:`apps._browser.TABLE_PLAYS`). ``light``: Man-Kzin Wars pages with few
    rollouts, to see what their background work costs; ``alone``: no other browser, the delay to the change on the
    player's own page (the baseline of one page); ``others``: how many other browsers are at the table (a Zoo
    table of four: 3), each timed, in the order they joined.

    The server runs in this process and serves the game's page as ``dojo serve`` does. Both ends are read from
    the browser's clock: the click when the player's page receives it (:data:`apps._browser.CLICK_CLOCK`), the
    change at the first animation frame of the other page that shows it (:meth:`~apps._browser.TablePlay.
    first_change`), so neither Playwright's own round trips (finding the button, its checks before clicking) nor
    its polling from Python is in the figure."""
    import panel as pn
    from playwright.sync_api import sync_playwright

    from apps._browser import BOARD_READY, CLICK_CLOCK, TABLE_PLAYS, launch
    from apps.server import routes

    play = TABLE_PLAYS[game]
    page = light_kzin_pages() if light and game == "kzin" else routes()[game]
    port = free_port()
    pn.serve({game: page}, port=port, address="127.0.0.1", threaded=True, show=False, verbose=False)
    url = f"http://127.0.0.1:{port}/{game}"
    delays = []
    with sync_playwright() as p:
        browser = launch(p)
        player_context = browser.new_context()
        player_context.add_init_script(CLICK_CLOCK)
        player = player_context.new_page()
        player.goto(url, timeout=120_000)
        player.wait_for_function(BOARD_READY, arg=play.board, timeout=120_000)
        player.wait_for_url(f"**/{game}?table=*", timeout=60_000)
        watching = [player]
        if not alone:
            watching = [browser.new_context().new_page() for _ in range(others)]
            for other in watching:
                other.goto(player.url + play.join, timeout=120_000)
                other.wait_for_function(BOARD_READY, arg=play.board, timeout=120_000)
        if play.prepare is not None:  # the maker takes its seats first: every timed click is then a move
            play.prepare(player)
        status = play.wait_change(player, "")
        for other in watching:
            play.wait_status(other, status)
        for _ in range(clicks):
            player.wait_for_timeout(300)  # the pages settle (their advisor starts) between clicks
            if play.before_move:
                for other in watching:
                    other.evaluate(play.before_move)
            player.evaluate("window.dojoClickAt = null")
            play.move(player)
            # The first change each other browser shows (each page notes its own moment: they are read in turn).
            firsts = [play.first_change(other, status) for other in watching]
            clicked_at = player.evaluate("window.dojoClickAt")
            if clicked_at is None:
                raise RuntimeError(f"{game}: the move's click never reached the player's page")
            delays += [((seen_at - float(clicked_at)) / 1000, shown is None) for shown, seen_at in firsts]
            status = play.wait_change(watching[0], status)  # then the status it settles at (``first`` may be half
            for page in (player, *watching[1:]):  # drawn); every page at it before the next click
                play.wait_status(page, status)
        browser.close()
    pn.state.kill_all_servers()
    return delays


def main(argv: list[str] | None = None) -> int:
    from apps._browser import TABLE_PLAYS
    from apps._tables import TABLE_GAMES

    parser = argparse.ArgumentParser(prog="python -m apps._tables_bench", description=__doc__.splitlines()[0])
    parser.add_argument("--clicks", type=int, default=20, help="clicks timed per game (default 20)")
    parser.add_argument("--games", nargs="+", choices=sorted(TABLE_PLAYS), help="the games (default: all at tables)")
    parser.add_argument("--light", action="store_true", help="Kzin pages with few rollouts (default: as served)")
    parser.add_argument("--alone", action="store_true", help="no other browser: the change on the player's own page")
    parser.add_argument("--others", type=int, default=1, help="other browsers at the table, each timed (default 1; "
                        "a Zoo table of four: 3)")
    parser.add_argument("--tables", type=int, default=50, help="tables whose memory is measured (default 50)")
    parser.add_argument("--shared-work", action="store_true",
                        help="only the CPU of a Zoo table's odds and heat map with 1 to 4 pages, shared or per page")
    args = parser.parse_args(argv)
    os.environ.setdefault("TABLETOP_DOJO_DATA", tempfile.mkdtemp(prefix="dojo-bench-"))
    if args.shared_work:
        zoo_work_cpu(1, True)  # the physics' first run (imports, caches) out of the figures
        for n in range(1, 5):
            own, shared = zoo_work_cpu(n, False), zoo_work_cpu(n, True)
            print(f"zoo: {n} page(s) at a table, the odds and heat map of one aim: {own:.1f} CPU s worked out per "
                  f"page, {shared:.1f} CPU s shared by the table ({100 * (1 - shared / own):.0f}% saved)", flush=True)
        return 0
    games = [g for g in (args.games or sorted(TABLE_PLAYS)) if g in TABLE_GAMES]
    for game in games:
        memory = table_memory(game, args.tables)
        print(f"{game}: {memory['bytes per table'] / 1024:.0f} KB per table in memory (over {args.tables} tables), "
              f"{memory['file bytes per table'] / 1024:.1f} KB per table file", flush=True)
    for game in games:
        timed = click_delays(game, args.clicks, args.light, args.alone, max(1, args.others))
        delays = sorted(d for d, _flick in timed)
        flicks = sum(flick for _d, flick in timed)
        pages = "light pages" if args.light and game == "kzin" else "pages as served"
        where = ("on the player's own page (no other browser)" if args.alone else
                 "in another browser" if args.others <= 1 else f"in each of {args.others} other browsers")
        over = f"{args.clicks} clicks" + (f" ({len(delays)} changes timed)" if len(delays) != args.clicks else "")
        first = (f"; {flicks} of them a flick's animation starting" + (", the rest a new status" if flicks < len(delays)
                 else "")) if flicks else ""
        print(f"{game}: click in one browser to the first change {where}, {pages}, over {over} "
              f"(the browser's clock, click received to first frame showing it{first}): "
              f"median {1000 * statistics.median(delays):.0f} ms, worst {1000 * delays[-1]:.0f} ms "
              f"(best {1000 * delays[0]:.0f} ms)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
