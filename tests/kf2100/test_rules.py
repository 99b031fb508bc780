"""Kung Fu 2100 rules with scripted dice: movement, entries, the door, activation, the chained chit
exchange, hits, unconsciousness, recovery, untrained attacks, victory, solo, saving."""

import json
from fractions import Fraction

import pytest

from engine.core import IllegalActionError, StateFormatError, load_state, random_sim_test
from engine.core.serialize import checksum
from engine.kf2100.actions import KFAction
from engine.kf2100.state import CHANCE, CLONE_MASTER, TERMINATORS, KungFuGame, skirmish

BASIC = KungFuGame("basic")


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


# --- movement ------------------------------------------------------------------------------------

def test_moving_through_a_figure():
    s = skirmish(BASIC, {"T1": "g3", "J3": "g4"})
    assert "move T1 g5" in legal_text(s)  # through J3 (stopping on J3 mid-phase: test_seed_rules.py)
    play(s, "move T1 g5")
    assert s.figs["T1"].mp == 3 and s.name(s.figs["T1"].pos) == "g5"


def test_walls_equipment_and_movement_points_refuse_moves():
    s = skirmish(BASIC, {"T2": "b15"})
    refused(s, "move T2 f14", "f14 is a wall")
    refused(s, "move T2 c15", "c15 is vital equipment")
    s2 = skirmish(BASIC, {"T2": "g8"})
    # g8 -> g11 crosses the elevation edge: 5 points; T2 has an undamaged Monkey Soul, so 3.
    assert s2.reachable("T2")["g11"] == 3
    s3 = skirmish(BASIC, {"T2": "g8"}, levels={"T2": [1, 2, 2, 0, 1]})
    assert s3.reachable("T2")["g11"] == 5
    assert "g12" not in s3.reachable("T2")
    refused(s3, "move T2 g12", "T2 needs 6 movement points to reach g12 and has 5")


def test_figure_of_the_other_side_and_junk_are_refused():
    s = skirmish(BASIC, {"T1": "g3", "J3": "g5"})
    refused(s, "move J3 g6", "J3 belongs to the Clone Master")
    refused(s, "fly T1 to the moon", "cannot read")


# --- entries and the door -------------------------------------------------------------------------

def test_disposal_takes_two_a_phase_and_the_loo_one():
    s = skirmish(BASIC, {}, waiting={"T1": "disposal", "T2": "disposal", "T3": "disposal"})
    play(s, "move T1 c3", "move T2 b2")
    assert not any(str(a).startswith("move T3") for a in s.legal_actions())
    s = skirmish(BASIC, {}, waiting={"T1": "loo", "T2": "loo"})
    play(s, "move T1 d7")
    assert not any(str(a).startswith("move T2") for a in s.legal_actions())
    play(s, "end")  # to Combat I, Move II: the loo is free again
    assert s.phase == "move2" and "move T2 c7" in legal_text(s)


def test_front_door_breaks_on_a_two_not_on_a_three():
    s = skirmish(BASIC, {}, waiting={"T1": "door"}, phase="combat1")
    assert s.door_step and "door T1 kick" in legal_text(s)
    play(s, "door T1 kick")
    assert s.current_player() == CHANCE
    play(s, "d6 3")
    assert not s.door_broken and s.log[-1]["result"] == "miss" and s.log[-1]["p"] == "1/3"
    play(s, "door T1 fist", "d6 2")
    assert s.door_broken and s.log[-1]["result"] == "door broken"
    # The door step ends by itself once the door is down; Move II lets T1 step in through it.
    assert s.phase == "move2" and s.reachable("T1")["o2"] == 2


def test_door_tries_spend_the_phase_chits():  # (the chits themselves: test_seed_rules.py)
    s = skirmish(BASIC, {"T1": "o2"}, phase="combat1")
    play(s, "door T1 kick", "d6 6", "door T1 kick", "d6 6")
    assert s.chit_options(s.figs["T1"])[1] == 1


