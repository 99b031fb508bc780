"""The Kung Fu 2100 session on GameSession: seats, typed notice, play/attempt, one save/load path, bot steps,
the hot-seat hand-over and the hidden information it keeps."""

import json
from fractions import Fraction

import pytest

from engine.core import CHANCE, IllegalActionError, StateFormatError, dump_state
from engine.core.serialize import session_checksum
from engine.core.session import BOT, PERSON, GameSession, Level, Seat
from engine.kf2100.actions import Answer, Attack, Chits, End, Lead, Move, Roll, Wait
from engine.kf2100.session import KungFuSession, default_seats
from engine.kf2100.state import KungFuGame, skirmish
from engine.kf2100.steps import Step


def session(terminators=PERSON, clone_master=BOT, **params) -> KungFuSession:
    return KungFuSession(seats=default_seats(terminators, clone_master), **params)


def at(s: KungFuSession, position) -> KungFuSession:
    s.load(dump_state(position))
    return s


def _entered(s: KungFuSession) -> None:
    for fid in ("T1", "T2", "T3"):
        assert s.wait_at(fid, "disposal")


def test_a_session_is_a_game_session_with_two_named_seats_and_a_typed_notice():
    s = session(seed=4)
    assert isinstance(s, GameSession)
    assert s.seats == [Seat("Terminators", PERSON), Seat("Clone Master", BOT)]
    assert s.notice.level is Level.INFO and s.notice.text == "Turn 1, Terminator set-up: Terminators to act."
    solo = session(PERSON, PERSON, scenario="solo")
    assert solo.seats[1].kind == BOT  # the Solo Clone Master is always the AI


def test_paced_session_stops_before_each_bot_or_dice_action_and_steps_one():
    paced, instant = session(seed=4, pace=True), session(seed=4)
    # The hidden set-up is played through at once, so both wait for the Terminators' entry.
    assert paced.state.step is instant.state.step is Step.ENTRY and not paced.pending
    assert paced.save() == instant.save()
    _entered(paced)
    _entered(instant)
    assert paced.pending and paced.bot_to_move()  # the Clone Master's window to reveal himself before the move
    while paced.pending:
        paced.step()
    assert paced.save() == instant.save()
    for s in (paced, instant):
        assert s.select("T1") and s.move("c3") and s.end()
    # The instant session played the whole bot turn; the paced one waits at its first step.
    assert paced.pending and paced.state.to_dict() != instant.state.to_dict()
    played = []
    while paced.pending:
        version = paced.version
        paced.step()
        assert paced.version == version + 1
        played.append(paced.last_action)
    assert len(played) > 1 and paced.state.to_dict() == instant.state.to_dict()
    with pytest.raises(IllegalActionError, match="no bot"):
        paced.step()


def test_a_step_worked_out_for_an_earlier_version_is_refused_and_changes_nothing():
    s = session(BOT, BOT, seed=3, pace=True)
    action = s.next_step(s.state.clone(), __import__("numpy").random.default_rng(0))
    s.step()
    before = s.save()
    with pytest.raises(IllegalActionError, match="earlier moment"):
        s.play_step(action, s.version - 1)
    assert s.save() == before


def test_step_shows_a_bot_move_with_where_it_came_from():
    s = at(session(seed=1, pace=True), skirmish(KungFuGame("basic"), {"T1": "n9", "J3": "s9"}, phase="cm_move"))
    assert s.pending and s.state.current_player() == 1
    before = s.state.name(s.state.figs["J3"].pos)
    s.step()
    assert isinstance(s.last_action, Move) and s.last_action.figure == "J3"
    assert s.moves[-1] == ("J3", before, s.last_action.square)


def test_dice_in_a_paced_combat_are_their_own_steps():
    s = at(session(seed=2, pace=True), skirmish(KungFuGame("basic"), {"T1": "n9", "J3": "o9"}, phase="combat1"))
    assert s.choose_chits("T1", ["kick", "fist", "kick"])
    assert s.pending
    s.step()
    assert isinstance(s.last_action, Chits) and s.last_action.figure == "J3"
    assert s.lead(0) and s.attack("T1", "kick", "J3")
    s.step()
    assert isinstance(s.last_action, Answer)
    assert s.state.current_player() == CHANCE and s.state.step is Step.ROLL and s.notice.text.endswith("the dice roll.")
    rolls = len(s.log)
    s.step()
    assert isinstance(s.last_action, Roll) and len(s.log) == rolls + 1


