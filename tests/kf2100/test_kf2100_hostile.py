"""Kung Fu 2100 against hostile input (issue 18): wrongly typed or out-of-range moves, forged save files."""

from __future__ import annotations

import numpy as np
import pytest

from engine.core import IllegalActionError
from engine.kf2100.actions import Attack, Chits, Lead, Move, Roll
from engine.kf2100.state import KungFuGame

BASIC = KungFuGame("basic")


@pytest.mark.parametrize("action", [Lead(2), Lead(-1), Lead("x"), Lead(None), Roll(7), Roll(0), Roll("6"),
                                    Move(["T1"], "e2"), Move("T1", None), Move("T1" * 100, "e2"),
                                    Chits("T1", ["fist"]), Chits("T1", ("fist", 3)), Attack("T1", "kick", 5)])
def test_a_malformed_move_is_refused_and_changes_nothing(action):
    s = BASIC.new_initial_state()
    assert str(action)  # a malformed move still prints (a view may show the refused move)
    before = s.to_json()
    assert s.illegal_reason(action)
    with pytest.raises(IllegalActionError):
        s.apply_action(action)
    assert s.to_json() == before


@pytest.mark.parametrize("thing", [None, 3, b"end", ["end"]])
def test_things_that_are_not_moves_are_refused(thing):
    s = BASIC.new_initial_state()
    with pytest.raises(IllegalActionError):
        s.apply_action(thing)


# --- forged files: consistent checksums, impossible contents (points 2, 4 and 5) ---------------------------------

import json  # noqa: E402

from engine.core import StateFormatError, dump_state, load_state  # noqa: E402
from engine.core.serialize import checksum, dump_session, session_checksum  # noqa: E402
from engine.core.session import BOT  # noqa: E402
from engine.kf2100.session import SESSION_FORMAT, SESSION_VERSION, KungFuSession, default_seats  # noqa: E402
from engine.kf2100.state import skirmish  # noqa: E402

PAYLOAD = "<img src=x onerror=alert(1)>"


def _in_combat():
    """T1 and J3 mid-exchange: both picked chits, T1's kick attack on J3 waits for J3's answer."""
    s = skirmish(BASIC, {"T1": "n9", "J3": "o9", "T2": "b2", "S1": "x2"}, phase="combat1")
    for move in ("chits T1 fist+kick+mist", "chits J3 fist+mist", "lead terminators", "attack T1 kick J3",
                 "answer J3 mist", "d6 1"):
        s.apply_action(move)
    return s


def _session_text(state) -> str:
    return dump_session(SESSION_FORMAT, SESSION_VERSION, state, np.random.default_rng(3), 3,
                        [e for e in state.log if "roll" in e], seats=["person", "person"])


def _forged(state, edit) -> str:
    """The state's session file with ``edit`` applied to the saved position, both checksums recomputed."""
    data = json.loads(_session_text(state))
    edit(data["game"]["state"])
    data["game"]["checksum"] = checksum(data["game"]["rules"], data["game"]["state"])
    data["checksum"] = session_checksum(data)
    return json.dumps(data)


def _figure(state_data, fid):
    return next(f for f in state_data["figures"] if f["id"] == fid)


def _set_figure(fid, **fields):
    return lambda d: _figure(d, fid).update(fields)


def _set_combat(**fields):
    return lambda d: d["combat"].update(fields)


DOOR = BASIC.board.names[BASIC.board.front_door]


def _door(d):
    _figure(d, "S1").update(pos=BASIC.board.front_door)


def _log(entry):
    return lambda d: d["log"].append(entry)


ROLL = {"turn": 1, "phase": "combat1", "roll": 3, "need": 3, "what": "T1 kick on J3 (answer J3 mist)", "p": "1/2",
        "result": "hit", "target": "J3", "target_side": 1}

