"""The Kung Fu 2100 combat chart: a Bokeh figure drawn once, whose data sources follow the outlook shown
(:func:`apps.plotting.follow_pane` says why not a HoloViews DynamicMap).

Its figure is named ``hits`` for the browser tests, and its bars' source has the ``label`` column they count (the
CRT is a table: :mod:`apps.kf2100.reference`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import panel as pn
import param
from bokeh.models import ColumnDataSource, HoverTool, NumeralTickFormatter, Range1d

from apps.kf2100 import views
from apps.plotting import follow_pane, plain_figure

WIDTH = 0.17
"""Half a bar's width: each number of hits has a bar a side, 0.36 apart."""


def hits(current: Callable[[], Any], on: param.Parameterized, *names: str, **options: Any) -> pn.pane.Bokeh:
    """P(hits) of each side in the whole combat, with error bars when the outlook is simulated.

    ``current()`` gives the outlook of the combat in view (None: none yet), drawn again when one of ``on``'s
    parameters ``names`` changes."""
    fig = plain_figure("hits", height=210, width=420, sizing_mode="fixed", y_range=Range1d(0, 1),
                       title=views.hits_title(None))
    fig.title.text_font_size = "10.5pt"
    fig.yaxis.formatter = NumeralTickFormatter(format="0%")
    fig.xaxis.axis_label, fig.yaxis.axis_label = "hits taken", "P"
    bars = ColumnDataSource({"left": [], "right": [], "top": [], "colour": [], "label": []})
    spans = ColumnDataSource({"x": [], "low": [], "high": []})
    drawn = fig.quad(left="left", right="right", bottom=0, top="top", source=bars, fill_color="colour",
                     line_color=None)
    fig.segment(x0="x", y0="low", x1="x", y1="high", source=spans, line_color="#111827", line_width=1.5)
    fig.add_tools(HoverTool(renderers=[drawn], tooltips=[("", "@label")]))

    def redraw() -> None:
        outlook = current()
        d = views.hits_data(outlook)
        bars.data = {"left": [x - WIDTH for x in d["x"]], "right": [x + WIDTH for x in d["x"]], "top": d["p"],
                     "colour": d["colour"], "label": d["label"]}
        simulated = outlook is not None and not outlook.exact
        spans.data = ({"x": d["x"], "low": d["low"], "high": d["high"]} if simulated
                      else {"x": [], "low": [], "high": []})
        fig.title.text = views.hits_title(outlook)
        fig.y_range.end = min(1.05, 1.15 * max(d["high"], default=0.0)) or 1

    return follow_pane(fig, on, names, redraw, **options)