def test_play_refuses_an_illegal_action_with_its_reason_and_changes_nothing():
    s = session(seed=3)
    _entered(s)
    assert s.state.step is Step.MOVE
    before, version, notice = s.save(), s.version, s.notice
    for action, words in [(Move("T1", "a1"), "a1 is a wall"), (Wait("T1", "loo"), "not legal now"),
                          (Roll(3), "the dice are the session's"), ("end", "is not an action"),
                          (Attack("T1", "kick", "J1"), "not legal now")]:
        with pytest.raises(IllegalActionError, match=words):
            s.play(action)
        assert s.save() == before and s.version == version and s.notice == notice
    assert not s.move("a1") and s.notice.text == "select a figure first"
    assert not s.move("a1", "T1") and s.notice.level is Level.WARNING and "wall" in s.notice.text
    assert not s.select("J1") and "not one of your figures" in s.notice.text
    assert not s.choose_chits("T1", ["nunchaku"]) and "'nunchaku' is not a chit" in s.notice.text
    assert s.save() == before and s.version == version
    assert s.select("T1") and s.version == version and s.reachable()["c3"] == 1  # a selection is not a move
    assert s.move("c3") and s.state.name(s.state.figs["T1"].pos) == "c3" and s.version == version + 1


def test_a_bot_seat_is_never_played_by_a_click():
    s = session(BOT, PERSON, seed=1, pace=True)
    assert s.viewer == 1 and s.screen_view()["placing"] == "CM"
    assert s.place("CM", next(iter(s.legal())).square) and s.auto_setup()
    assert s.state.step is Step.ENTRY and s.pending
    before = s.save()
    with pytest.raises(IllegalActionError, match="not a person's turn"):
        s.play(Wait("T1", "loo"))
    assert s.save() == before


def test_hot_seat_hand_over_hides_the_clone_masters_counters_until_the_screen_is_taken():
    s = session(PERSON, PERSON, hand_over=True, seed=3)
    assert s.handover == 1 and "hand the screen to the Clone Master" in s.notice.text
    assert s.notice.level is Level.WARNING and s.legal() == []
    assert s.screen_view()["placing"] is None
    before = s.save()
    assert not s.auto_setup() and "hand the screen" in s.notice.text
    assert not s.take_screen(0) and "take the screen" in s.notice.text
    assert s.save() == before
    assert s.take_screen(1)
    assert s.handover is None and s.screen_view()["placing"] == "CM"
    assert s.auto_setup()
    assert s.state.step is Step.ENTRY and s.handover == 0
    public = s.screen_view()
    assert all(f["kind"] == "terminator" for f in public["figures"])
    assert len(public["face_down"]) == 33
    with pytest.raises(IllegalActionError, match="hand the screen"):
        s.play(Wait("T1", "loo"))
    assert s.take_screen(0) and s.wait_at("T1", "loo")
    assert s.state.figs["T1"].entry == "loo"


def test_hand_over_hides_the_terminators_chits_from_the_clone_master():
    s = session(PERSON, PERSON, hand_over=True, seed=3)
    at(s, skirmish(KungFuGame("basic"), {"T1": "n9", "J3": "o9"}, phase="combat1"))
    assert s.take_screen(0) and s.choose_chits("T1", ["fist", "kick", "kick"])
    assert s.handover == 1
    assert s.screen_view()["combat"]["chits"] == {"T1": 3}
    assert s.take_screen(1)
    assert s.screen_view()["combat"]["chits"] == {"T1": 3}
    assert s.choose_chits("J3", ["fist", "mist"]) and s.take_screen(0)
    assert s.screen_view()["combat"]["chits"] == {"T1": ["fist", "kick", "kick"], "J3": 2}


def test_auto_setup_is_only_for_a_persons_clone_master_set_up():
    s = session(seed=1)
    before = s.save()
    assert not s.auto_setup() and "only the Clone Master" in s.notice.text and s.save() == before


def test_odds_refuse_bad_input_with_the_reason_and_change_nothing():
    s = at(session(PERSON, PERSON), skirmish(KungFuGame("basic"), {"T1": "n9", "J3": "o9", "J1": "n10"},
                                             phase="combat1"))
    before = s.save()
    for attack, words in [(("T1", "fist", "ZZ"), "no figure or equipment ZZ"), (("T1", "laser", "J1"), "laser"),
                          (("T9", "fist", "J1"), "no figure T9"), (("J3", "kick", "T1"), "J3 has no level in kick")]:
        assert s.odds(*attack) is None
        assert s.notice.level is Level.WARNING and words in s.notice.text and s.save() == before
    assert s.odds("t1", "kick", "j3") == {"fist": 4 / 6, "kick": 3 / 6, "mist": 1 / 6, "none": 5 / 6}


