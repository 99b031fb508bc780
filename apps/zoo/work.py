"""The bookkeeping of a Kung-Fu Zoo page's background work: which run is current, and the pieces of work a table's
pages share (:mod:`apps.zoo.panels` runs them)."""

from __future__ import annotations

import asyncio
import threading
from functools import partial
from typing import Any


class Superseding:
    """The task of the latest run of one bound async function: a new run cancels the one before it.

    Panel cancels a superseded run too, but it forgets which run is current once a cancelled one ends, so
    with three quick changes the second run could go on beside the third; this keeps the last one alone."""

    def __init__(self) -> None:
        self._task: asyncio.Task[Any] | None = None

    def start(self) -> None:
        """Called first thing in a run: cancel the run before it, if it is still going."""
        task = asyncio.current_task()
        if self._task is not None and self._task is not task and not self._task.done():
            self._task.cancel()
        self._task = task

    def current(self) -> bool:
        """Whether the run calling is still the latest."""
        return self._task is asyncio.current_task()


class SharedWork:
    """The odds' and the heat map's pieces of work, done once for every page that asks for the same piece.

    At a table every page shows the same battle and the same aim (the Zoo hides nothing), and a piece's result is
    fixed by what it is for (its generator is seeded by the piece), so the first page to ask works it out on a
    worker thread and the others await that very result: one table's odds and map cost one page's CPU, whatever
    the number of pages. A page's superseded run stops awaiting, but the piece goes on for the others (shielded).
    The results are kept for the battle now at the table only (its game and version), the last ``limit`` of
    them: a move makes every piece of the battle before it dead, and keeping them cost a table ~27 MB once the
    old limit of 512 was reached (measured on the load test's Zoo table: the server grew for 8 flicks, then
    stayed up). Within one battle re-aims keep theirs, so aiming back finds its odds done.

    A piece of a battle that a move has ended stops within a few flicks (:meth:`moved_on`, :meth:`stop_of`): left
    to run, it took the CPU from the move's own physics and from the pages drawing the flick."""

    def __init__(self, limit: int = 256) -> None:
        self.limit = limit
        self.battle: tuple[int, int] | None = None
        """The newest battle asked for: pieces of any other are not kept."""
        self.done: dict[Any, Any] = {}
        self.running: dict[Any, asyncio.Future[Any]] = {}
        self.computed = 0
        """Pieces worked out (not found done or running): what the table's pages cost."""
        self._stops: dict[tuple[int, int], threading.Event] = {}
        self._stops_lock = threading.Lock()  # a move may be played on another thread than the page's loop

    def stop_of(self, battle: tuple[int, int]) -> threading.Event:
        """The event that stops the pieces of ``battle`` once the table's battle moves on."""
        with self._stops_lock:
            return self._stops.setdefault(battle, threading.Event())

    def moved_on(self, battle: tuple[int, int]) -> None:
        """The table's battle is now ``battle`` (a move was played, a game begun): every other one's pieces stop."""
        with self._stops_lock:
            old = [self._stops.pop(b) for b in list(self._stops) if b != battle]
        for event in old:
            event.set()

    async def get(self, battle: tuple[int, int], key: Any, fn: Any, *args: Any) -> Any:
        """``fn(*args)`` on a worker thread, once per ``key`` of ``battle`` (the game's number and version)."""
        if self.battle is None or battle > self.battle:
            self.battle = battle
            self.done.clear()
        key = (battle, key)
        if key in self.done:
            return self.done[key]
        task = self.running.get(key)
        if task is None:
            self.computed += 1
            task = asyncio.ensure_future(asyncio.to_thread(fn, *args))
            self.running[key] = task
            task.add_done_callback(partial(self._finished, key))
        return await asyncio.shield(task)

    def _finished(self, key: Any, task: asyncio.Future[Any]) -> None:
        self.running.pop(key, None)
        if task.cancelled() or task.exception() is not None or key[0] != self.battle:
            return  # a failure is tried again; an old battle's piece is for no page now
        self.done[key] = task.result()
        while len(self.done) > self.limit:
            self.done.pop(next(iter(self.done)))
