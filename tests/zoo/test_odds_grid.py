"""``dojo zoo odds-grid``: caging and expected-points maps over direction x speed, on a 2-worker Dask cluster."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from engine import cli as dojo
from engine.core import dump_state
from engine.zoo.bench import aimed_flick, mid_game_state
from engine.zoo.odds import AimNoise, odds_grid
from engine.zoo.odds_grid import COLUMNS, MAPS, odds_map, wide


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    code = dojo.main(["zoo", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_map_on_a_cluster_has_the_figures_of_odds_grid(dask_scheduler):
    state = mid_game_state(1)
    flick = aimed_flick(state)
    noise = AimNoise(6.0, 0.1)
    there = odds_map(state, flick, [-15.0, 0.0, 15.0], [0.9, 1.5], kind="all", noise=noise, samples=12, seed=4,
                     scheduler=dask_scheduler)
    reference = odds_grid(state, flick, [-15.0, 0.0, 15.0], [0.9, 1.5], noise=noise, samples=12, seed=4, workers=1)
    assert list(there.columns) == COLUMNS and len(there) == 6 * len(MAPS["all"])
    for _, ref in reference.iterrows():
        cell = there[(there.direction == ref.direction) & (there.speed == ref.speed)].set_index("measure")
        assert cell.loc["cage_opponent", ["estimate", "low", "high"]].tolist() == [
            ref.p_cage_opponent, ref.p_cage_opponent_low, ref.p_cage_opponent_high]
        assert cell.loc["lose_own", "estimate"] == ref.p_lose_own and cell.loc["foul", "estimate"] == ref.p_foul
        assert cell.loc["points", ["estimate", "low", "high"]].tolist() == [
            ref.points_mean, ref.points_low, ref.points_high]
    assert (there.samples == 12).all()
    assert wide(there, "points").shape == (3, 2)


def test_the_command_gives_the_same_table_on_one_worker_and_on_a_cluster(dask_scheduler, capsys, tmp_path):
    saved = tmp_path / "position.json"
    saved.write_text(dump_state(mid_game_state(2)))
    argv = ["odds-grid", "--state", str(saved), "--directions=-10:10:10", "--speeds", "1.0,1.4", "--samples", "8",
            "--map", "points", "--seed", "5", "--json"]
    code, out, _ = run([*argv, "--scheduler", dask_scheduler, "--out", str(tmp_path / "map.csv")], capsys)
    assert code == 0
    there = pd.DataFrame(json.loads(out))
    code, out, _ = run([*argv, "--workers", "1"], capsys)
    pd.testing.assert_frame_equal(there, pd.DataFrame(json.loads(out)), check_exact=True)
    assert there.measure.unique().tolist() == ["points"] and len(there) == 3 * 2
    assert (there.low <= there.estimate).all() and (there.estimate <= there.high).all()
    assert pd.read_csv(tmp_path / "map.csv")[["direction", "speed"]].equals(there[["direction", "speed"]])


def test_the_readable_map(capsys):
    code, out, _ = run(["odds-grid", "--directions", "0,20", "--speeds", "1.2", "--samples", "3", "--workers", "1"],
                       capsys)
    assert code == 0 and "cage_opponent (rows: direction" in out and "lose_own" in out and "points" not in out


@pytest.mark.parametrize(("argv", "message"), [
    (["--directions", "0", "--speeds", "nan"], "cannot estimate"),
    (["--directions", "0", "--speeds", "1", "--samples", "0"], "samples must be"),
    (["--directions", "0", "--speeds", "1", "--flick", "pass"], "not a flick"),
    (["--directions", "0", "--speeds", "1", "--state", "/nonexistent.json"], "No such file"),
    (["--directions", "0", "--speeds", "1", "--out", "/nonexistent/dir/m.csv"], "no folder"),
])
def test_bad_maps_exit_2_with_a_message(argv, message, capsys):
    code, out, err = run(["odds-grid", *argv], capsys)
    assert code == 2 and out == "" and message in err


def test_a_large_batch_of_flicks_runs_on_spawned_workers_with_the_same_figures(monkeypatch):
    """The odds' samples no longer fork: a large batch goes to a local Dask cluster, which closes after."""
    from dask_helpers import child_pids, new_children_after

    from engine.core import make_rng
    from engine.zoo import odds

    state = mid_game_state(1)
    jobs = odds.noisy_jobs(aimed_flick(state), AimNoise(), 30, make_rng(3))
    here = odds.run_samples(state, jobs, workers=1)
    monkeypatch.setattr(odds, "SMALL_SAMPLES", 10)  # so that 30 flicks count as a large batch...
    monkeypatch.setattr(odds, "SAMPLE_CHUNK", 10)   # ...of three chunks
    before = child_pids()
    assert odds.run_samples(state, jobs, workers=2) == here
    assert new_children_after(before) == set()
