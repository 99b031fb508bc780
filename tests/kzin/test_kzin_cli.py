"""``dojo kzin simulate | odds | sweep``: readable figures, JSON, and exit code 2 on bad input."""

from __future__ import annotations

import argparse
import json

import pytest

from engine import cli as dojo
from engine.kzin import cli
from engine.kzin.odds import Battle
from engine.kzin.simulate import simulate


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    code = dojo.main(["kzin", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_dojo_discovers_the_kzin_commands():
    assert cli in dojo.game_command_modules()
    parser = argparse.ArgumentParser(prog="test")
    cli.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["kzin", "simulate", "--no-reshuffle", "--kzin-base-force", "4", "--games", "7"])
    assert (args.reshuffle, args.kzin_base_force, args.games, args.kzin_fleet_force) == (False, 4, 7, None)
    assert callable(args.func)


def test_simulate_prints_the_figures(capsys):
    code, out, _ = run(["simulate", "--policy", "all-in", "--games", "20000", "--seed", "1",
                        "--kzin-base-force", "4"], capsys)
    assert code == 0
    r = simulate("all-in", 20_000, seed=1, kzin_base_force=4)
    assert f"{r.wins:,} games = {r.win_rate:.2%}" in out
    assert f"95% CI {r.low:.2%} to {r.high:.2%}" in out
    assert f"mean {r.mean_turns:.2f} turns" in out and "median" in out and "games/s" in out
    assert "kzin_base_force=4" in out and "fast engine" in out


def test_simulate_json_with_threshold_and_workers(capsys):
    code, out, _ = run(["simulate", "--policy", "threshold", "--defend", "0.3", "--attack", "0.6", "--games",
                        "3000", "--seed", "2", "--workers", "2", "--no-reshuffle", "--json"], capsys)
    assert code == 0
    data = json.loads(out)
    r = simulate("threshold", 3000, seed=2, policy_params={"defend": 0.3, "attack": 0.6}, reshuffle=False)
    assert data["wins"] == r.wins and data["policy_params"] == {"defend": 0.3, "attack": 0.6}
    assert data["rule_options"]["reshuffle"] is False and data["engine"] == "fast"
    assert sum(data["length_distribution"].values()) == 3000


def test_simulate_on_the_plain_engine(capsys):
    code, out, _ = run(["simulate", "--policy", "never-fight", "--games", "20", "--plain", "--json"], capsys)
    assert code == 0 and json.loads(out)["engine"] == "plain"


def test_odds_prints_the_exact_probability(capsys):
    argv = ["odds", "--phase", "invasion", "--fleet", "ARM Defense Force", "--tactic", "Marines", "--technology",
            "2", "--conquest", "Revenge", "--kzin-fleet", "Kzinti Pride", "--kem", "9"]
    p = Battle("invasion", fleets=["ARM Defense Force"], tactics=["Marines"], technology=2, conquest=["Revenge"],
               kzin_fleet="Kzinti Pride", kem=9).win_probability()
    code, out, _ = run(argv, capsys)
    assert code == 0
    assert f"= {p.numerator}/{p.denominator} = {float(p):.4%}" in out
    assert "at_least" in out and "Kzinti" in out
    code, out, _ = run([*argv, "--kzin-base-force", "6", "--json"], capsys)
    data = json.loads(out)
    p6 = Battle("invasion", fleets=["ARM Defense Force"], tactics=["Marines"], technology=2, conquest=["Revenge"],
                kzin_fleet="Kzinti Pride", kem=9, kzin_base_force=6).win_probability()
    assert p6 > p and data["win_probability"] == str(p6) and data["denominator"] == p6.denominator
    assert {row["side"] for row in data["force_table"]} == {"Humans", "Kzinti"}


def test_sweep_prints_a_row_per_value(capsys):
    code, out, _ = run(["sweep", "--parameter", "kzin_base_force", "--values", "6,12", "--games", "5000"], capsys)
    assert code == 0
    lines = out.splitlines()
    assert lines[1].split()[0] == "kzin_base_force"
    assert [line.split()[0] for line in lines[2:]] == ["6", "12"]
    code, out, _ = run(["sweep", "--parameter", "reshuffle", "--values", "yes,no", "--games", "500", "--json"], capsys)
    assert [row["value"] for row in json.loads(out)] == [True, False]


@pytest.mark.parametrize(("argv", "message"), [
    (["odds", "--fleet", "Bogus Fleet"], "no card is called"),
    (["odds", "--fleet", "ARM Defense Force"], "needs the invading Kzin Fleet"),
    (["odds", "--phase", "liberation", "--fleet", "ARM Defense Force", "--tactic", "Lines of Defense"],
     "only in the Invasion phase"),
    (["simulate", "--policy", "all-in", "--defend", "0.4", "--games", "10"], "takes no parameters"),
    (["simulate", "--games", "0"], "games must be"),
    (["simulate", "--kzin-base-force", "99", "--games", "10"], "bad rule option"),
    (["simulate", "--policy", "advisor", "--games", "10", "--plain", "--workers", "0"], "workers"),
    (["sweep", "--parameter", "kzin_speed", "--values", "1"], "unknown rule parameter"),
    (["sweep", "--parameter", "start_space", "--values", "3,x"], "whole numbers"),
    (["sweep", "--parameter", "reshuffle", "--values", "maybe"], "true or false"),
])
def test_bad_input_exits_2_with_a_message(argv, message, capsys):
    code, out, err = run(argv, capsys)
    assert code == 2 and out == ""
    assert message in err and err.startswith("dojo kzin")


def test_argparse_errors_also_exit_2(capsys):
    with pytest.raises(SystemExit) as exit_:
        dojo.main(["kzin", "simulate", "--policy", "bravado"])
    assert exit_.value.code == 2 and "invalid choice" in capsys.readouterr().err
