"""The server soak (issue 18): many tabs over the three games for a few minutes, then closed; does the
server's memory come back?

``python -m apps._soak [--minutes N] [--tabs 20] [--cycles 1]`` starts a real ``dojo serve`` on a free
loopback port (its own data folder), opens ``--tabs`` browser contexts in Debian's headless Chromium spread
over the games, keeps them playing (each presses *New game* now and then; the bots play on their own), closes
them, and waits for the server to discard their sessions (``--cycles`` times, to tell memory kept for reuse
from memory that grows). It prints the server's resident memory (RSS) cold, after a warm-up (one tab of each
game opened, played and closed, so the imports, compiled code and caches every later tab shares are in),
during, and after each cycle; the aim is "after" within 10% of the warm start. A benchmark, not a test: it
takes minutes and its figures depend on the machine's load.

The server runs with its memory report on (:mod:`apps._memory`): every reading also gives the live session
count and the objects alive by kind (documents, sessions, game sessions, components, models, watchers, plots,
streams, tasks, threads), so a kind that grows with each cycle (a leak) shows apart from memory that plateaus
(caches, the allocator's arenas). ``--games kzin`` soaks one game at a time; ``--trace 12`` starts the server
with ``PYTHONTRACEMALLOC=12`` and prints the allocations grown from the warm start to each "after", by
traceback (slow: for finding a leak, not for the figures).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
BOARDS = {"kzin": "track", "kf2100": "board", "zoo": "arena"}
BOARD_READY = """(name) => window.Bokeh && Bokeh.index &&
  [...Bokeh.index.all_views()].some(v => v.model.name === name && v.frame && v.is_idle)"""
WARM_UP = 30.0
"""Seconds the warm-up tabs (one per game) play before the warm start is read."""
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
    print(f"{label}: {figures['rss_mb']:.0f} MB{traced}, {figures['open sessions']} open session(s); {objects}",
          flush=True)
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


def settle(url: str, process: psutil.Process, label: str, timeout: float = SESSION_EXPIRY * 4) -> float:
    """Wait for every closed tab's session to go (Bokeh discards them on its own schedule, later on a loaded
    machine), then for the server's memory release after it; the memory then."""
    from apps.server import RELEASE_DELAY

    end = time.time() + timeout
    while (left := server_report(url, objects="0")["open sessions"]) and time.time() < end:
        print(f"  {label}: {mb(process):.0f} MB, {left} session(s) still open", flush=True)
        time.sleep(5)
    if left:
        print(f"  {label}: {left} session(s) still open after {timeout:.0f} s", flush=True)
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


def soak(minutes: float, tabs: int, cycles: int = 1, games: list[str] | None = None,
         trace: int = 0) -> dict[str, float]:
    from playwright.sync_api import sync_playwright

    slugs = list(games or BOARDS)
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    data = tempfile.mkdtemp(prefix="dojo-soak-")
    log = Path(data) / "serve.log"
    from apps._memory import REPORT_ENV

    env = {**os.environ, "TABLETOP_DOJO_DATA": data, REPORT_ENV: "1"}
    if trace:
        env["PYTHONTRACEMALLOC"] = str(trace)
    with log.open("w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "engine.cli", "serve", "--port", str(port), "--no-show"],
                                stdout=out, stderr=subprocess.STDOUT, env=env)
    figures: dict[str, float] = {}
    try:
        server = psutil.Process(proc.pid)
        wait_live(url, timeout=600 if trace else 60)  # tracing slows the imports tenfold
        figures["cold"] = mb(server)
        print(f"server pid {proc.pid}", flush=True)
        print_report("cold", server_report(url))
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            warm = [open_tab(browser, url, slug) for slug in slugs]  # warm-up: what every later tab shares,
            play(warm, WARM_UP, server)  # the code of play included (imports, compiled paths, caches)
            for context, _page in warm:
                context.close()
            figures["warm"] = settle(url, server, "warm-up tabs closed")  # read before the report walks the heap
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
                figures[f"cycle {cycle}: after"] = settle(url, server, "tabs closed")
                print_report(f"cycle {cycle}: after", server_report(url, **({"compare": "warm"} if trace else {})))
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m apps._soak", description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=3.0, help="how long the tabs play (default 3)")
    parser.add_argument("--tabs", type=int, default=20, help="browser contexts open at once (default 20)")
    parser.add_argument("--cycles", type=int, default=1, help="times the tabs are opened and closed (default 1)")
    parser.add_argument("--games", nargs="+", choices=list(BOARDS), help="the games soaked (default: all three)")
    parser.add_argument("--trace", type=int, default=0, metavar="FRAMES",
                        help="trace allocations with this many frames and print their growth (slow; default off)")
    args = parser.parse_args(argv)
    figures = soak(args.minutes, args.tabs, args.cycles, args.games, args.trace)
    for name, value in figures.items():
        print(f"server memory {name}: {value:.0f} MB")
    growth = figures[f"cycle {args.cycles}: after"] / figures["warm"] - 1
    print(f"after the last cycle vs the warm start: {100 * growth:+.1f}% (aim: within 10%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
