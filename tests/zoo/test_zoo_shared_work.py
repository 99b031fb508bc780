"""A Zoo table's odds and heat map are worked out once for all its pages (:class:`apps.zoo.panels.SharedWork`):
three pages at a table cost one page's pieces of work, and each shows what a page of its own works out alone."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from apps._tables import TablePage
from apps.zoo import ZooPage, table_work
from apps.zoo import panels as zp
from engine.core.seal import Sealer
from engine.core.tables import TableRegistry, new_token
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
    pieces = len(zp.ODDS_CHUNKS) + len(zp.GRID_SPEEDS) * len(range(0, len(zp.GRID_DIRECTIONS), zp.MAP_PIECE_CELLS))
    assert own.computed == pieces and shared.computed == pieces  # three pages, one page's work
    for p in pages:
        o = p.game.odds
        assert o.odds == alone.odds.odds and o.odds.samples == sum(zp.ODDS_CHUNKS)
        assert o.grid.equals(alone.odds.grid) and o.mapped == alone.odds.mapped == len(o.grid)
    assert s.propose_flick(15.0, 1.2)  # a new aim: new odds, worked out once more; the map is kept
    asyncio.run(work([p.game.odds for p in pages]))
    assert shared.computed == pieces + len(zp.ODDS_CHUNKS)
    for p in pages:
        p.close()


def test_a_tables_shared_work_keeps_only_the_battle_now_at_the_table():
    """A move makes the pieces of the battle before it dead: they are dropped, not kept up to the limit (the
    load test's Zoo table grew ~27 MB that way), and a piece of an old battle finishing late is not kept."""
    work = zp.SharedWork(limit=4)

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