# --- set-up, views, activation -----------------------------------------------------------------------

def test_hidden_setup_respects_initials_and_the_armored_door():
    s = BASIC.new_initial_state()
    assert s.current_player() == CLONE_MASTER and s.queue[0] == "CM"
    cm_squares = {a.square for a in s.legal_actions()}
    assert "o2" not in cm_squares and "o3" in cm_squares and "m7" in cm_squares  # the CM may start anywhere
    play(s, "place CM m7")
    jelly_rooms = {s.board.room(s.board.square(a.square)) for a in s.legal_actions()}
    assert jelly_rooms == {"foyer", "guard_room", "hall", "growth_lab", "masters_quarters"}
    refused(s, "place J1 b2", "not legal now")
    while s.phase == "setup":
        play(s, s.legal_actions()[0])
    view_t, view_cm = s.player_view(TERMINATORS), s.player_view(CLONE_MASTER)
    assert not any(f["id"].startswith(("J", "S", "U", "A")) or f["id"] == "CM" for f in view_t["figures"])
    assert len(view_t["face_down"]) == 33
    assert any(f["id"] == "J1" for f in view_cm["figures"])
    assert s.phase == "entry" and legal_text(s) == {"T1 waits at door", "T1 waits at disposal", "T1 waits at loo"}


def test_entering_a_room_activates_its_counters_and_the_clone_master_bonus_move():
    s = skirmish(BASIC, {"T1": "o7", "CM": "s9", "J1": "t10", "S1": "b2"}, face_up=False)
    assert s.current_player() == CLONE_MASTER and legal_text(s) == {"activate CM", "end"}
    play(s, "end")  # the Clone Master stays hidden for now
    play(s, "move T1 o9")
    assert s.figs["CM"].face_up and s.figs["J1"].face_up and not s.figs["S1"].face_up
    assert s.current_player() == CLONE_MASTER and s.bonus_mp == 4  # the bonus move interrupts
    assert "move CM s13" not in legal_text(s)  # the door to the computer room is 5 away with the edge
    play(s, "move CM u9")
    assert s.current_player() == TERMINATORS and s.figs["T1"].mp == 3


def test_clone_master_reveals_himself_before_a_combat_and_slips_away():
    s = skirmish(BASIC, {"T1": "n9", "CM": "o9"}, face_up=False, phase="combat1")
    assert s.combat is None and legal_text(s) == {"activate CM", "end"}
    play(s, "activate CM")
    assert s.bonus_mp == 4 and "move CM s9" in legal_text(s)
    play(s, "move CM s9")
    # The combat is formed after his bonus move: T1 can no longer reach him.
    assert s.phase == "move2" and s.figs["CM"].face_up and not any("roll" in e for e in s.log)


def test_one_jelly_one_servant_one_technician_a_move():
    s = skirmish(BASIC, {"J1": "p2", "J2": "q2", "S1": "b2", "U1": "x2", "A1": "w2"}, face_up=False,
                 phase="cm_move")
    assert legal_text(s) >= {"activate J1", "activate J2", "activate S1", "activate U1", "activate A1"}
    play(s, "activate J1")
    refused(s, "activate J2", "not legal now")
    play(s, "activate U1")
    assert "activate A1" not in legal_text(s) and "activate S1" in legal_text(s)
    assert "move J1 p3" in legal_text(s)  # a counter released now moves at once


def test_constabulary_arrive_on_turn_six():
    adv = KungFuGame("advanced")
    s = skirmish(adv, {"T1": "b2"}, phase="cm_move", turn=6)
    arrived = [f.id for f in s.figs.values() if f.status == "waiting" and f.kind == "constabulary"]
    assert arrived == ["LC1", "LC2", "LC3"]
    assert "move LC1 o2" in legal_text(s)
    assert not s.door_broken


