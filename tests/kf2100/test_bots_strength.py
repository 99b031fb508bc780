"""Kung Fu 2100 Clone Master bot behaviours, pinned on small deterministic positions: Jellies gang up
instead of feeding in one by one, chits and answers are weighed on the CRT, the Clone Master hides and
flees, Servants and Technicians stand round the equipment, helpless Terminators are finished off; and the
Terminators' bot steps onto an exit to escape and breaks the front door to leave by it."""

from engine.core import make_rng
from engine.kf2100.actions import Activate, Answer, Attack, Chits, End, Lead, Move
from engine.kf2100.bots import HeuristicBot
from engine.kf2100.state import CLONE_MASTER, TERMINATORS, KungFuGame, skirmish

BASIC = KungFuGame("basic")
CM_BOT = HeuristicBot(CLONE_MASTER)


def sq(s, name):
    return s.board.square(name)


def adjacent(s, a, b):
    return s.board.adjacent(s.figs[a].pos if a in s.figs else sq(s, a), s.figs[b].pos if b in s.figs else sq(s, b))


def test_a_jelly_joins_the_combat_its_side_outnumbers():
    # T1 in the growth lab already faces J2 and J3 (4 chits against his 3); T2 stands alone in the
    # corridor. J1 can reach either: it joins the gang on T1, not a lone fight with T2.
    s = skirmish(BASIC, {"T1": "s15", "T2": "x12", "J1": "u12", "J2": "r15", "J3": "t15"}, phase="cm_move")
    a = CM_BOT.choose(s, None)
    assert isinstance(a, Move) and a.figure == "J1"
    assert s.board.adjacent(sq(s, a.square), s.figs["T1"].pos)
    assert not s.board.adjacent(sq(s, a.square), s.figs["T2"].pos)


def test_a_lone_jelly_does_not_feed_itself_to_a_terminator():
    s = skirmish(BASIC, {"T1": "s15", "J1": "u12"}, phase="cm_move")
    s.apply_action(CM_BOT.choose(s, None))
    assert not adjacent(s, "J1", "T1")


def test_jellies_finish_off_an_unconscious_terminator():
    s = skirmish(BASIC, {"T1": "s15", "T2": "j12", "J1": "u12"}, phase="cm_move",
                 levels={"T1": [0, 0, 0, 0, 0]})
    s.figs["T1"].status = "unconscious"
    s._legal = None
    a = CM_BOT.choose(s, None)
    assert isinstance(a, Move) and a.figure == "J1" and s.board.adjacent(sq(s, a.square), s.figs["T1"].pos)


def test_the_clone_master_runs_from_an_adjacent_terminator():
    s = skirmish(BASIC, {"T1": "q12", "CM": "r12"}, phase="cm_move")
    before = s.board.walking_distance(s.figs["T1"].pos)[s.figs["CM"].pos]
    a = CM_BOT.choose(s, None)
    assert isinstance(a, Move) and a.figure == "CM"
    assert s.board.walking_distance(s.figs["T1"].pos)[sq(s, a.square)] > before + 1


def test_the_clone_master_never_reveals_himself_and_uses_his_bonus_move_to_flee():
    s = skirmish(BASIC, {"T1": "x7", "CM": "v2"}, phase="move1", face_up=False)
    assert s.current_player() == CLONE_MASTER and {type(a) for a in s.legal_actions()} == {Activate, End}
    assert isinstance(CM_BOT.choose(s, None), End)
    s.apply_action(End())
    s.apply_action(Move("T1", "w4"))  # into the Technicians' quarters: he is found
    assert s.bonus_mp > 0 and s.current_player() == CLONE_MASTER
    a = CM_BOT.choose(s, None)
    assert isinstance(a, Move) and a.figure == "CM"
    dist = s.board.walking_distance(s.figs["T1"].pos)
    assert dist[sq(s, a.square)] > dist[s.figs["CM"].pos]


