"""What a served process holds: live sessions and objects by kind, for the soak and the closed-tab test.

:func:`live_objects` collects garbage and counts the objects that a closed tab must not leave behind (Bokeh
documents and server sessions, our game sessions, Panel components, Bokeh models, param watchers, HoloViews
plots and streams, asyncio tasks, threads). A count that grows with every open/close cycle is a leak; one
that stops growing is a cache.

``dojo serve`` with ``TABLETOP_DOJO_MEMORY_REPORT=1`` in its environment also answers ``GET /memory-report``
with these counts, its resident memory and live session count as JSON (:class:`MemoryReportHandler`), so the
soak (:mod:`apps._soak`) can read them from outside. If the server was started with ``PYTHONTRACEMALLOC=N``
(Python's own switch), ``?snapshot=NAME`` keeps a tracemalloc snapshot and ``?compare=NAME`` adds the
allocations grown since it, grouped by traceback. Off by default: the report walks every object in the heap.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import re
import sys
import tempfile
import threading
import tracemalloc
from collections import Counter
from collections.abc import Callable
from typing import Any

import panel as pn
import psutil
import tornado.web

from apps.allocator import allocator

REPORT_ENV = "TABLETOP_DOJO_MEMORY_REPORT"
REPORT_PATH = "/memory-report"
REPORT_HISTORY = 1000
"""Sessions Panel records while reporting (``session_history``): the open-session count is read from them."""


def _kinds() -> dict[str, type]:
    """The kinds counted, by the name the report gives them (imported late: HoloViews is slow to import)."""
    import bokeh.document
    import bokeh.model
    import bokeh.server.session
    import holoviews.plotting.plot
    import holoviews.streams
    import param.parameterized

    from engine.core.session import GameSession

    return {
        "documents": bokeh.document.Document,
        "server sessions": bokeh.server.session.ServerSession,
        "game sessions": GameSession,
        "panel viewables": pn.viewable.Viewable,
        "bokeh models": bokeh.model.Model,
        "param watchers": param.parameterized.Watcher,
        "holoviews plots": holoviews.plotting.plot.Plot,
        "holoviews streams": holoviews.streams.Stream,
        "asyncio tasks": asyncio.Task,
    }


def heap() -> list[Any]:
    """After a full collection, every object the collector tracks (a walk of it is what the report costs)."""
    gc.collect()
    return gc.get_objects()


def live_objects(objects: list[Any] | None = None) -> dict[str, int]:
    """After a full collection, how many objects of each kind are alive, and the running threads; ``objects``: a
    :func:`heap` already taken."""
    kinds = _kinds()
    counts = dict.fromkeys(kinds, 0)
    for obj in heap() if objects is None else objects:
        for name, kind in kinds.items():
            if isinstance(obj, kind):
                counts[name] += 1
    counts["threads"] = threading.active_count()
    return counts


def server_sessions(objects: list[Any] | None = None) -> list[dict[str, Any]]:
    """Every Bokeh server session alive in the heap (or in ``objects``, a :func:`heap` already taken) and why Bokeh
    keeps it: its page's path, its connections, how many callbacks block its expiry (one holds or waits for its
    document's lock), whether it was destroyed, and seconds since its last connection went. Bokeh discards a
    session with no connection and no block once it has been unused for its lifetime, so one alive long after its
    tab closed shows which of these held it."""
    import bokeh.server.session

    found = []
    for obj in gc.get_objects() if objects is None else objects:
        if isinstance(obj, bokeh.server.session.ServerSession):
            try:
                context = obj.document.session_context
            except AttributeError:  # destroyed: Bokeh has let go of its document (the report raised a 500 on it)
                context = None
            request = context.request if context is not None else None
            found.append({"id": obj.id[:8], "path": request.path if request is not None else None,
                          "connections": obj.connection_count, "expiry blocks": obj.expiration_blocked_count,
                          "destroyed": obj.destroyed,
                          "unused s": round(obj.milliseconds_since_last_unsubscribe / 1000, 1)})
    return found


def pending_tasks() -> dict[str, int]:
    """The asyncio tasks pending in the server's event loop, by the coroutine and the line each waits at (a
    callback that holds a session's document lock and never ends blocks that session's expiry for good)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # called outside the server's loop: nothing of its to list
        return {}
    counts: Counter[str] = Counter()
    for task in asyncio.all_tasks(loop):
        stack = task.get_stack()
        where = f"{stack[-1].f_code.co_filename}:{stack[-1].f_lineno}" if stack else "?"
        coro = task.get_coro()
        counts[f"{getattr(coro, '__qualname__', type(coro).__name__)} at {where}"] += 1
    return dict(counts.most_common())  # most first, equals in the order first seen


def open_sessions() -> int:
    """Sessions the server has begun and not yet ended (Panel's public session record; needs session_history)."""
    return sum(1 for s in pn.state.session_info["sessions"].values() if s["ended"] is None)


