"""The idle collector: CPython's full collections held back while it runs, run in idle ticks when they are due."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from apps import collector
from apps.collector import HELD, OVERDUE, QUIET, IdleCollector, held_full_collections, start_idle_collection


class Cycle:
    """A page's web of references in small: only the cyclic collector frees it."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture(autouse=True)
def thresholds() -> Iterator[tuple[int, int, int]]:
    """Every test leaves the suite's collector as it found it (and fails if it did not)."""
    before = gc.get_threshold()
    yield before
    after = gc.get_threshold()
    gc.set_threshold(*before)
    assert after == before


def garbage_in_generation_2() -> weakref.ref[Cycle]:
    """A cycle, dropped once it sits in generation 2, where only a full collection reaches it."""
    cycle = Cycle()
    gc.collect(1)  # survivors of generation 1 move to generation 2
    ref = weakref.ref(cycle)
    del cycle
    return ref


def ballast() -> list[list[int]]:
    """Objects moved into generation 2 before a test measures it, so that what the test itself promotes (and what
    the suite left in the young generations) is well under a quarter of it. After ``gc.freeze()`` (the server's
    ``freeze_imports``, run by earlier tests) generation 2 may hold a few hundred objects, and a quarter of it is
    crossed by the young survivors alone: the test saw a collection due that it expected not to be."""
    held = [[] for _ in range(20_000)]
    gc.collect(1)  # survivors of generation 1 (the ballast, and whatever young objects there were) to generation 2
    return held


def make_due(c: IdleCollector) -> list[list[int]]:
    """What makes CPython run a full collection: generation 2 grown by a quarter of its size, and more than
    ``threshold2`` generation-1 collections since the last full one. Returns what keeps generation 2 grown."""
    grown = [[] for _ in range(c.long_lived // 4 + 1000)]
    for _ in range(c.threshold2 + 1):
        gc.collect(1)
    return grown


def test_the_policy_holds_back_only_full_collections_and_gives_cpythons_thresholds_back(thresholds) -> None:
    t0, t1, t2 = thresholds
    with held_full_collections() as c:
        assert gc.get_threshold() == (t0, t1, HELD) and c.threshold2 == t2
        with pytest.raises(RuntimeError, match="installed already"):
            c.install()
    assert gc.get_threshold() == thresholds
    with pytest.raises(RuntimeError, match="a click failed"), held_full_collections():
        raise RuntimeError("a click failed")
    assert gc.get_threshold() == thresholds


def test_allocation_no_longer_runs_a_full_collection_the_idle_tick_does() -> None:
    """Allocations that make CPython run a full collection run none under the policy (on the old code, the
    ``fulls`` count moves); the idle tick then runs it and the garbage in generation 2 is freed."""
    with held_full_collections() as c:
        ref = garbage_in_generation_2()
        fulls = gc.get_stats()[2]["collections"]
        grown = [[] for _ in range(c.long_lived // 4 + 1000)]  # generation 0 and 1 collect on their own
        grown += [[] for _ in range((c.threshold2 + 2) * gc.get_threshold()[0] * gc.get_threshold()[1])]
        assert gc.get_count()[2] > c.threshold2
        assert gc.get_stats()[2]["collections"] == fulls and ref() is not None
        assert c.due() and c.idle_tick()
        assert ref() is None and len(c.runs_ms) == 1 and c.runs_ms[0] >= 0
        assert gc.get_count()[2] == 0 and not c.due() and not c.idle_tick()
        assert len(grown) > 0


def test_a_full_collection_is_not_run_before_cpython_would_have() -> None:
    held = ballast()
    with held_full_collections() as c:
        ref = garbage_in_generation_2()
        for _ in range(c.threshold2 + 1):  # enough generation-1 collections, generation 2 not grown by a quarter
            gc.collect(1)
        assert not c.due() and not c.idle_tick()
        grown = [[] for _ in range(c.long_lived // 4 + 1000)]
        gc.collect(1)  # the growth is seen at the next generation-1 collection
        assert c.due() and c.idle_tick() and ref() is None
        assert len(grown) > 0 and c.runs_ms and held


def test_another_full_collection_counts_as_the_last_one() -> None:
    """A full collection run elsewhere (a closed tab's memory release) restarts the count, as it does CPython's."""
    held = ballast()
    with held_full_collections() as c:
        grown = make_due(c)
        gc.collect()
        for _ in range(c.threshold2 + 1):
            gc.collect(1)
        assert not c.due() and not c.runs_ms
        grown += make_due(c)
        assert c.due() and held


def test_the_tick_waits_for_an_idle_second_unless_the_collection_is_overdue() -> None:
    with held_full_collections() as c:
        assert not c.tick()  # nothing due: nothing run
        grown = make_due(c)
        for _ in range(QUIET + 1):  # a click's worth of allocation since the last tick
            gc.collect(0)
        assert not c.tick() and not c.runs_ms
        assert c.tick() and len(c.runs_ms) == 1  # a second later, idle: run
        grown += make_due(c)
        while gc.get_count()[2] < OVERDUE:
            gc.collect(1)
        for _ in range(QUIET + 1):
            gc.collect(0)
        assert c.tick() and len(c.runs_ms) == 2  # busy, but overdue
        assert "2 ran" in c.summary() and IdleCollector().summary() == "0 ran"


def test_serve_schedules_the_tick_on_the_servers_ioloop(monkeypatch: pytest.MonkeyPatch, thresholds) -> None:
    scheduled: list[tuple] = []
    monkeypatch.setattr(collector.pn.state, "schedule_task", lambda *a, **k: scheduled.append((a, k)))
    c = start_idle_collection()
    try:
        assert scheduled == [((collector.TASK, c.tick), {"period": "1s"})]
        assert gc.get_threshold() == (*thresholds[:2], HELD)
    finally:
        c.uninstall()
