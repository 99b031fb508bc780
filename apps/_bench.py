"""Dashboard benchmarks: ``python -m apps._bench`` runs each game app's ``benchmark()``.

The engine's benchmark (``python -m engine.bench``) cannot import the UI, so the server-side cost of
a click, a decision or a bot turn is measured here, on the same Bokeh models a browser is sent.
"""

from __future__ import annotations

import asyncio
import gc
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from apps import discover_games
from apps.allocator import allocator, use_system_malloc
from apps.collector import IdleCollector, held_full_collections
from apps.server import freeze_imports


async def _settle() -> None:
    """Let the page's background work (advisor, running odds) finish: it is not part of a click."""
    while len(asyncio.all_tasks()) > 1:
        await asyncio.sleep(0.01)


async def _between(idle: IdleCollector) -> None:
    """After a click, untimed: the page's background work, then the tick a server runs in the idle second before a
    person's next click (:mod:`apps.collector`: the full collection, if one is due, runs there, not in a click)."""
    await _settle()
    idle.idle_tick()


def _idle_line(game: str, clicks: Clicks, idle: IdleCollector) -> None:
    inside = sum(sum(full) for full in clicks.full.values())
    print(f"{game} full collections in idle time between clicks (untimed): {idle.summary()}; "
          f"clicks with a full collection inside: {inside}", flush=True)


