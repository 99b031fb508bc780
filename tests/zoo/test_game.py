"""The whole game on the real physics: the protocol's invariants in every mode, reproducibility."""

from __future__ import annotations

import math

import pytest
from helpers import Script, in_arena

from engine.core import IllegalActionError, load_state, make_rng, random_sim_test
from engine.zoo import Flick, Place, ZooGame
from engine.zoo.arena3d import launch_point
from engine.zoo.constants import arena
from engine.zoo.faces import orientation_with_up
from engine.zoo.game import Die, new_game

VARIANTS = [
    ("cage", 2, {}),
    ("cage", 2, {"all_valley": True}),
    ("points", 2, {}),
    ("cage", 3, {}),
    ("cage", 4, {}),
    ("points", 3, {}),
    ("points", 4, {}),
]


@pytest.mark.parametrize(("mode", "players", "options"), VARIANTS)
def test_random_play_keeps_the_protocol(mode: str, players: int, options: dict) -> None:
    report = random_sim_test(ZooGame(mode=mode, players=players, **options), num_games=2, seed=players,
                             check_every=7)
    assert report.games == 2 and report.illegal_probes > 0


def _play(state, moves: int, seed: int) -> list[str]:
    rng = make_rng(seed)
    log = []
    for _ in range(moves):
        if state.is_terminal():
            break
        legal = state.legal_actions()
        action = legal[int(rng.integers(len(legal)))]
        log.append(str(action))
        state.apply_action(action)
    return log


def test_a_seed_reproduces_a_game_exactly() -> None:
    a, b = new_game("cage", 2, seed=42), new_game("cage", 2, seed=42)
    assert _play(a, 40, 1) == _play(b, 40, 1)
    assert a.to_json() == b.to_json()


def test_a_clone_applying_the_same_flick_gets_the_same_result() -> None:
    s = new_game("points", 2, seed=3)
    _play(s, 5, 2)
    flick = next(a for a in s.legal_actions() if isinstance(a, Flick))
    c = s.clone()
    s.apply_action(flick)
    c.apply_action(flick)
    assert s.to_json() == c.to_json()


def test_a_real_shot_into_a_cage_earns_the_extra_flick() -> None:
    """An Elephant lies between a spot on the south rail and the SW cage; a face-up Crocodile knocks it in."""
    s = new_game("cage", 2, seed=0)
    s.rail_rule = None
    hx, hy = arena().holes["SW"]
    x0, y0, normal = launch_point("S", 100.0)
    t = 0.55
    ex, ey = x0 + t * (hx - x0), y0 + t * (hy - y0)
    assert arena().over_hole(ex, ey) is None
    for k, d in enumerate(("C1", "C2", "C3", "C4")):
        s.dice[d] = Die(0, "arena", 200.0, 110.0 + 50 * k, 0.0, orientation_with_up("head"))
    s.dice["E1"] = Die(1, "arena", ex, ey, 0.0, orientation_with_up("back"))
    s.dice["E2"] = Die(1, "arena", 250.0, 250.0, 0.0, orientation_with_up("back"))
    heading = math.degrees(math.atan2(hy - y0, hx - x0) - normal)
    s.apply_action(Flick("C1", "S", 100.0, "head", round(heading, 3), 0.8))  # hard enough for E1, not for C1
    assert s.last["caged"].get("E1") == "SW", s.last
    assert s.phase == "extra" and s.current_player() == 0


def test_flick_with_frames_returns_the_trajectory() -> None:
    s = new_game("cage", 2, seed=0)
    result = s.flick_with_frames("flick C1 from S-dot face=head dir=10.0 speed=1.5")
    assert len(result.frames) > 10 and "C1" in result.frames[5]["dice"]
    assert s.current_player() == 1 and s.dice["C1"].status in ("arena", "caged", "out")


NAN, INF = float("nan"), float("inf")


@pytest.mark.parametrize(("flick", "reason"), [
    (Flick("C1", "S", None, "head", NAN, 1.0), "direction must be a finite number, not nan"),
    (Flick("C1", "S", None, "head", INF, 1.0), "direction must be a finite number, not inf"),
    (Flick("C1", "S", None, "head", -INF, 1.0), "direction must be a finite number, not -inf"),
    (Flick("C1", "S", None, "head", 0.0, NAN), "speed must be a finite number, not nan"),
    (Flick("C1", "S", None, "head", 0.0, INF), "speed must be a finite number, not inf"),
    (Flick("C1", "S", NAN, "head", 0.0, 1.0), "the spot along the rail must be a finite number, not nan"),
    (Flick("C1", "S", INF, "head", 0.0, 1.0, True), "the spot along the rail must be a finite number, not inf"),
    (Flick("C1", "S", None, "head", "12", 1.0), "direction must be a number, not '12'"),  # type: ignore[arg-type]
])
def test_a_flick_with_a_number_that_is_not_finite_is_refused_and_changes_nothing(flick: Flick, reason: str) -> None:
    s = new_game("cage", 2, seed=0)
    before = s.to_json()
    assert s.illegal_reason(flick) == reason
    with pytest.raises(IllegalActionError, match=reason):
        s.apply_action(flick)
    with pytest.raises(IllegalActionError, match=reason):
        s.play_flick(flick)
    assert s.to_json() == before
    assert load_state(before, ZooGame).to_json() == before  # and its JSON still reloads


def test_a_trunk_shot_heading_that_is_not_finite_is_refused() -> None:
    s = new_game("cage", 2, seed=0, teams=("elephant", "crocodile"))
    s.rail_rule = None
    for k, d in enumerate(("E1", "E2", "E3", "E4")):
        s.dice[d] = Die(0, "arena", 60.0 + 50 * k, 150.0, 0.0, orientation_with_up("back"))
    assert s.illegal_reason(Flick("E1", "here", None, None, 90.0, 1.0, True)) is None
    reason = s.illegal_reason(Flick("E1", "here", None, None, NAN, 1.0, True))
    assert reason == "heading must be a finite number, not nan"


def test_a_placement_off_the_number_line_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    s = new_game("cage", 2, seed=0)
    s.rail_rule = None
    in_arena(s, dice=["E1"])
    Script(monkeypatch).then(left={"E1": "N"})
    s.apply_action(Flick("C1", "S", None, "head", 0.0, 1.0))
    assert s.phase == "place"
    before = s.to_json()
    for x, y, reason in ((NAN, 150.0, "x must be a finite number, not nan"),
                         (150.0, INF, "y must be a finite number, not inf")):
        with pytest.raises(IllegalActionError, match=reason):
            s.apply_action(Place("E1", x, y, "head"))
    assert s.to_json() == before
    s.apply_action(Place("E1", 150.0, 200.0, "head"))
