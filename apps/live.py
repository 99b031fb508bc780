"""Changes that reach a page from another browser at the same table (every game's pages).

A table's pages are built over one session, so a click in one browser changes parameters that every page's
views watch. Panel's own panes carry such a change to each other document themselves (``Reactive`` schedules
it under that document's lock), but one model at a time: each on a tick of its own, each sent as a message of
its own, each laid out again by the browser (measured on the Man-Kzin Wars page: a dozen messages a move, about
100 ms of layout each in the other browser). A HoloViews stream does not carry it at all: its plot sees that
its document is not the one being processed and re-schedules the refresh on its document's next tick, but the
callback inherits the current document of the browser that clicked (a context variable), so the refresh finds
itself blocked again and is scheduled again, for ever, and that browser's chart never changes.

So a page's views follow a copy of the session's parameters made in the page's own document
(:func:`in_this_document`), which changes as the page (:func:`run_on`): at once when that document is the one
being processed (or there is no server), else on its next tick with it as the current document
(``pn.state.execute`` under Panel's public ``set_curdoc``), or once it has loaded if it has not yet (a refresh
before then would wait for the load the same way, and for ever if the tab closed first: its session, blocked,
would never be discarded). The change runs under ``pn.io.hold(doc)``: everything it changes on that page goes to the
browser as one message. A page's charts follow a copy of their own (``charts=True``), redrawn with the
document's models frozen and, on the page whose click made the change, after every other page's update.
"""

from __future__ import annotations

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


def run_on(doc: Document | None, fn: Callable[[], Any], *, charts: bool = False) -> None:
    """Run ``fn`` as the page of ``doc``, its changes held and sent together: now if ``doc`` is being processed
    (or is None: no hold), else on its next tick, or when it has loaded.

    ``charts``: ``fn`` redraws HoloViews charts, which replace Bokeh models. It runs with the document's models
    frozen (Bokeh works their set out again once, at the end, where each chart's redraw did it on its own: about
    50 ms each on the Man-Kzin Wars page), and on the page being processed it runs after everything already queued
    (``add_timeout_callback`` with no delay): the text of every other page at a table goes out before this page's
    charts are drawn."""
    if doc is None:
        fn()
        return

    held = one_message(doc, fn, freeze=charts)  # in a click's own hold (apps.commands): it joins that one

    current = pn.state.curdoc is doc
    if current and not charts:
        held()
        return
    with set_curdoc(doc):
        if not pn.state.loaded:
            pn.state.onload(held)
        elif current:
            doc.add_timeout_callback(held, 0)
        else:
            pn.state.execute(held, schedule=True)


def one_message(doc: Document, fn: Callable[[], Any], freeze: bool = False) -> Callable[[], None]:
    """``fn`` as the page of ``doc``, what it changes there held and sent to the browser as one message when ``doc``
    is a served page's (a notebook's document is sent through its comm, which a hold would bypass: ``fn`` itself).
    ``freeze``: with the document's models frozen (see :func:`run_on`)."""
    if doc.session_context is None:
        return fn

    def held() -> None:
        with set_curdoc(doc), pn.io.hold(doc, freeze=freeze):
            fn()

    return held


def on_page_of(doc: Document | None, fn: Callable[[], Any]) -> Callable[..., None]:
    """A parameter watcher that runs ``fn()`` as the page of ``doc`` (see :func:`run_on`)."""
    return lambda *_events: run_on(doc, fn)


@functools.cache
def _copy_class(names: tuple[str, ...]) -> type[param.Parameterized]:
    return type("DocumentParams", (param.Parameterized,), {n: param.Parameter(default=None) for n in names})


def in_this_document(source: param.Parameterized, *names: str, charts: bool = False) -> param.Parameterized:
    """``source``'s parameters ``names``, copied into the page being built: a copy that changes on this page's own
    document (:func:`run_on`; ``charts``: a copy for the page's HoloViews charts), for the page's views to be bound
    to instead of the shared session's."""
    doc = page_document()
    copy = _copy_class(names)(**{n: getattr(source, n) for n in names})
    source.param.watch(lambda *events: run_on(doc, partial(copy.param.update, **{e.name: e.new for e in events}),
                                              charts=charts), list(names))
    return copy


class PageView(pn.viewable.Viewer):
    """A part of a page over a session that a table's pages share: its content binds to ``live`` (the session's
    parameters :attr:`LIVE`, copied into this page's document), not to the session's own, so another browser's
    move changes it on one tick of this page, with the rest of the page, in one message."""

    live = param.Parameter(default=None, doc="The session's parameters as this page's document has them "
                           "(in_this_document): one copy for a whole page, made here when none is given.")
    LIVE: ClassVar[tuple[str, ...]] = ()
    """The session's parameters the views of this kind of part follow."""

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        if self.live is None:
            self.live = in_this_document(self.session, *self.LIVE)  # type: ignore[attr-defined]


__all__ = ["PageView", "in_this_document", "on_page_of", "one_message", "page_document", "run_on"]
