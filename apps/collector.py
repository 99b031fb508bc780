"""Full garbage collections in the server's idle time instead of inside a click.

CPython 3.11 runs a full (generation 2) collection from inside whatever allocation trips it: when more than
``threshold2`` (10) generation-1 collections have happened since the last full one and the objects promoted into
generation 2 since then are at least a quarter of those that survived it. With a page or two open a full collection
walks every tracked page object (~30 ms of CPU with one Kung Fu 2100 page, 140-180 ms in the dashboard benchmark
after its games' clicks), and falling in a click it made the worst clicks of issue 11. :class:`IdleCollector` keeps
both of CPython's conditions but moves the collection: the automatic one is held back (``threshold2`` raised to
:data:`HELD`, generations 0 and 1 stay automatic), and a once-a-second callback on the server's IOLoop runs it when it
is due and the server is idle. Callbacks on the IOLoop never interrupt one another, so a collection run there never
lands inside a click; at worst a click that arrives during one waits for it.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import panel as pn

HELD = 1000
"""``threshold2`` while the idle collector runs: CPython's own full collection is left only as a backstop, for a
server whose IOLoop is blocked for the ~10,000 generation-1 collections (~70 million allocations) it takes."""

OVERDUE = 100
"""Generation-1 collections since the last full one after which the next tick collects even if the server is busy
(a tab playing bots never goes quiet): memory never waits for a pause that does not come."""

QUIET = 5
"""At most this many generation-0 collections (each ~700 allocations) since the last tick, and the server counts as
idle: an idle served page makes a few a second (Bokeh's and Tornado's housekeeping), a click tens to hundreds."""

PERIOD_SECONDS = 1
"""Seconds between ticks."""

TASK = "idle-full-collection"
"""The name of the scheduled task (``pn.state.schedule_task``)."""


@dataclass
class IdleCollector:
    """The policy: hold back CPython's full collections and run them in idle ticks, with the figures of those run.

    ``long_lived`` stands for CPython's ``long_lived_total`` (generation 2's size after the last full collection) and
    generation 2's growth since for its ``long_lived_pending``, which Python does not expose: it is what was promoted
    less what reference counting has freed since, so a collection is never due sooner than CPython's would be."""

    threshold2: int = 10
    """The ``threshold2`` taken over (CPython's, read at :meth:`install`): due after more generation-1 collections."""
    runs_ms: list[float] = field(default_factory=list)
    """The CPU milliseconds of each full collection this collector ran."""
    long_lived: int = 0
    saved: tuple[int, int, int] | None = None
    fulls_seen: int = 0
    young_seen: int = 0
    checked_at: int = -1
    """``gc.get_count()[2]`` when generation 2's growth was last measured (short of due): idle, it is not remeasured."""

    def install(self) -> None:
        """Hold back automatic full collections (generations 0 and 1 keep their thresholds)."""
        if self.saved is not None:
            raise RuntimeError("the idle collector is installed already")
        self.saved = gc.get_threshold()
        t0, t1, self.threshold2 = self.saved
        gc.set_threshold(t0, t1, HELD)
        self._synced()

    def uninstall(self) -> None:
        """Give CPython back the thresholds it had."""
        if self.saved is not None:
            gc.set_threshold(*self.saved)
            self.saved = None

    def _synced(self) -> None:
        self.long_lived = len(gc.get_objects(generation=2))
        self.fulls_seen = gc.get_stats()[2]["collections"]
        self.checked_at = -1

    def due(self) -> bool:
        """Whether CPython would have run a full collection by now (both of its conditions)."""
        count = gc.get_count()[2]
        if count <= self.threshold2 or count == self.checked_at:
            return False
        if gc.get_stats()[2]["collections"] != self.fulls_seen:  # someone else ran one (a tab's memory release)
            self._synced()
            return False
        if len(gc.get_objects(generation=2)) - self.long_lived >= self.long_lived // 4:
            return True
        self.checked_at = count
        return False

    def collect(self) -> float:
        """Run the full collection; return (and keep) its CPU milliseconds."""
        start = time.thread_time()
        gc.collect()
        ms = 1000 * (time.thread_time() - start)
        self.runs_ms.append(ms)
        self._synced()
        return ms

    def idle_tick(self) -> bool:
        """A tick of a server that has been idle since the last one: collect if due. Return whether it collected."""
        if not self.due():
            return False
        self.collect()
        return True

    def tick(self) -> bool:
        """The server's once-a-second check: :meth:`idle_tick` if the server has been idle since the last tick, or
        if overdue, idle or not. Return whether it collected."""
        young = gc.get_stats()[0]["collections"]
        idle = young - self.young_seen <= QUIET
        collected = (idle or gc.get_count()[2] >= OVERDUE) and self.idle_tick()
        self.young_seen = gc.get_stats()[0]["collections"]
        return collected

    def summary(self) -> str:
        """How many full collections ran in idle time and their CPU cost, as the benchmark prints it."""
        xs = sorted(self.runs_ms)
        if not xs:
            return "0 ran"
        return (f"{len(xs)} ran, CPU median {xs[len(xs) // 2]:.1f} ms, worst {xs[-1]:.1f} ms, "
                f"total {sum(xs):.1f} ms")


def start_idle_collection(period_seconds: int = PERIOD_SECONDS) -> IdleCollector:
    """At serve: hold back automatic full collections for the life of the process and tick on the server's IOLoop
    (``pn.state.schedule_task``: scheduled once per process, run when the server starts)."""
    collector = IdleCollector()
    collector.install()
    pn.state.schedule_task(TASK, collector.tick, period=f"{int(period_seconds)}s")
    return collector


@contextmanager
def held_full_collections() -> Iterator[IdleCollector]:
    """The same policy for a block (the dashboard benchmark, tests), CPython's thresholds given back after it."""
    collector = IdleCollector()
    collector.install()
    try:
        yield collector
    finally:
        collector.uninstall()
