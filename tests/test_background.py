"""The dashboards' background worker: one thread, reruns on a request made while busy, errors reported."""

import threading

from apps._background import BackgroundWorker


def test_a_request_while_busy_runs_once_more_on_the_same_thread():
    started, release, runs, threads = threading.Event(), threading.Event(), [], set()

    def work():
        threads.add(threading.current_thread().name)
        runs.append(1)
        if len(runs) == 1:
            started.set()
            release.wait(5)

    w = BackgroundWorker(work, name="test-worker")
    w.request()
    assert started.wait(5)
    w.request()
    w.request()  # two requests while busy make one more run, not two
    release.set()
    assert w.idle.wait(5)
    assert len(runs) == 2 and threads == {"test-worker"}


def test_an_error_is_reported_and_the_worker_goes_on():
    errors, done = [], []

    def work():
        if not errors:
            raise RuntimeError("boom")
        done.append(1)

    w = BackgroundWorker(work, on_error=errors.append)
    w.request()
    assert w.idle.wait(5)
    w.request()
    assert w.idle.wait(5)
    assert [str(e) for e in errors] == ["boom"] and done == [1]


def test_run_on_page_loop_outside_a_server_runs_at_once_and_not_for_a_closed_tab():
    from apps._background import run_on_page_loop

    ran = []
    run_on_page_loop(None, lambda: ran.append("notebook"), served=False)
    run_on_page_loop(None, lambda: ran.append("closed tab"), served=True)
    assert ran == ["notebook"]
