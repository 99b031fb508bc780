"""The rules on the 3-D arena (issue 13): the audit's broken rules played through the game, the saved 3-D
poses, and what a 2-D save gets."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from engine.core import StateFormatError, dump_state, load_state
from engine.zoo import Flick, ZooGame
from engine.zoo.arena3d import launch_point
from engine.zoo.arena3d.pose import face_up, quat_mat
from engine.zoo.constants import FACE_NAMES
from engine.zoo.faces import orientation_with_up
from engine.zoo.game import STATE_VERSION, Die, new_game

EDGE = 18.0


def _battle(rail_rule: bool = False):
    s = new_game("cage", 2, seed=0)
    if not rail_rule:
        s.rail_rule = None
    return s


def test_the_second_players_straight_shot_is_a_foul_the_start_rail_does_not_count() -> None:
    """P2's first flick of the round straight at a Crocodile: it strikes before touching any rail (the 2-D
    engine counted the rail the die starts on, so 40 of 40 such shots were legal)."""
    fouls = 0
    for seed in range(6):
        s = new_game("cage", 2, seed=seed)
        s.dice["C1"] = Die(0, "arena", 150.0, 120.0, 0.0, orientation_with_up("back"))
        s.to_move = 1
        assert s.rail_rule == 1
        s.apply_action(Flick("E1", "S", None, "head", 0.0, 1.2))
        fouls += s.last["foul"]
        assert s.last["foul"] and s.dice["E1"].status == "out", s.last
        assert s.dice["C1"].x == 150.0 and s.dice["C1"].y == 120.0  # the arena is put back
    assert fouls == 6


def test_the_second_players_first_flick_is_a_foul_exactly_when_it_strikes_before_a_rail() -> None:
    """P2's first flick over a fan of directions: a foul exactly when the flicked die's first touch of an animal
    comes before any rail touched after it left its start; both happen."""
    seen = set()
    for k in range(23):
        s = new_game("cage", 2, seed=k)
        s.dice["C1"] = Die(0, "arena", 250.0, 200.0, 0.0, orientation_with_up("back"))
        s.to_move = 1
        result = s.play_flick(Flick("E1", "S", None, "head", -80.0 + 7.0 * k, 2.0))
        if "C1" in result.contacts:
            first = result.contacts.index("C1")
            banked = any(c.startswith("rail:") for c in result.contacts[:first])
            assert s.last["foul"] is not banked, (k, result.contacts)
            seen.add(banked)
        else:
            assert not s.last["foul"]
    assert seen == {True, False}


@pytest.mark.parametrize("seed", range(4))
def test_a_die_lying_at_the_dot_is_struck_by_a_flick_from_the_dot(seed: int) -> None:
    """A Crocodile lies against the south rail at its dot; an Elephant flicked from that dot strikes it (the
    2-D engine passed through it in 54 of 96 such flicks)."""
    s = _battle()
    s.to_move = 1
    s.dice["C1"] = Die(0, "arena", 150.0, EDGE / 2 + 0.5, 0.0, orientation_with_up("back"))
    rng = np.random.default_rng(seed)
    flick = Flick("E1", "S", None, "head", float(rng.uniform(-40, 40)), float(rng.uniform(0.3, 2.5)))
    result = s.play_flick(flick)
    assert result.contacts and result.contacts[0] == "C1", (flick, result.contacts)


@pytest.mark.parametrize("offset", [14.0, 16.0, 17.0])
def test_a_graze_strikes_the_die_it_touches(offset: float) -> None:
    """The flicked die passes a resting die with centres ``offset`` mm apart sideways (18 mm dice): it touches
    it and moves it, at the hardest flicks too."""
    s = _battle()
    x0, _, _ = launch_point("S", 150.0)
    s.dice["E1"] = Die(1, "arena", x0 + offset, 120.0, 0.0, orientation_with_up("back"))
    result = s.play_flick(Flick("C1", "S", None, "head", 0.0, 2.0))
    assert "E1" in result.contacts, result.contacts
    moved = s.dice["E1"].status != "arena" or math.hypot(s.dice["E1"].x - x0 - offset, s.dice["E1"].y - 120.0) > 0.5
    assert moved


def test_every_flick_tumbles_or_ends_feet_up() -> None:
    """The FAQ: a flicked animal must tumble. Whatever the flick, the animal either rolled over an edge (a
    tip that falls back does not count) or is turned feet-up where it lies."""
    rng = np.random.default_rng(3)
    for _ in range(12):
        s = _battle()
        face = FACE_NAMES[int(rng.integers(6))]
        flick = Flick("C1", "S", None, face, float(rng.uniform(-60, 60)), float(rng.uniform(0.2, 0.6)))
        result = s.play_flick(flick)
        if "C1" in result.dice:
            if not result.tumbled:
                assert s.dice["C1"].face == "feet" and any("feet-up" in e for e in s.last["events"])
            assert s.dice["C1"].face == face_up(quat_mat(np.array(s.dice["C1"].quat)))


def test_a_saved_battle_keeps_each_pose_and_replays_exactly() -> None:
    s = _battle()
    s.apply_action(Flick("C1", "S", None, "head", 10.0, 1.5))
    s.apply_action(Flick("E1", "N", None, "back", -5.0, 1.8))
    placed = [d for d, die in s.dice.items() if die.status == "arena"]
    assert placed and all(s.dice[d].quat is not None and s.dice[d].z is not None for d in placed)
    text = dump_state(s)
    copy = load_state(text, ZooGame)
    assert copy.to_json() == s.to_json()
    move = next(a for a in s.legal_actions() if isinstance(a, Flick))
    s.apply_action(move)
    copy.apply_action(move)
    assert copy.to_json() == s.to_json()


def test_a_battle_saved_by_the_2d_arena_is_refused_with_its_reason() -> None:
    s = _battle()
    data = json.loads(dump_state(s))
    assert data["version"] == STATE_VERSION == 2
    state = data["state"]
    state["dice"] = {d: row[:6] for d, row in state["dice"].items()}
    with pytest.raises(StateFormatError, match="2-D arena"):
        ZooGame.from_rule_options(data["rules"]).state_from_dict(state)
    data["version"] = 1
    with pytest.raises(StateFormatError, match="version"):
        load_state(json.dumps(data), ZooGame)


def _forged(edit) -> dict:
    s = _battle()
    s.apply_action(Flick("C1", "S", None, "head", 0.0, 1.0))
    state = s.to_dict()
    d = next(d for d, die in s.dice.items() if die.status == "arena")
    edit(state["dice"][d])
    return state


@pytest.mark.parametrize(("edit", "reason"), [
    (lambda row: row.__setitem__(7, [0.5, 0.5, 0.5, 0.4]), "not of length 1"),
    (lambda row: row.__setitem__(7, [0.0, 1.0, 0.0, 0.0]), "does not show its face"),
    (lambda row: row.__setitem__(6, None), "no height"),
    (lambda row: row.__setitem__(6, 150.0), "above the floor"),
    (lambda row: row.__setitem__(7, [1.0, 0.0, 0.0]), "damaged"),
], ids=["not a rotation", "another face", "no height", "floating", "three numbers"])
def test_a_forged_pose_is_refused(edit, reason: str) -> None:
    state = _forged(edit)
    with pytest.raises(StateFormatError, match=reason):
        ZooGame().state_from_dict(state)


def test_a_caged_die_with_a_pose_is_refused() -> None:
    s = _battle()
    state = s.to_dict()
    state["dice"]["E4"][1] = "caged"
    state["dice"]["E4"][6] = 10.0
    with pytest.raises(StateFormatError):
        ZooGame().state_from_dict(state)
