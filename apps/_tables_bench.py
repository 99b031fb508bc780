"""Benchmark of tables: the memory of one table, and the delay from a click in one browser to the change in another.

``python -m apps._tables_bench [--clicks N] [--tables N]``. The memory is measured with ``tracemalloc`` over
``--tables`` Man-Kzin Wars tables made in a registry (each played a few moves), so it is the Python heap a table
holds with no page open, and the server's resident memory grows by about as much. The delay is measured in
real Chromium against a server in this process serving ``/kzin`` as ``dojo serve`` does: one browser context
holds the seat and clicks the decision that needs no card (or New game once the game is over), another watches,
and the time runs from the click until the watcher's page shows the new status line (polled on every frame).
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
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
HAS_TEXT = """(text) => {
  const stack = [document];
  while (stack.length) {
    const root = stack.pop();
    if ((root === document ? document.body : root).textContent.includes(text)) return true;
    for (const el of root.querySelectorAll('*')) if (el.shadowRoot) stack.push(el.shadowRoot);
  }
  return false;
}"""
TRACK_READY = """() => window.Bokeh && Bokeh.index &&
  [...Bokeh.index.all_views()].some(v => v.model.name === "track" && v.frame && v.is_idle)"""


def table_memory(n: int) -> dict[str, float]:
    """Heap bytes per table over ``n`` tables (made, then played three moves each)."""
    from engine.core.seal import Sealer
    from engine.core.tables import TableRegistry, new_token
    from engine.kzin.table import KZIN_TABLE

    folder = Path(tempfile.mkdtemp(prefix="dojo-tables-"))
    reg = TableRegistry(folder / "tables", {"kzin": KZIN_TABLE}, Sealer.in_folder(folder), max_tables=max(200, n))
    reg.create("kzin", new_token())  # imports and caches out of the figure
    gc.collect()
    tracemalloc.start()
    start = tracemalloc.get_traced_memory()[0]
    for _ in range(n):
        table = reg.create("kzin", new_token())
        for _move in range(3):
            s = table.session
            if s.decision() is None:
                break
            s.fall_back() if s.decision() == "invasion" else s.pass_turn()
    gc.collect()
    used = tracemalloc.get_traced_memory()[0] - start
    tracemalloc.stop()
    files = [p.stat().st_size for p in (folder / "tables").glob("*.json")]
    return {"tables": n, "bytes per table": used / n, "file bytes per table": statistics.mean(files)}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def status_text(session: Any) -> str:
    s = session.state
    if s.phase == "over":
        return f"Game over: the {s.winner} won on turn {s.turn}."
    return f"Turn {s.turn} · Expansion Marker on space {s.kem} "


def click_delays(clicks: int, light: bool = False, alone: bool = False) -> list[float]:
    """Seconds from a click in the player's browser to the change on the watcher's page, one per click;
    ``light``: the advisor and running odds with few rollouts, to see what their background work costs;
    ``alone``: no watcher, the delay to the change on the player's own page (the baseline of one page)."""
    from dataclasses import replace

    import panel as pn
    from playwright.sync_api import sync_playwright

    from apps import kzin
    from apps._files import data_dir
    from apps._tables import table_page, use_registry
    from engine.core.seal import Sealer
    from engine.core.tables import TableRegistry
    from engine.kzin.table import KZIN_TABLE

    pages: list[Any] = []
    if light:
        folder = data_dir()
        use_registry(TableRegistry(folder / "tables", {"kzin": replace(KZIN_TABLE, session_options={
            "advisor_rollouts": 200})}, Sealer.in_folder(folder)))

    def page() -> Any:
        made = (table_page("kzin", lambda s, may_act: kzin.KzinPage(session=s, may_act=may_act, secret_seed=True,
                                                                     running_rollouts=100))
                if light else kzin.create_table_app())
        pages.append(made)
        return made

    port = free_port()
    pn.serve({"kzin": page}, port=port, address="127.0.0.1", threaded=True, show=False, verbose=False)
    url = f"http://127.0.0.1:{port}/kzin"
    delays = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        player, watcher = browser.new_context().new_page(), browser.new_context().new_page()
        player.goto(url)
        player.wait_for_function(TRACK_READY, timeout=60_000)
        player.wait_for_url("**/kzin?table=*", timeout=60_000)
        table = pages[-1].table
        if alone:
            watcher = player
        else:
            watcher.goto(player.url)
            watcher.wait_for_function(TRACK_READY, timeout=60_000)
        s = table.session
        for _ in range(clicks):
            version = s.version
            name = "New game" if s.decision() is None else "Fall back" if s.decision() == "invasion" else "Pass"
            player.wait_for_timeout(300)  # the pages settle (their advisor starts) between clicks
            start = time.perf_counter()
            player.get_by_role("button", name=name).click()
            while s.version == version:
                if time.perf_counter() - start > 30:
                    raise RuntimeError("the click did not reach the server in 30 s")
                time.sleep(0.002)
            reached = time.perf_counter() - start
            watcher.wait_for_function(HAS_TEXT, arg=status_text(s), polling="raf", timeout=30_000)
            delays.append(time.perf_counter() - start)
            self_seen = 0.0
            if os.environ.get("DOJO_BENCH_SPLIT"):
                player.wait_for_function(HAS_TEXT, arg=status_text(s), polling="raf", timeout=30_000)
                self_seen = time.perf_counter() - start
                print(f"server {1000 * reached:.0f} ms, watcher {1000 * delays[-1]:.0f} ms, "
                      f"player {1000 * self_seen:.0f} ms", flush=True)
        browser.close()
    pn.state.kill_all_servers()
    return delays


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m apps._tables_bench", description=__doc__.splitlines()[0])
    parser.add_argument("--clicks", type=int, default=20, help="clicks timed (default 20)")
    parser.add_argument("--light", action="store_true", help="pages with few rollouts (default: as served)")
    parser.add_argument("--alone", action="store_true", help="no watcher: the change on the player's own page")
    parser.add_argument("--tables", type=int, default=50, help="tables whose memory is measured (default 50)")
    args = parser.parse_args(argv)
    os.environ.setdefault("TABLETOP_DOJO_DATA", tempfile.mkdtemp(prefix="dojo-bench-"))
    memory = table_memory(args.tables)
    print(f"memory: {memory['bytes per table'] / 1024:.0f} KB per table in memory (over {args.tables} tables), "
          f"{memory['file bytes per table'] / 1024:.1f} KB per table file", flush=True)
    delays = sorted(click_delays(args.clicks, args.light, args.alone))
    pages = "light pages (advisor 200 rollouts, running odds 100)" if args.light else "pages as served"
    where = "on the player's own page (no watcher)" if args.alone else "in another"
    print(f"click in one browser to the change {where}, {pages}, over {len(delays)} clicks: "
          f"median {1000 * statistics.median(delays):.0f} ms, worst {1000 * delays[-1]:.0f} ms "
          f"(best {1000 * delays[0]:.0f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
