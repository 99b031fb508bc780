"""Kung-Fu Zoo against hostile input (issue 18): wrongly typed or out-of-range moves, forged save files."""

from __future__ import annotations

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
