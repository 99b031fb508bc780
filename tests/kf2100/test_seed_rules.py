"""The rules of issue 14 as the seed writes them, each with scripted dice: the CRT read against the answering
chit whoever answered, the Constabulary's missiles along rows, columns and diagonals only, the armored door
spending the Terminator's own attack chits, stacking checked at the end of the phase, the Solo set-up and
the Solo Clone Master's rules, the Clone Master's window at any time, and routes."""

from fractions import Fraction

import pytest

from engine.core import IllegalActionError
from engine.kf2100 import odds
from engine.kf2100.actions import Attack
from engine.kf2100.state import KungFuGame, skirmish

BASIC = KungFuGame("basic")
ADVANCED = KungFuGame("advanced")
SOLO = KungFuGame("solo")


def play(s, *moves):
    for m in moves:
        s.apply_action(m)
    return s


def legal_text(s):
    return {str(a) for a in s.legal_actions()}


def refused(s, move, reason):
    before = s.to_json()
    with pytest.raises(IllegalActionError, match=reason):
        s.apply_action(move)
    assert s.to_json() == before


# --- the CRT: attack against the answering chit, whoever answered --------------------------------------

def test_an_answer_from_another_figure_is_read_on_its_chit():
    s = skirmish(BASIC, {"T1": "n9", "J3": "o9", "J1": "n10"}, phase="combat1")
    play(s, "chits T1 fist+kick+mist", "chits J1 fist+kick", "chits J3 fist+mist", "lead terminators",
         "attack T1 kick J3", "answer J1 fist")
    assert s.combat.need == 4  # Lightning Kick against Iron Fist, though J1 answered an attack on J3 (was None: 5)
    play(s, "d6 4")
    assert s.log[-1]["result"] == "hit" and s.log[-1]["p"] == "2/3"


def test_attack_odds_list_every_answering_figure_s_chits():
    s = skirmish(BASIC, {"T1": "n9", "J3": "o9", "J1": "n10"}, phase="combat1")
    play(s, "chits T1 fist+kick+mist", "chits J1 fist+kick", "chits J3 fist+mist", "lead terminators")
    # J3 has Fist and Mist; J1, who may answer for J3, has Kick too: every one is a column.
    got = odds.attack_odds(s, Attack("T1", "kick", "J3"))
    crt = BASIC.book.crt["kick"]
    assert got == {c: Fraction(crt[c], 6) for c in ("fist", "kick", "mist", "none")}


# --- the Local Constabulary: unlimited range, orthogonal or diagonal -----------------------------------

def test_constabulary_fire_along_rows_and_diagonals_only():
    board = ADVANCED.board
    j7, l8, y7 = board.square("j7"), board.square("l8"), board.square("y7")
    assert board.line_of_sight(j7, l8)
    assert not board.in_missile_range(l8, j7, 2, 1, True)  # a knight's move: no angle shots
    assert board.in_missile_range(y7, j7, 2, 1, True)  # down the whole corridor
    s = skirmish(ADVANCED, {"T1": "j7", "LC1": "l8"}, phase="combat1")
    assert s.combat is None and s.phase != "combat1"  # LC1 cannot strike T1 from l8: no combat
