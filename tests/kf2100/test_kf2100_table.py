"""Kung Fu 2100 at a table (engine/kf2100/table.py): what a seat's file seals (the face-down counters, the set-up
queue, the unplayed chits, the generator and the seed), that it loads back into the same game, that an edited
copy is refused with its reason, the table's summary, and the bot seat's step worked out off the loop."""

from __future__ import annotations

import json
import re

import pytest

from engine.core import StateFormatError, dump_state
from engine.core.seal import SEALED, TOKEN_FIELD, Sealer
from engine.core.session import BOT, PERSON
from engine.core.tables import TableRegistry, new_token
from engine.kf2100.actions import Chits
from engine.kf2100.session import KungFuSession, default_seats
from engine.kf2100.state import PHASE_TITLES
from engine.kf2100.steps import Step
from engine.kf2100.table import KF2100_TABLE, bot_play, bot_think, hidden, summary


@pytest.fixture
def sealer(tmp_path):
    return Sealer.in_folder(tmp_path)


def table_session(sealer, seats=(PERSON, PERSON)) -> KungFuSession:
    s = KF2100_TABLE.new_session(sealer)
    s.seats = default_seats(*seats)
    return s


def face_down(s: KungFuSession) -> list[str]:
    return [f.id for f in s.state.figs.values() if f.side == 1 and not f.face_up]


def named(fid: str, text: str) -> bool:
    """Whether ``text`` names the figure ``fid`` where a reader of the file sees it. A saved file's sealed part is
    left out: its ciphertext is random base64, which spells a short id such as J3 between two word boundaries
    ("+J3/") by chance (a whole-suite run failed so, and passed again alone)."""
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict) and TOKEN_FIELD in data:
        text = json.dumps({k: v for k, v in data.items() if k != TOKEN_FIELD})
    return re.search(rf"\b{re.escape(fid)}\b", text) is not None


def at_combat(sealer) -> tuple[KungFuSession, str]:
    """A table's game where the Terminators entered by the disposal, walked into the kitchen next to a face-down
    Jelly (it turned face up) and the combat waits for T1's chits."""
    s = table_session(sealer)
    st = s.state.clone()
    jelly = next(f for f in st.figs.values() if f.kind == "jelly" and not f.face_up)
    jelly.pos = st.game.board.square("e2")
    s.load(dump_state(st))
    for fid, entry in (("T1", "disposal"), ("T2", "disposal"), ("T3", "loo")):
        assert s.wait_at(fid, entry), s.notice.text
    assert s.end()  # the Clone Master stays hidden
    assert s.move("c3", "T1") and s.move("d2", "T1") and s.end() and s.end(), s.notice.text
    assert s.state.step is Step.PICK and s.state.combat.to_pick == ["T1", jelly.id]
    return s, jelly.id


def test_a_seats_file_names_no_face_down_counter_and_holds_no_generator_or_seed(sealer):
    s = table_session(sealer)
    hidden_ids = face_down(s)
    assert len(hidden_ids) == 33 and s.state.phase == "entry"  # the bot placed the Clone Master's counters
    text = s.save()
    data = json.loads(text)
    assert data["rng"] == SEALED and data["seed"] == SEALED and TOKEN_FIELD in data
    assert [fid for fid in hidden_ids if named(fid, text)] == []
    figures = data["game"]["state"]["figures"]
    assert figures.count(SEALED) == 33 and all(f["kind"] == "terminator" for f in figures if f != SEALED)
    state = s.rng.bit_generator.state["state"]
    assert not any(str(x) in text for x in (s.seed, state["state"], state["inc"]))
    plain = KungFuSession.save(s)  # the engine's own save names every counter: the check above would see it
    assert all(named(fid, plain) for fid in hidden_ids) and str(s.seed) in plain


def test_a_seats_file_loads_back_into_the_same_game(sealer):
    s = table_session(sealer)
    text = s.save()
    back = table_session(sealer)
    back.load(text)
    assert back.state.to_dict() == s.state.to_dict() and back.seed == s.seed and back.log == s.log
    assert back.rng.bit_generator.state == s.rng.bit_generator.state
    for session in (s, back):  # the same generator: the same game from here on
        for fid, entry in (("T1", "disposal"), ("T2", "loo"), ("T3", "loo")):
            assert session.wait_at(fid, entry)
        session.seats = default_seats(PERSON, BOT)  # the bot and the dice play on to the Terminators' move
        session.step()
    assert back.state.to_dict() == s.state.to_dict() and back.log == s.log


