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
