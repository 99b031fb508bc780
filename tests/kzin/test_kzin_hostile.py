"""Man-Kzin Wars against hostile input (issue 18): wrongly typed or out-of-range moves, forged save files."""

from __future__ import annotations

import pytest
from kzin_helpers import draw, fresh, put_in_play

from engine.core import IllegalActionError
from engine.kzin.cards import CARDS, NUM_KINDS, card
from engine.kzin.rules import Commit, Draw, Roll


def _invasion():
    s = fresh()
    put_in_play(s, "Marines", "Militia Home Fleet")
    draw(s, "Kzinti Armada")
    return s


@pytest.mark.parametrize("action", [Commit(99), Commit(NUM_KINDS), Commit("x"), Commit(1.0), Commit(True),
                                    Commit(None), Commit(["Marines"]), Commit(-1), Commit(-35)])
def test_a_wrong_commit_is_refused_and_changes_nothing(action):
    s = _invasion()
    before = s.to_json()
    with pytest.raises(IllegalActionError):
        s.apply_action(action)
    assert s.illegal_reason(action)
    assert s.to_json() == before


def test_a_negative_card_number_is_not_the_card_counted_from_the_end():
    """Commit(k - NUM_KINDS) named card k through Python's negative index, and was stored."""
    s = _invasion()
    k = card("Marines").index
    assert Commit(k) in s.legal_actions()
    with pytest.raises(IllegalActionError, match="no card number"):
        s.apply_action(Commit(k - NUM_KINDS))
    assert s.committed == []


@pytest.mark.parametrize("action", [Draw(99), Draw(-1), Draw("x"), Roll(11), Roll(0), Roll("3"), Roll(2.0)])
def test_wrong_chance_outcomes_are_refused(action):
    s = fresh()
    if isinstance(action, Roll):
        put_in_play(s, "Militia Home Fleet")
        draw(s, "Kzinti Armada")
        s.apply_action(Commit(card("Militia Home Fleet").index))
        s.apply_action("defend")
    before = s.to_json()
    with pytest.raises(IllegalActionError):
        s.apply_action(action)
    assert s.to_json() == before


@pytest.mark.parametrize("thing", [None, 3, "commit", b"defend", ["defend"]])
def test_things_that_are_not_moves_are_refused(thing):
    s = _invasion()
    with pytest.raises(IllegalActionError):
        s.apply_action(thing)


def test_every_card_name_round_trips():
    assert all(card(c.name) is c for c in CARDS)
