"""What every dashboard's HoloViews charts share."""

from __future__ import annotations

import functools
from functools import partial
from typing import Any

import holoviews as hv
import panel as pn
import param
from panel.io.state import set_curdoc


def use_bokeh() -> None:
    """Make Bokeh HoloViews' current backend, as ``hv.extension("bokeh")`` does but without sending the notebook
    any JavaScript (a notebook loads that itself, once, in its own first cell)."""
    if hv.Store.current_backend != "bokeh" or "bokeh" not in hv.Store.renderers:
        hv.renderer("bokeh")
        hv.Store.set_current_backend("bokeh")


@functools.cache
def _copy_class(names: tuple[str, ...]) -> type[param.Parameterized]:
    return type("DocumentParams", (param.Parameterized,), {n: param.Parameter(default=None) for n in names})


def in_this_document(source: param.Parameterized, *names: str) -> param.Parameterized:
    """``source``'s parameters ``names``, copied into the page being built: a copy whose changes happen inside
    this page's own document, for its HoloViews charts to depend on.

    Why: a DynamicMap bound to a parameter redraws when it changes. If the change is made while another document
    is current (a move from another browser at a table: all its pages share one session), HoloViews schedules the
    redraw onto this page's document without making that document current there, so the redraw finds itself in the
    wrong document and schedules itself again, for ever: the chart never updates, the server's loop spins, and the
    closed tab's session is never discarded (its redraws block its expiry). The copy takes each change as Panel
    takes a change to a widget of another document (``Reactive._apply_update``): scheduled onto this document with
    ``state.execute(schedule=True)``, this document current. A change before the page has loaded waits for the load
    (HoloViews reschedules a redraw until then, and for ever if the tab closes first)."""
    doc = pn.state.curdoc
    copy = _copy_class(names)(**{n: getattr(source, n) for n in names})
    served = doc is not None and doc.session_context is not None
    loading = served
    waiting: dict[str, Any] = {}

    def loaded() -> None:
        nonlocal loading
        loading = False
        if waiting:
            copy.param.update(**waiting)
            waiting.clear()

    if served:
        pn.state.onload(loaded)

    def take(*events: param.parameterized.Event) -> None:
        values = {e.name: e.new for e in events}
        if loading:
            waiting.update(values)
        elif not served or pn.state.curdoc is doc:
            copy.param.update(**values)
        else:
            with set_curdoc(doc):
                pn.state.execute(partial(copy.param.update, **values), schedule=True)

    source.param.watch(take, list(names))
    return copy
