"""Kung Fu 2100 odds against hand derivations, the bots' information diet, the session model, CLI."""

import json
from fractions import Fraction

import pytest

from engine.core import IllegalActionError, dump_state, make_rng, play_game
from engine.core.serialize import session_checksum
from engine.kf2100 import odds
from engine.kf2100.actions import Attack
from engine.kf2100.bots import HeuristicBot, bots_for
from engine.kf2100.session import KungFuSession
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


def test_session_odds_refuse_bad_input_with_the_reason_and_change_nothing():
    s = KungFuSession(terminators="human", clone_master="human")
    s.state = skirmish(s.game, {"T1": "n9", "J3": "o9", "J1": "n10"}, phase="combat1")
    before = s.save()
    for attack, words in [(("T1", "fist", "ZZ"), "no figure or equipment ZZ"), (("T1", "laser", "J1"), "'laser'"),
                          (("T9", "fist", "J1"), "no figure T9"), (("J3", "kick", "T1"), "J3 has no level in kick")]:
        with pytest.raises(IllegalActionError, match=words):
            s.odds(*attack)
        assert s.status.startswith("Refused: ") and words.strip("'") in s.status and s.save() == before
    assert s.odds("t1", "kick", "j3") == {"fist": 4 / 6, "mist": 1 / 6, "none": 5 / 6}


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


def test_session_commands_refuse_bad_input_and_change_nothing():
    s = KungFuSession(seed=3)
    assert s.human_player() == 0 and s.state.phase == "entry"
    for fid in ("T1", "T2", "T3"):
        s.wait_at(fid, "disposal")
    assert s.state.phase == "move1"
    s.select("T1")
    assert s.reachable()["c3"] == 1
    before = s.save()
    with pytest.raises(IllegalActionError):
        s.move("a1")
    assert s.status.startswith("Refused") and s.save() == before
    with pytest.raises(IllegalActionError, match="not one of your figures"):
        s.select("J1")
    with pytest.raises(IllegalActionError):
        s.choose_chits("T1", ["nunchaku"])
    s.move("c3")
    assert s.state.name(s.state.figs["T1"].pos) == "c3"


def test_session_point_buy_refuses_bad_levels_and_keeps_the_game():
    s = KungFuSession(terminator_levels={"T1": [3, 0, 2, 1, 1]})
    assert s.state.figs["T1"].start == (3, 0, 2, 1, 1)
    before = s.save()
    with pytest.raises(ValueError, match="add up to 7"):
        s.terminator_levels = {"T1": [9, 0, 0, 0, 0]}
    assert s.save() == before and s.terminator_levels == {"T1": [3, 0, 2, 1, 1]} and s.status.startswith("Refused")


def test_session_outlook_and_map_layout():
    s = KungFuSession(terminators="human", clone_master="human")
    layout = s.map_layout()
    assert layout["width"] * layout["height"] == len(layout["squares"])
    assert sum(1 for q in layout["squares"] if q["equipment"]) == 7
    with pytest.raises(IllegalActionError, match="before its chits are chosen"):
        s.combat_outlook()
    s.state = skirmish(s.game, {"T1": "n9", "S1": "o9"}, phase="combat1", levels={"T1": [1, 0, 0, 0, 1]})
    outlook = s.combat_outlook()
    assert outlook.exact and outlook.marginal(1) == {0: Fraction(1, 6), 1: Fraction(5, 6)}


def test_session_decision_odds_and_hint():
    s = KungFuSession(terminators="human", clone_master="human")
    s.state = skirmish(s.game, {"T1": "n9", "J3": "o9", "J1": "n10"}, phase="combat1")
    assert s.decision_odds() == [] and s.hint().startswith("chits T1")
    for move in ("chits T1 fist+kick+mist", "chits J1 fist+kick", "chits J3 fist+mist", "lead terminators"):
        s.act(move)
    kick = next(d for d in s.decision_odds() if d["action"] == "attack T1 kick J3")
    assert kick["p_hit"] == {"fist": 4 / 6, "mist": 1 / 6, "none": 5 / 6}
    s.act("attack T1 kick J3")
    answers = {d["action"]: (d["column"], d["p_hit"]) for d in s.decision_odds()}
    assert answers["answer J3 mist"] == ("mist", 1 / 6) and answers["answer J1 kick"] == ("none", 5 / 6)


def test_session_save_load_and_tamper():
    s = KungFuSession(seed=1)
    s.wait_at("T1", "loo")
    text = s.save()
    other = KungFuSession(seed=9, scenario="solo")
    other.load(text)
    assert other.scenario == "basic" and other.save() == text
    data = json.loads(text)
    data["game"]["state"]["turn"] = 3
    before = other.save()
    with pytest.raises(IllegalActionError, match="checksum"):
        other.load(json.dumps(data))
    assert other.save() == before
    for damage, words in [({"seats": ["human", "robot"]}, "seats are damaged"), ({"rng": {"x": 1}}, "generator"),
                          ({"version": 0}, "format version 0"), ({"format": "chess"}, "not a saved Kung Fu 2100")]:
        with pytest.raises(IllegalActionError, match=words):
            forged = {**json.loads(text), **damage}
            other.load(json.dumps({**forged, "checksum": session_checksum(forged)}))
        assert other.save() == before


def test_a_loaded_session_goes_on_exactly_as_the_saved_one_would():
    """Seed, seats and the dice's generator travel with the game: the same bots and rolls follow."""
    s = KungFuSession(seed=5, terminators="bot", clone_master="bot", scenario="advanced", pace=True)
    for _ in range(60):
        assert s.step()
    text = s.save()
    other = KungFuSession(seed=1, pace=True)
    other.load(text)
    assert (other.seed, other.terminators, other.clone_master, other.scenario) == (5, "bot", "bot", "advanced")
    played = [s.step() for _ in range(60)]
    assert [other.step() for _ in range(60)] == played and all(played)
    assert json.loads(other.save()) == json.loads(s.save())


def test_a_bare_saved_game_loads_as_a_position_with_this_sessions_seats():
    s = KungFuSession(seed=2, clone_master="human")
    s.load(dump_state(skirmish(KungFuGame("basic"), {"T1": "n9", "J3": "o9"}, phase="combat1")))
    assert s.state.figs["T1"].pos >= 0 and s.clone_master == "human" and s.seed == 2


def test_session_bots_only_and_roll_log():
    s = KungFuSession(scenario="solo", terminators="bot", seed=5)
    assert s.state.is_terminal() and s.status.startswith("Game over")
    assert s.log and all({"roll", "need", "p"} <= e.keys() for e in s.log)


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
