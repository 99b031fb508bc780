"""Changes that reach a page's HoloViews charts from another browser at the same table.

A table's pages are built over one session, so a click in one browser changes parameters that every page's
views watch. Panel's own panes carry such a change to each other document themselves (``Reactive`` schedules
it under that document's lock). A HoloViews stream does not: its plot sees that its document is not the one
being processed and re-schedules the refresh on its document's next tick, but the callback inherits the
current document of the browser that clicked (a context variable), so the refresh finds itself blocked again
and is scheduled again, for ever, and that browser's chart never changes. :func:`run_on` runs a chart's update
on the chart's own document instead: at once when that document is the one being processed (or there is no
server), else on its next tick with it as the current document (``pn.state.execute`` under Panel's public
``set_curdoc``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import panel as pn
from bokeh.document import Document
from panel.io.state import set_curdoc


def page_document() -> Document | None:
    """The document of the page being built (None in a notebook cell or a test outside a server)."""
    doc = pn.state.curdoc
    return doc if doc is not None and doc.session_context is not None else None


def run_on(doc: Document | None, fn: Callable[[], Any]) -> None:
    """Run ``fn`` as the page of ``doc``: now if ``doc`` is being processed (or is None), else on its next tick."""
    if doc is None or pn.state.curdoc is doc:
        fn()
        return
    with set_curdoc(doc):
        pn.state.execute(fn, schedule=True)


def on_page_of(doc: Document | None, fn: Callable[[], Any]) -> Callable[..., None]:
    """A parameter watcher that runs ``fn()`` as the page of ``doc`` (see :func:`run_on`)."""
    return lambda *_events: run_on(doc, fn)


__all__ = ["on_page_of", "page_document", "run_on"]