def test_the_clone_master_hides_far_from_the_ways_in_and_the_equipment():
    s = BASIC.new_initial_state()
    rng = make_rng(0)
    while s.phase == "setup":
        s.apply_action(CM_BOT.choose(s, rng))
    cm = s.figs["CM"].pos
    entries = [s.board.walking_distance(e)[cm] for e in s.board.entry_squares.values()]
    equipment = [s.board.walking_distance(e)[cm] for e, _ in s.board.lair.equipment.values()]
    assert min(entries) >= 15 and min(equipment) >= 10
    # The last piece of equipment is ringed by face-down Jellies.
    e7 = s.board.lair.equipment["E7"][0]
    ring = {f.kind for f in s.figs.values() if f.pos in s.board.neighbours[e7]}
    assert ring == {"jelly"}


def test_servants_and_technicians_stand_round_the_equipment():
    s = skirmish(BASIC, {"T1": "x7", "S1": "b17", "U1": "e14"}, phase="cm_move")
    equipment = [e for e, _ in s.board.lair.equipment.values()]
    for _ in range(3):
        a = CM_BOT.choose(s, None)
        if isinstance(a, End):
            break
        s.apply_action(a)
    for fid in ("S1", "U1"):
        assert any(s.board.adjacent(s.figs[fid].pos, e) for e in equipment), fid


def _combat(jelly_chits):
    s = skirmish(BASIC, {"T1": "s15", "J1": "r15"}, phase="combat1")
    s.apply_action(Chits("T1", ("fist", "kick", "kick")))
    s.apply_action(Chits("J1", jelly_chits))
    s.apply_action(Lead(TERMINATORS))
    return s


def test_a_jelly_answers_a_kick_with_its_best_defence():
    # Kick against Mist hits on 1, against Fist on 4: J1 answers with Mist.
    s = _combat(("fist", "mist"))
    s.apply_action(Attack("T1", "kick", "J1"))
    assert CM_BOT.choose(s, None) == Answer("J1", "mist")


def test_a_jelly_picks_chits_by_the_crt():
    # J1 (Fist, Kick, Mist) against a Terminator who has only Lightning Kick: Mist turns his kicks
    # (a hit on 1 instead of 5 on None) and Kick hits his Kick answers best (3), so Kick + Mist.
    s = skirmish(BASIC, {"T1": "s15", "J1": "r15"}, phase="combat1", levels={"T1": [0, 3, 0, 0, 4]})
    s.apply_action(Chits("T1", ("kick", "kick", "kick")))
    assert CM_BOT.choose(s, None) == Chits("J1", ("kick", "mist"))


# --- the Terminators' bot: the ways out and the front door ----------------------------------------------

T_BOT = HeuristicBot(TERMINATORS)


def _job_done(s):
    s.figs["CM"].status, s.figs["CM"].face_up = "dead", True
    for eid in s.equipment:
        s.equipment[eid] = False
    s._legal = None


def test_the_terminator_bot_steps_onto_an_exit_and_escapes():
    # The job is done (the Clone Master dead, the equipment smashed): T1 runs for the disposal and leaves.
    s = skirmish(BASIC, {"T1": "d5", "T2": "x7"})
    _job_done(s)
    a = T_BOT.choose(s, None)
    assert a == Move("T1", "c3")  # onto the exit itself (it used to stop next to it), with points left
    s.apply_action(a)
    assert str(T_BOT.choose(s, None)) == "exit T1"


def test_the_terminator_bot_breaks_the_front_door_to_leave_by_it():
    # The job is done and T1 stands next to the armored door, far from the disposal and the loo: he spends
    # his chits on the door, and once it is down he leaves by it (the bot never used the door at all).
    s = skirmish(BASIC, {"T1": "o2"}, phase="combat1")
    _job_done(s)
    assert s.step == "door"
    a = T_BOT.choose(s, None)
    assert str(a) in ("door T1 fist", "door T1 kick")
    s.apply_action(a)
    s.apply_action("d6 1")
    assert s.door_broken and s.phase == "move2"
    assert str(T_BOT.choose(s, None)) == "exit T1"