def test_constabulary_stop_at_nine_our_design_cap():
    # DESIGN (docs/rulings-kung-fu-2100.md): the seed's "3 on turn 6 and each turn thereafter" ends when the
    # 9 Constabulary counters are in: waves on turns 6, 7 and 8, none after.
    adv = KungFuGame("advanced")
    assert adv.scenario.constabulary_total == KungFuGame("solo").scenario.constabulary_total == 9
    s = skirmish(adv, {"T1": "b2"}, phase="cm_move", turn=6)
    arrived = {}
    while s.turn <= 10:
        if s.phase == "cm_move":
            arrived[s.turn] = s.constabulary_in
        play(s, "end")
    assert arrived == {6: 3, 7: 6, 8: 9, 9: 9, 10: 9}
    assert sum(f.kind == "constabulary" for f in s.figs.values()) == 9


# --- combat -----------------------------------------------------------------------------------------

def test_combats_are_formed_by_shared_foes():
    s = skirmish(BASIC, {"T1": "n9", "T2": "p9", "J3": "o9"}, phase="combat1")
    assert s.combat.members == ["T1", "T2", "J3"] and not s.combats
    s = skirmish(BASIC, {"T1": "n9", "T2": "t9", "J3": "o9", "J1": "u9"}, phase="combat1")
    assert s.combat.members == ["T1", "J3"] and s.combats == [["T2", "J1"]]
    # An armed Technician diagonal to both Terminators can shoot either: one combat.
    s = skirmish(BASIC, {"T1": "n9", "T2": "p9", "A1": "o10"}, phase="combat1")
    assert s.combat.members == ["T1", "T2", "A1"]


def test_missile_fire_reaches_two_squares_with_line_of_sight():
    # A1 shoots T1 two squares away; T2 (a knight's move off) is out of range; T1 cannot reach A1.
    s = skirmish(BASIC, {"T1": "n9", "T2": "q9", "A1": "n11"}, phase="combat1")
    assert s.combat.members == ["T1", "A1"]
    play(s, "chits T1 fist+kick+mist", "chits A1 gun", "lead terminators")
    assert legal_text(s) == {"attack A1 gun T1"}  # the Terminators have nothing in reach: the lead passes
    play(s, "attack A1 gun T1", "answer T1 mist")
    assert s.combat.need == 1  # Gun against Body of Mist
    # The Constabulary shoot down the whole corridor.
    adv = KungFuGame("advanced")
    s = skirmish(adv, {"T1": "j7", "LC1": "y7"}, phase="combat1")
    assert s.combat.members == ["T1", "LC1"]


def test_chits_are_limited_by_levels():
    s = skirmish(BASIC, {"T2": "n9", "J3": "o9"}, phase="combat1")
    choices = {a.chits for a in s.legal_actions()}
    assert ("kick", "kick", "mist") in choices and ("fist", "fist", "kick") not in choices
    refused(s, "chits T2 fist+fist+kick", "T2 has no fist chit to pick")
    refused(s, "chits T2 kick+mist", "T2 picks exactly 3 chits")
    play(s, "chits T2 kick+kick+mist")
    # The Clone Master cannot see the Terminators' chits, only how many.
    assert s.player_view(CLONE_MASTER)["combat"]["chits"] == {"T2": 3}
    assert s.player_view(TERMINATORS)["combat"]["chits"] == {"T2": ["kick", "kick", "mist"]}


