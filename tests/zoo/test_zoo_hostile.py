"""Kung-Fu Zoo against hostile input (issue 18): wrongly typed or out-of-range moves, forged save files."""

from __future__ import annotations

import functools
import math

import pytest
from helpers import fresh

from engine.core import IllegalActionError
from engine.zoo import ChooseFirst, Flick, Place, UseAbility


def _choosing():
    s = fresh()
    s.phase, s.to_move = "first", 1
    return s


@pytest.mark.parametrize("action", [ChooseFirst("x"), ChooseFirst(None), ChooseFirst(1.0), ChooseFirst(True),
                                    ChooseFirst(2), ChooseFirst(-1), ChooseFirst(-35)])
def test_a_wrong_choice_of_who_starts_is_refused(action):
    s = _choosing()
    assert str(action)  # a malformed move still prints (a view may show the refused move)
    before = s.to_json()
    assert s.illegal_reason(action)
    with pytest.raises(IllegalActionError):
        s.apply_action(action)
    assert s.to_json() == before


@pytest.mark.parametrize("action", [
    Flick(["C1"], "S", None, "head", 0.0, 1.2), Flick("C1", ["S"], None, "head", 0.0, 1.2),
    Flick("C1", "S", None, "head", "0", 1.2), Flick("C1", "S", None, "head", 0.0, math.nan),
    Flick("C1", "S", None, "head", 0.0, 1.2, ability="yes"), Flick("C1", "S", None, 3, 0.0, 1.2),
    Place({"d": 1}, 10.0, 10.0, "head"), UseAbility(["chest-pound"], "G2"),
])
def test_a_malformed_flick_place_or_ability_is_refused(action):
    s = fresh()
    before = s.to_json()
    with pytest.raises(IllegalActionError):
        s.apply_action(action)
    assert s.to_json() == before


# --- forged files: consistent checksums, impossible battles (point 5) ----------------------------------------------

import json  # noqa: E402

from helpers import in_arena  # noqa: E402

from engine.core import StateFormatError, dump_state, load_state  # noqa: E402
from engine.core.serialize import checksum, session_checksum  # noqa: E402
from engine.zoo import ZooGame  # noqa: E402
from engine.zoo.constants import arena  # noqa: E402
from engine.zoo.session import ZooSession  # noqa: E402

PAYLOAD = "<img src=x onerror=alert(1)>"


@functools.cache
def _played_session(mode="cage"):
    """A battle a few flicks in, with dice in the arena and a log of moves and events (played once per mode:
    the bots' flicks run the 3-D physics, and the tests only read the session)."""
    s = ZooSession(seed=4, mode=mode, seats=["bot", "bot"], odds_workers=1)
    for _ in range(6):
        if s.state.phase == "over":
            break
        version = s.version
        s.play_bot()
        assert s.version > version, s.notice.text
    return s


def _forge(text, edit_state=None, edit_session=None) -> str:
    data = json.loads(text)
    if edit_state is not None:
        edit_state(data["game"]["state"])
        data["game"]["checksum"] = checksum(data["game"]["rules"], data["game"]["state"])
    if edit_session is not None:
        edit_session(data)
    data["checksum"] = session_checksum(data)
    return json.dumps(data)


def _arena_dice(state):
    return [d for d, v in state["dice"].items() if v[1] == "arena"]


def _stack(state):
    """Four dice stacked on one point."""
    for d in list(state["dice"])[:4]:
        state["dice"][d][1:4] = ["arena", 150.0, 150.0]


def _over_cage(state):
    x, y = arena().holes["NE"]
    d = _arena_dice(state)[0]
    state["dice"][d][2:4] = [x + 3.0, y - 3.0]


def _with_last(**fields):
    def edit(state):
        state["last"] = {"kind": "flick", "player": 0, "flick": "flick C1 from S-dot face=head dir=0.0 speed=1.2",
                         "direction": 0.0, "speed": 1.2, "caged": {}, "left": {}, "events": [], "foul": False,
                         **fields}
    return edit


