"""What the session adds for the dashboard: paced bot play, the hot-seat hand-over, automatic set-up."""

import pytest

from engine.core import CHANCE, IllegalActionError
from engine.kf2100.session import KungFuSession
from engine.kf2100.state import skirmish


def _entered(s: KungFuSession) -> None:
    for fid in ("T1", "T2", "T3"):
        s.wait_at(fid, "disposal")


def test_paced_session_stops_before_each_bot_or_dice_action_and_steps_one():
    paced, instant = KungFuSession(seed=4, pace=True), KungFuSession(seed=4)
    # The hidden set-up is played through at once, so both wait for the Terminators' entry.
    assert paced.state.phase == instant.state.phase == "entry" and not paced.pending
    assert paced.save() == instant.save()
    _entered(paced)
    _entered(instant)
    assert paced.pending  # the Clone Master's window to reveal himself before the move
    while paced.pending:
        paced.step()
    assert paced.save() == instant.save()
    for s in (paced, instant):
        s.select("T1")
        s.move("c3")
        s.end()
    # The instant session played the whole bot turn; the paced one waits at its first step.
    assert paced.pending and paced.state.to_dict() != instant.state.to_dict()
    played = []
    while paced.pending:
        played.append(paced.step())
        assert played[-1]
    assert len(played) > 1 and paced.step() == ""
    assert paced.state.to_dict() == instant.state.to_dict()
    assert paced.last_action == played[-1]


def test_step_shows_a_bot_move_with_where_it_came_from():
    s = KungFuSession(pace=True, seed=1)
    s.state = skirmish(s.game, {"T1": "n9", "J3": "s9"}, phase="cm_move")
    s._advance()
    assert s.pending and s.state.current_player() == 1
    before = s.state.name(s.state.figs["J3"].pos)
    text = s.step()
    assert text.startswith("move J3")
    assert s.moves[-1] == ("J3", before, text.split()[-1])


def test_dice_in_a_paced_combat_are_their_own_steps():
    s = KungFuSession(pace=True, seed=2)
    s.state = skirmish(s.game, {"T1": "n9", "J3": "o9"}, phase="combat1")
    s._advance()
    s.choose_chits("T1", ["fist", "kick", "kick"])
    assert s.pending and s.step().startswith("chits J3")
    s.lead(0)
    s.attack("T1", "kick", "J3")
    assert s.step().startswith("answer J3")
    assert s.state.current_player() == CHANCE and s.status.endswith("the dice roll")
    rolls = len(s.log)
    assert s.step().startswith("d6")
    assert len(s.log) == rolls + 1


def test_hot_seat_hand_over_hides_the_clone_masters_counters_until_the_screen_is_taken():
    s = KungFuSession(terminators="human", clone_master="human", hand_over=True, seed=3)
    assert s.handover == 1 and "hand the screen to the Clone Master" in s.status
    view = s.screen_view()
    assert view["placing"] is None
    before = s.save()
    with pytest.raises(IllegalActionError, match="hand the screen"):
        s.auto_setup()
    with pytest.raises(IllegalActionError, match="take the screen"):
        s.take_screen(0)
    assert s.save() == before
    s.take_screen(1)
    assert s.handover is None and s.screen_view()["placing"] == "CM"
    s.auto_setup()
    assert s.state.phase == "entry" and s.handover == 0
    public = s.screen_view()
    assert all(f["kind"] == "terminator" for f in public["figures"])
    assert len(public["face_down"]) == 33
    with pytest.raises(IllegalActionError, match="hand the screen"):
        s.wait_at("T1", "loo")
    s.take_screen(0)
    s.wait_at("T1", "loo")
    assert s.state.figs["T1"].entry == "loo"


def test_hand_over_hides_the_terminators_chits_from_the_clone_master():
    s = KungFuSession(terminators="human", clone_master="human", hand_over=True, seed=3)
    s.state = skirmish(s.game, {"T1": "n9", "J3": "o9"}, phase="combat1")
    s.viewer = 0
    s._advance()
    s.choose_chits("T1", ["fist", "kick", "kick"])
    assert s.handover == 1
    assert s.screen_view()["combat"]["chits"] == {"T1": 3}
    s.take_screen(1)
    assert s.screen_view()["combat"]["chits"] == {"T1": 3}
    s.choose_chits("J3", ["fist", "mist"])
    s.take_screen(0)
    assert s.screen_view()["combat"]["chits"] == {"T1": ["fist", "kick", "kick"], "J3": 2}


def test_auto_setup_is_only_for_a_human_clone_masters_set_up():
    s = KungFuSession(seed=1)
    before = s.save()
    with pytest.raises(IllegalActionError, match="only the Clone Master"):
        s.auto_setup()
    assert s.save() == before
    cm = KungFuSession(terminators="bot", clone_master="human", seed=1, pace=True)
    assert cm.viewer == 1 and cm.screen_view()["placing"] == "CM"
    cm.place("CM", cm.legal()[0].split()[-1])
    cm.auto_setup()
    assert cm.state.phase == "entry" and cm.pending
