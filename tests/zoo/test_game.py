"""The whole game on the real physics: the protocol's invariants in every mode, reproducibility."""

from __future__ import annotations

import math

import pytest

from engine.core import make_rng, random_sim_test
from engine.zoo import Flick, ZooGame
from engine.zoo.constants import arena
from engine.zoo.faces import orientation_with_up
from engine.zoo.game import Die, new_game
from engine.zoo.physics import launch_point

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
    s.apply_action(Flick("C1", "S", 100.0, "head", round(heading, 3), 1.0))
    assert s.last["caged"].get("E1") == "SW", s.last
    assert s.phase == "extra" and s.current_player() == 0


def test_flick_with_frames_returns_the_trajectory() -> None:
    s = new_game("cage", 2, seed=0)
    result = s.flick_with_frames("flick C1 from S-dot face=head dir=10.0 speed=1.5")
    assert len(result.frames) > 10 and "C1" in result.frames[5]["dice"]
    assert s.current_player() == 1 and s.dice["C1"].status in ("arena", "caged", "out")
