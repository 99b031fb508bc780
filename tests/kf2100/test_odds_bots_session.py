"""Kung Fu 2100 odds against hand derivations, the bots' information diet, CLI (the session: test_session.py)."""

import json
from fractions import Fraction

import pytest

from engine.core import make_rng, play_game
from engine.kf2100 import odds
from engine.kf2100.actions import Attack
from engine.kf2100.bots import HeuristicBot, bots_for
from engine.kf2100.state import KungFuGame, skirmish

BASIC = KungFuGame("basic")
BOTS = [HeuristicBot(0), HeuristicBot(1)]


def test_single_roll_odds_read_the_crt():
    table = odds.crt_table()
    assert table.loc["kick", "mist"] == Fraction(1, 6) and table.loc["fist", "none"] == Fraction(5, 6)
    s = skirmish(BASIC, {"T1": "n9", "J3": "o9"}, phase="combat1")
    # J3 has Fist and Mist levels: it could answer with either, or be read on None.
    assert odds.attack_odds(s, Attack("T1", "kick", "J3")) == {
        "fist": Fraction(4, 6), "mist": Fraction(1, 6), "none": Fraction(5, 6)}
    assert odds.untrained_odds().loc[4, "p_hit"] == Fraction(2, 3)


def test_door_and_mountain_heart_against_hand_derivations():
    assert odds.expected_door_tries() == 3
    assert odds.door_tries().loc[3, "p_within"] == 1 - Fraction(2, 3) ** 3
    assert odds.mountain_heart_recovery(1, 1) == {0: Fraction(2, 3), 1: Fraction(1, 3)}
    # Two levels down, two turns: both rolls succeed 1/9, exactly one 2 * 1/3 * 2/3.
    assert odds.mountain_heart_recovery(2, 2) == {0: Fraction(4, 9), 1: Fraction(4, 9), 2: Fraction(1, 9)}
    # Capped at the starting level: one level down, two turns.
    assert odds.mountain_heart_recovery(1, 2) == {0: Fraction(4, 9), 1: Fraction(5, 9)}


def test_technique_values_are_means_of_the_table():
    values = odds.technique_values()
    assert values.loc["fist", "as_attack"] == Fraction(3 + 2 + 3 + 2 + 2 + 5, 36)
    assert values.loc["mist", "as_answer"] == Fraction(3 + 1 + 0 + 1 + 2 + 2 + 1, 42)


def _servant_combat():
    # T1 has one Fist level: his single chit on a Servant (None column, 5/6). A surviving Servant
    # makes an untrained attack alone (1/6). Hits: (Terminators, Clone Master side).
    return skirmish(BASIC, {"T1": "n9", "S1": "o9"}, phase="combat1", levels={"T1": [1, 0, 0, 0, 1]})


def test_whole_combat_exact_distribution():
    result = odds.combat_odds(_servant_combat(), BOTS)
    assert result.exact
    assert result.joint == {(0, 0): Fraction(1, 6) * Fraction(5, 6), (0, 1): Fraction(5, 6),
                            (1, 0): Fraction(1, 36)}
    assert result.marginal(1) == {0: Fraction(1, 6), 1: Fraction(5, 6)}


def test_whole_combat_monte_carlo_falls_back_with_intervals():
    result = odds.combat_odds(_servant_combat(), BOTS, max_nodes=2, games=3000, seed=4)
    assert not result.exact and result.games == 3000
    low, high = result.intervals["clone_master_hit_at_least_once"]
    assert low <= 5 / 6 <= high and high - low < 0.04


def test_simulated_outlook_carries_intervals_and_the_exact_one_zero_width():
    sampled = odds.combat_odds(_servant_combat(), BOTS, max_nodes=2, games=3000, seed=4)
    assert sampled.source == "3000 simulated combats" and sum(sampled.counts.values()) == 3000
    truth = {0: {0: Fraction(35, 36), 1: Fraction(1, 36)}, 1: {0: Fraction(1, 6), 1: Fraction(5, 6)}}
    for side in (0, 1):
        bars, intervals = sampled.marginal(side), sampled.marginal_intervals(side)
        assert intervals.keys() == bars.keys()
        for k, p in bars.items():
            low, high = intervals[k]
            assert low <= p <= high and 0 < high - low < 0.05
            assert low <= truth[side][k] <= high  # and, this seed, they hold the exact answer
        low, high = sampled.expected_interval(side)
        exact_mean = sum(k * q for k, q in truth[side].items())
        assert low < sampled.expected(side) < high and low <= exact_mean <= high and high - low < 0.05
    exact = odds.combat_odds(_servant_combat(), BOTS)
    assert exact.source == "exact" and not exact.counts and not exact.intervals
    for side in (0, 1):
        assert all(low == high == float(p) for (low, high), p in zip(exact.marginal_intervals(side).values(),
                                                              exact.marginal(side).values(), strict=True))
        assert exact.expected_interval(side) == (exact.expected(side), exact.expected(side))
    with pytest.raises(ValueError, match="at least 2"):
        odds.combat_odds(_servant_combat(), BOTS, max_nodes=2, games=1)