FORGERIES = {
    "a combat member that does not exist": _set_combat(members=["J3", "T1", "T9"]),
    "chits of a figure that does not exist": _set_combat(chits={"J3": ["fist"], "Z7": ["fist"]}),
    "chits of a figure not in the combat": _set_combat(chits={"J3": ["fist"], "T2": ["fist"]}),
    "an attack by a figure not in the combat": _set_combat(attack=["T2", "kick", "J3"]),
    "an attack on a figure that does not exist": _set_combat(attack=["T1", "kick", "J9"]),
    "a loss for a figure that does not exist": _set_combat(step="loss", pending_loss="J9"),
    "an untrained attack on nobody": _set_combat(untrained=[["Q1", 2]]),
    "50 fist chits": _set_combat(chits={"T1": ["fist"] * 50}),
    "more fist chits than levels": _set_combat(chits={"T1": ["fist", "fist", "fist"]}),
    "a bazooka chit": _set_combat(chits={"T1": ["bazooka"]}),
    "a chit that is not text": _set_combat(chits={"T1": [7]}),
    "a servant on the armored door": _door,
    "a servant on a wall": _set_figure("S1", pos=0),
    "a servant escaped": _set_figure("S1", status="escaped", pos=-1),
    "a figure with movement points as text": _set_figure("T2", mp="3"),
    "a figure face up as 1": _set_figure("T2", face_up=1),
    "a turn as a float": lambda d: d.update(turn=1.0),
    "a result that is not a grade": lambda d: d.update(phase="over", result=PAYLOAD),
    "a queue naming nobody": lambda d: d.update(queue=["X9"]),
    "an unknown field": lambda d: d.update(extra=1),
    "a roll entry holding markup": _log({**ROLL, "what": PAYLOAD}),
    "an event holding markup": _log({"turn": 1, "phase": "combat1", "event": PAYLOAD}),
    "an event the rules never write": _log({"turn": 1, "phase": "combat1", "event": "T1 wins the lottery"}),
    "a roll entry with an extra field": _log({**ROLL, "html": PAYLOAD}),
    "a roll entry with its roll as text": _log({**ROLL, "roll": "3"}),
    "a roll of 7": _log({**ROLL, "roll": 7}),
    "a roll entry whose chance does not match": _log({**ROLL, "p": "1/6"}),
    "a miss recorded as a hit": _log({**ROLL, "roll": 5}),
    "a roll on a target that does not exist": _log({**ROLL, "target": "J9"}),
    "a log entry that is not an object": lambda d: d["log"].append(["roll", 3]),
    "a log entry from a later turn": _log({**ROLL, "turn": 5}),
}


@pytest.mark.parametrize("edit", FORGERIES.values(), ids=FORGERIES.keys())
def test_a_forged_file_is_refused_and_the_game_in_progress_stays(edit):
    state = _in_combat()
    text = _forged(state, edit)
    with pytest.raises(StateFormatError):
        load_state(json.dumps(json.loads(text)["game"]), KungFuGame)
    session = KungFuSession(seed=1)
    session.play(session.legal()[0])
    before, status_before = session.save(), session.state.to_json()
    with pytest.raises(StateFormatError) as info:
        session.load(text)
    assert session.save() == before and session.state.to_json() == status_before
    assert PAYLOAD not in str(info.value) and len(str(info.value)) <= 300
    assert not session.try_load(text) and session.notice.text.startswith("Could not load")


def test_the_unforged_combat_loads_and_plays_on():
    """The forgeries above are edits of a file that loads: the checks refuse the edit, not the position."""
    state = _in_combat()
    session = KungFuSession(seed=1)
    session.load(_forged(state, lambda d: None))
    assert session.state.to_json() == state.to_json()
    assert load_state(dump_state(state), KungFuGame).to_json() == state.to_json()


def test_every_position_of_played_games_still_loads():
    """Bots play whole games of each scenario; every position they reach passes the checks."""
    for scenario, seed in (("basic", 1), ("advanced", 2), ("solo", 3)):
        s = KungFuSession(seed=seed, scenario=scenario, seats=default_seats(BOT, BOT), pace=True)
        steps = 0
        while s.pending and steps < 3000:
            s.step()
            steps += 1
            if steps % 7 == 0:
                assert load_state(dump_state(s.state), KungFuGame).to_json() == s.state.to_json()
        assert s.state.is_terminal()