def test_new_game_refuses_bad_options_and_keeps_the_game():
    s = KungFuSession(terminator_levels={"T1": [3, 0, 2, 1, 1]})
    assert s.state.figs["T1"].start == (3, 0, 2, 1, 1)
    before = s.save()
    for kwargs, words in [({"terminator_levels": {"T1": [9, 0, 0, 0, 0]}}, "add up to 7"),
                          ({"seed": -1}, "whole number"), ({"scenario": "chess"}, "no scenario"),
                          ({"seats": ["person", "robot"]}, "a person or a bot")]:
        assert not s.new_game(**kwargs) and words in s.notice.text and s.notice.level is Level.WARNING
        assert s.save() == before and s.terminator_levels == {"T1": [3, 0, 2, 1, 1]}
    game_number = s.game_number
    assert s.new_game(7, scenario="solo", seats=[BOT, PERSON])
    assert (s.seed, s.scenario, s.seats[1].kind, s.game_number) == (7, "solo", BOT, game_number + 1)


def test_outlook_and_map_layout():
    s = session(PERSON, PERSON)
    layout = s.map_layout()
    assert layout["width"] * layout["height"] == len(layout["squares"])
    assert sum(1 for q in layout["squares"] if q["equipment"]) == 7
    assert s.combat_outlook() is None and "before its chits are chosen" in s.notice.text
    at(s, skirmish(KungFuGame("basic"), {"T1": "n9", "S1": "o9"}, phase="combat1", levels={"T1": [1, 0, 0, 0, 1]}))
    outlook = s.combat_outlook()
    # hand derivation: T1's one Fist chit against the Servant (no chits): 5/6 to hit, and nothing hits back
    assert outlook.exact and outlook.marginal(1) == {0: Fraction(1, 6), 1: Fraction(5, 6)}


def test_decision_odds_and_hint_are_typed_actions():
    s = at(session(PERSON, PERSON), skirmish(KungFuGame("basic"), {"T1": "n9", "J3": "o9", "J1": "n10"},
                                             phase="combat1"))
    assert s.take_screen(0) or s.handover is None
    hint = s.hint()
    assert s.decision_odds() == [] and isinstance(hint, Chits) and hint.figure == "T1"
    for action in (Chits("T1", ("fist", "kick", "mist")), Chits("J1", ("fist", "kick")), Chits("J3", ("fist", "mist")),
                   Lead(0)):
        s.play(action)
    kick = next(d for d in s.decision_odds() if d["action"] == Attack("T1", "kick", "J3"))
    assert kick["p_hit"] == {"fist": 4 / 6, "kick": 3 / 6, "mist": 1 / 6, "none": 5 / 6}
    s.play(Attack("T1", "kick", "J3"))
    answers = {d["action"]: (d["column"], d["p_hit"]) for d in s.decision_odds()}
    assert answers[Answer("J3", "mist")] == ("mist", 1 / 6) and answers[Answer("J1", "kick")] == ("kick", 3 / 6)


def test_save_load_and_tamper_go_through_the_one_checked_path():
    s = session(seed=1)
    assert s.wait_at("T1", "loo")
    text = s.save()
    other = KungFuSession(seed=9, scenario="solo")
    other.load(text)
    assert other.scenario == "basic" and other.save() == text and other.notice.text.startswith("Game loaded")
    data = json.loads(text)
    data["game"]["state"]["turn"] = 3
    before = other.save()
    with pytest.raises(StateFormatError, match="checksum"):
        other.load(json.dumps(data))
    assert other.save() == before
    rolls = KungFuSession(seed=2, scenario="solo", seats=default_seats(BOT, BOT))
    forged_log = json.loads(rolls.save())
    forged_log["log"][0]["roll"] = 7 - forged_log["log"][0]["roll"]
    for damage, words in [({"seats": ["person", "robot"]}, "seats are damaged"), ({"rng": {"x": 1}}, "generator"),
                          ({"version": 1}, "format version 1"), ({"format": "chess"}, "not a saved Kung Fu 2100"),
                          ({"extra": 1}, "fields a Kung Fu 2100 session does not write")]:
        forged = {**json.loads(text), **damage}
        with pytest.raises(StateFormatError, match=words):
            other.load(json.dumps({**forged, "checksum": session_checksum(forged)}))
        assert other.save() == before
    forged_log["checksum"] = session_checksum(forged_log)
    with pytest.raises(StateFormatError, match="log does not match"):
        other.load(json.dumps(forged_log))
    assert other.save() == before
    assert not other.try_load("not json") and other.notice.level is Level.DANGER and other.save() == before


