"""``dojo kzin sweep`` over a product of rule options, policies and parameters, on a 2-worker Dask cluster."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from engine import cli as dojo
from engine.kzin.simulate import simulate
from engine.kzin.sweep import GRID_COLUMNS, grid, sweep


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    code = dojo.main(["kzin", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


GRID = ["sweep", "--vary", "kzin_base_force=6,10", "--policies", "all-in,threshold", "--defend", "0.3,0.6",
        "--attack", "0.5", "--games", "50500", "--seed", "4", "--json"]


def test_a_grid_gives_the_same_table_on_one_worker_and_on_a_cluster(dask_scheduler, capsys, tmp_path):
    code, out, _ = run([*GRID, "--scheduler", dask_scheduler, "--out", str(tmp_path / "grid.csv")], capsys)
    assert code == 0
    there = pd.DataFrame(json.loads(out))
    code, out, _ = run([*GRID, "--workers", "1"], capsys)
    here = pd.DataFrame(json.loads(out))
    pd.testing.assert_frame_equal(there, here, check_exact=True)
    assert list(there.columns) == GRID_COLUMNS and len(there) == 2 + 2 * 2  # all-in x 2, threshold x 2 x 2
    assert pd.read_csv(tmp_path / "grid.csv")[["wins", "games"]].equals(there[["wins", "games"]])
    # Each cell is the simulation of its own rules and policy (two chunks of 50,000 and 500 games).
    row = there[(there.policy == "threshold") & (there.defend == 0.6) & (there.kzin_base_force == 10)].iloc[0]
    r = simulate("threshold", 50_500, seed=4, policy_params={"defend": 0.6, "attack": 0.5}, kzin_base_force=10)
    assert row.wins == r.wins
    assert [row.win_rate, row.low, row.high, row.mean_turns] == pytest.approx([r.win_rate, r.low, r.high,
                                                                                r.mean_turns], rel=1e-14)
    assert (there.low <= there.win_rate).all() and (there.win_rate <= there.high).all()
    strong = there[(there.policy == "all-in")].set_index("kzin_base_force")
    assert strong.loc[6, "low"] > strong.loc[10, "high"]  # a weaker Kzin base force helps the Humans


def test_the_plain_engine_on_a_cluster_matches_one_process(dask_scheduler):
    there = grid({"start_space": [10]}, ["defend-only"], games=520, seed=2, fast=False, scheduler=dask_scheduler)
    r = simulate("defend-only", 520, seed=2, fast=False, start_space=10)  # two chunks, in this process
    assert there.engine.tolist() == ["plain"]
    assert (there.wins[0], there.mean_turns[0], there.high[0]) == (r.wins, r.mean_turns, r.high)


def test_partial_rows_arrive_as_cells_finish(dask_scheduler):
    rows = []
    frame = grid({"kzin_base_force": [4, 8, 12]}, games=1000, seed=1, scheduler=dask_scheduler, on_row=rows.append)
    assert sorted(r["kzin_base_force"] for r in rows) == [4, 8, 12]
    assert frame.kzin_base_force.tolist() == [4, 8, 12]


def test_the_one_parameter_sweep_keeps_its_table(capsys):
    frame = sweep("kzin_base_force", [4, 10], games=3000, seed=1, workers=2)  # small: stays in this process
    assert frame.columns.tolist()[:4] == ["value", "win_rate", "low", "high"] and frame.value.tolist() == [4, 10]
    code, out, _ = run(["sweep", "--parameter", "reshuffle", "--values", "yes,no", "--games", "500", "--json"],
                       capsys)
    rows = json.loads(out)
    assert code == 0 and [r["value"] for r in rows] == [True, False] == [r["reshuffle"] for r in rows]


@pytest.mark.parametrize(("argv", "message"), [
    (["sweep", "--games", "10"], "nothing to sweep"),
    (["sweep", "--vary", "kzin_speed=1,2"], "unknown rule parameter"),
    (["sweep", "--vary", "start_space"], "with its values"),
    (["sweep", "--vary", "start_space=3,4", "--start-space", "5"], "being swept"),
    (["sweep", "--policies", "all-in,cautious"], "unknown policy"),
    (["sweep", "--policies", "all-in,never-fight", "--defend", "0.3"], "threshold policy"),
    (["sweep", "--policies", "threshold", "--defend", "0.3,x"], "comma-separated numbers"),
    (["sweep", "--vary", "start_space=3,4", "--games", "10", "--workers", "0"], "workers must be"),
    (["sweep", "--vary", "start_space=3,4", "--games", "10", "--out", "/nonexistent/dir/t.csv"], "no folder"),
])
def test_bad_sweeps_exit_2_with_a_message(argv, message, capsys):
    code, out, err = run(argv, capsys)
    assert code == 2 and out == "" and message in err