def test_attack_odds_refuse_unknown_figures_chits_and_targets():
    s = skirmish(BASIC, {"T1": "n9", "J3": "o9", "J1": "n10"}, phase="combat1", levels={"T1": [1, 0, 1, 1, 1]})
    for attack, words in [(("T9", "fist", "J1"), "there is no figure T9"),
                          (("T1", "laser", "J1"), "'laser' is not a chit"),
                          (("T1", "heart", "J1"), "'heart' is not a chit"),
                          (("T1", "fist", "ZZ"), "there is no figure or equipment ZZ"),
                          (("T1", "fist", "E9"), "there is no figure or equipment E9"),
                          (("T1", "kick", "J1"), "T1 has no level in kick"),
                          (("T1", "gun", "J1"), "T1 is not armed with gun"),
                          (("CM", "spikes", "T1"), r"CM is not armed with spikes \(its weapon is gun\)"),
                          (("T1", "fist", "T2"), "T2 is on T1's own side"),
                          (("J1", "fist", "E1"), "only Terminators attack it")]:
        with pytest.raises(ValueError, match=words):
            odds.attack_odds(s, Attack(*attack))
    # Equipment answers nothing, but the Jellies in the combat may answer for it (read on their chit, seed).
    assert odds.attack_odds(s, Attack("T1", "fist", "E1")) == {
        "fist": Fraction(3, 6), "kick": Fraction(2, 6), "mist": Fraction(3, 6), "none": Fraction(5, 6)}
    assert odds.attack_odds(s, Attack("CM", "gun", "T1"))["mist"] == Fraction(1, 6)


def test_bots_play_every_scenario_to_the_end():
    for scenario in ("basic", "solo"):
        game = KungFuGame(scenario)
        end = play_game(game.new_initial_state(), bots_for(game), make_rng(2))
        assert end.is_terminal() and end.result


def test_terminator_bot_sees_only_its_view():
    # Two positions identical to the Terminators (same face-down squares) but with different hidden
    # counters must get the same decision.
    a = skirmish(BASIC, {"T1": "o7", "J1": "s9", "S1": "t10"}, face_up=False)
    b = skirmish(BASIC, {"T1": "o7", "S2": "s9", "J4": "t10"}, face_up=False)
    assert a.player_view(0)["face_down"] == b.player_view(0)["face_down"]
    assert HeuristicBot(0).choose(a, None) == HeuristicBot(0).choose(b, None)


def test_cli_simulate_json(capsys):
    import argparse

    from engine.kf2100 import cli

    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    cli.register(sub)
    args = parser.parse_args(["kf2100", "simulate", "--scenario", "solo", "--games", "3", "--seed", "1", "--json"])
    assert args.func(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["games"] == 3 and sum(out["results"].values()) == 3


def test_a_decisions_scores_are_the_same_with_the_stacks_worked_out_once():
    """The bot works out the shared squares once a decision, not once a move scored: every move of every decision
    of a seeded random game (random, so that counters do stop on one another), stacks on the board or not, scores
    as it does on a context of its own."""
    from engine.core.rng import sample_outcome
    from engine.kf2100.actions import Move
    from engine.kf2100.bots import _Context

    game = KungFuGame("basic")
    rng, state = make_rng(3), game.new_initial_state()
    stacked = compared = 0
    while not state.is_terminal() and compared < 2000:
        p = state.current_player()
        if p < 0:
            state.apply_action(sample_outcome(state.chance_outcomes(), rng))
            continue
        moves = [a for a in state.legal_actions() if isinstance(a, Move)]
        if moves:
            view = state.player_view(p)
            shared = _Context(state, view, p)
            assert [shared.move_gain(a) for a in moves] == [_Context(state, view, p).move_gain(a) for a in moves]
            assert shared._stacks == state.stacks()  # what every move was scored with: this position's stacks
            stacked += bool(state.stacks())
            compared += len(moves)
        legal = state.legal_actions()
        state.apply_action(legal[int(rng.integers(len(legal)))])
    assert compared >= 2000 and stacked > 0, (compared, stacked)
