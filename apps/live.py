"""Changes that reach a page's HoloViews charts from another browser at the same table (every game's pages).

A table's pages are built over one session, so a click in one browser changes parameters that every page's
views watch. Panel's own panes carry such a change to each other document themselves (``Reactive`` schedules
it under that document's lock). A HoloViews stream does not: its plot sees that its document is not the one
being processed and re-schedules the refresh on its document's next tick, but the callback inherits the
current document of the browser that clicked (a context variable), so the refresh finds itself blocked again
and is scheduled again, for ever, and that browser's chart never changes. :func:`run_on` runs a chart's update
on the chart's own document instead: at once when that document is the one being processed (or there is no
server), else on its next tick with it as the current document (``pn.state.execute`` under Panel's public
``set_curdoc``), or once it has loaded if it has not yet (a refresh before then would wait for the load the same
way, and for ever if the tab closed first: its session, blocked, would never be discarded).
:func:`in_this_document` gives a page a copy of a session's parameters that changes that way, for DynamicMaps
bound with ``pn.bind``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from functools import partial
from typing import Any

import panel as pn
import param
from bokeh.document import Document
from panel.io.state import set_curdoc


def page_document() -> Document | None:
    """The document of the page being built (None in a notebook cell or a test outside a server)."""
    doc = pn.state.curdoc
    return doc if doc is not None and doc.session_context is not None else None


def run_on(doc: Document | None, fn: Callable[[], Any]) -> None:
    """Run ``fn`` as the page of ``doc``: now if ``doc`` is being processed (or is None), else on its next tick,
    or when it has loaded."""
    if doc is None or pn.state.curdoc is doc:
        fn()
        return
    with set_curdoc(doc):
        if pn.state.loaded:
            pn.state.execute(fn, schedule=True)
        else:
            pn.state.onload(fn)


def on_page_of(doc: Document | None, fn: Callable[[], Any]) -> Callable[..., None]:
    """A parameter watcher that runs ``fn()`` as the page of ``doc`` (see :func:`run_on`)."""
    return lambda *_events: run_on(doc, fn)


@functools.cache
def _copy_class(names: tuple[str, ...]) -> type[param.Parameterized]:
    return type("DocumentParams", (param.Parameterized,), {n: param.Parameter(default=None) for n in names})


def in_this_document(source: param.Parameterized, *names: str) -> param.Parameterized:
    """``source``'s parameters ``names``, copied into the page being built: a copy that changes on this page's own
    document (:func:`run_on`), for the page's DynamicMaps to be bound to instead of the shared session's."""
    doc = page_document()
    copy = _copy_class(names)(**{n: getattr(source, n) for n in names})
    source.param.watch(lambda *events: run_on(doc, partial(copy.param.update, **{e.name: e.new for e in events})),
                       list(names))
    return copy


__all__ = ["in_this_document", "on_page_of", "page_document", "run_on"]
