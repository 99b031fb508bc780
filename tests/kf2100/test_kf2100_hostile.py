"""Kung Fu 2100 against hostile input (issue 18): wrongly typed or out-of-range moves, forged save files."""

from __future__ import annotations

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
