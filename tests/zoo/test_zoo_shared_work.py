"""A Zoo table's odds and heat map are worked out once for all its pages (:class:`apps.zoo.work.SharedWork`):
three pages at a table cost one page's pieces of work, and each shows what a page of its own works out alone."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import replace

import pytest

import engine.zoo.odds as odds_module
from apps._tables import TablePage
from apps.zoo import ZooPage, table_work
from apps.zoo import panels as zp
from apps.zoo.work import SharedWork
from engine.core.seal import Sealer
from engine.core.tables import TableRegistry, new_token
from engine.zoo.session import ZooSession
from engine.zoo.table import ZOO_TABLE

pytestmark = pytest.mark.no_event_loop  # asyncio.run

LIGHT = replace(ZOO_TABLE, session_options={**ZOO_TABLE.session_options, "bot_candidates": 2, "bot_samples": 1})


def test_three_pages_at_a_table_work_the_odds_and_the_map_out_once(tmp_path):
    reg = TableRegistry(tmp_path / "tables", {"zoo": LIGHT}, Sealer.in_folder(tmp_path))
    table = reg.create("zoo", new_token())
    s = table.session
    assert s.choose_die("C1") and s.launch_spot("S-dot") and s.propose_flick(0.0, 1.2)
    pages = [TablePage(new_token(), lambda t, _token, may_act: ZooPage(session=t.session, may_act=may_act,
                                                                        background=False, shared=table_work(t)),
                       table=table) for _ in range(3)]
    alone = ZooPage(session=s, background=False)  # a page of its own over the same battle: its own work

    async def work(panels):
        await asyncio.gather(*(p._estimate() for p in panels))
        await asyncio.gather(*(p._map() for p in panels))

    asyncio.run(work([p.game.odds for p in pages]))
    asyncio.run(work([alone.odds]))
    shared, own = table_work(table), alone.odds.shared
    pieces = 1 + len(zp.ODDS_CHUNKS) + len(zp.GRID_SPEEDS) * len(range(0, len(zp.GRID_DIRECTIONS), zp.MAP_PIECE_CELLS))
    assert own.computed == pieces and shared.computed == pieces  # three pages, one page's work: the flick rehearsed
    assert s._rehearsed is not None and s._rehearsed.flick == s.proposed_flick()  # once, kept for its commit
    for p in pages:
        o = p.game.odds
        assert o.odds == alone.odds.odds and o.odds.samples == sum(zp.ODDS_CHUNKS)
        assert o.grid.equals(alone.odds.grid) and o.mapped == alone.odds.mapped == len(o.grid)
    assert s.propose_flick(15.0, 1.2)  # a new aim: new odds, worked out once more; the map is kept
    asyncio.run(work([p.game.odds for p in pages]))
    assert shared.computed == pieces + 1 + len(zp.ODDS_CHUNKS)
    for p in pages:
        p.close()


def test_a_tables_shared_work_keeps_only_the_battle_now_at_the_table():
    """A move makes the pieces of the battle before it dead: they are dropped, not kept up to the limit (the
    load test's Zoo table grew ~27 MB that way), and a piece of an old battle finishing late is not kept."""
    work = SharedWork(limit=4)

    async def play() -> None:
        assert await work.get((1, 5), "a", lambda: "a5") == "a5"
        assert await work.get((1, 5), "b", lambda: "b5") == "b5"
        assert await work.get((1, 5), "a", lambda: "again") == "a5" and work.computed == 2  # kept for its battle
        late = asyncio.ensure_future(work.get((1, 5), "c", lambda: "c5"))
        await asyncio.sleep(0)  # the old battle's piece is running when the move comes
        assert await work.get((1, 6), "a", lambda: "a6") == "a6"  # the battle after a move: worked out anew
        assert await late == "c5"  # the page that asked still gets its answer
        assert list(work.done) == [((1, 6), "a")]
        for k in "bcdef":
            await work.get((1, 6), k, lambda k=k: k)
        assert len(work.done) == 4  # the limit within one battle
        assert await work.get((2, 0), "a", lambda: "new game") == "new game" and list(work.done) == [((2, 0), "a")]

    asyncio.run(play())


def test_a_move_stops_the_pieces_of_the_battle_before_it_and_the_page_shows_no_failure(monkeypatch):
    """The odds still being worked out when a flick is committed stop within a few flicks (they took the CPU
    from the move's physics and the pages drawing it); the page's run ends quietly, the next battle's follows."""
    work = SharedWork()
    five = work.stop_of((1, 5))
    assert work.stop_of((1, 5)) is five and not five.is_set()
    work.moved_on((1, 5))
    assert not five.is_set()
    work.moved_on((1, 6))
    assert five.is_set() and not work.stop_of((1, 6)).is_set()

    s = ZooSession(seed=4)
    assert s.choose_die("C1") and s.launch_spot("S-dot") and s.propose_flick(0.0, 1.2)
    page = ZooPage(session=s, background=False)
    odds = page.odds
    started = threading.Event()
    real, played_real = zp.run_samples, odds_module.play_samples
    played: list[int] = []

    def slow(*args):  # the first piece: long enough for the move to arrive while it runs
        started.set()
        return real(args[0], args[1] * 40, *args[2:])

    def counted(state, jobs):
        played.append(len(jobs))
        return played_real(state, jobs)

    async def play() -> None:
        run = asyncio.ensure_future(odds._run().__anext__())
        while not started.is_set():
            await asyncio.sleep(0.01)
        assert s.commit_flick() is not None  # the move: the battle's version moves on
        with pytest.raises(StopAsyncIteration):
            await run

    monkeypatch.setattr(zp, "run_samples", slow)
    monkeypatch.setattr(odds_module, "play_samples", counted)
    asyncio.run(play())
    asked = 40 * zp.ODDS_CHUNKS[0]
    assert 0 < sum(played) < asked  # the piece stopped part of the way, not after all its flicks
    assert "failed" not in odds.why_no_odds and not odds.busy and odds.odds is None