def test_a_loaded_session_goes_on_exactly_as_the_saved_one_would():
    """Seed, seats and the dice's generator travel with the game: the same bots and rolls follow."""
    s = session(BOT, BOT, seed=5, scenario="advanced", pace=True)
    for _ in range(60):
        s.step()
    text = s.save()
    other = KungFuSession(seed=1, pace=True)
    other.load(text)
    assert (other.seed, [x.kind for x in other.seats], other.scenario) == (5, [BOT, BOT], "advanced")
    played = []
    for _ in range(60):
        s.step()
        played.append(s.last_action)
    again = []
    for _ in range(60):
        other.step()
        again.append(other.last_action)
    assert again == played and json.loads(other.save()) == json.loads(s.save())


def test_a_bare_saved_game_loads_as_a_position_with_this_sessions_seats():
    s = at(session(PERSON, PERSON, seed=2), skirmish(KungFuGame("basic"), {"T1": "n9", "J3": "o9"}, phase="combat1"))
    assert s.state.figs["T1"].pos >= 0 and s.seats[1].kind == PERSON and s.seed == 2
    assert s.state.step is Step.PICK


def test_bots_only_game_ends_with_its_roll_log_and_a_final_notice():
    s = session(BOT, BOT, scenario="solo", seed=5)
    assert s.state.is_terminal() and s.state.step is Step.OVER and s.notice.text.startswith("Game over")
    assert "points" in s.notice.text
    assert s.log and all({"roll", "need", "p"} <= e.keys() for e in s.log)
    assert s.log == [e for e in s.state.log if "roll" in e]
    with pytest.raises(IllegalActionError, match="game is over"):
        s.play(End())


def test_the_strong_bot_is_the_searching_bot_and_plays_legal_moves():
    from engine.kf2100.bots import HeuristicBot
    from engine.kf2100.search import SearchBot

    s = session(BOT, BOT, seed=3)
    assert all(isinstance(b, HeuristicBot) for b in s.bots)
    s.bot_level = "search"
    assert all(isinstance(b, SearchBot) for b in s.bots) and "search bot" in s.notice.text
    for _ in range(12):
        if s.state.is_terminal():
            break
        before = s.version
        assert s.step() and s.version > before
    s.new_game(4, scenario="solo", seats=[PERSON, BOT], terminator_levels={})
    assert isinstance(s.bots[0], SearchBot) and isinstance(s.bots[1], HeuristicBot)  # the seed's solo automaton
    with pytest.raises(ValueError):
        s.bot_level = "oracle"


def _moving() -> KungFuSession:
    return at(session(), skirmish(KungFuGame("basic"), {"T1": "n9", "J3": "o3"}, phase="move1"))


def test_a_move_is_taken_back_step_by_step_while_nothing_is_rolled_or_revealed():
    s = _moving()
    start = s.save()
    assert not s.can_undo() and not s.undo() and s.notice.level is Level.WARNING and s.save() == start
    assert s.move("o9", "T1")
    after_one = s.save()
    assert s.move("o8", "T1") and s.can_undo()
    version = s.version
    assert s.undo() and s.version > version and s.save() == after_one and "taken back" in s.notice.text
    assert s.undo() and s.save() == start and s.state.figs["T1"].mp == skirmish(
        KungFuGame("basic"), {"T1": "n9", "J3": "o3"}, phase="move1").figs["T1"].mp
    assert not s.undo() and s.save() == start


def test_no_taking_back_after_a_reveal_or_another_kind_of_move():
    s = at(session(), skirmish(KungFuGame("basic"), {"T1": "n9", "J3": "o3"}, phase="move1"))
    assert s.move("o9", "T1") and s.can_undo()
    s.play(End())  # the phase ends: its moves stand
    assert not s.can_undo() and not s.undo() and "no move to take back" in s.notice.text
    # Coming into the lair (the kitchen's counters turned face up, an event of the game) stands.
    t = KungFuSession(seed=2, seats=default_seats(PERSON, BOT))
    _entered(t)
    log = len(t.state.log)
    assert t.move("c3", "T1") and len(t.state.log) > log
    assert not t.can_undo() and not t.undo()