def test_chained_exchange_on_the_crt():
    s = skirmish(BASIC, {"T1": "n9", "J3": "o9"}, phase="combat1")
    play(s, "chits T1 fist+kick+mist", "chits J3 fist+mist", "lead terminators", "attack T1 kick J3")
    refused(s, "answer J3 kick", "J3 has no unplayed kick chit")
    play(s, "answer J3 mist")
    assert s.combat.need == 1  # Lightning Kick against Body of Mist
    play(s, "d6 1")
    assert s.current_player() == CLONE_MASTER and legal_text(s) == {"lose J3 fist", "lose J3 mist"}
    play(s, "lose J3 fist")
    # J3's answering Mist chit becomes its attack.
    assert legal_text(s) == {"attack J3 mist T1"}
    play(s, "attack J3 mist T1", "answer T1 fist")
    assert s.combat.need == 1  # Mist against Fist
    play(s, "d6 2", "attack T1 fist J3", "answer J3 fist")
    assert s.combat.need == 3
    play(s, "d6 3", "lose J3 mist", "attack J3 fist T1", "answer T1 mist")
    assert s.combat.need == 3
    play(s, "d6 4")
    # J3 has no chits left: T1's Mist is read on None.
    play(s, "attack T1 mist J3")
    assert s.combat.need == 2 and s.current_player() == CHANCE
    play(s, "d6 2")
    assert s.figs["J3"].status == "dead" and s.figs["T1"].levels == [2, 2, 1, 1, 1]
    assert s.phase == "move2"
    assert [e["p"] for e in s.log if "roll" in e] == ["1/6", "1/6", "1/2", "1/2", "1/3"]


def test_jelly_at_zero_levels_with_and_without_mountain_heart():
    # J5 has a Mountain Heart: at zero levels it is unconscious, and recovery on a 2 wakes it.
    s = skirmish(BASIC, {"T1": "n9", "J5": "o9"}, phase="combat1", levels={"T1": [1, 0, 0, 0, 1],
                                                                          "J5": [0, 0, 0, 0, 1]})
    play(s, "chits T1 fist", "lead terminators", "attack T1 fist J5")
    assert s.combat.need == 5  # J5 has no chits: None
    play(s, "d6 5")
    assert s.figs["J5"].status == "unconscious" and s.figs["J5"].pos >= 0
    play(s, "move T1 q9", "end", "end")  # away; the Clone Master passes
    assert s.phase == "recovery" and s.queue == ["J5"]
    play(s, "d6 2")
    assert s.figs["J5"].status == "active" and s.figs["J5"].levels[4] == 1
    # J1 has none: at zero levels it is removed.
    s = skirmish(BASIC, {"T1": "n9", "J1": "o9"}, phase="combat1", levels={"T1": [1, 0, 0, 0, 0],
                                                                          "J1": [1, 0, 0, 0, 0]})
    play(s, "chits T1 fist", "chits J1 fist", "lead terminators", "attack T1 fist J1", "answer J1 fist", "d6 3")
    assert s.figs["J1"].status == "dead"


def test_unconscious_terminator_recovers_only_on_one_or_two():
    s = skirmish(BASIC, {"T1": "b2"}, phase="recovery", levels={"T1": [0, 0, 0, 0, 0]})
    s.figs["T1"].status = "unconscious"
    s._begin_phase("recovery")
    play(s, "d6 3")
    assert s.figs["T1"].status == "unconscious" and s.turn == 2 and s.phase == "move1"


def test_untrained_attacks_need_at_most_the_number_adjacent():
    # T1 has only his Mountain Heart left: combat ineffective, no chits, but he can make untrained attacks.
    s = skirmish(BASIC, {"T1": "n9", "S1": "o9", "S2": "n10"}, phase="combat1", levels={"T1": [0, 0, 0, 0, 1]})
    assert s.combat.untrained == [("T1", 2), ("S1", 1), ("S2", 1)]
    play(s, "d6 2")
    assert s.figs["T1"].status == "unconscious" and s.log[-3]["p"] == "1/3"
    play(s, "d6 3", "d6 1")
    assert s.figs["S1"].status == "active" and s.figs["S2"].status == "dead"


