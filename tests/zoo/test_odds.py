"""Flick odds against independent derivations, the bot, the benchmark and the command line."""

from __future__ import annotations

import argparse
import json
import math
import threading

import numpy as np
import pytest

import engine.zoo.odds as odds_module
from engine.core.distributed import RunStopped
from engine.core.rng import make_rng
from engine.zoo import Flick
from engine.zoo.arena3d import Launch, launch_point, simulate
from engine.zoo.bench import run as bench_run
from engine.zoo.bot import OddsBot, aimed_shots
from engine.zoo.cli import register
from engine.zoo.constants import FACE_NAMES, arena, face_points
from engine.zoo.faces import orientation_with_up
from engine.zoo.game import Die, new_game
from engine.zoo.odds import (
    STOP_SAMPLES,
    AimNoise,
    flick_odds,
    flick_odds_progressive,
    noisy_jobs,
    odds_grid,
    run_samples,
)

Z999 = 3.2905
MIXED = "flick C1 from S-dot face=back dir=0.0 speed=0.8"  # into an empty arena: mostly tail, a fifth other faces


def _direct_faces(n: int, seed: int) -> list[str]:
    """``MIXED``'s outcomes straight from the 3-D arena, bypassing the rules and the odds (each run with its own
    generator: the strike's sideways offset is the only chance)."""
    x, y, normal = launch_point("S", arena().size / 2)
    out = []
    for k in range(n):
        launch = Launch("C1", x, y, normal, 800.0, orientation_with_up("back"))
        r = simulate([], launch, np.random.default_rng([seed, k]))
        out.append(r.dice["C1"].face if "C1" in r.dice else ("caged" if r.caged else "out"))
    return out


def test_flick_faces_match_the_arena_run_directly() -> None:
    """Two samples of the same distribution: each outcome's shares agree within a pooled 99.9% test."""
    state = new_game("cage", 2, seed=0)
    odds = flick_odds(state, MIXED, noise=AimNoise(0.0, 0.0), samples=300, seed=1, workers=1)
    direct = _direct_faces(300, 7)
    n1, n2 = odds.samples, len(direct)
    for face in (*FACE_NAMES, "caged", "out"):
        k1, k2 = odds.outcomes[face].successes, direct.count(face)
        pooled = (k1 + k2) / (n1 + n2)
        spread = Z999 * math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2)) + 1 / n1
        assert abs(k1 / n1 - k2 / n2) <= spread, (face, k1 / n1, k2 / n2)
    assert sum(direct.count(f) for f in FACE_NAMES if f != "tail") >= 20  # a test with something to compare
    assert odds.outcomes["caged"].successes == odds.outcomes["out"].successes == 0
    assert odds.cage_opponent.successes == odds.lose_own.successes == odds.foul.successes == 0


def test_expected_points_of_a_points_flick_match_the_arena_run_directly() -> None:
    """In an empty arena the change of margin is the points of the face the flicked animal ends on."""
    state = new_game("points", 2, seed=0)
    odds = flick_odds(state, MIXED, noise=AimNoise(0.0, 0.0), samples=300, seed=2, workers=1)
    points = np.array([face_points(f) for f in _direct_faces(300, 8)], dtype=float)
    half = 1.96 * math.sqrt(((odds.points_high - odds.points_mean) / 1.96) ** 2 + points.var(ddof=1) / len(points))
    assert abs(odds.points_mean - points.mean()) <= half, (odds.points_mean, points.mean(), half)


def _shot_state():
    s = new_game("cage", 2, seed=0)
    s.rail_rule = None
    hx, hy = arena().holes["SW"]
    x0, y0, normal = launch_point("S", 100.0)
    ex, ey = x0 + 0.55 * (hx - x0), y0 + 0.55 * (hy - y0)
    for k, d in enumerate(("C1", "C2", "C3", "C4")):
        s.dice[d] = Die(0, "arena", 200.0, 110.0 + 50 * k, 0.0, orientation_with_up("head"))
    s.dice["E1"] = Die(1, "arena", ex, ey, 0.0, orientation_with_up("back"))
    s.dice["E2"] = Die(1, "arena", 250.0, 250.0, 0.0, orientation_with_up("back"))
    heading = math.degrees(math.atan2(hy - y0, hx - x0) - normal)
    return s, Flick("C1", "S", 100.0, "head", round(heading, 3), 1.0)


