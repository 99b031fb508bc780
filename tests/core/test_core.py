"""engine.core against independent derivations: exact values, Monte Carlo agreement, invariants."""

from fractions import Fraction

import pytest
from toy import Bonus, DuelGame, Roll

from engine.core import (
    CHANCE,
    FunctionPolicy,
    IllegalActionError,
    StateFormatError,
    UniformRandomPolicy,
    best_value,
    dist,
    load_state,
    monte_carlo,
    policy_value,
    random_sim_test,
    wilson_interval,
)


def test_d10_plus_2_beats_d10_is_16_over_25():
    # 100 equally likely pairs; (a+2 > b) fails for b >= a+2: sum over a of max(0, 10-(a+1)) = 36.
    assert dist.p_greater(dist.d(10) + 2, dist.d(10)) == Fraction(16, 25)


def test_two_d10_distribution_matches_counting():
    counts = {s: sum(1 for a in range(1, 11) for b in range(1, 11) if a + b == s) for s in range(2, 21)}
    assert dist.distribution(dist.dice_sum(2, 10)) == {s: Fraction(c, 100) for s, c in counts.items()}


def test_at_most_and_table_columns():
    assert dist.p_at_most(dist.d(6), 4) == Fraction(2, 3)
    t = dist.table(dist.dice_sum(2, 6))
    assert t["p_exact"].sum() == 1
    row7 = t[t["value"] == 7].iloc[0]
    assert row7["p_exact"] == Fraction(6, 36)
    assert row7["at_least_exact"] == Fraction(21, 36)
    assert row7["at_most_exact"] == Fraction(21, 36)


def test_opposed_parts_sum_to_one_and_tie_rule():
    o = dist.opposed(dist.d(10), dist.d(10))
    assert (o.win, o.tie, o.lose) == (Fraction(45, 100), Fraction(10, 100), Fraction(45, 100))
    assert o.first_wins(ties_to_first=True) == Fraction(55, 100)


def test_dice_sum_rejects_negative_count():
    with pytest.raises(ValueError):
        dist.dice_sum(-1, 6)


def test_policy_value_exact():
    game = DuelGame()
    plus2 = FunctionPolicy(lambda s: Bonus(2))
    plus0 = FunctionPolicy(lambda s: Bonus(0))
    # Returns are +1/-1, so the value is 2p - 1.
    assert policy_value(game.new_initial_state(), [plus2]) == [2 * Fraction(16, 25) - 1]
    assert policy_value(game.new_initial_state(), [plus0]) == [2 * Fraction(45, 100) - 1]
    uniform = (Fraction(16, 25) + Fraction(45, 100)) - 1
    assert policy_value(game.new_initial_state(), [UniformRandomPolicy()]) == [uniform]
    assert best_value(game.new_initial_state()) == 2 * Fraction(16, 25) - 1


def test_policy_value_memoised_agrees():
    game = DuelGame()
    key = lambda s: (s.bonus, tuple(s.rolls))  # noqa: E731
    assert policy_value(game.new_initial_state(), [UniformRandomPolicy()], key=key) == policy_value(
        game.new_initial_state(), [UniformRandomPolicy()]
    )


def test_monte_carlo_agrees_with_exact_within_interval():
    est = monte_carlo(DuelGame(), [FunctionPolicy(lambda s: Bonus(2))], games=20_000, seed=7)
    assert est.contains(16 / 25), est
    assert est.high - est.low < 0.02


def test_monte_carlo_same_result_for_any_worker_count():
    pol = [UniformRandomPolicy()]
    one = monte_carlo(DuelGame(), pol, games=3_000, seed=3, workers=1)
    two = monte_carlo(DuelGame(), pol, games=3_000, seed=3, workers=2)
    assert one == two


def test_monte_carlo_measures_and_returns():
    est = monte_carlo(DuelGame(), [FunctionPolicy(lambda s: Bonus(0))], games=1000, seed=1,
                      measure=lambda s: {"roll": s.rolls[0]})
    assert 5.0 < est.measures["roll"] < 6.0
    assert est.mean_returns[0] == pytest.approx(2 * est.value - 1)


def test_monte_carlo_runs_in_several_threads_at_once():
    """Two tabs' odds may be estimated at the same time: each thread gets its own game's answer."""
    from concurrent.futures import ThreadPoolExecutor

    runs = [(Bonus(2), 2), (Bonus(0), 1), (Bonus(2), 1)]  # one forks its pool while the others run

    def estimate(run):
        bonus, workers = run
        return monte_carlo(DuelGame(), [FunctionPolicy(lambda s, b=bonus: b)], games=1_500, seed=5, workers=workers)

    with ThreadPoolExecutor(3) as pool:
        together = list(pool.map(estimate, runs))
    assert together == [estimate(run) for run in runs]
    assert together[0].value > together[1].value  # a +2 bonus wins more often than none


def test_wilson_interval_known_value():
    # Wilson 95% for 8/10, from the closed form by hand: centre 0.7167, half-width 0.2266.
    low, high = wilson_interval(8, 10)
    assert low == pytest.approx(0.4902, abs=1e-4)
    assert high == pytest.approx(0.9433, abs=1e-4)


@pytest.mark.parametrize("n", [1, 3, 24, 500, 10**6])
def test_wilson_interval_always_contains_the_estimate_and_ends_exactly_at_0_and_1(n):
    # 0 of n: the closed form's lower end is exactly 0 (centre == half); floating point must not lift it.
    assert wilson_interval(0, n)[0] == 0.0 and wilson_interval(n, n)[1] == 1.0
    for k in sorted({0, 1, n // 3, n // 2, n - 1, n}):
        low, high = wilson_interval(k, n)
        assert 0.0 <= low <= k / n <= high <= 1.0


def test_illegal_action_names_reason_and_changes_nothing():
    s = DuelGame().new_initial_state()
    before = s.to_json()
    with pytest.raises(IllegalActionError, match="not legal"):
        s.apply_action(Bonus(5))
    with pytest.raises(IllegalActionError, match="cannot read"):
        s.apply_action("jump")
    assert s.to_json() == before
    s.apply_action("+2")
    assert s.current_player() == CHANCE
    with pytest.raises(IllegalActionError, match="chance outcome"):
        s.apply_action(Roll(11))


def test_saved_game_round_trip_and_refusals():
    s = DuelGame().new_initial_state()
    s.apply_action(Bonus(2))
    s.apply_action(Roll(4))
    text = s.to_json()
    assert load_state(text, DuelGame).to_json() == text
    with pytest.raises(StateFormatError, match="not valid JSON"):
        load_state(text[:-3], DuelGame)
    with pytest.raises(StateFormatError, match="changed after it was saved"):
        load_state(text.replace('"rolls": [\n   4', '"rolls": [\n   9'), DuelGame)
    with pytest.raises(StateFormatError, match="version"):
        load_state(text.replace('"version": 1', '"version": 99'), DuelGame)


def test_random_sim_test_exercises_the_toy_game():
    report = random_sim_test(DuelGame(), num_games=20, seed=1)
    assert report.games == 20 and report.chance_nodes == 40 and report.illegal_probes > 0


def test_random_sim_test_catches_a_broken_clone():
    from toy import DuelState

    class SharedState(DuelState):
        __slots__ = ()

        def clone(self):
            return self  # a "clone" that shares everything

    class Broken(DuelGame):
        def new_initial_state(self, rng=None):
            return SharedState(self)

    with pytest.raises(AssertionError, match="clone"):
        random_sim_test(Broken(), num_games=1)