def test_a_hit_on_a_servant_or_equipment_removes_it():
    s = skirmish(BASIC, {"T1": "b15", "S1": "b14"}, phase="combat1", levels={"T1": [1, 1, 0, 0, 0]})
    play(s, "chits T1 fist+kick", "lead terminators")
    assert legal_text(s) == {"attack T1 fist S1", "attack T1 kick S1", "attack T1 fist E1", "attack T1 kick E1"}
    play(s, "attack T1 kick E1", "d6 5", "attack T1 fist S1", "d6 6")
    assert s.equipment["E1"] is False and s.figs["S1"].status == "active"


# --- victory ------------------------------------------------------------------------------------------

def _ending(statuses, cm="active", equipment_left=0):
    s = skirmish(BASIC, {"T1": "b2", "T2": "c2", "T3": "d2", "CM": "n9"})
    for fid, st in zip(("T1", "T2", "T3"), statuses, strict=True):
        s.figs[fid].status = st
    s.figs["CM"].status = cm
    for i, eid in enumerate(s.equipment):
        s.equipment[eid] = i < equipment_left
    return s.grade()


def test_victory_conditions_graded_and_checked_together():
    assert _ending(["dead", "escaped", "dead"], cm="dead") == "terminator_total_victory"
    # The last Terminator killed as the last equipment falls: both checks at once; the Terminators win.
    assert _ending(["dead", "dead", "dead"], cm="dead") == "terminator_victory"
    assert _ending(["dead", "dead", "dead"], equipment_left=7) == "clone_master_total_victory"
    assert _ending(["dead", "dead", "dead"], cm="dead", equipment_left=1) == "clone_master_victory"
    assert _ending(["active", "dead", "escaped"], cm="dead", equipment_left=1) == "draw"
    assert _ending(["escaped", "escaped", "escaped"], equipment_left=0) == "draw"


def test_last_terminator_killed_in_the_combat_that_smashes_the_last_equipment_is_a_terminator_victory():
    # The Clone Master is dead and only E1 stands. T1's one Fist smashes it; J3's answering Fist, then its
    # second Fist, knock T1 out and kill him, all in the same exchange. The seed's conditions are read
    # together when the combat ends: "Clone Master killed and all seven pieces of equipment destroyed" holds
    # (Terminator victory); Clone Master victory needs "some equipment survives", which fails.
    s = skirmish(BASIC, {"T1": "b15", "J3": "b14"}, levels={"T1": [1, 0, 0, 0, 0]})
    s.figs["T2"].status = s.figs["T3"].status = s.figs["CM"].status = "dead"
    for eid in s.equipment:
        s.equipment[eid] = eid == "E1"
    play(s, "end", "chits T1 fist", "chits J3 fist+fist", "lead terminators", "attack T1 fist E1",
         "answer J3 fist")
    assert s.combat.need == 3  # Fist against the answering Fist (read whoever answered, seed)
    play(s, "d6 3")
    assert not any(s.equipment.values()) and not s.is_terminal()
    play(s, "attack J3 fist T1", "d6 5")
    assert s.figs["T1"].status == "unconscious" and not s.is_terminal()
    play(s, "attack J3 fist T1", "d6 5")
    assert s.figs["T1"].status == "dead" and s.is_terminal()
    assert s.result == "terminator_victory" and s.returns() == [0.5, -0.5]
    assert s.log[-1]["event"] == "game over: terminator victory"


def test_last_terminator_killed_in_the_combat_that_kills_the_clone_master_is_a_clone_master_victory():
    # All seven pieces stand. T1's Fist kills the Clone Master (he answers with his gun: Fist on Weapon,
    # 1-2), then J3 knocks T1 out and kills him. "Clone Master dies, all Terminators killed, some equipment
    # survives": Clone Master victory, not total (he is dead).
    s = skirmish(BASIC, {"T1": "n9", "CM": "o9", "J3": "n10"}, levels={"T1": [1, 0, 0, 0, 0]})
    s.figs["T2"].status = s.figs["T3"].status = "dead"
    play(s, "end", "chits T1 fist", "chits CM gun", "chits J3 fist+fist", "lead terminators",
         "attack T1 fist CM", "answer CM gun")
    assert s.combat.need == 2
    play(s, "d6 2")
    assert s.figs["CM"].status == "dead" and not s.is_terminal()
    play(s, "attack J3 fist T1", "d6 5", "attack J3 fist T1", "d6 5")
    assert s.figs["T1"].status == "dead" and all(s.equipment.values())
    assert s.is_terminal() and s.result == "clone_master_victory" and s.returns() == [-0.5, 0.5]