def resident_mb() -> float:
    return psutil.Process().memory_info().rss / 1024 / 1024


_snapshots: dict[str, tracemalloc.Snapshot] = {}


def tracemalloc_growth(since: str, top: int = 15, frames: int = 12) -> list[dict[str, Any]]:
    """The allocations grown since the snapshot named ``since``, largest first, grouped by traceback."""
    if since not in _snapshots:
        raise KeyError(f"no snapshot named {since!r}: take one with ?snapshot={since}")
    now = tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)])
    stats = now.compare_to(_snapshots[since], "traceback")
    return [{"kib": round(s.size_diff / 1024, 1), "blocks": s.count_diff,
             "traceback": s.traceback.format(limit=frames)} for s in stats[:top]]


PYMALLOC_FIGURES = {"arenas allocated current": "arenas", "bytes in allocated blocks": "blocks"}


def small_object_heap() -> dict[str, float]:
    """CPython's own allocator for objects of 512 bytes or less (pymalloc): the MB of arenas it holds from the
    system and the MB of live blocks in them. An arena goes back to the system only once every block in it is
    free, so arenas far above their live blocks are memory kept for reuse, not objects alive: what the soak's
    resident memory keeps after its tabs close. Read from ``sys._debugmallocstats``, which CPython writes to the C
    stderr (its only account of the arenas)."""
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8") as out:
        sys.stderr.flush()
        saved = os.dup(2)
        try:
            os.dup2(out.fileno(), 2)
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        out.seek(0)
        text = out.read()
    found: dict[str, float] = {}
    for name, key in PYMALLOC_FIGURES.items():
        match = re.search(rf"^# {name}\s*=\s*([\d,]+)$", text, re.MULTILINE)
        if match:
            count = int(match.group(1).replace(",", ""))
            found[key] = round(count * (1 << 20 if key == "arenas" else 1) / 1024 / 1024, 1)
    return found


def report(snapshot: str | None = None, compare: str | None = None, objects: bool = True) -> dict[str, Any]:
    """The served process's memory, live sessions and object counts (and tracemalloc figures if it traces);
    without ``objects``, only the memory and the sessions (cheap enough to poll)."""
    figures: dict[str, Any] = {"rss_mb": round(resident_mb(), 1), "open sessions": open_sessions(),
                               "tracing": tracemalloc.is_tracing(), "allocator": allocator()}
    if objects:
        objects_now = heap()  # one walk of the heap for both
        figures["objects"] = live_objects(objects_now)
        figures["server sessions"] = server_sessions(objects_now)
        del objects_now
        figures["pending tasks"] = pending_tasks()
        figures["small objects"] = small_object_heap()
    if tracemalloc.is_tracing():
        figures["traced_mb"] = round(tracemalloc.get_traced_memory()[0] / 1024 / 1024, 1)
        if compare:
            figures["growth"] = tracemalloc_growth(compare)
        if snapshot:
            _snapshots[snapshot] = tracemalloc.take_snapshot().filter_traces(
                [tracemalloc.Filter(False, tracemalloc.__file__)])
    return figures


class MemoryReportHandler(tornado.web.RequestHandler):
    """``GET /memory-report[?snapshot=NAME][&compare=NAME][&objects=0]``: :func:`report` as JSON."""

    def get(self) -> None:
        try:
            figures = report(self.get_argument("snapshot", None), self.get_argument("compare", None),
                             objects=self.get_argument("objects", "1") != "0")
        except KeyError as exc:
            self.set_status(400)
            figures = {"error": str(exc.args[0])}
        self.set_header("Content-Type", "application/json")
        self.write(json.dumps(figures))


SESSION_CLEANUP_ENV = "TABLETOP_DOJO_UNUSED_SESSION_MS"
"""Milliseconds after which ``dojo serve`` discards a session no browser holds (Bokeh's default: 15 s, checked
every 17 s). The soak's short variant in the tests sets it, so closed tabs go in seconds; unset, Bokeh's own."""


def session_cleanup(environ: Callable[[str], str | None] = os.environ.get) -> dict[str, int]:
    """``pn.serve`` options for :data:`SESSION_CLEANUP_ENV`: the unused-session lifetime and a check as often."""
    value = environ(SESSION_CLEANUP_ENV)
    if not value:
        return {}
    ms = int(value)
    if ms <= 0:
        raise ValueError(f"{SESSION_CLEANUP_ENV} must be a positive number of milliseconds, not {value!r}")
    return {"check_unused_sessions_milliseconds": ms, "unused_session_lifetime_milliseconds": ms}


def report_patterns(environ: Callable[[str], str | None] = os.environ.get) -> list[tuple[str, type]]:
    """The extra route ``dojo serve`` adds: the report when ``TABLETOP_DOJO_MEMORY_REPORT`` is set, else none."""
    return [(REPORT_PATH, MemoryReportHandler)] if environ(REPORT_ENV) else []
