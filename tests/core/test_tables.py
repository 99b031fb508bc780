"""The table registry (engine/core/tables.py): limits, idle write-out and reopening, seat tokens, watchers and
seats handed to a bot."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from engine.core.seal import Sealer
from engine.core.session import BOT, PERSON
from engine.core.tables import MIN_TABLES, TableError, TableRegistry, new_token, token_key
from engine.kzin.table import KZIN_TABLE

LIGHT = replace(KZIN_TABLE, session_options={"advisor_rollouts": 60})


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def registry(tmp_path, clock):
    return TableRegistry(tmp_path / "tables", {"kzin": LIGHT}, Sealer.in_folder(tmp_path), max_tables=MIN_TABLES,
                         idle_seconds=600, clock=clock)


def decline(table, token):
    s = table.session
    assert table.refusal(token) == ""
    assert s.fall_back() if s.decision() == "invasion" else s.pass_turn()


def test_the_maker_holds_the_first_seat_and_only_a_hash_of_the_token_is_kept(registry, tmp_path):
    a = new_token()
    table = registry.create("kzin", a)
    assert table.seats == {"Humans": token_key(a)} and table.seats_of(a) == ["Humans"]
    assert a not in (tmp_path / "tables" / f"{table.id}.json").read_text()


def test_another_browser_cannot_act_for_a_taken_seat_and_a_refusal_changes_nothing(registry):
    a, b = new_token(), new_token()
    table = registry.create("kzin", a)
    seats = dict(table.seats)
    assert table.take("Humans", b) == "the Humans' seat is taken by another player"
    assert table.leave("Humans", b) == "you do not hold the Humans' seat"
    assert table.hand_to_bot("Humans", b) == "you do not hold the Humans' seat"
    assert table.seats == seats
    assert table.refusal(b) == "you are watching this table: only the players at it can act"
    assert table.refusal(b, move=False) == table.refusal(b)
    assert table.refusal("not a token") == table.refusal(b)
    assert table.refusal(a) == ""


def test_a_seat_left_is_free_and_taken_by_the_next_browser(registry):
    a, b = new_token(), new_token()
    table = registry.create("kzin", a)
    assert table.leave("Humans", a) == "" and table.free_seats() == ["Humans"]
    assert table.refusal(a).startswith("you are watching")
    assert table.take("Humans", b) == "" and table.seats_of(b) == ["Humans"] and table.seats_of(a) == []


def test_a_seat_handed_to_a_bot_is_played_by_the_session_and_taken_back(registry):
    a = new_token()
    table = registry.create("kzin", a)
    assert table.hand_to_bot("Humans", a) == ""
    assert table.seats["Humans"] == BOT and table.session.seats[0].kind == BOT
    assert table.session.bot_to_move() and table.refusal(a).startswith("you are watching")
    version = table.session.version
    table.session.step()  # what the page's bot driver does, off the loop, for the Kzin advisor
    assert table.session.version > version
    assert table.take("Humans", a) == "" and table.session.seats[0].kind == PERSON


def test_at_least_fifty_tables_and_the_limit_drops_the_longest_unseen_first(registry, clock):
    tables = []
    for i in range(MIN_TABLES):
        clock.now += 1
        tables.append(registry.create("kzin", new_token()))
        if i > 0:
            registry.attach(tables[-1], watcher=False)  # every page open but the first table's
    assert len(registry.tables) == MIN_TABLES
    clock.now += 1
    extra = registry.create("kzin", new_token())  # room is made: the first table, which no page shows, goes
    assert tables[0].id not in registry.tables and extra.id in registry.tables
    registry.attach(extra, watcher=False)
    with pytest.raises(TableError, match="holds its most tables"):
        registry.create("kzin", new_token())  # every table in memory is on a page: none can go
    with pytest.raises(ValueError, match="at least 50"):
        TableRegistry(registry.folder, registry.games, registry.sealer, max_tables=10)


def test_an_idle_table_is_written_out_dropped_and_reopened_as_it_was(registry, clock):
    a = new_token()
    table = registry.create("kzin", a)
    decline(table, a)
    registry.attach(table, watcher=True)
    clock.now += 10_000
    assert registry.sweep() == []  # a page still shows it
    registry.detach(table, watcher=True)
    clock.now += 599
    assert registry.sweep() == []
    clock.now += 2
    assert registry.sweep() == [table.id] and table.id not in registry.tables
    back = registry.get(table.id)
    assert back is not table and back.seats == table.seats and back.seats_of(a) == ["Humans"]
    assert back.session.state.to_dict() == table.session.state.to_dict() and back.session.log == table.session.log
    assert back.session.rng.bit_generator.state == table.session.rng.bit_generator.state
    assert back.session.seed == table.session.seed
    decline(back, a)  # the reopened game plays on, and is written again
    record = json.loads(registry.path(back.id).read_text())
    assert record["session"]["log"] == json.loads(back.session.save())["log"]


def test_the_listing_holds_tables_in_memory_and_on_disk_and_survives_a_restart(registry, clock, tmp_path):
    a = new_token()
    kept, dropped = registry.create("kzin", a), registry.create("kzin", new_token())
    clock.now += 1000
    registry.sweep()
    assert {i.id for i in registry.listing("kzin")} == {kept.id, dropped.id}
    restarted = TableRegistry(registry.folder, registry.games, registry.sealer, clock=clock)
    infos = {i.id: i for i in restarted.listing()}
    assert infos[kept.id].held_by(a) == ["Humans"] and infos[dropped.id].held_by(a) == []
    assert infos[kept.id].state_of("Humans") == "taken"
    assert infos[kept.id].summary == f"turn {kept.session.state.turn}, marker on {kept.session.state.kem}"


@pytest.mark.parametrize("name", ["../etc", "a/b", "", "x" * 40, "short"])
def test_an_id_that_is_not_a_table_id_never_names_a_file(registry, name):
    with pytest.raises(TableError, match="not a table id"):
        registry.get(name)


def test_a_damaged_table_file_is_refused_with_its_reason(registry):
    table = registry.create("kzin", new_token())
    registry.drop_all()
    path = registry.path(table.id)
    record = json.loads(path.read_text())
    record["seats"]["Humans"] = "someone"
    path.write_text(json.dumps(record))
    with pytest.raises(TableError, match=r"seats of table .* are damaged"):
        registry.get(table.id)
    record["seats"]["Humans"] = None
    record["session"]["log"][-1]["detail"] = "edited"
    path.write_text(json.dumps(record))
    with pytest.raises(TableError, match="changed after it was saved"):
        registry.get(table.id)
    with pytest.raises(TableError, match="no table"):
        registry.get("AAAAAAAAAAA")
