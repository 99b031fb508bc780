"""A 2-worker Dask ``LocalCluster`` for the tests of the large runs, and a check that no worker is left behind."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager

import psutil


@contextmanager
def local_cluster(workers: int = 2) -> Iterator[str]:
    """The scheduler address of a LocalCluster of ``workers`` spawned processes, closed after the block."""
    from distributed import LocalCluster

    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address="127.0.0.1:0", scheduler_kwargs={"dashboard": False},
                      silence_logs=logging.ERROR) as cluster:
        yield cluster.scheduler_address


def child_pids() -> set[int]:
    """This process's live descendants, less multiprocessing's resource tracker (one per process, by design)."""
    out = set()
    for child in psutil.Process().children(recursive=True):
        try:
            if child.is_running() and child.status() != psutil.STATUS_ZOMBIE \
                    and "resource_tracker" not in " ".join(child.cmdline()):
                out.add(child.pid)
        except psutil.NoSuchProcess:
            pass
    return out


def new_children_after(before: set[int], timeout: float = 15.0) -> set[int]:
    """Descendants that were not there ``before`` and are still alive after up to ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        left = child_pids() - before
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.2)