class Clicks:
    """The milliseconds of each timed click, by kind, and how many of them the cyclic garbage collector took.

    The ~300 ms worst clicks of issue 11 were a full collection (generation 2) falling in a click: it walks every
    object the process tracks, the libraries' included (measured: ~170 ms of CPU with the three games imported,
    ~55 ms once :func:`apps.server.freeze_imports` has moved the imported ones out of its sight, as ``dojo serve``
    does), and since :mod:`apps.collector` holds full collections back and runs them between clicks, as the server
    does, a click should have none ("clicks with a full collection inside"). The first click of each kind is printed
    apart: a first-click cost (a plot built, a kernel dispatched for the first time) shows there, not in the median
    of the rest."""

    def __init__(self, *kinds: str) -> None:
        self.times: dict[str, list[float]] = {k: [] for k in kinds}
        self.gc: dict[str, list[float]] = {k: [] for k in kinds}
        self.cpu: dict[str, list[float]] = {k: [] for k in kinds}
        self.full: dict[str, list[bool]] = {k: [] for k in kinds}
        self._gc_ms, self._gc_full, self._gc_start = 0.0, False, 0.0

    def _on_gc(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._gc_start = time.thread_time()
        else:
            self._gc_ms += 1000 * (time.thread_time() - self._gc_start)
            self._gc_full = self._gc_full or info.get("generation") == 2

    @contextmanager
    def timed(self, what: str) -> Iterator[None]:
        """Time the click in the block (wall clock), its CPU time and the garbage collection's within it: on a loaded
        machine the wall clock also counts the time other processes had the CPU, the CPU times do not."""
        self._gc_ms, self._gc_full = 0.0, False
        gc.callbacks.append(self._on_gc)
        t, cpu = time.perf_counter(), time.thread_time()
        try:
            yield
        finally:
            ms = 1000 * (time.perf_counter() - t)
            self.cpu[what].append(1000 * (time.thread_time() - cpu))
            gc.callbacks.remove(self._on_gc)
            self.times[what].append(ms)
            self.gc[what].append(self._gc_ms)
            self.full[what].append(self._gc_full)

    def count(self, what: str) -> int:
        return len(self.times[what])


def _rows(game: str, clicks: Clicks) -> list[tuple[str, float]]:
    """Print and return, for each kind of click, the first and the median and worst of the others, and the CPU time of
    the one that took the most (a loaded machine's wall clock counts other processes' turns: the CPU time does not);
    the worst's lines say their CPU time and how much of it was garbage collection."""
    rows: list[tuple[str, float]] = []
    notes: dict[str, str] = {}
    for what, times in clicks.times.items():
        if not times:
            continue
        rest = sorted(range(1, len(times)) or [0], key=lambda i: times[i])
        worst = rest[-1]
        name = f"{game} {what} + derived views"
        heaviest = max(rest, key=lambda i: clicks.cpu[what][i])
        rows += [(f"{name}, first", times[0]), (f"{name}, median", times[rest[len(rest) // 2]]),
                 (f"{name}, worst", times[worst]), (f"{name}, most CPU", clicks.cpu[what][heaviest])]
        for label, i in (("worst", worst), ("most CPU", heaviest)):
            full = ", a full collection" if clicks.full[what][i] else ""
            notes[f"{name}, {label}"] = (f" (CPU {clicks.cpu[what][i]:.1f} ms, of it {clicks.gc[what][i]:.1f} ms "
                                         f"garbage collection{full})")
    for name, ms in rows:
        print(f"{name}: {ms:.1f} ms{notes.get(name, '')}", flush=True)
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
        await _between(idle)
        tiles = [v for v in s.table() if v.selectable]
        clicks = Clicks("card click", "decision")
        for i in range(repeats):
            v = tiles[i % len(tiles)]
            with clicks.timed("card click"):
                page.tiles.click(v.kind, v.copy)
            await _between(idle)
        for _ in range(repeats):
            if s.decision() is None:
                s.new_game(s.seed + 1)
                await _between(idle)
            with clicks.timed("decision"):
                page.decisions.decide(s.decisions()[1])  # fall back or pass: the same views follow as after a battle
            await _between(idle)
        _idle_line("kzin", clicks, idle)
        return _rows("kzin", clicks)

    with held_full_collections() as idle:  # the server's policy (apps.server.serve)
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
        clicks = Clicks("die click", "spot click", "drag (aim)", "commit")
        seconds: dict[str, list[float]] = {"odds, first estimate (50 flicks)": [], "odds, all 500 flicks": [],
                                           "heat map, all cells": []}
        for k in range(repeats):
            s.new_game(3 + k)
            q = s.state.to_move
            a.pan_start(9.5, 150.0)  # the press of the drag: the browser's, nothing to time
            for what, act, where in (("die click", a.tap, za.bench_xy(q, 1)), ("spot click", a.tap, (-10.0, 150.0)),
                                     ("drag (aim)", a.pan_end, (109.5 + 5.0 * k, 150.0 + 10.0 * k))):
                with clicks.timed(what):
                    assert act(*where), s.notice.text
                idle.idle_tick()
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
            idle.idle_tick()
            with clicks.timed("commit"):
                assert page.flick.commit_flick(), s.notice.text
            idle.idle_tick()
        _idle_line("zoo", clicks, idle)
        rows = _rows("zoo", clicks)
        for what, xs in seconds.items():
            xs.sort()
            for name, v in ((f"zoo {what}, median s", xs[len(xs) // 2]), (f"zoo {what}, worst s", xs[-1])):
                print(f"{name}: {v:.3f}", flush=True)
                rows.append((name, v))
        return rows

    with held_full_collections() as idle:  # the server's policy (apps.server.serve)
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
        await _between(idle)
        clicks = Clicks("board click", "decision", "bot step")
        helper = HeuristicBot(0)
        enough = {"board click": 2 * repeats, "decision": repeats, "bot step": repeats}
        while any(clicks.count(k) < n for k, n in enough.items()) and not s.state.is_terminal():
            wanted = clicks.count("board click") < enough["board click"]
            if s.pending:
                with clicks.timed("bot step"):
                    s.step()
            elif wanted and s.state.phase in ("move1", "move2") and s.reachable("T1") and s.state.figs["T1"].mp > 0:
                with clicks.timed("board click"):
                    page.board.click_figure("T1")
                await _between(idle)
                target = sorted(s.reachable())[clicks.count("board click") % len(s.reachable())]
                with clicks.timed("board click"):
                    page.board.click_square(target)
            else:  # the person's other decisions, as the bot would make them, through the decision panel's path
                choice = helper.choose(s.state, None)
                with clicks.timed("decision"):
                    s.attempt(s.play, choice)
            await _between(idle)
        _idle_line("kf2100", clicks, idle)
        return _rows("kf2100", clicks)

    with held_full_collections() as idle:  # the server's policy (apps.server.serve)
        return asyncio.run(run())


BENCHMARKS: dict[str, Callable[[], object]] = {"kzin": kzin_benchmark, "kf2100": kf2100_benchmark,
                                              "zoo": zoo_benchmark}
"""The benchmarks kept here, by game; a game app that still carries its own has a ``benchmark()``."""


def main() -> int:
    # The served-page benchmarks play games: their autosaves go to a scratch folder, never over the
    # user's last games.
    before = os.environ.get("TABLETOP_DOJO_DATA")
    print(f"allocator: {allocator()} (dojo serve's: apps/allocator.py)", flush=True)
    games = discover_games()
    freeze_imports()  # as dojo serve does once it has imported the games: the clicks are timed as a server has them
    with tempfile.TemporaryDirectory(prefix="dojo-bench-") as scratch:
        os.environ["TABLETOP_DOJO_DATA"] = scratch
        try:
            for game in games:
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
    use_system_malloc()  # clicks timed under the allocator dojo serve runs with (apps/allocator.py)
    raise SystemExit(main())
