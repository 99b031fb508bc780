"""The Clone Master's standing control (issue 14): "At any time (even during the Terminator's turn) the Clone Master
player may voluntarily activate the Clone Master counter" (seed). Engine: an out-of-turn action of his
(``standing_actions``, ``apply_standing_action``); session: ``reveal_clone_master``; page: a control at a table
for the Clone Master's seat only, behind the table's ``may_act`` gate."""

from __future__ import annotations

import pytest

from apps.kf2100 import table_game_page
from apps.kf2100.controls import REVEAL
from engine.core import IllegalActionError, dump_state
from engine.core.seal import Sealer
from engine.core.session import BOT, PERSON, Level
from engine.core.tables import TableRegistry, new_token
from engine.kf2100.actions import Activate, End, Move
from engine.kf2100.session import KungFuSession, default_seats
from engine.kf2100.state import CLONE_MASTER, TERMINATORS, KungFuGame, skirmish
from engine.kf2100.steps import Step
from engine.kf2100.table import KF2100_TABLE

pytestmark = pytest.mark.no_event_loop  # the page tests build Panel objects off Playwright's loop

BASIC = KungFuGame("basic")


def mid_move():
    """The Terminators' first move, T1 already moved (the window at the phase start let go by)."""
    s = skirmish(BASIC, {"T1": "g3", "T2": "n9", "CM": "s9"}, face_up=False)
    assert s.step is Step.CM_WINDOW  # his window at the phase start: he lets it go by
    s.apply_action(End())
    assert s.step is Step.MOVE and s.current_player() == TERMINATORS
    s.apply_action(Move("T1", "g5"))
    return s


def test_the_clone_master_reveals_himself_out_of_turn_and_play_goes_back_to_the_terminators():
    s = mid_move()
    assert s.standing_actions(CLONE_MASTER) == [Activate("CM")]
    assert s.standing_actions(TERMINATORS) == []
    assert Activate("CM") not in s.legal_actions()  # not the Terminators' move: out of turn only
    s.apply_standing_action(CLONE_MASTER, Activate("CM"))
    assert s.figs["CM"].face_up and s.step is Step.BONUS_MOVE and s.current_player() == CLONE_MASTER
    s.apply_action(Move("CM", "u9"))
    assert s.step is Step.MOVE and s.current_player() == TERMINATORS
    assert s.figs["T1"].mp == 3 and s.figs["T2"].mp == 5  # the Terminators' move goes on where it was
    assert s.standing_actions(CLONE_MASTER) == []  # nothing left to reveal


@pytest.mark.parametrize(("player", "action", "reason"), [
    (TERMINATORS, Activate("CM"), "only the Clone Master may act out of turn"),
    (CLONE_MASTER, Activate("J1"), "out of turn the Clone Master may only reveal himself (activate CM), not activ"),
    (CLONE_MASTER, Move("CM", "s10"), "out of turn the Clone Master may only reveal himself"),
])
def test_other_out_of_turn_actions_are_refused_and_change_nothing(player, action, reason):
    s = mid_move()
    before = dump_state(s)
    assert s.standing_refusal(player, action).startswith(reason)
    with pytest.raises(IllegalActionError, match=reason.split("(")[0]):
        s.apply_standing_action(player, action)
    assert dump_state(s) == before


def test_not_within_a_chit_exchange():
    s = skirmish(BASIC, {"T1": "n9", "J3": "o9"}, phase="combat1")
    cm = s.figs["CM"]
    cm.pos, cm.status = s.board.square("s15"), "active"  # face down, far away
    assert s.step is Step.PICK and s.standing_actions(CLONE_MASTER) == []
    before = dump_state(s)
    with pytest.raises(IllegalActionError, match="not within a chit exchange"):
        s.apply_standing_action(CLONE_MASTER, Activate("CM"))
    assert dump_state(s) == before


# --- the session -------------------------------------------------------------------------------------------

def session(clone_master=PERSON, hand_over=False):
    s = KungFuSession(seats=default_seats(PERSON, clone_master), hand_over=hand_over)
    s.load(dump_state(mid_move()))
    return s


def test_the_session_reveals_him_for_his_person_and_not_for_a_bot_seat():
    s = session()
    assert s.standing(CLONE_MASTER) == [Activate("CM")] and s.standing(TERMINATORS) == []
    assert s.reveal_clone_master()
    assert s.state.step is Step.BONUS_MOVE and s.person_to_move() == CLONE_MASTER
    assert s.notice.text.startswith("The Clone Master reveals himself.") and not s.can_undo()
    bot = session(clone_master=BOT)
    before = bot.save()
    assert bot.standing(CLONE_MASTER) == [] and not bot.reveal_clone_master()
    assert bot.notice.level is Level.WARNING and "not a bot's" in bot.notice.text and bot.save() == before


def test_at_one_screen_he_waits_for_the_hand_over():
    s = session(hand_over=True)
    assert s.handover is not None and s.standing(CLONE_MASTER) == []
    before = s.save()
    assert not s.reveal_clone_master() and s.notice.text.startswith("hand the screen") and s.save() == before


# --- the page at a table: the Clone Master's seat only -------------------------------------------------------

def table_pages(tmp_path):
    """A table with a browser for each side and a watcher, each with its page; the game at ``mid_move``."""
    from apps._tables import SeatBar

    reg = TableRegistry(tmp_path / "tables", {"kf2100": KF2100_TABLE}, Sealer.in_folder(tmp_path))
    terminators, clone_master, watcher = new_token(), new_token(), new_token()
    table = reg.create("kf2100", terminators)
    assert table.take("Terminators", terminators) == "" and table.take("Clone Master", clone_master) == ""
    table.session.load(dump_state(mid_move()))
    assert table.session.seat(CLONE_MASTER) == PERSON and not table.session.hand_over
    pages = [table_game_page(table, token, SeatBar(token, table=table).may_act)
             for token in (terminators, clone_master, watcher)]
    return table, pages


def test_the_standing_control_is_the_clone_masters_page_only_and_reveals_him(tmp_path):
    table, (mine, his, watching) = table_pages(tmp_path)
    s = table.session
    assert his.standing.shown() and not mine.standing.shown() and not watching.standing.shown()
    label = "Reveal the Clone Master now"  # a row of his decision panel only
    assert label in his.decisions.buttons() and label not in mine.decisions.buttons()
    assert label not in watching.decisions.buttons()
    before, version = dump_state(s.state), s.version  # (a table's file is sealed afresh each save)
    assert not mine.decisions.choose(REVEAL)  # the Terminators' browser is refused, the game unchanged
    assert "only the Clone Master's player" in s.notice.text
    assert dump_state(s.state) == before and s.version == version
    assert not watching.standing.reveal()  # a watcher: the gate says no
    assert dump_state(s.state) == before and s.version == version
    assert his.decisions.choose(REVEAL)
    assert s.state.figs["CM"].face_up and s.state.step is Step.BONUS_MOVE and s.person_to_move() == CLONE_MASTER
    assert not his.standing.shown() and label not in his.decisions.buttons()  # his bonus move: the board now
    assert his.board.click_square("u9")
    assert s.state.step is Step.MOVE and s.person_to_move() == TERMINATORS and not his.standing.shown()
