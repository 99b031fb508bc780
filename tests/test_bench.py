"""The benchmark script: its game is a correct protocol game, its rows print, games can add rows."""

from __future__ import annotations

from fractions import Fraction
from itertools import product

import pytest

from engine.bench import (
    KZIN_BONUS,
    Commit,
    OpposedRollGame,
    Result,
    Roll,
    figure,
    format_table,
    game_benchmarks,
    main,
)
from engine.core import FunctionPolicy, IllegalActionError, UniformRandomPolicy, policy_value, random_sim_test
from engine.core.dist import d, p_at_least_as_high


def counted(force: int) -> Fraction:
    """P(Humans win) by counting the 100 equally likely roll pairs (Humans win ties)."""
    wins = sum(h + force >= k + KZIN_BONUS for h, k in product(range(1, 11), repeat=2))
    return Fraction(wins, 100)


def test_opposed_roll_game_keeps_the_protocol():
    report = random_sim_test(OpposedRollGame(), num_games=30, seed=3)
    assert report.games == 30 and report.chance_nodes == 60


@pytest.mark.parametrize("force", [0, 1, 5, 10, 15, 19])
def test_exact_value_of_each_commitment_matches_counting_and_icepool(force):
    game = OpposedRollGame(forces=(force,))
    value = policy_value(game.new_initial_state(), [FunctionPolicy(lambda s: Commit(force))])[0]
    p_win = (value + 1) / 2
    assert p_win == counted(force) == p_at_least_as_high(d(10) + force, d(10) + KZIN_BONUS)


def test_known_values():
    assert [counted(f) for f in (0, 1, 5, 10, 15, 19)] == [0, Fraction(1, 100), Fraction(15, 100),
                                                           Fraction(55, 100), Fraction(90, 100), 1]
    uniform = policy_value(OpposedRollGame().new_initial_state(), [UniformRandomPolicy()])[0]
    assert (uniform + 1) / 2 == Fraction(2, 5)  # (0 + 15 + 55 + 90) / 400


def test_bad_moves_and_saves_are_refused_with_a_reason():
    game = OpposedRollGame()
    state = game.new_initial_state()
    with pytest.raises(IllegalActionError, match="commit force 0, 5, 10, 15, not 7"):
        state.apply_action("commit 7")
    with pytest.raises(IllegalActionError, match="cannot read"):
        state.apply_action("retreat")
    assert state.force is None
    state.apply_action("commit 5")
    with pytest.raises(IllegalActionError):
        state.apply_action(Roll(11))
    with pytest.raises(ValueError, match="force 7"):
        game.state_from_dict({"force": 7, "rolls": []})
    with pytest.raises(ValueError, match="impossible rolls"):
        game.state_from_dict({"force": 5, "rolls": [3, 0]})
    with pytest.raises(ValueError, match="non-negative"):
        OpposedRollGame(forces=(-1,))


def test_quick_run_prints_every_core_row_and_the_check(capsys):
    assert main(["--quick", "--core-only"]) == 0
    out = capsys.readouterr().out
    for row in ("exact P(d10+k >= d10+10)", "exact 2d10 table", "exact policy_value", "monte_carlo, opposed roll, 1",
                "monte_carlo, opposed roll, 2", "numpy d10+5 vs d10+10"):
        assert row in out
    assert "exact 2/5 = 0.4000, inside the CI" in out


def test_games_add_rows_through_their_bench_module(make_package):
    package = make_package({
        "kzin/bench.py": "def run(quick=False):\n    return [('battles', 1234.0 if quick else 0.0, 'battles/s')]\n",
        "zoo/bench.py": "def run():\n    return [('flicks', 5.0, 'flicks/s')]\n",
        "core/bench.py": "def run(quick=False):\n    return [('not a game', 1.0, 'x/s')]\n",
    })
    sections = game_benchmarks(quick=True, package=package)
    assert sections == [
        ("kzin", [Result("battles", 1234.0, "battles/s")]),
        ("zoo", [Result("flicks", 5.0, "flicks/s")]),
    ]
    text = format_table(sections, notes=["a note"])
    assert "[kzin]" in text and "1,234  battles/s" in text and "5  flicks/s" in text and text.endswith("a note")


@pytest.mark.parametrize(("value", "text"), [(1234567.8, "1,234,568"), (1000, "1,000"), (731.4, "731"),
                                             (24.37, "24.4"), (0.4213, "0.421"), (0, "0")])
def test_figures_keep_three_significant_digits_when_small(value, text):
    assert figure(value) == text
