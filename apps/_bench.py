"""Dashboard benchmarks: ``python -m apps._bench`` runs each game app's ``benchmark()``.

The engine's benchmark (``python -m engine.bench``) cannot import the UI, so the server-side cost of
a click, a decision or a bot turn is measured here, on the same Bokeh models a browser is sent.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from collections.abc import Callable

from apps import discover_games


async def _settle() -> None:
    """Let the page's background work (advisor, running odds) finish: it is not part of a click."""
    while len(asyncio.all_tasks()) > 1:
        await asyncio.sleep(0.01)


def _rows(game: str, timings: dict[str, list[float]]) -> list[tuple[str, float]]:
    rows = []
    for what, times in timings.items():
        times.sort()
        rows.append((f"{game} {what} + derived views, median", times[len(times) // 2]))
        rows.append((f"{game} {what} + derived views, worst", times[-1]))
    for name, ms in rows:
        print(f"{name}: {ms:.1f} ms", flush=True)
    return rows


def kzin_benchmark(repeats: int = 30) -> list[tuple[str, float]]:
    """Server-side milliseconds of a card click, and of a decision, with every view that follows (printed).

    The page is rendered to Bokeh models first, so each update goes all the way to the models a browser is
    sent. It runs on an event loop, as a served page does: the advisor and the running odds are scheduled
    there by Panel and run after the click returns, so they are waited for between clicks but not timed."""
    import panel as pn
    from bokeh.document import Document

    from apps.kzin import KzinPage
    from engine.kzin.session import KzinSession

    async def run() -> list[tuple[str, float]]:
        for seed in range(1, 200):
            s = KzinSession(seed=seed, advisor_rollouts=200)
            while s.decision() and not s.state.fleets_in_play():
                s.fall_back() if s.decision() == "invasion" else s.pass_turn()
            if s.decision() and len([v for v in s.table() if v.selectable]) >= 2:
                break
        page = KzinPage(session=s, running_rollouts=200)
        pn.panel(page).get_root(Document())
        await _settle()
        tiles = [v for v in s.table() if v.selectable]
        timings: dict[str, list[float]] = {"card click": [], "decision": []}
        for i in range(repeats):
            v = tiles[i % len(tiles)]
            t = time.perf_counter()
            page.tiles.click(v.kind, v.copy)
            timings["card click"].append(1000 * (time.perf_counter() - t))
            await _settle()
        for _ in range(repeats):
            if s.decision() is None:
                s.new_game(s.seed + 1)
                await _settle()
            t = time.perf_counter()
            page.decisions.decide(s.decisions()[1])  # fall back or pass: the same views follow as after a battle
            timings["decision"].append(1000 * (time.perf_counter() - t))
            await _settle()
        return _rows("kzin", timings)

    return asyncio.run(run())


def zoo_benchmark(repeats: int = 10) -> list[tuple[str, float]]:
    """Server-side milliseconds of the Kung-Fu Zoo page's clicks with every view that follows (printed): a click
    on a die, on a launch spot, the release of a drag (the aim), and Commit (the flick simulated with its
    frames, and the board redrawn, as outside a served page, where nothing animates); then how soon the odds of
    an aimed flick come (the first estimate, all 500) and how long the whole heat map takes, as the page works
    them out (the background work is run here step by step, not timed with the clicks)."""
    import panel as pn
    from bokeh.document import Document

    from apps.zoo import ZooPage
    from apps.zoo import adapter as za
    from engine.zoo.session import ZooSession

    async def run() -> list[tuple[str, float]]:
        s = ZooSession(seed=3, seats=["person", "person"], odds_workers=1)
        page = ZooPage(session=s, background=False)
        pn.panel(page).get_root(Document())
        a = page.arena
        timings: dict[str, list[float]] = {"die click": [], "spot click": [], "drag (aim)": [], "commit": []}
        seconds: dict[str, list[float]] = {"odds, first estimate (50 flicks)": [], "odds, all 500 flicks": [],
                                           "heat map, all cells": []}
        for k in range(repeats):
            s.new_game(3 + k)
            q = s.state.to_move
            a.pan_start(9.5, 150.0)  # the press of the drag: the browser's, nothing to time
            for what, act, where in (("die click", a.tap, za.bench_xy(q, 1)), ("spot click", a.tap, (-10.0, 150.0)),
                                     ("drag (aim)", a.pan_end, (109.5 + 5.0 * k, 150.0 + 10.0 * k))):
                t = time.perf_counter()
                assert act(*where), s.notice.text
                timings[what].append(1000 * (time.perf_counter() - t))
            seen: list[float] = []  # seconds to each estimate shown
            t0 = time.perf_counter()
            watcher = page.odds.param.watch(
                lambda e, seen=seen, t0=t0: seen.append(time.perf_counter() - t0) if e.new is not None else None,
                "odds")
            await page.odds._estimate()
            page.odds.param.unwatch(watcher)
            seconds["odds, first estimate (50 flicks)"].append(seen[0])
            seconds["odds, all 500 flicks"].append(seen[-1])
            t0 = time.perf_counter()
            await page.odds._map()
            seconds["heat map, all cells"].append(time.perf_counter() - t0)
            t = time.perf_counter()
            assert page.flick.commit_flick(), s.notice.text
            timings["commit"].append(1000 * (time.perf_counter() - t))
        rows = _rows("zoo", timings)
        for what, xs in seconds.items():
            xs.sort()
            for name, v in ((f"zoo {what}, median s", xs[len(xs) // 2]), (f"zoo {what}, worst s", xs[-1])):
                print(f"{name}: {v:.3f}", flush=True)
                rows.append((name, v))
        return rows

    return asyncio.run(run())


def kf2100_benchmark(repeats: int = 20) -> list[tuple[str, float]]:
    """Server-side milliseconds of a board click (select a Terminator, move it), of a decision button and of one
    paced bot or dice step, each with every view that follows (printed), on a page rendered to Bokeh models."""
    import panel as pn
    from bokeh.document import Document

    from apps.kf2100 import KungFuPage
    from engine.kf2100.bots import HeuristicBot
    from engine.kf2100.session import KungFuSession

    async def run() -> list[tuple[str, float]]:
        s = KungFuSession(hand_over=True, seed=1, pace=True)
        page = KungFuPage(session=s, served=False)
        pn.panel(page).get_root(Document())
        for fid in ("T1", "T2", "T3"):
            s.wait_at(fid, "disposal")
        page.bots.play_all()
        await _settle()
        timings: dict[str, list[float]] = {"board click": [], "decision": [], "bot step": []}
        helper = HeuristicBot(0)
        enough = {"board click": 2 * repeats, "decision": repeats, "bot step": repeats}
        while any(len(timings[k]) < n for k, n in enough.items()) and not s.state.is_terminal():
            clicks = len(timings["board click"]) < enough["board click"]
            if s.pending:
                t = time.perf_counter()
                s.step()
                timings["bot step"].append(1000 * (time.perf_counter() - t))
            elif clicks and s.state.phase in ("move1", "move2") and s.reachable("T1") and s.state.figs["T1"].mp > 0:
                t = time.perf_counter()
                page.board.click_figure("T1")
                timings["board click"].append(1000 * (time.perf_counter() - t))
                target = sorted(s.reachable())[len(timings["board click"]) % len(s.reachable())]
                t = time.perf_counter()
                page.board.click_square(target)
                timings["board click"].append(1000 * (time.perf_counter() - t))
            else:  # the person's other decisions, as the bot would make them, through the decision panel's path
                choice = helper.choose(s.state, None)
                t = time.perf_counter()
                s.attempt(s.play, choice)
                timings["decision"].append(1000 * (time.perf_counter() - t))
            await _settle()
        return _rows("kf2100", timings)

    return asyncio.run(run())


BENCHMARKS: dict[str, Callable[[], object]] = {"kzin": kzin_benchmark, "kf2100": kf2100_benchmark,
                                              "zoo": zoo_benchmark}
"""The benchmarks kept here, by game; a game app that still carries its own has a ``benchmark()``."""


def main() -> int:
    # The served-page benchmarks play games: their autosaves go to a scratch folder, never over the
    # user's last games.
    before = os.environ.get("TABLETOP_DOJO_DATA")
    with tempfile.TemporaryDirectory(prefix="dojo-bench-") as scratch:
        os.environ["TABLETOP_DOJO_DATA"] = scratch
        try:
            for game in discover_games():
                module = __import__(game.create_app.__module__, fromlist=["benchmark"])
                bench = BENCHMARKS.get(getattr(game, "slug", ""), getattr(module, "benchmark", None))
                if callable(bench):
                    print(f"== {game.title} dashboard ==", flush=True)
                    bench()
        finally:
            if before is None:
                del os.environ["TABLETOP_DOJO_DATA"]
            else:
                os.environ["TABLETOP_DOJO_DATA"] = before
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