def test_game_ends_when_the_last_terminator_escapes():
    s = skirmish(BASIC, {"T1": "c3"}, levels={})
    for fid in ("T2", "T3"):
        s.figs[fid].status = "dead"
    play(s, "exit T1")
    assert s.is_terminal() and s.result == "draw" and s.returns() == [0.0, 0.0]


# --- solo -------------------------------------------------------------------------------------------

SOLO = KungFuGame("solo")


def test_solo_setup_deals_counters_two_to_a_room():
    s = SOLO.new_initial_state()
    assert s.current_player() == CHANCE
    outcomes = dict(s.chance_outcomes())
    assert sum(outcomes.values()) == 1
    total = 31  # the Advanced mix less the Clone Master and the face-up Jelly
    first = s.deal_squares(s.deal_rooms[0])
    sq = s.name(first[0])
    assert outcomes[KFAction.parse(f"deal servant {sq}")] == Fraction(12, total * len(first))
    assert outcomes[KFAction.parse(f"deal J5 {sq}")] == Fraction(1, total * len(first))
    assert [s.name(s.figs[x].pos) for x in ("T1", "CM", "J11")] == ["g2", "g3", "h3"]
    rooms = {}
    while s.current_player() == CHANCE:
        play(s, s.legal_actions()[0])
    for f in s.figs.values():
        if f.kind not in ("terminator", "constabulary") and f.id not in ("CM", "J11"):
            rooms[s.board.room(f.pos)] = rooms.get(s.board.room(f.pos), 0) + 1
    assert len(rooms) == 15 and sorted(rooms.values()) == [2] * 14 + [3]


def test_solo_activation_and_escape_rules():
    s = skirmish(SOLO, {"T1": "c3", "CM": "g3", "S1": "b2", "S2": "e5", "U1": "x2"}, face_up=False, phase="cm_move")
    assert s.figs["S1"].face_up and s.figs["S2"].face_up and not s.figs["U1"].face_up
    assert not any(str(a).startswith("activate") for a in s.legal_actions())
    s = skirmish(SOLO, {"T1": "c3"})
    assert "exit T1" not in legal_text(s)
    s = skirmish(SOLO, {"T1": "c3"}, levels={"T1": [1, 0, 0, 0, 1]})
    assert "exit T1" in legal_text(s)
    s = skirmish(SOLO, {"T1": "c3"}, turn=11)
    assert "exit T1" in legal_text(s)


def test_solo_points():
    s = skirmish(SOLO, {"T1": "c3", "CM": "n9"})
    s.figs["CM"].status = "dead"
    for eid in ("E1", "E2", "E3"):
        s.equipment[eid] = False
    s.figs["J1"].status = s.figs["J2"].status = "dead"
    s._finish()
    assert s.solo_points() == (5 + 15 + 4, 60)  # the Terminator is still inside: recaptured
    assert s.result == "clone_master_victory" and s.returns() == [-1.0, 1.0]


def test_point_buy_option():
    game = KungFuGame("basic", terminator_levels={"T1": [3, 0, 2, 1, 1]})
    assert game.new_initial_state().figs["T1"].start == (3, 0, 2, 1, 1)
    assert KungFuGame.from_rule_options(game.rule_options()).terminator_levels == game.terminator_levels
    with pytest.raises(ValueError, match="add up to 7"):
        KungFuGame("basic", terminator_levels={"T1": [3, 3, 2, 1, 1]})
    with pytest.raises(ValueError, match="Iron Fist or Lightning Kick"):
        KungFuGame("basic", terminator_levels={"T2": [0, 0, 3, 3, 1]})
    with pytest.raises(ValueError, match="not a Terminator of the Solo"):
        KungFuGame("solo", terminator_levels={"T2": [1, 2, 2, 1, 1]})


