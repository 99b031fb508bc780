"""The chit exchange as a matrix game: exact minimax strategies and value, against independent derivations."""

from fractions import Fraction

import numpy as np
import pytest

from engine.kf2100.exchange import combat_exchange, exchange_game, solve_game
from engine.kf2100.state import KungFuGame, skirmish

BASIC = KungFuGame("basic")
F = Fraction


def closed_form_2x2(a, b, c, d):
    """The textbook solution of [[a, b], [c, d]] with no saddle point: x = (d - c) / D, y = (d - b) / D,
    v = (ad - bc) / D with D = a - b - c + d."""
    den = a - b - c + d
    return (d - c) / den, (d - b) / den, (a * d - b * c) / den


def no_pure_deviation_gains(payoff, x, y, v):
    """Brute force: against the column mix no row pays more than v, against the row mix no column less."""
    m, n = len(payoff), len(payoff[0])
    assert all(p >= 0 for p in (*x, *y)) and sum(x) == 1 and sum(y) == 1
    for i in range(m):
        assert sum(payoff[i][j] * y[j] for j in range(n)) <= v
    for j in range(n):
        assert sum(x[i] * payoff[i][j] for i in range(m)) >= v
    # and the value is what the two mixes give each other
    assert sum(x[i] * payoff[i][j] * y[j] for i in range(m) for j in range(n)) == v


def test_fist_or_kick_against_kick_or_mist_is_the_2x2_closed_form():
    # CRT: fist v kick 2, fist v mist 3, kick v kick 3, kick v mist 1 (a hit at or below, on a d6).
    g = exchange_game(["fist", "kick"], ["kick", "mist"])
    a, b, c, d = F(2, 6), F(3, 6), F(3, 6), F(1, 6)
    assert g.payoff == ((a, b), (c, d))
    x1, y1, v = closed_form_2x2(a, b, c, d)
    assert (x1, y1, v) == (F(2, 3), F(2, 3), F(7, 18))
    assert g.attack_strategy == (x1, 1 - x1) and g.answer_strategy == (y1, 1 - y1) and g.value == v
    no_pure_deviation_gains(g.payoff, g.attack_strategy, g.answer_strategy, g.value)


def test_a_skirmish_exchange_from_the_combat():
    # T1 (fist 2, kick 2, mist 1, monkey 1) next to J6 (kick, mist): T1's Mist and Monkey are dominated,
    # so the game is the 2x2 above on fist and kick, and J6 answers kick 2/3, mist 1/3; the hit chance 7/18.
    s = skirmish(BASIC, {"T1": "n9", "J6": "o9"}, phase="combat1")
    g = combat_exchange(s, "T1", "J6")
    assert g.rows == ("fist", "kick", "mist", "monkey") and g.columns == ("kick", "mist")
    assert dict(zip(g.rows, g.attack_strategy, strict=True)) == {"fist": F(2, 3), "kick": F(1, 3), "mist": 0,
                                                                 "monkey": 0}
    assert g.answer_strategy == (F(2, 3), F(1, 3)) and g.value == F(7, 18)
    no_pure_deviation_gains(g.payoff, g.attack_strategy, g.answer_strategy, g.value)
    d = g.to_dict()
    assert d["value"] == "7/18" and d["answer_strategy"] == {"kick": "2/3", "mist": "1/3"}
    assert g.frame().loc["kick", "mist"] == F(1, 6)


def test_a_saddle_point_is_a_pure_strategy():
    # T1 on J3 (fist, mist): Fist is read 3 against either answer and nothing does better against Mist,
    # so T1 plays Fist, J3 answers Mist, and the hit chance is 1/2.
    s = skirmish(BASIC, {"T1": "n9", "J3": "o9"}, phase="combat1")
    g = combat_exchange(s, "T1", "J3")
    assert g.columns == ("fist", "mist")
    assert g.attack_strategy == (1, 0, 0, 0) and g.answer_strategy == (0, 1) and g.value == F(1, 2)


def test_the_clone_masters_side_attacks_too_and_nobody_answering_reads_none():
    s = skirmish(BASIC, {"T1": "n9", "J6": "o9"}, phase="combat1", levels={"T1": [0, 0, 0, 0, 1]})
    # T1 has only Mountain Heart: no chit to answer with, so J6's Kick is read on None (5 of 6).
    g = combat_exchange(s, "J6", "T1")
    assert g.columns == ("none",) and g.rows == ("kick", "mist")
    assert g.attack_strategy == (1, 0) and g.value == F(5, 6)


def test_every_answer_of_the_side_counts_whoever_gives_it():
    # J3 (fist, mist) and J6 (kick, mist) both next to T1: T1's Kick on J3 may be answered by J6's Kick too.
    s = skirmish(BASIC, {"T1": "n9", "J3": "o9", "J6": "m9"}, phase="combat1")
    g = combat_exchange(s, "T1", "J3")
    assert g.columns == ("fist", "mist", "kick")


@pytest.mark.parametrize("seed", range(40))
def test_random_games_are_solved_exactly(seed):
    rng = np.random.default_rng(seed)
    m, n = (int(v) for v in rng.integers(1, 6, size=2))
    payoff = [[F(int(v), 6) for v in rng.integers(0, 7, size=n)] for _ in range(m)]
    eq = solve_game(payoff)
    no_pure_deviation_gains(payoff, eq.rows, eq.columns, eq.value)


def test_degenerate_games():
    eq = solve_game([[F(1, 2)] * 3] * 2)  # every pair pays the same
    assert eq.value == F(1, 2)
    eq = solve_game([[1, 0], [1, 0], [0, 1]])  # a row duplicated
    no_pure_deviation_gains([[1, 0], [1, 0], [0, 1]], eq.rows, eq.columns, eq.value)
    assert eq.value == F(1, 2)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="at least one row"):
        solve_game([])
    with pytest.raises(ValueError, match="as long as"):
        solve_game([[1, 2], [3]])
    with pytest.raises(ValueError, match="not an attack chit"):
        exchange_game(["punch"], ["fist"])
    with pytest.raises(ValueError, match="not an answer column"):
        exchange_game(["fist"], ["heart"])
    s = skirmish(BASIC, {"T1": "n9", "J6": "o9"}, phase="combat1")
    with pytest.raises(ValueError, match="name the attacker"):
        combat_exchange(s)
    with pytest.raises(ValueError, match="not in this combat"):
        combat_exchange(s, "T1", "J3")
    with pytest.raises(ValueError, match="own side"):
        combat_exchange(s, "J6", "J6")
    with pytest.raises(ValueError, match="no combat"):
        combat_exchange(skirmish(BASIC, {"T1": "n9"}), "T1", "J6")