def _long_shot_state():
    """Crocodile 1 (face-up) on the west rail, Elephant 1 in line with the NE cage 114 mm beyond it."""
    s = new_game("cage", 2, seed=0)
    s.rail_rule = None
    for k, d in enumerate(("C1", "C2", "C3", "C4")):
        s.dice[d] = Die(0, "arena", 250.0, 60.0 + 40 * k, 0.0, orientation_with_up("head"))
    s.dice["E1"] = Die(1, "arena", 180.0, 200.0, 0.0, orientation_with_up("back"))
    s.dice["E2"] = Die(1, "arena", 100.0, 250.0, 0.0, orientation_with_up("back"))
    x0, y0, normal = launch_point("W", 67.4)
    heading = math.degrees(math.atan2(200.0 - y0, 180.0 - x0) - normal)
    return s, Flick("C1", "W", 67.4, "head", round(heading, 3), 1.9)


def test_aim_noise_turns_a_sure_shot_into_a_gamble() -> None:
    """Flicked as aimed at 2.3 m/s (the strike's small sideways offset the only chance), the shot cages the Elephant
    most of the time (about 85%); the default human hand makes it a gamble (the two 95% intervals far apart)."""
    state, shot = _long_shot_state()
    shot = shot.with_aim(shot.direction, 2.3)
    sure = flick_odds(state, shot, noise=AimNoise(0.0, 0.0), samples=60, seed=0, workers=1)
    assert sure.cage_opponent.low > 0.8 and sure.extra_flick.low > 0.75, sure.summary()
    shaky = flick_odds(state, shot, samples=200, seed=0, workers=2)  # the default human hand
    assert shaky.cage_opponent.high < 0.5 and shaky.cage_opponent.low > 0.1, shaky.summary()


def test_the_odds_come_as_a_first_estimate_then_refined_to_the_full_figures() -> None:
    state, shot = _shot_state()
    estimates = list(flick_odds_progressive(state, shot, samples=140, seed=5, workers=2, first=20))
    assert [e.samples for e in estimates] == [20, 120, 140]
    full = flick_odds(state, shot, samples=140, seed=5, workers=1)
    assert estimates[-1].to_dict() == full.to_dict()


def test_the_odds_do_not_depend_on_the_number_of_workers() -> None:
    state, shot = _shot_state()
    one = flick_odds(state, shot, samples=40, seed=5, workers=1)
    two = flick_odds(state, shot, samples=40, seed=5, workers=2)
    assert one.to_dict() == two.to_dict()


