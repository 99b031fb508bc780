"""Large runs on Dask: where a job runs, the same figures on any number of workers, and stopping a run.

One 2-worker LocalCluster serves the tests (``dask_scheduler``, its address); the test that starts its own
cluster on demand checks that stopping it by Ctrl-C leaves no worker process behind.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pandas as pd
import pytest
from dask_helpers import child_pids, new_children_after

from engine.bench import OpposedRollGame
from engine.core import UniformRandomPolicy, monte_carlo
from engine.core import distributed as dd


@pytest.fixture
def scheduler(dask_scheduler):
    return dask_scheduler


def test_plan_puts_small_jobs_in_this_process(monkeypatch):
    monkeypatch.delenv(dd.SCHEDULER_ENV, raising=False)
    assert dd.plan(40, workers=2, small=True) == dd.Plan("in-process", 1)
    assert dd.plan(40, workers=1) == dd.Plan("in-process", 1)
    assert dd.plan(1, workers=8) == dd.Plan("in-process", 1)
    assert dd.plan(40, workers=2) == dd.Plan("local", 2)
    assert dd.plan(3, workers=8) == dd.Plan("local", 3)  # never more workers than chunks
    assert dd.plan(40, workers=2, scheduler="tcp://h:1", small=True) == dd.Plan("tcp://h:1", 0)
    monkeypatch.setenv(dd.SCHEDULER_ENV, "tcp://cluster:8786")
    assert dd.plan(40) == dd.Plan("tcp://cluster:8786", 0)
    assert dd.plan(40, small=True).in_process  # the environment's cluster is for large jobs
    with pytest.raises(ValueError, match="workers must be"):
        dd.plan(40, workers=0)


def test_chunks_are_fixed_by_the_job():
    assert dd.chunk_sizes(1234, 500) == [500, 500, 234] and dd.chunk_sizes(1000, 500) == [500, 500]
    with pytest.raises(ValueError, match="at least one"):
        dd.chunk_sizes(0, 500)
    a, b = dd.chunk_seeds(7, 3), np.random.SeedSequence(7).spawn(3)
    assert [s.generate_state(2).tolist() for s in a] == [s.generate_state(2).tolist() for s in b]


def test_monte_carlo_gives_the_same_estimate_on_a_cluster(scheduler):
    game, players = OpposedRollGame(), [UniformRandomPolicy()]
    here = monte_carlo(game, players, 21_000, seed=3, measure=lambda s: {"humans": float(s.human_wins())})
    there = monte_carlo(game, players, 21_000, seed=3, measure=lambda s: {"humans": float(s.human_wins())},
                        scheduler=scheduler)  # lambdas travel to the workers with cloudpickle
    assert there == here and there.games == 21_000
    assert there.measures["humans"] == pytest.approx(there.value)  # the default success is the Humans' win


def test_chunk_results_come_back_in_order_with_partial_results(scheduler):
    seen = []
    out = dd.run_chunks(pow, [(k, 2) for k in range(9)], scheduler=scheduler, on_result=lambda i, r: seen.append(i))
    assert out == [k * k for k in range(9)] and sorted(seen) == list(range(9))
    assert dd.run_chunks(divmod, [(7, 2), (9, 4)], workers=1) == [(3, 1), (2, 1)]


def test_a_stopped_run_cancels_its_chunks(scheduler):
    stop = threading.Event()
    seen = []

    def first(i, r):
        seen.append(i)
        stop.set()

    with pytest.raises(dd.RunStopped, match="chunks to go"):
        dd.run_chunks(time.sleep, [(0.2,)] * 30, scheduler=scheduler, stop=stop, on_result=first)
    assert 1 <= len(seen) < 30


def test_ctrl_c_on_a_cluster_started_on_demand_leaves_no_worker_behind():
    """And the cluster's dashboard, when asked for, is on a free loopback port."""
    before = child_pids()
    seen = []

    def interrupt(i, r):
        seen.append(i)
        workers.update(child_pids() - before)
        raise KeyboardInterrupt

    workers: set[int] = set()
    links: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        dd.run_chunks(time.sleep, [(0.05,)] * 40, workers=2, on_result=interrupt, dashboard=links.append)
    assert seen == [seen[0]]  # the run ended at the first chunk back
    assert len(links) == 1 and links[0].startswith("http://127.0.0.1:") and ":8787/" not in links[0]
    assert len(workers) >= 2  # a nanny and a worker process a worker, spawned for the run
    assert new_children_after(before) == set()


def test_an_in_process_run_stops_too():
    stop = threading.Event()
    stop.set()
    with pytest.raises(dd.RunStopped, match="after 0 of 2"):
        dd.run_chunks(divmod, [(7, 2), (9, 4)], workers=1, stop=stop)


def test_progress_bar_on_request(capsys):
    dd.run_chunks(divmod, [(7, 2), (9, 4)], weights=[10, 20], workers=1, progress=True, description="test")
    err = capsys.readouterr().err
    assert "test:" in err and "/30 [" in err and "games" in err
    dd.run_chunks(divmod, [(7, 2)], workers=1, progress=False)
    assert capsys.readouterr().err == ""


def test_progress_to_a_view_counts_the_job_in_its_units(capsys, scheduler):
    for where in ({"workers": 1}, {"scheduler": scheduler}):
        seen: list[tuple[int, int]] = []
        dd.run_chunks(divmod, [(7, 2), (9, 4), (5, 5)], weights=[10, 20, 5], progress=lambda d, t, seen=seen:
                      seen.append((d, t)), **where)
        done = [d for d, _ in seen]
        assert [t for _, t in seen] == [35, 35, 35] and done[-1] == 35
        assert sorted(done) == done  # never goes back
        assert {b - a for a, b in zip([0, *done[:-1]], done, strict=True)} <= {10, 20, 5}
    assert capsys.readouterr().err == ""  # a view's callable draws no bar


def test_tables_are_written_as_csv_or_refused_as_parquet_without_pyarrow(tmp_path):
    frame = pd.DataFrame({"x": [1, 2], "low": [0.1, 0.2]})
    path = dd.write_table(frame, tmp_path / "t.csv")
    assert pd.read_csv(path).equals(frame)
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        with pytest.raises(ValueError, match="needs pyarrow"):
            dd.write_table(frame, tmp_path / "t.parquet")
        assert not (tmp_path / "t.parquet").exists()
    else:
        assert pd.read_parquet(dd.write_table(frame, tmp_path / "t.parquet")).equals(frame)


def test_workers_are_spawned_not_forked():
    import dask

    assert dask.config.get("distributed.worker.multiprocessing-method") == "spawn"


def test_the_benchmark_times_the_in_process_path_against_the_loop_it_replaced():
    from engine.bench_distributed import in_process_rows

    rows = in_process_rows(games=1_000, repeats=1)
    assert [r.unit for r in rows] == ["ms", "ms", "ms"] and rows[0].rate > 0 and rows[1].rate > 0
    assert rows[2].rate == pytest.approx(rows[1].rate - rows[0].rate)


def test_the_benchmark_measures_the_machines_own_ceiling_for_two_processes():
    from engine.bench_distributed import ceiling_rows

    [row] = ceiling_rows(200_000)
    # Two processes can be slower than one on a loaded machine, but never more than twice as fast.
    assert row.unit == "x" and 0 < row.rate < 2.5
