"""The server soak (issue 18): many tabs over the three games for a few minutes, then closed; does the
server's memory come back?

``python -m apps._soak [--minutes N] [--tabs 20] [--cycles 1]`` starts a real ``dojo serve`` on a free
loopback port (its own data folder), opens ``--tabs`` browser contexts in Debian's headless Chromium spread
over the games, keeps them playing (each presses *New game* now and then; the bots play on their own), closes
them, and waits for the server to discard their sessions (``--cycles`` times, to tell memory kept for reuse
from memory that grows). It prints the server's resident memory (RSS) cold, after a warm-up (one tab of each
game opened, played and closed, so the imports, compiled code and caches every later tab shares are in),
during, and after each cycle; the aim is "after" within 10% of the warm start. Every game is played at tables,
and a closed tab's table stays in the server until it is idle: the soak's server drops idle tables after
:data:`IDLE` seconds, and "after" is read once they are dropped ("after, tables held" is printed as well). A
benchmark, not a test: it takes minutes and its figures depend on the machine's load.

The server runs with its memory report on (:mod:`apps._memory`): every reading also gives the live session
count and the objects alive by kind (documents, sessions, game sessions, components, models, watchers, plots,
streams, tasks, threads), so a kind that grows with each cycle (a leak) shows apart from memory that plateaus
(caches, the allocator's arenas). ``--games kzin`` soaks one game at a time; ``--trace 12`` starts the server
with ``PYTHONTRACEMALLOC=12`` and prints the allocations grown from the warm start to each "after", by
traceback (slow: for finding a leak, not for the figures).

``--tables N`` runs issue 12's load test instead (:mod:`apps._soak_tables`): N tables, each made by one browser
context and joined by a second through its link, over the games of :data:`apps._browser.TABLE_PLAYS`; in turn
each table's maker moves, the move must show in the table's other browser, and every browser at every other
table must still show what it showed (each game kept apart). It prints the memory cold, warm, during and after
the tables close (held, then dropped once idle), the moves per table, the page kinds kept after the close, and
"every game kept apart" or each failure, and exits 1 if a game was not kept apart. The short variant is
``tests/browser/test_soak_tables.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psutil

from apps._browser import BOARD_READY, launch

BOARDS = {"kzin": "track", "kf2100": "board", "zoo": "arena"}
WARM_UP = 30.0
"""Seconds the warm-up tabs (one per game) play before the warm start is read."""
IDLE = 20.0
"""Seconds a table no page shows stays in the soak's server before it is written out and dropped (the server's
``$TABLETOP_DOJO_IDLE``; a served table stays 30 minutes, longer than a soak): every game is played at tables, so a
closed tab's table, its game session included, is only given back once it is idle."""
TABLES_DROPPED = 180.0
"""Seconds the soak waits, once the tabs' sessions are gone, for their idle tables to go: the server sweeps every
60 s, and a table goes at the first sweep :data:`IDLE` seconds after its last page closed."""
SESSION_EXPIRY = 45.0
"""Seconds a closed tab's session should take to go: Bokeh discards an unused session after 15 s, checking every
17 s (the soak waits up to four times as long on a loaded machine, and says so)."""


def mb(process: psutil.Process) -> float:
    return process.memory_info().rss / 1024 / 1024


def server_report(url: str, **query: str) -> dict[str, Any]:
    """The server's ``/memory-report`` (:func:`apps._memory.report`): memory, open sessions, objects by kind."""
    import urllib.parse
    import urllib.request

    from apps._memory import REPORT_PATH

    address = url.rstrip("/") + REPORT_PATH + ("?" + urllib.parse.urlencode(query) if query else "")
    with urllib.request.urlopen(address, timeout=120) as answer:
        return json.loads(answer.read())


