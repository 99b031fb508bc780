"""Routes (issue 14): a move goes by the cheapest path unless the player picks its way, square by square on the
board; the way taken decides which rooms wake. Engine (``way_through``, ``reachable_by``), session (``way``,
``add_waypoint``, ``clear_way``) and page (clicks on the board, the way controls)."""

from __future__ import annotations

import pytest

from apps.kf2100.page import KungFuPage
from engine.core import dump_state, load_state
from engine.core.session import Level
from engine.kf2100.actions import KFAction, Move
from engine.kf2100.session import KungFuSession
from engine.kf2100.state import KungFuGame, skirmish
from engine.kf2100.state_movement import Way

pytestmark = pytest.mark.no_event_loop  # the page test builds Panel objects off Playwright's loop

BASIC = KungFuGame("basic")
WORK_AREA = "Servants' work area"


def corridor():
    """T1 in the south corridor at j10 (5 points); a face-down Servant in the servants' work area (g16)."""
    return skirmish(BASIC, {"T1": "j10", "S1": "g16"}, face_up=False)


def test_the_cheapest_path_stays_the_default_and_wakes_no_room():
    s = corridor()
    way = s.way_through("T1", [], "i12")
    assert way == Way("T1", ("j10", "j11", "j12", "i12"), 3, 5, ())
    assert way.move() == Move("T1", "i12", ("j11", "j12"))
    assert s.reachable("T1")["i12"] == 3  # the cheapest path's cost, as before a way is picked


def test_a_way_through_a_square_joins_the_cheapest_legs_and_says_which_room_it_wakes():
    s = corridor()
    way = s.way_through("T1", ["h10"], "i12")
    assert way.squares == ("j10", "i10", "h10", "h11", "h12", "i12") and way.cost == 5 and way.wakes == (WORK_AREA,)
    move = way.move()
    assert str(move) == "move T1 i12 via i10 h10 h11 h12" and KFAction.parse(str(move)) == move
    assert s.illegal_reason(move) is None
    # what a page highlights once h10 is picked: the ends by that way, at that way's cost
    by_way = s.reachable_by("T1", ["h10"])
    assert by_way["i12"] == 5 and by_way["h10"] == 2 and "j12" not in by_way  # j12 by h10 would cost 6
    s.apply_action(move)
    assert s.figs["S1"].face_up and s.figs["T1"].mp == 0
    assert s.log[-1]["event"] == f"S1 activated (T1 entered the {WORK_AREA})"


def test_a_way_round_a_room_leaves_it_asleep():
    """The same end by the cheapest path: the Servant stays face down (the path, not the end, wakes rooms)."""
    s = corridor()
    s.apply_action(s.way_through("T1", [], "i12").move())
    assert not s.figs["S1"].face_up and s.figs["T1"].mp == 2


@pytest.mark.parametrize(("figure", "waypoints", "reason"), [
    ("T1", ["a1"], "a1 is a wall: no figure may stand there"),
    ("T1", ["z30"], "z30 is off the map"),
    ("T1", ["h16"], "h16 is out of T1's reach: it has 5 movement points"),
    ("T1", ["h10", "g16"], "g16 is out of T1's reach: it has 5 movement points and the way to h10 costs 2"),
    ("S1", [], "S1 cannot move now"),
    ("X9", [], "there is no figure X9"),
])
def test_a_way_that_cannot_be_walked_is_refused_with_its_reason_and_changes_nothing(figure, waypoints, reason):
    s = corridor()
    before = dump_state(s)
    assert s.way_through(figure, waypoints) == reason
    assert s.reachable_by(figure, waypoints) == {}
    assert dump_state(s) == before


def test_a_move_by_its_way_is_refused_when_it_costs_more_than_the_points():
    s = corridor()
    move = Move("T1", "j12", ("i10", "h10", "h11", "h12", "i12"))
    assert s.illegal_reason(move) == "T1 needs 6 movement points by that way to j12 and has 5"


