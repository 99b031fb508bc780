"""The rules of issue 14 as the seed writes them, each with scripted dice: the CRT read against the answering
chit whoever answered, the Constabulary's missiles along rows, columns and diagonals only, the armored door
spending the Terminator's own attack chits, stacking checked at the end of the phase, the Solo set-up and
the Solo Clone Master's rules, the Clone Master's window at any time, and routes."""

from fractions import Fraction

import pytest

from engine.core import IllegalActionError
from engine.kf2100 import odds
from engine.kf2100.actions import Attack
from engine.kf2100.state import CLONE_MASTER, TERMINATORS, KungFuGame, skirmish

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


# --- the armored door: each attack spends one of the Terminator's own attack chits ----------------------

def test_a_door_attack_spends_an_attack_chit_within_the_terminator_s_levels():
    # T2 has Fist 1, Kick 2: one punch and two kicks at most, and then his three chits of the phase are gone.
    s = skirmish(BASIC, {"T1": "n9"}, waiting={"T2": "door"}, phase="combat1")
    assert s.figs["T2"].levels[:2] == [1, 2] and legal_text(s) == {"door T2 fist", "door T2 kick", "end"}
    play(s, "door T2 fist", "d6 6")
    assert legal_text(s) == {"door T2 kick", "end"}
    refused(s, "door T2 fist", "T2 has spent 1 fist chit.* his fist level is 1: a door attack spends one of his own")
    play(s, "door T2 kick", "d6 6", "door T2 kick", "d6 6")
    assert s.door_chits == {"T2": ["fist", "kick", "kick"]} and not s.door_broken
    assert s.step != "door"  # nothing left to spend: the door step is over


def test_chits_spent_on_the_door_are_not_picked_in_the_combat():
    s = skirmish(BASIC, {"T1": "o2"}, phase="combat1")  # T1 inside, next to the door: 2/2/1/1/1
    play(s, "door T1 kick", "d6 6", "door T1 kick", "d6 6")
    assert s.chit_options(s.figs["T1"]) == ({"fist": 2, "mist": 1, "monkey": 1}, 1)
    assert s.door_chit_options(s.figs["T1"]) == ["fist"]


def test_saved_door_chits_load_checked_and_an_older_file_is_refused():
    import json

    from engine.core import StateFormatError, load_state

    s = skirmish(BASIC, {"T1": "o2"}, phase="combat1")
    play(s, "door T1 kick", "d6 6")
    text = s.to_json()
    assert load_state(text, KungFuGame).door_chits == {"T1": ["kick"]}
    data = json.loads(text)
    data["version"] = 1
    with pytest.raises(StateFormatError, match="format version 1; this program reads version 2"):
        load_state(json.dumps(data), KungFuGame)
    data = json.loads(text)
    data["state"]["door_chits"] = {"T1": ["kick", "kick", "kick"]}  # T1 has Kick 2
    from engine.core.serialize import checksum

    data["checksum"] = checksum(data["rules"], data["state"])
    with pytest.raises(StateFormatError, match="T1 cannot have spent kick\\+kick\\+kick on the door"):
        load_state(json.dumps(data), KungFuGame)


# --- stacking: only one counter a square at the end of the phase ---------------------------------------

def test_a_figure_may_stop_on_another_mid_phase_but_the_phase_ends_unstacked():
    s = skirmish(BASIC, {"T1": "g3", "T2": "g6", "J3": "g4", "J1": "g7"})
    play(s, "move T1 g4")  # onto J3 (was refused: never end stacked), with 4 points left
    assert s.stacks() == [s.board.square("g4")] and s.figs["T1"].mp == 4
    assert "end" not in legal_text(s)
    refused(s, "end", "T1 and J3 share g4: only one counter may occupy a square at the end of the phase")
    refused(s, "move T2 g7", "T2 may not stop on g7 now: .*only one square at a time")  # a second shared square
    refused(s, "move T2 g4", "T2 may not stop on g4 now")  # three on one square
    play(s, "move T1 g5")
    assert s.stacks() == [] and "end" in legal_text(s)
    play(s, "end")
    assert s.phase == "combat1"