# --- saving, protocol ---------------------------------------------------------------------------------

def _midgame():
    import numpy as np

    s = BASIC.new_initial_state()
    rng = np.random.default_rng(5)
    for _ in range(120):
        if s.is_chance_node():
            outs = s.chance_outcomes()
            s.apply_action(outs[int(rng.integers(len(outs)))][0])
        else:
            acts = s.legal_actions()
            s.apply_action(acts[int(rng.integers(len(acts)))])
    return s


def test_save_load_round_trip_and_refusals():
    s = _midgame()
    text = s.to_json()
    loaded = load_state(text, KungFuGame)
    assert loaded.to_json() == text and loaded.legal_actions() == s.legal_actions()
    data = json.loads(text)
    data["state"]["turn"] = 5
    with pytest.raises(StateFormatError, match="checksum"):
        load_state(json.dumps(data), KungFuGame)
    # A consistent forgery (checksum recomputed) that stacks two figures is refused by the rules.
    data = json.loads(text)
    placed = [f for f in data["state"]["figures"] if f["pos"] >= 0]
    placed[1]["pos"] = placed[0]["pos"]
    data["state"]["phase"] = "combat2"  # a shared square outside a move phase
    data["checksum"] = checksum(data["rules"], data["state"])
    with pytest.raises(StateFormatError, match="two figures stand on"):
        load_state(json.dumps(data), KungFuGame)
    data = json.loads(text)
    data["state"]["figures"][0]["levels"] = [9, 9, 9, 9, 9]
    data["checksum"] = checksum(data["rules"], data["state"])
    with pytest.raises(StateFormatError, match="impossible levels"):
        load_state(json.dumps(data), KungFuGame)
    data = json.loads(text)
    data["state"].update(phase="combat1", opened=True, combat=None, door_step=False, cm_window=False, bonus_mp=0)
    data["checksum"] = checksum(data["rules"], data["state"])
    with pytest.raises(StateFormatError, match="combat phase with no combat"):
        load_state(json.dumps(data), KungFuGame)
    with pytest.raises(StateFormatError, match="unknown rule options"):
        data = json.loads(text)
        data["rules"] = {"scenario": "basic", "cheat": 1}
        data["checksum"] = checksum(data["rules"], data["state"])
        load_state(json.dumps(data), KungFuGame)


@pytest.mark.parametrize("scenario", ["basic", "advanced", "solo"])
def test_random_sim(scenario):
    report = random_sim_test(KungFuGame(scenario), num_games=2, seed=11, check_every=40)
    assert report.games == 2 and report.chance_nodes > 0


def test_random_sim_with_bot_choices_reaches_deep_combat():
    from engine.kf2100.bots import bots_for

    game = KungFuGame("solo")
    bots = bots_for(game)
    report = random_sim_test(game, num_games=2, seed=3, check_every=15,
                             choose=lambda state, rng: bots[state.current_player()].choose(state, rng))
    assert report.games == 2 and report.chance_nodes > 50


def test_the_clone_master_is_armed_as_the_seed_says():
    # "Clone Master = armed": units.toml gives him a gun, so he joins a combat at range and picks a Gun chit.
    s = skirmish(BASIC, {"T1": "n9", "CM": "n11"}, phase="combat1")
    assert s.figs["CM"].weapon == "gun"
    assert s.combat.members == ["T1", "CM"]
    play(s, "chits T1 fist+kick+mist", "chits CM gun", "lead terminators")
    assert legal_text(s) == {"attack CM gun T1"}
