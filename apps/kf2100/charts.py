"""The Kung Fu 2100 combat charts as HoloViews DynamicMaps bound to parameters (no Bokeh model written by hand).

A DynamicMap redraws in place when a parameter it depends on changes, in a served tab and in a notebook cell
alike. Each chart's Bokeh figure is named (``hits``, ``crt``) for the browser tests.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import holoviews as hv
import panel as pn
from bokeh.models import NumeralTickFormatter

from apps.kf2100 import views
from apps.kzin.charts import use_bokeh
from engine.kf2100.data import ANSWER_COLUMNS
from engine.kf2100.odds import crt_table

NO_TOOLS = {"default_tools": [], "tools": [], "toolbar": None}
NAMES = {"fist": "Fist", "kick": "Kick", "mist": "Mist", "monkey": "Monkey", "weapon": "Weapon", "none": "None"}


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


def crt(target: Callable[[], list[tuple[int, int]]], *deps: Any) -> hv.Overlay:
    """The CRT as a heat map of hit chances, with the attack about to be played (or answered) outlined:
    ``target()`` gives the cells, redrawn when any of ``deps`` (parameters) changes."""
    use_bokeh()
    data = views.crt_data()
    attacks = list(crt_table().index)
    n = len(attacks)
    cells = hv.Rectangles([(x - 0.5, y - 0.5, x + 0.5, y + 0.5, p) for x, y, p in
                           zip(data["x"], data["y"], data["p"], strict=True)],
                          kdims=["x0", "y0", "x1", "y1"], vdims=["p"]).opts(
        color="p", cmap="YlOrRd", clim=(0, 1), line_color="#ffffff", **NO_TOOLS)
    texts = hv.Labels((data["x"], data["y"], data["text"]), kdims=["x", "y"], vdims=["text"]).opts(
        text_font_size="11px", text_color="#111827", **NO_TOOLS)

    def outline(*_values: Any) -> hv.Rectangles:
        return hv.Rectangles([(x - 0.5, y - 0.5, x + 0.5, y + 0.5) for x, y in target()],
                             kdims=["x0", "y0", "x1", "y1"]).opts(fill_alpha=0, line_color="#2563eb", line_width=3,
                                                                  **NO_TOOLS)

    mark = hv.DynamicMap(pn.bind(outline, *deps))
    return (cells * texts * mark).opts(
        hv.opts.Overlay(height=250, width=420, title="CRT: chance of a hit (attack ↓, answer →)", toolbar=None,
                        xticks=[(j, NAMES[c]) for j, c in enumerate(ANSWER_COLUMNS)],
                        yticks=[(n - 1 - i, a) for i, a in enumerate(attacks)], xlabel="", ylabel="",
                        xlim=(-0.5, len(ANSWER_COLUMNS) - 0.5), ylim=(-0.5, n - 0.5), show_grid=False,
                        **_named("crt")))