def test_a_move_that_would_leave_a_figure_stuck_on_another_is_refused():
    s = skirmish(BASIC, {"T1": "g3", "J3": "g8"})
    tree = s.reachable("T1")
    assert "g8" not in tree  # 5 points to g8: none left to step off J3 again
    refused(s, "move T1 g8", "T1 may not stop on g8 now")
    assert "g7" in tree


def test_a_saved_position_may_hold_one_shared_square_in_a_move_phase():
    from engine.core import load_state

    s = skirmish(BASIC, {"T1": "g3", "J3": "g4"})
    play(s, "move T1 g4")
    back = load_state(s.to_json(), KungFuGame)
    assert back.stacks() == s.stacks() and back.legal_actions() == s.legal_actions()


def test_the_bonus_move_ends_on_an_empty_square():
    s = skirmish(BASIC, {"T1": "n9", "CM": "o9", "J3": "q9"}, face_up=False, phase="combat1")
    play(s, "activate CM")
    assert "move CM q9" not in legal_text(s) and "move CM r9" in legal_text(s)
    refused(s, "move CM q9", "the Clone Master's bonus move ends on an empty square")


# --- Solo set-up: the other counters randomly placed face down, two to a room ---------------------------

def test_solo_counters_go_to_random_squares_of_their_rooms_with_a_seed():
    import numpy as np

    def dealt(seed):
        rng = np.random.default_rng(seed)
        s = SOLO.new_initial_state(rng)
        while s.is_chance_node():
            s.apply_action(s.sample_chance(rng))
        return s, {f.id: f.pos for f in s.figs.values() if f.pos >= 0}

    first, a = dealt(1)
    assert dealt(1)[1] == a  # a seed reproduces the deal
    layouts = [dealt(seed)[1] for seed in range(2, 8)]
    assert all(b != a for b in layouts)
    squares = [set(b.values()) for b in [a, *layouts]]
    assert len(set.union(*squares)) > 2 * len(a)  # the squares themselves are drawn, not only the counters
    entries = set(first.board.entry_squares.values())
    assert not any(sq in entries for sq in set.union(*squares))  # never on a way out (our ruling)
    per_room = {}
    for fid, sq in a.items():
        if fid not in ("T1", "CM", "J11"):
            per_room.setdefault(first.board.room(sq), []).append(sq)
    assert sorted(len(v) for v in per_room.values()) == [2] * 14 + [3]


# --- the Clone Master may activate himself at any time --------------------------------------------------

def test_the_clone_master_may_open_his_window_in_the_middle_of_the_terminators_move():
    s = skirmish(BASIC, {"T1": "g3", "T2": "n9", "CM": "s9"}, face_up=False)
    play(s, "end")  # he lets the window at the phase start go by
    play(s, "move T1 g5")
    assert s.current_player() == TERMINATORS and s.cm_window_refusal() is None
    s.open_cm_window()  # was impossible: only at the phase starts
    assert s.step == "cm_window" and s.current_player() == CLONE_MASTER
    assert legal_text(s) == {"activate CM", "end"}
    play(s, "activate CM")
    assert s.step == "bonus_move" and s.figs["CM"].face_up
    play(s, "move CM u9")
    # back to the Terminators' move, where it was
    assert s.step == "move" and s.current_player() == TERMINATORS and s.figs["T1"].mp == 3 and s.figs["T2"].mp == 5


def test_the_window_is_refused_within_a_chit_exchange_and_when_he_is_face_up():
    s = skirmish(BASIC, {"T1": "n9", "J3": "o9"}, phase="combat1")
    cm = s.figs["CM"]
    cm.pos, cm.status = s.board.square("s15"), "active"  # face down, far away
    assert s.step == "pick" and not cm.face_up
    before = s.to_json()
    with pytest.raises(IllegalActionError, match="not within a chit exchange"):
        s.open_cm_window()
    assert s.to_json() == before
    s = skirmish(BASIC, {"T1": "g3", "CM": "s9"})  # face up
    with pytest.raises(IllegalActionError, match="nothing to reveal"):
        s.open_cm_window()


