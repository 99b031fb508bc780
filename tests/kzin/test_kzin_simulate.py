"""``simulate`` and ``sweep``: fast against plain from the first turn, reproducibility, and bad input."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from engine.kzin.policies import AllIn, CommitmentPolicy, NeverFight, Threshold
from engine.kzin.simulate import FAST_CHUNK, SimulationResult, simulate
from engine.kzin.sweep import sweep


def length_variance(r: SimulationResult) -> float:
    d = r.length_distribution
    mean = float((d.index.to_numpy() * d.to_numpy()).sum() / d.sum())
    return float((((d.index.to_numpy() - mean) ** 2) * d.to_numpy()).sum() / (d.sum() - 1))


def z_rate(a: SimulationResult, b: SimulationResult) -> float:
    va, vb = a.win_rate * (1 - a.win_rate), b.win_rate * (1 - b.win_rate)
    return (a.win_rate - b.win_rate) / math.sqrt(va / a.games + vb / b.games + 1e-12)


def z_length(a: SimulationResult, b: SimulationResult) -> float:
    return (a.mean_turns - b.mean_turns) / math.sqrt(length_variance(a) / a.games + length_variance(b) / b.games)


@pytest.mark.parametrize(("policy", "params", "options"), [
    ("all-in", {}, {"kzin_base_force": 2, "start_space": 11, "reshuffle": False}),
    ("threshold", {"defend": 0.3, "attack": 0.5}, {"kzin_base_force": 3, "start_space": 10, "reshuffle": False}),
    ("defend-only", {}, {"start_space": 4}),
])
def test_whole_games_agree_with_the_plain_engine(policy, params, options):
    plain = simulate(policy, 300, seed=3, fast=False, policy_params=params, **options)
    quick = simulate(policy, 100_000, seed=3, policy_params=params, **options)
    assert (plain.engine, quick.engine) == ("plain", "fast")
    assert abs(z_rate(plain, quick)) < 3.5
    assert abs(z_length(plain, quick)) < 3.5
    assert plain.length_distribution.sum() == 300 and quick.length_distribution.sum() == 100_000


def test_result_figures_hang_together():
    r = simulate("all-in", 30_000, seed=2, kzin_base_force=4)
    d = r.length_distribution
    assert isinstance(d, pd.Series) and d.sum() == r.games and (d > 0).all() and d.index.is_monotonic_increasing
    assert r.mean_turns == pytest.approx(float((d.index.to_numpy() * d.to_numpy()).sum()) / r.games)
    assert r.win_rate == r.wins / r.games and r.low < r.win_rate < r.high
    pct = r.length_percentiles()
    assert d.index.min() <= pct[0.05] <= pct[0.5] <= pct[0.95] <= d.index.max()
    assert r.rule_options["kzin_base_force"] == 4 and r.rule_options["reshuffle"] is True
    as_json = r.to_dict()
    assert as_json["wins"] == r.wins and sum(as_json["length_distribution"].values()) == r.games
    assert "won" in str(r)


def test_a_seed_reproduces_on_any_number_of_workers():
    games = 2 * FAST_CHUNK + 123
    one = simulate("all-in", games, seed=9, workers=1, start_space=10)
    two = simulate("all-in", games, seed=9, workers=2, start_space=10)
    assert (one.wins, one.mean_turns) == (two.wins, two.mean_turns)
    assert one.length_distribution.equals(two.length_distribution)
    other = simulate("all-in", games, seed=10, start_space=10)
    assert not other.length_distribution.equals(one.length_distribution)
    p1 = simulate("never-fight", 20, seed=4, fast=False, workers=1)
    p2 = simulate("never-fight", 20, seed=4, fast=False, workers=2)
    assert (p1.wins, p1.mean_turns) == (p2.wins, p2.mean_turns)


def test_policy_objects_pick_the_engine():
    assert simulate(Threshold(0.4, 0.6), 1000, seed=1).engine == "fast"
    r = simulate(Threshold(0.4, 0.6), 1000, seed=1)
    assert r.policy_params == {"defend": 0.4, "attack": 0.6}
    same = simulate("threshold", 1000, seed=1, policy_params={"defend": 0.4, "attack": 0.6})
    assert (r.wins, r.mean_turns) == (same.wins, same.mean_turns)
    assert simulate(NeverFight(), 10, seed=1, fast=False).engine == "plain"

    class Stubborn(CommitmentPolicy):  # a policy the kernel does not know: the plain engine plays it
        name = "stubborn"

        def commitment(self, state):
            return None

    r = simulate(Stubborn(), 30, seed=1)
    assert (r.engine, r.policy, r.wins) == ("plain", "stubborn", 0)
    with pytest.raises(ValueError, match="fast simulator plays"):
        simulate(Stubborn(), 10, fast=True)
    assert simulate(AllIn(), 10, seed=1).engine == "fast"


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"policy": "bravado"}, "unknown policy"),
    ({"policy": "all-in", "policy_params": {"defend": 0.2}}, "takes no parameters"),
    ({"policy": "threshold", "policy_params": {"defend": 1.2}}, "probability from 0 to 1"),
    ({"policy": "threshold", "policy_params": {"courage": 1}}, "courage"),
    ({"policy": NeverFight(), "policy_params": {"defend": 0.2}}, "policy name"),
    ({"policy": 3}, "name or a Policy"),
    ({"games": 0}, "games must be"),
    ({"games": 1.5}, "games must be"),
    ({"workers": 0}, "workers must be"),
    ({"seed": -1}, "seed must be"),
    ({"kzin_base_force": "ten"}, "kzin_base_force must be int"),
    ({"kzin_base_force": 99}, "bad rule option"),
    ({"deck_size": 50}, "unknown rule option"),
    ({"reshuffle": 0}, "reshuffle must be bool"),
])
def test_bad_input_is_a_clear_error(kwargs, message):
    kwargs = {"games": 10, **kwargs}
    with pytest.raises(ValueError, match=message):
        simulate(**kwargs)


def test_sweep_varies_one_rule():
    frame = sweep("kzin_base_force", [2, 10], games=20_000, seed=1)
    assert list(frame.columns[:5]) == ["value", "win_rate", "low", "high", "mean_turns"]
    assert frame["value"].tolist() == [2, 10]
    assert frame.loc[0, "low"] > frame.loc[1, "high"]  # a weaker Kzin base force helps the Humans
    row = simulate("all-in", 20_000, seed=1, kzin_base_force=10)
    assert frame.loc[1, "win_rate"] == row.win_rate and frame.loc[1, "mean_turns"] == row.mean_turns
    flags = sweep("reshuffle", [True, False], policy="threshold", games=2000, seed=1,
                  policy_params={"defend": 0.3, "attack": 0.5}, start_space=10)
    assert flags["value"].tolist() == [True, False] and np.all(flags["games"] == 2000)
    with pytest.raises(ValueError, match="unknown rule parameter"):
        sweep("kzin_speed", [1])
    with pytest.raises(ValueError, match="being swept"):
        sweep("start_space", [3], start_space=4)
    with pytest.raises(ValueError, match="at least one value"):
        sweep("start_space", [])
    with pytest.raises(ValueError, match="bad rule option"):
        sweep("start_space", [1])


def test_benchmark_rows():
    from engine.kzin import bench

    rows = bench.run(quick=True)
    labels = [label for label, _, _ in rows]
    assert any("plain engine" in s for s in labels) and any("2 workers" in s for s in labels)
    assert any("rollouts" in s for s in labels) and any("exact odds" in s for s in labels)
    assert "kzin advisor, 15 Human cards in play, 4,000 rollouts a state, worst" in labels
    assert all(value > 0 for _, value, _ in rows)
    assert "games/s" in bench.format_rows(rows)


def test_the_advisor_benchmark_position_has_fifteen_committable_cards():
    from engine.kzin.advisor import battle_options
    from engine.kzin.bench import advisor_position

    options = battle_options(advisor_position())
    assert max(len(o.cards) for o in options) == 15  # the strongest commitment takes all fifteen


def test_the_advisor_plays_on_the_plain_engine():
    r = simulate("advisor", 2, seed=1, policy_params={"rollouts": 200}, start_space=3)
    assert (r.engine, r.policy, r.games, r.policy_params) == ("plain", "advisor", 2, {"rollouts": 200})
    assert r.length_distribution.sum() == 2
    with pytest.raises(ValueError, match="fast simulator plays"):
        simulate("advisor", 2, fast=True)
    with pytest.raises(ValueError, match="bad parameters for the advisor"):
        simulate("advisor", 2, policy_params={"bravery": 3})