STATE_FORGERIES = {
    "four dice stacked on one point": _stack,
    "two dice overlapping": lambda st: [st["dice"][d].__setitem__(slice(1, 4), ["arena", x, 150.0])
                                        for d, x in zip(st["dice"], (150.0, 160.0), strict=False)],
    "a die resting over a cage": _over_cage,
    "a die outside the arena": lambda st: st["dice"][_arena_dice(st)[0]].__setitem__(2, -400.0),
    "10,000 points in a Cage Battle": lambda st: st.update(points=[10_000, 0]),
    "a point in a Cage Battle": lambda st: st.update(points=[0, 1]),
    "three round wins and the battle going on": lambda st: st.update(wins=[3, 0]),
    "a round far ahead of the wins": lambda st: st.update(round=40),
    "a force of 10**300 as a position": lambda st: st["dice"][_arena_dice(st)[0]].__setitem__(2, 1e300),
    "an orientation of 24": lambda st: st["dice"][_arena_dice(st)[0]].__setitem__(5, 24),
    "a die of a team not in the battle": lambda st: st["dice"].__setitem__("Z1", [0, "hand", 0.0, 0.0, 0.0, 0]),
    "a placement of a die in the arena": lambda st: st.update(phase="place",
                                                              pending=[[1, _arena_dice(st)[-1], "head"]]),
    "a resume without placements": lambda st: st.update(resume=[0, True]),
    "an event holding markup": _with_last(events=[PAYLOAD]),
    "a flick text holding markup": _with_last(flick=PAYLOAD),
    "a last move of an unknown kind": lambda st: st.update(last={"kind": "teleport", "player": 0}),
    "a last move with a field the game never writes": _with_last(html=PAYLOAD),
    "a caged die that does not exist": _with_last(caged={"Q1": "NE"}),
    "a winner who is not in the battle": _with_last(winner=3),
    "spent as 1": lambda st: st.update(spent=[1, 0]),
}


@pytest.mark.parametrize("edit", STATE_FORGERIES.values(), ids=STATE_FORGERIES.keys())
def test_a_forged_battle_is_refused_and_the_battle_in_progress_goes_on(edit):
    played = _played_session()
    text = _forge(played.save(), edit_state=edit)
    with pytest.raises(StateFormatError):
        load_state(json.dumps(json.loads(text)["game"]), ZooGame)
    s = ZooSession(seed=9, seats=["person", "person"], odds_workers=1)
    before = s.save()
    assert not s.try_load(text)
    assert s.save() == before and s.notice.text.startswith("Could not load")
    assert PAYLOAD not in s.notice.text and len(s.notice.text) <= 400


def test_10000_points_in_a_points_battle_are_refused_too():
    played = _played_session("points")
    text = _forge(played.save(), edit_state=lambda st: st.update(points=[10_000, 0]))
    s = ZooSession(seed=9, odds_workers=1)
    assert not s.try_load(text) and "points" in s.notice.text


LOG_FORGERIES = {
    "a log line holding markup": lambda d: d["log"].append({"move": 7, "player": 0, "text": PAYLOAD, "events": []}),
    "an event line holding markup": lambda d: d["log"][-1].update(events=[PAYLOAD]),
    "a log line that is not a move": lambda d: d["log"].append({"move": 7, "player": 0, "text": "I win", "events": []}),
    "a session field the game never writes": lambda d: d.update(html=PAYLOAD),
}


@pytest.mark.parametrize("edit", LOG_FORGERIES.values(), ids=LOG_FORGERIES.keys())
def test_a_forged_battle_log_is_refused(edit):
    text = _forge(_played_session().save(), edit_session=edit)
    s = ZooSession(seed=9, odds_workers=1)
    before = s.save()
    assert not s.try_load(text)
    assert s.save() == before and PAYLOAD not in s.notice.text


def test_the_unforged_battle_loads():
    played = _played_session()
    s = ZooSession(seed=9, odds_workers=1)
    assert s.try_load(_forge(played.save())), s.notice.text
    assert s.state.to_json() == played.state.to_json()


def test_dice_set_out_by_hand_on_separate_spots_still_load():
    state = in_arena(fresh())
    assert load_state(dump_state(state), ZooGame).to_json() == state.to_json()