def print_report(label: str, figures: dict[str, Any]) -> None:
    objects = ", ".join(f"{name} {count}" for name, count in figures["objects"].items())
    traced = f", traced {figures['traced_mb']} MB" if "traced_mb" in figures else ""
    small = figures.get("small objects", {})
    if {"arenas", "blocks"} <= small.keys():  # the arenas CPython keeps, and how much of them is live objects
        traced += f", small-object arenas {small['arenas']:.0f} MB holding {small['blocks']:.0f} MB of objects"
    if "allocator" in figures:  # dojo serve's own (apps/allocator.py) unless PYTHONMALLOC said otherwise
        traced += f", allocator {figures['allocator']}"
    load = os.getloadavg()[0]  # the figures depend on it: said with each
    print(f"{label}: {figures['rss_mb']:.0f} MB{traced}, {figures['open sessions']} open session(s), load {load:.1f}; "
          f"{objects}", flush=True)
    if "after" in label:  # once the tabs closed: every session still alive, and what Bokeh keeps it for
        for held in figures.get("server sessions", []):
            print(f"  server session alive: {held}", flush=True)
        if figures.get("server sessions"):  # what the loop is still running, a held session's callbacks among it
            for task, count in figures.get("pending tasks", {}).items():
                print(f"  pending task x{count}: {task}", flush=True)
    for grown in figures.get("growth", []):
        print(f"  {grown['kib']:+.0f} KiB in {grown['blocks']:+d} blocks, allocated at:")
        print("    " + "\n    ".join(line for line in grown["traceback"] if line.strip()), flush=True)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_live(url: str, timeout: float = 60.0) -> None:
    import urllib.request

    deadline = time.time() + timeout
    while True:
        try:
            urllib.request.urlopen(url + "liveness", timeout=2).read()
            return
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(0.2)


def wait_kind(url: str, process: psutil.Process, label: str, kind: str, most: int, end: float,
              poll: float) -> int:
    """Poll the server's live ``kind`` count until it is at most ``most`` or ``end`` passes; the last count."""
    while (alive := server_report(url)["objects"][kind]) > most and time.time() < end:
        print(f"  {label}: {mb(process):.0f} MB, {alive} {kind} alive, waiting for {most}", flush=True)
        time.sleep(poll)
    if alive > most:
        print(f"  {label}: {alive} {kind} still alive at the deadline", flush=True)
    return alive


def settle(url: str, process: psutil.Process, label: str, timeout: float = SESSION_EXPIRY * 4,
           poll: float = 5.0, sessions: int | None = None, tables: int | None = None) -> float:
    """Wait for every closed tab's session to go (Bokeh discards them on its own schedule, later on a loaded
    machine), then for the server's memory release after it; the memory then. ``sessions``: also wait until no
    more than that many Bokeh server sessions are alive in the server (counted in its heap: Panel's session
    record, keyed by session id, has said a session ended that Bokeh still held: a likely way is a page built
    twice, the request's session discarded unused before the browser's websocket came and made a second of the
    same id). ``tables``: then also wait (up to :data:`TABLES_DROPPED` more) until no more than that many game
    sessions are alive, i.e. the closed tabs' idle tables have been written out and dropped."""
    from apps.server import RELEASE_DELAY

    end = time.time() + timeout
    while (left := server_report(url, objects="0")["open sessions"]) and time.time() < end:
        print(f"  {label}: {mb(process):.0f} MB, {left} session(s) still open", flush=True)
        time.sleep(poll)
    if left:
        print(f"  {label}: {left} session(s) still open after {timeout:.0f} s", flush=True)
    if sessions is not None:
        wait_kind(url, process, label, "server sessions", sessions, end, poll)
    if tables is not None:
        wait_kind(url, process, label, "game sessions", tables, time.time() + TABLES_DROPPED, poll)
    time.sleep(RELEASE_DELAY + 3)
    return mb(process)


def open_tab(browser: Any, url: str, slug: str) -> tuple[Any, Any]:
    context = browser.new_context()
    page = context.new_page()
    page.goto(url + slug, timeout=120_000)  # a loaded machine (or a traced server) is slow to build a page
    page.wait_for_function(BOARD_READY, arg=BOARDS[slug], timeout=120_000)
    return context, page


def play(tabs: list[tuple[Any, Any]], seconds: float, server: psutil.Process) -> float:
    """Every tab presses *New game* in turn (the bots play on their own) for ``seconds``; the peak memory."""
    peak = mb(server)
    end = time.time() + seconds
    rounds = 0
    while time.time() < end:
        for _context, page in tabs:
            try:
                page.get_by_role("button", name="New game").click(timeout=5000)
            except Exception as exc:  # a busy page: the soak goes on, and says so
                print(f"  a New game click failed: {type(exc).__name__}", flush=True)
            page.wait_for_timeout(200)
        rounds += 1
        peak = max(peak, mb(server))
        print(f"  playing {len(tabs)} tab(s), round {rounds}: {mb(server):.0f} MB", flush=True)
    return peak


