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


class _FakeServedDoc:
    """Just enough of a served Bokeh document for ``changes_bokeh_models``: no lock held, no hold."""

    def __init__(self):
        self.session_context = type("Context", (), {})()
        self.session_context.session = type("Session", (), {"_pending_writes": None})()
        self.callbacks = type("Callbacks", (), {"hold_value": None})()
        self.next_tick = []

    def add_next_tick_callback(self, fn):
        self.next_tick.append(fn)


def test_a_model_change_outside_the_lock_before_the_page_is_loaded_waits_for_the_next_tick():
    from panel.io.state import set_curdoc

    from apps._background import changes_bokeh_models

    drawn = []

    @changes_bokeh_models
    def draw(value):
        drawn.append(value)

    doc = _FakeServedDoc()
    with set_curdoc(doc):
        draw(1)  # a direct change now would make Bokeh raise: it waits for the lock
        assert drawn == [] and len(doc.next_tick) == 1
        doc.session_context.session._pending_writes = []  # the next tick holds the document lock
        doc.next_tick.pop()()
    assert drawn == [1] and doc.next_tick == []
    draw(2)  # outside a server: at once
    assert drawn == [1, 2]


def test_a_click_outside_the_lock_runs_on_the_next_tick_and_inside_it_at_once():
    from panel.io.state import set_curdoc

    from apps._background import page_command

    ran = []
    command = page_command(lambda event: ran.append(event))
    doc = _FakeServedDoc()
    with set_curdoc(doc):
        command("late click")  # Panel's late click: no lock held
        assert ran == [] and len(doc.next_tick) == 1
        doc.session_context.session._pending_writes = []  # a locked callback, as the next tick is
        doc.next_tick.pop()()
        command("click")
    assert ran == ["late click", "click"] and doc.next_tick == []
    command("notebook")  # outside a server: at once
    assert ran[-1] == "notebook"


def test_another_tabs_document_in_bokehs_global_slot_does_not_defer_this_page():
    """A server thread serving another tab patches Bokeh's global current document for a moment (and a browser
    test's server runs in the test process): a page outside a server must still run its commands at once."""
    from bokeh.io.doc import patch_curdoc

    from apps._background import changes_bokeh_models, page_command

    other_tab = _FakeServedDoc()
    ran = []
    command = page_command(lambda event: ran.append(event))
    draw = changes_bokeh_models(lambda value: ran.append(value))
    with patch_curdoc(other_tab):
        command("click")
        draw("draw")
    assert ran == ["click", "draw"] and other_tab.next_tick == []