@pytest.mark.parametrize(("edit", "reason"), [
    (lambda d: d["game"]["state"].__setitem__("turn", 2), "changed after it was saved"),
    (lambda d: d["game"]["state"]["figures"].__setitem__(0, SEALED), "changed after it was saved"),
    (lambda d: d.__setitem__(TOKEN_FIELD, [d[TOKEN_FIELD][0][:-8] + "AAAAAAAA", *d[TOKEN_FIELD][1:]]),
     "does not open with this server's key"),
])
def test_an_edited_copy_is_refused_with_its_reason_and_the_game_goes_on(sealer, edit, reason):
    s = table_session(sealer)
    data = json.loads(s.save())
    edit(data)
    other = table_session(sealer)
    before, version = other.save(), other.version
    with pytest.raises(StateFormatError, match=reason):
        other.load(json.dumps(data))
    assert not other.try_load(json.dumps(data)) and reason in other.notice.text
    assert other.version == version and json.loads(other.save())["game"] == json.loads(before)["game"]


def test_the_unplayed_chits_are_sealed_and_come_back(sealer):
    s, jelly = at_combat(sealer)
    assert s.attempt(s.play, Chits("T1", ("fist", "fist", "kick")))
    assert s.state.combat.chits == {"T1": ["fist", "fist", "kick"]} and s.person_to_move() == 1
    text = s.save()
    data = json.loads(text)
    assert data["game"]["state"]["combat"]["chits"] == SEALED
    assert named(jelly, text)  # face up now: the file names it, with its square
    back = table_session(sealer)
    back.load(text)
    assert back.state.combat.chits == {"T1": ["fist", "fist", "kick"]} and back.state.to_dict() == s.state.to_dict()


def test_the_set_up_queue_is_sealed_while_the_clone_master_places(sealer):
    s = table_session(sealer)
    assert s.new_game(7, seats=[PERSON, PERSON])
    assert s.state.phase == "setup" and s.person_to_move() == 1
    text = s.save()
    assert json.loads(text)["game"]["state"]["queue"] == SEALED
    assert not any(named(fid, text) for fid in face_down(s))
    assert named(s.state.queue[0], json.dumps(json.loads(KungFuSession.save(s))["game"]["state"]["queue"]))
    assert ("game", "state", "queue") in hidden(json.loads(KungFuSession.save(s)))


def test_the_summary_says_turn_phase_and_who_is_to_move(sealer):
    s, _ = at_combat(sealer)
    assert summary(s) == f"turn 1, {PHASE_TITLES['combat1']}: Terminators to move"
    assert summary(table_session(sealer)) == f"turn 1, {PHASE_TITLES['entry']}: Terminators to move"


def test_a_bot_seats_step_is_worked_out_on_copies_and_refused_once_stale(sealer):
    s, _ = at_combat(sealer)
    assert s.attempt(s.play, Chits("T1", ("fist", "fist", "kick")))
    s.seats = default_seats(PERSON, BOT)
    assert s.bot_to_move()
    version, before = s.version, s.state.to_dict()
    think = bot_think(s)
    assert s.state.to_dict() == before and s.version == version  # thinking changes nothing
    result = think()
    assert bot_play(s, result, version) and s.version > version and not s.bot_to_move()
    assert len(s.state.combat.chits) == 2 and s.state.step is Step.LEAD
    after, now = s.state.to_dict(), s.version
    assert not bot_play(s, result, version)  # a step for an earlier moment is refused, changing nothing
    assert s.state.to_dict() == after and s.version == now


def test_a_table_of_kung_fu_2100_is_written_and_reopened(tmp_path):
    games = {KF2100_TABLE.slug: KF2100_TABLE}
    reg = TableRegistry(tmp_path / "tables", games, Sealer.in_folder(tmp_path))
    token = new_token()
    table = reg.create("kf2100", token)
    assert table.seats_of(token) == ["Terminators"] and table.free_seats() == ["Clone Master"]
    assert table.session.wait_at("T1", "disposal")
    file_text = reg.path(table.id).read_text()
    assert not any(named(fid, file_text) for fid in face_down(table.session))
    reg.drop_all()
    again = TableRegistry(tmp_path / "tables", games, Sealer.in_folder(tmp_path)).get(table.id)
    assert again.session.state.to_dict() == table.session.state.to_dict()
    assert again.session.rng.bit_generator.state == table.session.rng.bit_generator.state