# --- routes: a move may name its way; the way decides which rooms wake ---------------------------------

def test_a_move_by_a_way_of_its_own_wakes_the_rooms_it_crosses():
    from engine.kf2100.actions import KFAction, Move

    s = skirmish(BASIC, {"T1": "j10", "S1": "g16"}, face_up=False)
    cheap = s.clone()
    play(cheap, "move T1 i12")  # the cheapest way: j11, j12 (the south corridor only)
    assert not cheap.figs["S1"].face_up and cheap.figs["T1"].mp == 2
    move = KFAction.parse("move T1 i12 via i10 h10 h11 h12")
    assert move == Move("T1", "i12", ("i10", "h10", "h11", "h12")) and str(move) == "move T1 i12 via i10 h10 h11 h12"
    play(s, move)  # through the servants' work area
    assert s.figs["S1"].face_up and s.figs["T1"].mp == 0 and s.name(s.figs["T1"].pos) == "i12"
    assert s.log[-1]["event"] == "S1 activated (T1 entered the Servants' work area)"


def test_a_way_that_cannot_be_walked_is_refused():
    s = skirmish(BASIC, {"T1": "j10"})
    refused(s, "move T1 i12 via h10", "h10 is not next to j10: a move goes square by square")
    refused(s, "move T1 j12 via i10 h10 h11 h12 i12", "T1 needs 6 movement points by that way to j12 and has 5")
    refused(s, "move T1 i12 via j11 i11", "the way crosses i11, a wall")
    refused(s, "move T1 z30 via j11", "z30 is off the map")


# --- the Solo Clone Master's behaviour rules -------------------------------------------------------------

def _solo_bot():
    from engine.kf2100.bots import HeuristicBot

    return HeuristicBot(CLONE_MASTER, solo=True)


def test_solo_jellies_play_their_attack_chits_before_their_defensive_ones():
    from engine.kf2100.actions import Answer, Attack, Chits, Lead

    s = skirmish(SOLO, {"T1": "s15", "J1": "r15"}, phase="combat1")
    play(s, Chits("T1", ("fist", "kick", "kick")), Chits("J1", ("fist", "mist")), Lead(TERMINATORS),
         Attack("T1", "kick", "J1"))
    # Mist would turn the kick best (a hit on 1 instead of 4), but a Jelly answers with its attack chit first.
    assert _solo_bot().choose(s, None) == Answer("J1", "fist")


def test_solo_jellies_go_straight_at_the_terminator():
    s = skirmish(SOLO, {"T1": "x7", "J1": "s7", "J2": "r12"}, phase="cm_move")
    bot = _solo_bot()
    a = bot.choose(s, None)
    assert str(a) in ("move J1 w7", "move J2 w12")  # both close in by the shortest way, Jellies first
    dist = s.board.walking_distance(s.figs["T1"].pos)
    before = dist[s.figs[a.figure].pos]
    s.apply_action(a)
    assert dist[s.figs[a.figure].pos] == before - 5 or s.board.adjacent(s.figs[a.figure].pos, s.figs["T1"].pos)


def test_solo_servants_mass_round_the_equipment_and_shooters_keep_off():
    s = skirmish(SOLO, {"T1": "n9", "S1": "j16", "A1": "s9"}, phase="cm_move")
    bot = _solo_bot()
    equipment = [sq for sq, _ in s.board.lair.equipment.values()]
    for _ in range(4):
        a = bot.choose(s, None)
        if str(a) == "end":
            break
        s.apply_action(a)
    t1 = s.figs["T1"].pos
    assert any(s.board.adjacent(s.figs["S1"].pos, e) for e in equipment)
    assert not s.board.adjacent(s.figs["A1"].pos, t1)
    assert s.board.in_missile_range(s.figs["A1"].pos, t1, 2, 1, False)