class _SetAfter(threading.Event):
    """A stop event that reads as set from its ``n``-th look on (a move arriving mid-batch, without a clock)."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.looks, self.n = 0, n

    def is_set(self) -> bool:
        self.looks += 1
        return self.looks >= self.n


def test_a_stop_event_abandons_a_batch_within_a_few_flicks_and_an_unset_one_changes_nothing(monkeypatch) -> None:
    state, shot = _shot_state()
    jobs = noisy_jobs(shot, AimNoise(), 30, make_rng(3))
    plain = run_samples(state, jobs, 1)
    assert run_samples(state, jobs, 1, threading.Event()) == plain  # the chunking changes no result
    played = []
    monkeypatch.setattr(odds_module, "sample_flick",
                        lambda *a: played.append(a) or (False, False, False, 0, 0.0, False))
    with pytest.raises(RunStopped):
        run_samples(state, jobs, 1, _SetAfter(3))
    assert len(played) == 2 * STOP_SAMPLES  # two chunks played, the third stopped before it began
    grid_jobs = len(played)
    with pytest.raises(RunStopped):
        odds_grid(state, shot, [shot.direction], [0.6, 1.0], samples=8, seed=0, workers=1, stop=_SetAfter(1))
    assert len(played) == grid_jobs


def test_odds_grid_has_a_row_per_cell() -> None:
    state, shot = _shot_state()
    grid = odds_grid(state, shot, [shot.direction - 10, shot.direction], [0.6, 1.0], samples=8, seed=0, workers=2)
    assert len(grid) == 4 and {"p_cage_opponent", "p_lose_own_high", "p_head", "points_mean"} <= set(grid.columns)
    assert grid["p_cage_opponent"].between(0, 1).all()


def test_bad_odds_requests_are_refused() -> None:
    state = new_game("cage", 2, seed=0)
    with pytest.raises(ValueError, match="speed must be"):
        flick_odds(state, "flick C1 from S-dot face=head dir=0.0 speed=9.0", samples=5)
    with pytest.raises(ValueError, match="angle noise"):
        AimNoise(-1.0, 0.1)
    with pytest.raises(ValueError, match="not a flick"):
        flick_odds(state, "pass", samples=5)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_odds_of_a_flick_aimed_at_a_number_that_is_not_finite_are_refused(bad: float) -> None:
    state = new_game("cage", 2, seed=0)
    before = state.to_json()
    aimed = Flick("C1", "S", None, "head", 0.0, 1.0)
    with pytest.raises(ValueError, match=f"direction must be a finite number, not {bad}"):
        flick_odds(state, aimed.with_aim(bad, 1.0), samples=5, workers=1)
    with pytest.raises(ValueError, match=f"speed must be a finite number, not {bad}"):
        flick_odds(state, aimed.with_aim(0.0, bad), samples=5, workers=1)
    with pytest.raises(ValueError, match="the spot along the rail must be a finite number"):
        flick_odds(state, Flick("C1", "S", bad, "head", 0.0, 1.0), samples=5, workers=1)
    # A grid is refused if any of its directions or speeds is not finite, not only its base flick.
    with pytest.raises(ValueError, match=f"direction must be a finite number, not {bad}"):
        odds_grid(state, aimed, [0.0, bad], [1.0], samples=2, workers=1)
    with pytest.raises(ValueError, match=f"speed must be a finite number, not {bad}"):
        odds_grid(state, aimed, [0.0], np.array([1.0, bad]), samples=2, workers=1)
    with pytest.raises(ValueError, match="samples must be at least 1"):
        odds_grid(state, aimed, [0.0], [1.0], samples=0, workers=1)
    assert state.to_json() == before


def test_the_bot_takes_the_shot_into_the_cage() -> None:
    state, _ = _shot_state()
    shots = aimed_shots(state)
    assert shots and all(state.illegal_reason(f) is None for f in shots)
    bot = OddsBot(candidates=10, samples=4, refine=2, refine_samples=8)
    from engine.core import make_rng

    choice = bot.choose(state, make_rng(0))
    assert isinstance(choice, Flick)
    odds = flick_odds(state, choice, samples=40, seed=9, workers=1)
    assert odds.cage_opponent.value > 0.5, (choice, odds.summary())


def test_benchmark_rows() -> None:
    rows = bench_run(quick=True)
    assert [r[2] for r in rows] == ["flicks/s", "ms", "flicks/s", "ms", "ms", "ms", "ms", "ms"]
    assert all(r[1] > 0 for r in rows)


def _cli(argv: list[str], capsys) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser(prog="dojo")
    register(parser.add_subparsers())
    args = parser.parse_args(argv)
    code = args.func(args)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_odds_and_simulate(capsys, tmp_path) -> None:
    code, out, _ = _cli(["zoo", "odds", "--samples", "30", "--workers", "1", "--json"], capsys)
    assert code == 0 and json.loads(out)["samples"] == 30
    code, out, _ = _cli(["zoo", "odds", "--directions=-10,0", "--speeds", "1.0", "--samples", "5", "--workers", "1"],
                        capsys)
    assert code == 0 and "p_cage_opponent" in out
    code, out, _ = _cli(["zoo", "simulate", "--games", "1", "--candidates", "3", "--samples", "1", "--json"], capsys)
    assert code == 0 and json.loads(out)["games"] == 1
    code, _, err = _cli(["zoo", "odds", "--flick", "flick C1 from S-dot face=head dir=0.0 speed=5.0"], capsys)
    assert code == 2 and "speed must be" in err
    saved = tmp_path / "bad.json"
    saved.write_text("{}")
    code, _, err = _cli(["zoo", "odds", "--state", str(saved)], capsys)
    assert code == 2 and "not a saved game" in err


@pytest.mark.parametrize(("argv", "message"), [
    (["--directions", "nan"], "direction must be a finite number, not nan"),
    (["--direction", "nan"], "direction must be a finite number, not nan"),  # argparse's abbreviation
    (["--directions=-10,inf"], "direction must be a finite number, not inf"),
    (["--speeds", "1.0,nan"], "speed must be a finite number, not nan"),
    (["--flick", "flick C1 from S-dot face=head dir=1e999 speed=1.0"], "1e999 is not a finite number"),
    (["--directions", "0", "--samples", "0"], "samples must be at least 1"),
])
def test_cli_refuses_numbers_that_are_not_finite(argv: list[str], message: str, capsys) -> None:
    code, out, err = _cli(["zoo", "odds", "--samples", "5", "--workers", "1", *argv], capsys)
    assert code == 2 and out == "" and err.startswith("dojo zoo: ") and message in err


def test_cli_refuses_a_grid_axis_too_long_to_build(capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        _cli(["zoo", "odds", "--speeds=0:1:1e-9"], capsys)
    assert exc.value.code == 2 and "more than 1000 values" in capsys.readouterr().err
