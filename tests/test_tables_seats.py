"""Who may change a table's seats, without a browser: at a Kung-Fu Zoo table only its maker may change the number
of teams (a player's seat would go from under them), and a refused change says why on that page and changes
nothing; a file loaded at a table keeps the table's seats (a bot of the file never plays a person's seat), and a
file with another number of seats is refused with the reason."""

from __future__ import annotations

from dataclasses import replace

import pytest

from apps._tables import TablePage
from apps.zoo import ZooPage
from engine.core.protocol import StateFormatError
from engine.core.seal import Sealer
from engine.core.session import BOT, PERSON
from engine.core.tables import TableRegistry, new_token, table_class
from engine.kf2100.session import KungFuSession, default_seats
from engine.kf2100.steps import Step
from engine.kf2100.table import KF2100_TABLE
from engine.kf2100.table import hidden as kf2100_hidden
from engine.zoo.table import ZOO_TABLE

pytestmark = pytest.mark.no_event_loop  # the bot driver plays at once only with no running loop

LIGHT_ZOO = replace(ZOO_TABLE, session_options={**ZOO_TABLE.session_options, "bot_candidates": 2, "bot_samples": 1})
SEATS_2 = ["P1 (Crocodile)", "P2 (Elephant)"]
SEATS_4 = ["P1 (Crocodile)", "P2 (Elephant)", "P3 (Gorilla)", "P4 (Zebra)"]


@pytest.fixture
def registry(tmp_path):
    return TableRegistry(tmp_path / "tables", {"zoo": LIGHT_ZOO, "kf2100": KF2100_TABLE}, Sealer.in_folder(tmp_path))


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


def test_a_file_loaded_at_a_table_keeps_the_tables_seats_and_its_bot_plays_no_persons_seat(registry):
    """The file says the Clone Master is a bot, at his move; at this table a person holds his seat."""
    terminators, clone_master = new_token(), new_token()
    table = registry.create("kf2100", terminators)
    assert table.take("Clone Master", clone_master) == ""
    other = table_class(KungFuSession, kf2100_hidden)(seed=5, pace=True)  # paced: the file stops at the bot's move
    other.sealer = registry.sealer
    other.seats = default_seats(PERSON, BOT)
    for fid, entry in (("T1", "disposal"), ("T2", "disposal"), ("T3", "loo")):
        assert other.wait_at(fid, entry), other.notice.text
    assert other.state.step is Step.CM_WINDOW and other.state.current_player() == 1
    text = other.save()
    s = table.session
    s.load(text)
    assert [x.kind for x in s.seats] == [PERSON, PERSON] and s.person_to_move() == 1  # the person decides
    assert s.state.step is Step.CM_WINDOW and s.state.to_json() == other.state.to_json()  # the bot did not move
    assert table.seats_of(clone_master) == ["Clone Master"] and table.seats_of(terminators) == ["Terminators"]
    assert s.notice.text.endswith("The seats stay as this table has them (the file had: Terminators a person, "
                                  "Clone Master a bot).")


def test_a_file_of_another_number_of_teams_is_refused_at_a_table_and_changes_nothing(registry):
    maker, player = new_token(), new_token()
    table = registry.create("zoo", maker)
    assert table.take(SEATS_2[1], player) == ""
    four = registry.create("zoo", new_token()).session
    four.param.update(players=4, teams=["crocodile", "elephant", "gorilla", "zebra"])
    assert four.new_game()
    s = table.session
    kept, log, seats, version = s.state.to_json(), list(s.log), dict(table.seats), s.version
    with pytest.raises(StateFormatError, match="the file is a game of 4 players and this table has 2 seats"):
        s.load(four.save())
    assert s.state.to_json() == kept and s.log == log and table.seats == seats and s.version == version
    assert not s.try_load(four.save()) and "a table keeps its seats" in s.notice.text
