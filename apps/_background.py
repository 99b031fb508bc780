"""Background work and safe page updates for the dashboards: one worker thread per page, never more.

Odds, rollouts and bot thinking run off the server's event loop so a page never freezes. A request
while the worker is busy marks it dirty, so it runs once more with the latest state instead of piling
up threads. Results go back to the page with :func:`run_on_page_loop`, on the page's event loop, and
every method that sets Bokeh model properties directly is marked :func:`changes_bokeh_models`.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import panel as pn
from panel.io.state import set_curdoc

F = TypeVar("F", bound=Callable[..., Any])


class BackgroundWorker:
    """One background thread at a time; a request while it runs makes it run again."""

    def __init__(self, work: Callable[[], None], on_error: Callable[[Exception], None] | None = None,
                 name: str = "dashboard-worker") -> None:
        self._work = work
        self._on_error = on_error or (lambda exc: print(f"{name}: background work failed: {exc!r}", flush=True))
        self._name = name
        self._lock = threading.Lock()
        self._dirty = False
        self._thread: threading.Thread | None = None
        self.idle = threading.Event()
        self.idle.set()

    def request(self) -> None:
        with self._lock:
            self._dirty = True
            self.idle.clear()
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name=self._name, daemon=True)
                self._thread.start()

    def _loop(self) -> None:
        while True:
            with self._lock:
                if not self._dirty:
                    self._thread = None
                    self.idle.set()
                    return
                self._dirty = False
            try:
                self._work()
            except Exception as exc:  # the page must hear of it, and the worker must not die silently
                self._on_error(exc)


def run_on_page_loop(doc: Any, fn: Callable[[], None], *, served: bool, wait: bool = False) -> None:
    """Run ``fn`` on a served page's event loop, from any thread (Bokeh models change only there).

    ``served`` says whether the page was built by a server, as recorded when it was built. Outside a
    server (a notebook, a test without a browser) ``fn`` runs at once. On a server whose session has
    ended (the tab was closed, the server stopped) nothing runs: the document has lost its session, and
    asking it again would take a closed tab for a notebook and change its models from this thread.
    ``wait`` blocks until ``fn`` has run (at most 30 s).
    """
    if not served:
        fn()
        return
    if doc is None or doc.session_context is None:
        return
    done = threading.Event()

    def run() -> None:
        try:
            fn()
        finally:
            done.set()

    run.lock = True  # type: ignore[attr-defined]  # Panel then runs it under the document lock, as Bokeh needs
    try:
        with set_curdoc(doc):
            pn.state.execute(run, schedule=True)
    except Exception:  # the tab was closed: nothing to update
        return
    if wait:
        done.wait(timeout=30)


def page_document() -> Any:
    """The Bokeh document of the page being built, or None in a notebook or a plain test.

    Only Panel's own per-session context counts. ``pn.state.curdoc`` falls back to Bokeh's global
    current document, which a server thread handling another tab can fill for a moment; a page built
    outside a server would then take itself for served.
    """
    return pn.state._curdoc.get()


def changes_bokeh_models(method: F) -> F:
    """Mark a dashboard method that sets Bokeh model properties directly (data sources, titles).

    Panel changes its own models inside ``pn.io.unlocked()``, and so must we: Panel runs a click that
    arrives while other widget changes are still pending on a later tick *without* the document lock, and
    a direct change there makes Bokeh raise ("_pending_writes should be non-None …") halfway through the
    update. ``unlocked`` holds the document's events and writes them to the page itself, lock or no lock;
    outside a server it does nothing.

    ``unlocked`` does nothing either on a page the browser has not yet reported loaded. A change from there
    without the lock (a click in the page's first moments on a busy machine) would raise, so the method runs
    on the next tick instead, under the lock. The methods are views of the current state: a tick later they
    draw the same.
    """

    @functools.wraps(method)
    def in_unlocked(*args: Any, **kwargs: Any) -> Any:
        with pn.io.unlocked():
            return method(*args, **kwargs)

    return _next_tick_when(_direct_change_would_raise, in_unlocked)  # type: ignore[return-value]


def page_command(handler: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a button's click handler so that the command runs under the page's document lock.

    Panel runs a click that arrives while widget changes are pending *without* the lock (see
    ``changes_bokeh_models``). Its own pane updates then reach the page only through ``pn.io.unlocked()``,
    which does nothing until the browser has reported the page loaded. A click in those first moments made
    New game raise "_pending_writes should be non-None" halfway through (a CI run under load). Outside the lock
    the command runs on the next tick, under it, after the pending changes; elsewhere (a notebook, a locked
    callback) at once.
    """
    return _next_tick_when(_outside_the_lock, handler)


def _next_tick_when(when: Callable[[Any], bool], fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``, run on its page's next tick (a Bokeh session callback, so under the document lock) when
    ``when(document)`` says it cannot run now, and at once otherwise."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        doc = page_document()  # the page's own document: Bokeh's global one may be another tab's
        if when(doc):
            doc.add_next_tick_callback(functools.partial(wrapper, *args, **kwargs))
            return None
        return fn(*args, **kwargs)

    return wrapper


def _outside_the_lock(doc: Any) -> bool:
    """Whether this runs for a served page without its document lock (Bokeh's session keeps the changes of a
    locked callback in ``_pending_writes``, None otherwise; Bokeh is pinned, see ``constraints.txt``)."""
    session = getattr(getattr(doc, "session_context", None), "session", None)
    return session is not None and getattr(session, "_pending_writes", None) is None


def _direct_change_would_raise(doc: Any) -> bool:
    """Whether a Bokeh model change made now would reach a served page's session without its document lock
    and with nothing to take it: no hold on the document, and ``pn.io.unlocked()`` inactive (page not loaded)."""
    return _outside_the_lock(doc) and not doc.callbacks.hold_value and not pn.state.loaded