def test_a_position_after_a_move_by_its_way_saves_and_loads():
    s = corridor()
    s.apply_action(Move("T1", "i12", ("i10", "h10", "h11", "h12")))
    again = load_state(dump_state(s), KungFuGame)
    assert dump_state(again) == dump_state(s) and again.figs["S1"].face_up


# --- the session: the way picked square by square --------------------------------------------------------

def session():
    s = KungFuSession()
    s.load(dump_state(corridor()))
    assert s.person_to_move() == 0 and s.select("T1")
    return s


def test_the_session_moves_the_selected_figure_by_the_way_picked():
    s = session()
    assert s.add_waypoint("h10") and s.way == ["h10"]
    assert s.notice.text.startswith(f"Way of T1: j10 i10 h10 (2 of 5 movement points; wakes {WORK_AREA})")
    assert s.reachable()["i12"] == 5
    assert s.move("i12")
    assert s.last_action == Move("T1", "i12", ("i10", "h10", "h11", "h12")) and s.state.figs["S1"].face_up
    assert s.way == [] and s.selected == ""


def test_a_refused_waypoint_keeps_the_way_and_the_game():
    s = session()
    assert s.add_waypoint("h10")
    before = s.save()
    assert not s.add_waypoint("g16")
    assert s.notice.level is Level.WARNING and "out of T1's reach" in s.notice.text
    assert s.way == ["h10"] and s.save() == before


def test_clearing_the_way_goes_back_to_the_cheapest_path():
    s = session()
    assert s.add_waypoint("h10") and s.clear_way() and s.way == []
    assert s.reachable()["i12"] == 3
    assert s.move("i12") and not s.state.figs["S1"].face_up and s.state.figs["T1"].mp == 2


def test_selecting_another_figure_forgets_the_way():
    s = KungFuSession()
    s.load(dump_state(skirmish(BASIC, {"T1": "j10", "T2": "n9", "S1": "g16"}, face_up=False)))
    assert s.select("T1") and s.add_waypoint("h10")
    assert s.select("T2") and s.way == []


# --- the page: clicks on the board --------------------------------------------------------------------------

def test_the_board_picks_the_way_by_clicks_and_the_destination_click_moves_along_it():
    p = KungFuPage()
    s, b = p.session, p.board
    s.load(dump_state(corridor()))
    assert b.click_figure("T1") and p.way.shown()
    assert p.way.text.object.startswith("By the cheapest path")
    assert not b.click_square("h16")  # not a destination: a square of the way, here out of reach
    assert "out of T1's reach" in s.notice.text and s.way == []
    b.mark_way = True  # every click is a square of the way, even a green one
    assert b.click_square("h10") and s.way == ["h10"]
    assert p.way.text.object == f"Way of T1: j10 i10 h10 (2 of 5 movement points; wakes {WORK_AREA})."
    assert b.frames["way"] == [b.model.centre(*b.model.col_row(sq)) for sq in ("j10", "i10", "h10")]
    assert not p.way.clear.disabled
    b.mark_way = False
    costs = dict(zip((b.model.square_at(x, y + 0.3) for x, y in zip(b.frames["costs"]["x"], b.frames["costs"]["y"],
                                                                     strict=True)),
                     map(int, b.frames["costs"]["text"]), strict=True))
    assert costs == s.reachable() and costs["i12"] == 5  # the green squares cost what they cost by this way
    assert b.click_square("i12")
    assert s.state.figs["S1"].face_up
    assert str(s.last_action) == "move T1 i12 via i10 h10 h11 h12"
    assert not p.way.shown() and b.frames["way"] == []


def test_marking_the_way_moves_on_a_second_click_of_its_last_square_and_clear_forgets_it():
    p = KungFuPage()
    s, b = p.session, p.board
    s.load(dump_state(corridor()))
    assert b.click_figure("T1")
    b.mark_way = True
    assert b.click_square("h10") and b.click_square("h12") and s.way == ["h10", "h12"]
    assert p.way.clear_way()
    assert s.way == [] and p.way.clear.disabled
    assert b.click_square("h10") and b.click_square("h10")  # the last square again: go there
    assert s.state.figs["T1"].pos == s.game.board.square("h10") and s.state.figs["S1"].face_up
