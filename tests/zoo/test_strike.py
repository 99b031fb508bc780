"""The strike height of a flick: a low strike pushes the die (it slides), a high one gives it topspin (it
tumbles); the move names it, the rules refuse a bad one, the saved battle keeps it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.core import IllegalActionError, StateFormatError, dump_state, load_state
from engine.zoo import Flick, ZooGame
from engine.zoo.actions import parse
from engine.zoo.constants import constants
from engine.zoo.game import STRIKE_DEFAULT, new_game
from engine.zoo.session import ZooSession


def _rolls(strike: float, n: int = 40) -> tuple[float, float]:
    """Over ``n`` seeded flicks of the first player's first die from the south dot (the same aims for every
    strike): the mean number of rolls onto a new face, and the share that tumbled at all."""
    rng = np.random.default_rng(1)
    rolls = tumbled = 0
    for k in range(n):
        s = new_game("cage", 2, seed=k)
        die = s.flickable()[0]
        f = Flick(die, "S", None, "head", float(rng.uniform(-20, 20)), float(rng.uniform(0.6, 1.4)), strike=strike)
        result = s.play_flick(f)
        rolls += result.rolls
        tumbled += result.tumbled
    return rolls / n, tumbled / n


def test_a_higher_strike_tumbles_more() -> None:
    low, mid, high = _rolls(0.0), _rolls(0.5), _rolls(1.0)
    assert low[0] < mid[0] < high[0]  # mean rolls rise with the strike height
    assert high[0] > 2 * low[0] + 1.0
    assert low[1] < 0.5 < mid[1]  # a low strike mostly slides without rolling (and is then turned feet-up)


def test_the_strike_reaches_the_physics_of_the_game() -> None:
    a, b = new_game("cage", 2, seed=3), new_game("cage", 2, seed=3)
    ra = a.play_flick(Flick("C1", "S", None, "head", 5.0, 1.2, strike=0.0))
    rb = b.play_flick(Flick("C1", "S", None, "head", 5.0, 1.2, strike=1.0))
    assert ra.rolls < rb.rolls
    assert a.last["strike"] == 0.0 and b.last["strike"] == 1.0


def test_the_range_and_default_are_the_data_files() -> None:
    c = constants()["arena3d"]
    assert STRIKE_DEFAULT == c["strike"] and 0.0 <= STRIKE_DEFAULT <= 1.0
    s = new_game("cage", 2, seed=0)
    s.play_flick(Flick("C1", "S", None, "head", 0.0, 1.0))
    assert s.last["strike"] == c["strike"]
    assert ZooSession().strike == c["strike"]


@pytest.mark.parametrize(("strike", "reason"), [
    (1.5, "strike height must be from 0"), (-0.1, "strike height must be from 0"),
    (math.nan, "strike height must be a finite number"), ("high", "strike height must be a number"),
])
def test_a_bad_strike_is_refused_and_changes_nothing(strike, reason: str) -> None:
    s = new_game("cage", 2, seed=0)
    before = s.to_json()
    flick = Flick("C1", "S", None, "head", 0.0, 1.0, strike=strike)
    assert reason in (s.illegal_reason(flick) or "")
    with pytest.raises(IllegalActionError, match=reason):
        s.apply_action(flick)
    assert s.to_json() == before


def test_the_session_refuses_a_bad_strike_and_keeps_its_own() -> None:
    session = ZooSession()
    assert session.set_strike(0.9) and session.strike == 0.9
    assert "strike=0.9" in str(session.proposed_flick())
    for bad in (2.0, math.inf, "x", True):
        assert not session.set_strike(bad)
        assert session.strike == 0.9
    assert "strike height" in session.notice.text
    assert session.set_strike(STRIKE_DEFAULT) and "strike=" not in str(session.proposed_flick())


def test_the_notation_reads_and_writes_the_strike() -> None:
    text = "flick E2 from S-dot face=head dir=0.0 speed=1.4 strike=0.8"
    assert parse(text) == Flick("E2", "S", None, "head", 0.0, 1.4, strike=0.8) and str(parse(text)) == text
    trunk = "flick E3 from here dir=270.0 speed=1.0 strike=0.25 ability"
    assert str(parse(trunk)) == trunk and parse(trunk).ability
    assert parse("flick E2 from S-dot face=head dir=0.0 speed=1.4").strike is None
    assert Flick("E2", "S", None, "head", 0.0, 1.4, strike=0.3).with_aim(5.0, 1.0).strike == 0.3


def test_a_saved_battle_keeps_the_strike_and_refuses_a_forged_one() -> None:
    s = new_game("cage", 2, seed=0)
    s.apply_action(Flick("C1", "S", None, "head", 0.0, 1.2, strike=0.85))
    copy = load_state(dump_state(s), ZooGame)
    assert copy.last["strike"] == 0.85 and copy.to_json() == s.to_json()
    for value, reason in ((0.5, "not the one its move names"), (1.5, "damaged"), ("high", "damaged")):
        state = s.to_dict()
        state["last"]["strike"] = value
        with pytest.raises(StateFormatError, match=reason):
            ZooGame().state_from_dict(state)
    state = s.to_dict()
    state["last"]["flick"] = state["last"]["flick"].replace("strike=0.85", "strike=7.0")
    with pytest.raises(StateFormatError, match="not the one its move names"):
        ZooGame().state_from_dict(state)


def test_a_saved_session_replays_its_struck_flicks() -> None:
    s = ZooSession(seats=["person", "person"], odds_workers=1)
    assert s.set_strike(0.85) and s.choose_die("C1") and s.launch_spot("S-dot") and s.propose_flick(3.0, 1.1)
    assert s.commit_flick() is not None
    copy = ZooSession(seats=["person", "person"], odds_workers=1)
    assert copy.try_load(s.save())
    assert copy.log[-1]["text"] == "flick C1 from S-dot face=head dir=3.0 speed=1.1 strike=0.85"
    assert copy.state.last["strike"] == 0.85 and copy.state.to_json() == s.state.to_json()
