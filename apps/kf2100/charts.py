"""The Kung Fu 2100 combat chart as a HoloViews DynamicMap bound to parameters (no Bokeh model written by hand).

A DynamicMap redraws in place when a parameter it depends on changes, in a served tab and in a notebook cell
alike. Its Bokeh figure is named ``hits`` for the browser tests (the CRT is a table: :mod:`apps.kf2100.reference`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import holoviews as hv
import panel as pn
from bokeh.models import NumeralTickFormatter

from apps.kf2100 import views
from apps.plotting import use_bokeh

NO_TOOLS = {"default_tools": [], "tools": [], "toolbar": None}


def _named(name: str) -> dict:
    return {"backend_opts": {"plot.name": name}}


def hits(current: Callable[[], Any], *deps: Any) -> hv.DynamicMap:
    """P(hits) of each side in the whole combat, with error bars when the outlook is simulated.

    ``current()`` gives the outlook of the combat in view (None: none yet), redrawn when any of ``deps``
    (parameters) changes."""
    use_bokeh()

    def draw(*_values: Any) -> hv.Overlay:
        outlook = current()
        d = views.hits_data(outlook)
        bars = hv.Rectangles([(x - 0.17, 0, x + 0.17, p, c, lab) for x, p, c, lab in
                              zip(d["x"], d["p"], d["colour"], d["label"], strict=True)],
                             kdims=["x0", "y0", "x1", "y1"], vdims=["colour", "label"]).opts(
            color="colour", line_color=None, tools=["hover"], hover_tooltips=[("", "@label")], default_tools=[],
            toolbar=None)
        simulated = outlook is not None and not outlook.exact
        spans = [(x, p, p - lo, hi - p) for x, p, lo, hi in zip(d["x"], d["p"], d["low"], d["high"], strict=True)
                 ] if simulated else []
        whiskers = hv.ErrorBars(spans, kdims=["x"], vdims=["p", "minus", "plus"]).opts(color="#111827", **NO_TOOLS)
        top = max(d["high"], default=0.0)
        return (bars * whiskers).opts(title=views.hits_title(outlook), ylim=(0, min(1.05, 1.15 * top) or 1))

    return hv.DynamicMap(pn.bind(draw, *deps)).opts(
        hv.opts.Overlay(height=210, width=420, xlabel="hits taken", ylabel="P", toolbar=None,
                        yformatter=NumeralTickFormatter(format="0%"), fontsize={"title": "10.5pt"},
                        **_named("hits")),
        hv.opts.Rectangles(framewise=True), hv.opts.ErrorBars(framewise=True))
