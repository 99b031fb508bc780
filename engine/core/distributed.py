"""Large runs on Dask distributed: fixed chunks, one seed per chunk, any number of workers.

A job is a list of chunks, each a tuple of arguments for one module-level function. The chunks, and the
``numpy.random.SeedSequence`` each carries (``chunk_seeds``), are fixed by the job, never by the workers,
so a seed gives the same table on 1, 2 or 8 processes and on a remote cluster. ``run_chunks`` plays them:

- in the calling process, one after another, for a small job (``small=True``) or one worker; that is the
  path of a 20,000-game estimate, with no cluster to start;
- on a ``LocalCluster`` of worker processes started for the job and closed after it (one thread a
  worker; spawned, not forked, so it works on every operating system);
- on an existing cluster given by ``scheduler`` or the ``DOJO_SCHEDULER`` environment variable.

A progress bar (tqdm) shows on a terminal. A run stops when its ``stop`` event is set (``RunStopped``) or on
Ctrl-C: the pending chunks are cancelled and a cluster started for the job is closed with its processes.
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

SCHEDULER_ENV = "DOJO_SCHEDULER"
"""The environment variable naming a running Dask scheduler (``tcp://host:8786``) for every large run."""

R = TypeVar("R")
Progress = bool | None | Callable[[int, int], None]
"""How a run shows its progress: a bar on standard error (True, or None: when it is a terminal), nothing (False),
or a callable ``progress(done, total)`` in the job's units (games, flicks) after every chunk, for a view."""
POLL_SECONDS = 0.05
"""How often a cluster run looks at its stop event while no chunk has finished."""


class RunStopped(RuntimeError):
    """A run was stopped before its last chunk (its ``stop`` event was set)."""


def chunk_sizes(total: int, size: int) -> list[int]:
    """``total`` split into chunks of ``size`` and a smaller last one: the split depends on the job only."""
    if total < 1 or size < 1:
        raise ValueError(f"a job needs at least one item and chunks of at least one, not {total} and {size}")
    return [size] * (total // size) + ([total % size] if total % size else [])


def chunk_seeds(seed: int | None, n: int) -> list[np.random.SeedSequence]:
    """One independent ``SeedSequence`` a chunk, spawned from the job's seed."""
    return np.random.SeedSequence(seed).spawn(n)


@dataclass(frozen=True)
class Plan:
    """Where a job runs: ``in-process``, a ``local`` cluster of ``workers`` processes, or a scheduler address."""

    where: str
    workers: int

    @property
    def in_process(self) -> bool:
        return self.where == "in-process"


def default_workers() -> int:
    """The cores this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def plan(chunks: int, workers: int | None = None, scheduler: str | None = None, small: bool = False) -> Plan:
    """Choose where ``chunks`` chunks run (see the module's docstring); a bad worker count is a ValueError.

    A small job stays in the process even when a scheduler is set in the environment (a cluster's round
    trips would cost more than the job); an explicit ``scheduler`` argument is always honoured.
    """
    if workers is not None and (type(workers) is not int or workers < 1):
        raise ValueError(f"workers must be a whole number of at least 1, not {workers!r}")
    if scheduler:
        return Plan(scheduler, 0)
    if small or chunks <= 1 or workers == 1:
        return Plan("in-process", 1)
    address = os.environ.get(SCHEDULER_ENV, "").strip()
    if address:
        return Plan(address, 0)
    n = min(workers or default_workers(), chunks)
    return Plan("in-process", 1) if n <= 1 else Plan("local", n)


@contextmanager
def client_for(p: Plan, dashboard: bool = False) -> Iterator[Any]:
    """A Dask client for ``p`` (not in-process); a local cluster lives exactly as long as the block."""
    from distributed import Client, LocalCluster

    if p.where != "local":
        with Client(p.where, set_as_default=False) as client:
            yield client
        return
    # The scheduler's HTTP server (and the dashboard, when asked for) on a free loopback port, never on 8787:
    # several runs on one machine must not fight over a port.
    with LocalCluster(n_workers=p.workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address="127.0.0.1:0", scheduler_kwargs={"dashboard": dashboard},
                      silence_logs=logging.ERROR) as cluster:
        with Client(cluster, set_as_default=False) as client:
            yield client


def _call(fn: Callable[..., R], shared: tuple[Any, ...], chunk: tuple[Any, ...]) -> R:
    return fn(*shared, *chunk)


def show_progress(progress: Progress) -> bool:
    """A bar when asked, or by default when standard error is a terminal; never for a view's callable."""
    if callable(progress):
        return False
    return sys.stderr.isatty() if progress is None else progress


def run_chunks(
    fn: Callable[..., R],
    chunks: Sequence[tuple[Any, ...]],
    *,
    shared: tuple[Any, ...] = (),
    weights: Sequence[int] | None = None,
    workers: int | None = None,
    scheduler: str | None = None,
    small: bool = False,
    progress: Progress = None,
    description: str = "",
    unit: str = "games",
    stop: threading.Event | None = None,
    on_result: Callable[[int, R], None] | None = None,
    dashboard: Callable[[str], None] | None = None,
    threads: int = 1,
) -> list[R]:
    """``fn(*shared, *chunk)`` for every chunk, in the chunks' order, wherever ``plan`` puts the job.

    ``weights`` (games per chunk) drive the progress bar; ``on_result(index, result)`` sees each chunk as it
    finishes (partial results); ``progress`` is a bar or a callable (see :data:`Progress`); ``dashboard``
    receives the Dask dashboard's address of a local cluster.
    ``threads`` > 1 plays an in-process job on that many threads: only for a kernel that releases the GIL.
    """
    if not chunks:
        return []
    p = plan(len(chunks), workers, scheduler, small)
    from tqdm import tqdm

    sizes = list(weights) if weights is not None else [1] * len(chunks)
    results: list[Any] = [None] * len(chunks)
    with tqdm(total=sum(sizes), desc=description or None, unit=unit, disable=not show_progress(progress),
              file=sys.stderr, leave=False, dynamic_ncols=True) as bar:

        total, done = sum(sizes), 0

        def finished(i: int, result: Any) -> None:
            nonlocal done
            results[i] = result
            bar.update(sizes[i])
            done += sizes[i]
            if callable(progress):
                progress(done, total)
            if on_result is not None:
                on_result(i, result)

        if p.in_process and threads > 1 and len(chunks) > 1:
            _run_on_threads(min(threads, len(chunks)), fn, chunks, shared, finished, stop)
        elif p.in_process:
            for i, chunk in enumerate(chunks):
                if stop is not None and stop.is_set():
                    raise RunStopped(f"stopped after {i} of {len(chunks)} chunks")
                finished(i, fn(*shared, *chunk))
        else:
            _run_on_cluster(p, fn, chunks, shared, finished, stop, dashboard)
    return results


def _run_on_threads(n: int, fn: Callable[..., Any], chunks: Sequence[tuple[Any, ...]], shared: tuple[Any, ...],
                    finished: Callable[[int, Any], None], stop: threading.Event | None) -> None:
    from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

    with ThreadPoolExecutor(n) as pool:
        futures = {pool.submit(fn, *shared, *chunk): i for i, chunk in enumerate(chunks)}
        pending = set(futures)
        try:
            while pending:
                if stop is not None and stop.is_set():
                    raise RunStopped(f"stopped with {len(pending)} of {len(chunks)} chunks to go")
                done, pending = wait(pending, timeout=POLL_SECONDS, return_when=FIRST_COMPLETED)
                for f in sorted(done, key=futures.__getitem__):
                    finished(futures[f], f.result())
        except BaseException:
            for f in pending:
                f.cancel()
            raise


def _run_on_cluster(p: Plan, fn: Callable[..., Any], chunks: Sequence[tuple[Any, ...]], shared: tuple[Any, ...],
                    finished: Callable[[int, Any], None], stop: threading.Event | None,
                    dashboard: Callable[[str], None] | None) -> None:
    from distributed import as_completed

    with client_for(p, dashboard is not None) as client:
        if dashboard is not None and client.dashboard_link:
            dashboard(client.dashboard_link)
        # The shared arguments (a game, its policies, a position) travel once to every worker, not once a chunk.
        [shared_future] = client.scatter([shared], broadcast=True, hash=False)
        futures = [client.submit(_call, fn, shared_future, chunk, pure=False) for chunk in chunks]
        index = {f.key: i for i, f in enumerate(futures)}
        left = len(futures)
        try:
            arrivals = as_completed(futures, loop=client.loop)
            while left:
                if stop is not None and stop.is_set():
                    raise RunStopped(f"stopped with {left} of {len(chunks)} chunks to go")
                done = arrivals.next_batch(block=False)
                if not done:
                    time.sleep(POLL_SECONDS)
                    continue
                for f in sorted(done, key=lambda f: index[f.key]):
                    finished(index[f.key], f.result())
                    left -= 1
        except BaseException:
            client.cancel(futures, force=True)
            raise


# --- the commands' shared options and output -----------------------------------------------------

def add_run_options(parser: argparse.ArgumentParser, workers_help: str = "worker processes of a local cluster "
                    "(default: one a core; 1 runs in this process)") -> None:
    """``--workers``, ``--scheduler``, ``--json``, ``--out FILE`` and ``--no-progress`` for a large-run command."""
    group = parser.add_argument_group("running and output")
    group.add_argument("--workers", type=int, default=None, help=workers_help)
    group.add_argument("--scheduler", default=None, metavar="ADDRESS",
                       help=f"a running Dask scheduler, e.g. tcp://10.0.0.5:8786 (default: ${SCHEDULER_ENV}, "
                            "else a local cluster started for the run)")
    group.add_argument("--json", action="store_true", help="print the table as JSON records")
    group.add_argument("--out", default=None, metavar="FILE",
                       help="also write the table: .parquet (needs pyarrow) or anything else as CSV")
    group.add_argument("--no-progress", dest="progress", action="store_false", default=None,
                       help="no progress bar (the default shows one on a terminal)")
    group.add_argument("--dashboard", action="store_true",
                       help="turn on a local cluster's Dask dashboard and print its address")


def dashboard_printer(args: argparse.Namespace) -> Callable[[str], None] | None:
    """With ``--dashboard``, a callback that prints the dashboard's address on standard error."""
    if not getattr(args, "dashboard", False):
        return None
    return lambda link: print(f"Dask dashboard: {link}", file=sys.stderr, flush=True)


def check_out(path: str | Path | None) -> None:
    """Refuse an output file that cannot be written, before a long run rather than after it."""
    if path is None:
        return
    out = Path(path)
    if out.suffix.lower() in (".parquet", ".pq") and importlib.util.find_spec("pyarrow") is None:
        raise ValueError(f"writing {out.name} needs pyarrow (pip install pyarrow), or name a .csv file")
    if not out.parent.is_dir():
        raise ValueError(f"cannot write {out}: no folder {out.parent}")
    if out.is_dir():
        raise ValueError(f"cannot write {out}: it is a folder")


def write_table(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write a tidy table as Parquet (a ``.parquet`` name, with pyarrow installed) or CSV; a clear error if not."""
    check_out(path)
    out = Path(path)
    if out.suffix.lower() in (".parquet", ".pq"):
        frame.to_parquet(out, index=False)
    else:
        frame.to_csv(out, index=False)
    return out