def start_server(trace: int = 0, session_ms: int | None = None,
                 idle: float = IDLE) -> tuple[subprocess.Popen[bytes], str]:
    """A real ``dojo serve`` on a free loopback port with its own data folder and its memory report on; with
    ``session_ms``, closed tabs' sessions are discarded after that many milliseconds (else Bokeh's 15 s); a table
    no page shows is dropped after ``idle`` seconds."""
    from apps._memory import REPORT_ENV, SESSION_CLEANUP_ENV

    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    data = tempfile.mkdtemp(prefix="dojo-soak-")
    env = {**os.environ, "TABLETOP_DOJO_DATA": data, REPORT_ENV: "1", "TABLETOP_DOJO_IDLE": str(idle)}
    if trace:
        env["PYTHONTRACEMALLOC"] = str(trace)
    if session_ms:
        env[SESSION_CLEANUP_ENV] = str(session_ms)
    with (Path(data) / "serve.log").open("w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "engine.cli", "serve", "--port", str(port), "--no-show"],
                                stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        wait_live(url, timeout=600 if trace else 120)  # tracing slows the imports tenfold
    except OSError:
        proc.terminate()
        raise
    return proc, url


@contextmanager
def served(trace: int = 0, session_ms: int | None = None) -> Iterator[tuple[psutil.Process, str]]:
    """:func:`start_server`'s server (its pid printed) as (its process, its URL), terminated on the way out."""
    proc, url = start_server(trace, session_ms=session_ms)
    try:
        print(f"server pid {proc.pid}", flush=True)
        yield psutil.Process(proc.pid), url
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def soak(minutes: float, tabs: int, cycles: int = 1, games: list[str] | None = None,
         trace: int = 0) -> dict[str, float]:
    from playwright.sync_api import sync_playwright

    slugs = list(games or BOARDS)
    figures: dict[str, float] = {}
    with served(trace) as (server, url):
        figures["cold"] = mb(server)
        print_report("cold", server_report(url))
        with sync_playwright() as p:
            browser = launch(p)
            warm = [open_tab(browser, url, slug) for slug in slugs]  # warm-up: what every later tab shares,
            play(warm, WARM_UP, server)  # the code of play included (imports, compiled paths, caches)
            for context, _page in warm:
                context.close()
            figures["warm"] = settle(url, server, "warm-up tabs closed", sessions=0, tables=0)  # before the report
            print_report("warm start", server_report(url, **({"snapshot": "warm"} if trace else {})))
            print(f"opening {tabs} tabs", flush=True)
            for cycle in range(1, cycles + 1):
                opened = [open_tab(browser, url, slugs[i % len(slugs)]) for i in range(tabs)]
                figures[f"cycle {cycle}: {tabs} tabs open"] = mb(server)
                print(f"cycle {cycle}: {tabs} tabs open: {mb(server):.0f} MB", flush=True)
                figures[f"cycle {cycle}: during (peak)"] = play(opened, 60 * minutes, server)
                print_report(f"cycle {cycle}: during", server_report(url))
                for context, _page in opened:
                    context.close()
                figures[f"cycle {cycle}: after, tables held"] = settle(url, server, "tabs closed", sessions=0)
                print_report(f"cycle {cycle}: after the tabs closed, their tables held", server_report(url))
                figures[f"cycle {cycle}: after"] = settle(url, server, "tables idle", tables=0)
                print_report(f"cycle {cycle}: after, their tables dropped",
                             server_report(url, **({"compare": "warm"} if trace else {})))
            browser.close()
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m apps._soak", description=__doc__.replace("``", ""),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=3.0, help="how long the tabs play (default 3)")
    parser.add_argument("--tabs", type=int, default=20, help="browser contexts open at once (default 20)")
    parser.add_argument("--cycles", type=int, default=1, help="times the tabs are opened and closed (default 1)")
    parser.add_argument("--games", nargs="+", choices=list(BOARDS), help="the games soaked (default: all three)")
    parser.add_argument("--trace", type=int, default=0, metavar="FRAMES",
                        help="trace allocations with this many frames and print their growth (slow; default off)")
    parser.add_argument("--tables", type=int, default=0, metavar="N",
                        help="the load test of tables instead: N tables, two browser contexts each (issue 12)")
    args = parser.parse_args(argv)
    if args.tables:
        from apps._soak_tables import main_tables

        return main_tables(args.minutes, args.tables, args.games)
    figures = soak(args.minutes, args.tabs, args.cycles, args.games, args.trace)
    for name, value in figures.items():
        print(f"server memory {name}: {value:.0f} MB")
    growth = figures[f"cycle {args.cycles}: after"] / figures["warm"] - 1
    print(f"after the last cycle vs the warm start: {100 * growth:+.1f}% (aim: within 10%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
