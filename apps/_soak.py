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
"""

from __future__ import annotations

import argparse
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
"""Seconds a closed tab's session may take to go: Bokeh discards an unused session after 15 s, checking every 17 s."""


def mb(process: psutil.Process) -> float:
    return process.memory_info().rss / 1024 / 1024


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


def settle(process: psutil.Process, seconds: float, label: str) -> float:
    """Wait ``seconds`` for closed sessions to go, printing the memory as it goes; the last reading."""
    end = time.time() + seconds
    value = mb(process)
    while time.time() < end:
        time.sleep(5)
        value = mb(process)
        print(f"  {label}: {value:.0f} MB", flush=True)
    return value


def open_tab(browser: Any, url: str, slug: str) -> tuple[Any, Any]:
    context = browser.new_context()
    page = context.new_page()
    page.goto(url + slug)
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


def soak(minutes: float, tabs: int, cycles: int = 1) -> dict[str, float]:
    from playwright.sync_api import sync_playwright

    slugs = list(BOARDS)
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    data = tempfile.mkdtemp(prefix="dojo-soak-")
    log = Path(data) / "serve.log"
    env = {**os.environ, "TABLETOP_DOJO_DATA": data}
    with log.open("w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "engine.cli", "serve", "--port", str(port), "--no-show"],
                                stdout=out, stderr=subprocess.STDOUT, env=env)
    figures: dict[str, float] = {}
    try:
        server = psutil.Process(proc.pid)
        wait_live(url)
        figures["cold"] = mb(server)
        print(f"server pid {proc.pid}, cold: {figures['cold']:.0f} MB", flush=True)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            warm = [open_tab(browser, url, slug) for slug in slugs]  # warm-up: what every later tab shares,
            play(warm, WARM_UP, server)  # the code of play included (imports, compiled paths, caches)
            for context, _page in warm:
                context.close()
            figures["warm"] = settle(server, SESSION_EXPIRY, "warm-up tabs closed")
            print(f"warm start: {figures['warm']:.0f} MB; opening {tabs} tabs", flush=True)
            for cycle in range(1, cycles + 1):
                opened = [open_tab(browser, url, slugs[i % len(slugs)]) for i in range(tabs)]
                figures[f"cycle {cycle}: {tabs} tabs open"] = mb(server)
                print(f"cycle {cycle}: {tabs} tabs open: {mb(server):.0f} MB", flush=True)
                figures[f"cycle {cycle}: during (peak)"] = play(opened, 60 * minutes, server)
                for context, _page in opened:
                    context.close()
                figures[f"cycle {cycle}: after"] = settle(server, SESSION_EXPIRY + 15, "tabs closed")
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
    args = parser.parse_args(argv)
    figures = soak(args.minutes, args.tabs, args.cycles)
    for name, value in figures.items():
        print(f"server memory {name}: {value:.0f} MB")
    growth = figures[f"cycle {args.cycles}: after"] / figures["warm"] - 1
    print(f"after the last cycle vs the warm start: {100 * growth:+.1f}% (aim: within 10%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
