"""What the session adds for the dashboard: aim by a drag vector, spots from a click, bots thought out off
the page's thread, and the odds shown for a flick kept in the log."""

from __future__ import annotations

import math

import pytest

from engine.zoo.session import DRAG_MM_PER_M_S, ZooSession


def person_session(seed: int = 3) -> ZooSession:
    return ZooSession(seed=seed, seats=["person", "person"], odds_workers=1)


def test_a_drag_vector_is_the_flick_direction_and_its_length_the_speed() -> None:
    s = person_session()
    assert s.choose_die("C1") and s.launch_spot("W-dot")
    # From the west rail straight in is east (0 degrees); 30 degrees anticlockwise of it, 1.5 m/s.
    h = math.radians(30.0)
    assert s.propose_vector(150 * math.cos(h), 150 * math.sin(h))
    assert (s.direction, s.speed) == (30.0, 1.5)
    assert s.aim_from_vector(0.0, 10 * DRAG_MM_PER_M_S) == (80.0, 2.5)  # held to the limits
    assert s.aim_from_vector(-5.0, 0.0) == (-80.0, 0.2)  # pointing out of the arena: the nearest legal aim
    assert s.launch_spot("N-dot") and s.aim_from_vector(0.0, -120.0) == (0.0, 1.2)
    before, version = s.state.to_json(), s.version
    assert not s.propose_vector(0.2, 0.3) and "drag further" in s.notice.text.lower()
    assert not s.propose_vector("x", 1) and "two numbers" in s.notice.text.lower()
    assert not s.propose_vector(float("nan"), 1.0)
    assert s.state.to_json() == before and s.version == version and (s.direction, s.speed) == (30.0, 1.5)


def test_a_click_on_a_rail_names_a_spot() -> None:
    assert ZooSession.spot_at(150.0, -10.0) == "S-dot"
    assert ZooSession.spot_at(160.0, 312.0) == "N-dot"
    assert ZooSession.spot_at(-10.0, 120.0) == "W@120.0"
    assert ZooSession.spot_at(310.0, 200.25) == "E@200.2"
    assert ZooSession.spot_at(150.0, 150.0) is None  # the floor
    assert ZooSession.spot_at(-10.0, -10.0) is None  # a corner of the rails
    assert ZooSession.spot_at(150.0, -40.0) is None  # off the table


def test_the_bot_thinks_on_a_copy_and_a_stale_choice_is_refused() -> None:
    s = ZooSession(seed=4, seats=["bot", "person"], odds_workers=1, bot_candidates=3, bot_samples=2)
    before = s.state.to_json()
    choice = s.think_bot()
    assert choice is not None and s.state.to_json() == before  # thinking changed nothing
    version, (action, _odds) = choice
    assert version == s.version
    frames = s.play_bot(choice)
    assert frames and s.log[-1]["text"] == str(action) and s.state.current_player() == 1
    assert s.think_bot() is None and "not a computer player's turn" in s.notice.text.lower()
    s2 = ZooSession(seed=4, seats=["bot", "person"], odds_workers=1, bot_candidates=3, bot_samples=2)
    stale = s2.think_bot()
    s2.new_game(5)
    kept = s2.state.to_json()
    assert s2.play_bot(stale) is None and "changed while the computer was thinking" in s2.notice.text.lower()
    assert s2.state.to_json() == kept


def test_the_odds_shown_for_a_flick_go_into_its_log_entry() -> None:
    s = person_session()
    assert s.choose_die("C2") and s.propose_flick(5.0, 1.0)
    odds = s.odds(samples=20)
    assert odds is not None
    s.note_odds(odds)
    assert s.commit_flick()
    entry = s.log[-1]
    assert entry["odds"]["samples"] == 20
    assert entry["odds"]["cage_opponent"] == pytest.approx(odds.cage_opponent.value)
    assert entry["odds"]["points"] == pytest.approx(odds.points_mean)
    # Odds of another flick are not attached to a different one.
    assert s.choose_die("E1") and s.propose_flick(0.0, 1.0)
    s.note_odds(odds)
    assert s.commit_flick()
    assert "odds" not in s.log[-1]
    assert ZooSession(seed=1).try_load(s.save())
