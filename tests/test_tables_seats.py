"""Who may change a table's seats, without a browser: at a Kung-Fu Zoo table only its maker may change the number
of teams (a player's seat would go from under them), and a refused change says why on that page and changes
nothing."""

from __future__ import annotations

from dataclasses import replace

import pytest

from apps._tables import TablePage
from apps.zoo import ZooPage
from engine.core.seal import Sealer
from engine.core.tables import TableRegistry, new_token
from engine.zoo.table import ZOO_TABLE

pytestmark = pytest.mark.no_event_loop  # the bot driver plays at once only with no running loop

LIGHT_ZOO = replace(ZOO_TABLE, session_options={**ZOO_TABLE.session_options, "bot_candidates": 2, "bot_samples": 1})
SEATS_2 = ["P1 (Crocodile)", "P2 (Elephant)"]
SEATS_4 = ["P1 (Crocodile)", "P2 (Elephant)", "P3 (Gorilla)", "P4 (Zebra)"]


@pytest.fixture
def registry(tmp_path):
    return TableRegistry(tmp_path / "tables", {"zoo": LIGHT_ZOO}, Sealer.in_folder(tmp_path))


def zoo_page(table, _token, may_act):
    return ZooPage(session=table.session, may_act=may_act, background=False)


def test_only_the_zoo_tables_maker_may_change_the_number_of_teams(registry):
    maker, player = new_token(), new_token()
    table = registry.create("zoo", maker)
    s = table.session
    assert table.take(SEATS_2[1], player) == ""
    mine, theirs = (TablePage(t, zoo_page, table=table) for t in (maker, player))
    kept, log, seats = s.state.to_json(), list(s.log), dict(table.seats)
    controls = theirs.game.controls
    controls.players.value = 4  # the second player asks for four teams: refused on their page, nothing changes
    assert not controls.new_game()
    assert theirs.bar.said == "Not done: only the table's maker may change the number of players at it."
    assert s.state.to_json() == kept and s.log == log and table.seats == seats and s.players == 2
    assert controls.players.value == 2 and mine.bar.said == ""
    assert controls.new_game() and s.players == 2 and theirs.bar.said == ""  # the same number: any player may
    mine.game.controls.players.value = 4  # the maker may
    assert mine.game.controls.new_game() and table.seat_names() == SEATS_4
    assert table.seats_of(maker) == [SEATS_4[0]] and table.seats_of(player) == [SEATS_4[1]]
    for page in (mine, theirs):
        page.close()
