"""Changes that reach a page from another browser at the same table (every game's pages).

A table's pages are built over one session, so a click in one browser changes parameters that every page's
views watch. Panel's own panes carry such a change to each other document themselves (``Reactive`` schedules
it under that document's lock), but one model at a time, each on a tick of its own, behind the whole of the
clicking page's own redraw. A HoloViews stream does not carry it at all: its plot sees that its document is not
the one being processed and re-schedules the refresh on its document's next tick, but the callback inherits the
current document of the browser that clicked (a context variable), so the refresh finds itself blocked again and
is scheduled again, for ever, and that browser's chart never changes.

So a page's views follow a copy of the session's parameters made in the page's own document
(:func:`in_this_document`), which changes as the page (:func:`run_on`): at once when that document is the one
being processed (or there is no server), else on its next tick with it as the current document
(``pn.state.execute`` under Panel's public ``set_curdoc``), or once it has loaded if it has not yet (a refresh
before then would wait for the load the same way, and for ever if the tab closed first: its session, blocked,
would never be discarded). Every view of a page then changes on one tick of that page. A page's charts follow a
copy of their own (``charts=True``), redrawn with the document's models frozen and, on the page whose click made
the change, after every other page's update.

Not ``pn.io.hold`` around a page's whole tick: it would send the tick's changes as one message, but it writes them
through Panel's own write futures, and one that meets a tab as it closes keeps that tab's document in memory for
good (Panel 1.9.4: the closed-tabs browser test caught it). Bokeh sends each change as it is made instead, which
measured as fast or faster (Man-Kzin Wars at a table, median 96 ms from a click to the other browser). The Zoo's
arena is the exception that measured otherwise: a flick changes ten of its data sources at once, and it writes them
as one message under ``pn.io.unlocked``, as Panel writes every change of its own widgets (``Arena._write``).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from functools import partial
from typing import Any, ClassVar

import panel as pn
import param
from bokeh.document import Document
from panel.io.state import set_curdoc


def page_document() -> Document | None:
    """The document of the page being built (None in a notebook cell or a test outside a server)."""
    doc = pn.state.curdoc
    return doc if doc is not None and doc.session_context is not None else None


def run_on(doc: Document | None, fn: Callable[[], Any], *, charts: bool = False, last: bool = False) -> None:
    """Run ``fn`` as the page of ``doc``: now if ``doc`` is being processed (or is None), else on its next tick,
    or when it has loaded.

    ``last``: on the page being processed too, after everything already queued (``add_timeout_callback`` with no
    delay): what a click at a table sets off on the other pages (a Zoo flick's animation) goes out first.

    ``charts``: ``fn`` redraws charts (a HoloViews chart replaces Bokeh models). It runs with the document's models
    frozen (``doc.models.freeze()``: Bokeh works their set out again once, at the end, where each HoloViews chart's
    redraw did it on its own, about 50 ms each), and on the page being processed it runs after
    everything already queued (``add_timeout_callback`` with no delay): the text of every other page at a table
    goes out before this page's charts are drawn."""
    if doc is None:
        fn()
        return

    def as_page() -> None:
        with set_curdoc(doc), (doc.models.freeze() if charts else contextlib.nullcontext()):
            fn()

    current = pn.state.curdoc is doc
    if current and not (charts or last):
        as_page()
        return
    with set_curdoc(doc):
        if not pn.state.loaded:
            pn.state.onload(as_page)
        elif current:
            doc.add_timeout_callback(as_page, 0)
        else:
            pn.state.execute(as_page, schedule=True)


def in_turn(fn: Callable[[], Any], doc: Document | None = None) -> None:
    """Run ``fn``, a change that background work (an async task on a page's event loop) makes, in turn with the
    page's own changes: on the page's next tick, under its document lock (``pn.state.execute(schedule=True)``), or
    at once outside a server. ``doc``: the page's document, when the current one may be another's (a change that
    another browser's click at the same table set off); by default the current one.

    An async task runs outside the document lock, so Panel writes the messages of its changes to the browser
    straight away, while the messages of a move made just before (each written in turn behind a loaded browser) may
    still be waiting: an older message then lands last. Man-Kzin Wars' "Follow the advice" stayed disabled that way
    (enabled by the advice, then disabled for good by the move's older message): 2 runs in 10 with a core busy."""
    with set_curdoc(doc) if doc is not None else contextlib.nullcontext():
        pn.state.execute(fn, schedule=True)


def on_page_of(doc: Document | None, fn: Callable[[], Any]) -> Callable[..., None]:
    """A parameter watcher that runs ``fn()`` as the page of ``doc`` (see :func:`run_on`)."""
    return lambda *_events: run_on(doc, fn)


@functools.cache
def _copy_class(names: tuple[str, ...]) -> type[param.Parameterized]:
    return type("DocumentParams", (param.Parameterized,), {n: param.Parameter(default=None) for n in names})


def in_this_document(source: param.Parameterized, *names: str, charts: bool = False,
                     last: bool = False) -> param.Parameterized:
    """``source``'s parameters ``names``, copied into the page being built: a copy that changes on this page's own
    document (:func:`run_on`; ``charts``: a copy for the page's charts; ``last``: one that changes last on the page
    being processed too), for the page's views to be bound to instead of the shared session's."""
    doc = page_document()
    copy = _copy_class(names)(**{n: getattr(source, n) for n in names})
    source.param.watch(lambda *events: run_on(doc, partial(copy.param.update, **{e.name: e.new for e in events}),
                                              charts=charts, last=last), list(names))
    return copy


class PageView(pn.viewable.Viewer):
    """A part of a page over a session that a table's pages share: its content binds to ``live`` (the session's
    parameters :attr:`LIVE`, copied into this page's document), not to the session's own, so another browser's
    move changes it on one tick of this page, with the rest of the page."""

    live = param.Parameter(default=None, doc="The session's parameters as this page's document has them "
                           "(in_this_document): one copy for a whole page, made here when none is given.")
    LIVE: ClassVar[tuple[str, ...]] = ()
    """The session's parameters the views of this kind of part follow."""

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        if self.live is None:
            self.live = in_this_document(self.session, *self.LIVE)  # type: ignore[attr-defined]


__all__ = ["PageView", "in_this_document", "in_turn", "on_page_of", "page_document", "run_on"]
