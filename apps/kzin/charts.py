"""The Man-Kzin Wars charts: Bokeh figures drawn once, whose data sources follow the session's parameters.

Each chart draws what never changes once and keeps what changes in ``ColumnDataSource``s; a watcher on the
parameters it shows replaces a source's data (and the title, the y range) when one of them changes. A page passes
its charts' copy of the session (:func:`apps.live.in_this_document` with ``charts=True``), which changes on the
page's own document, so the sources change there under its lock; Panel carries the change to a served tab and to
a notebook cell alike.

Not HoloViews DynamicMaps, which these were: a DynamicMap redraws its whole overlay on every change (each layer's
glyphs, every range), 35-70 ms a chart on this machine, and a decision redraws two charts: most of a click's
server time (``python -m apps._bench``). Replacing a source's data costs about a millisecond.

Each figure is named (``track``, ``forces``, ``running``) for the tests, and its sources' columns are named as
the tests read them (the marker's ``tx``, the arrow's ``tx1``, the histograms' ``left`` and ``top``, ``turn``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import panel as pn
import param
from bokeh.models import ColumnDataSource, HoverTool, NumeralTickFormatter, Range1d

from apps.kzin import views
from apps.plotting import follow_pane, legend_above, plain_figure
from engine.kzin.cards import SPACES
from engine.kzin.session import KzinSession

TRACK_X, TRACK_Y = (0.4, 12.6), (-0.35, 1.6)
HALF = 0.47  # half a space's width on the track


def track(session: KzinSession, on: param.Parameterized | None = None, **options: Any) -> pn.pane.Bokeh:
    """The 12 spaces from Earth to the Kzin Home Worlds, the Expansion Marker and its last move; redrawn when
    ``on``'s ``version`` or ``last_move`` changes (the session's own by default)."""
    fig = plain_figure("track", height=190, min_width=600, x_range=Range1d(*TRACK_X), y_range=Range1d(*TRACK_Y))
    fig.axis.visible = False
    fig.grid.visible = False
    fig.outline_line_color = None
    spaces = [int(s["space"]) for s in SPACES]
    fig.quad(left=[x - HALF for x in spaces], right=[x + HALF for x in spaces], bottom=0, top=1,
             fill_color=["#dbeafe" if s["side"] == "Human" else "#fee2e2" for s in SPACES], line_color="#9ca3af")
    text = {"text_align": "center", "text_baseline": "middle"}
    fig.text(x=spaces, y=[0.8] * len(spaces), text=[str(x) for x in spaces], text_font_size="13px",
             text_font_style="bold", text_color="#374151", **text)
    fig.text(x=spaces, y=[0.5] * len(spaces), text=[s["location"].replace(" ", "\n") for s in SPACES],
             text_font_size="10px", text_color="#374151", **text)
    fig.text(x=[1, 12], y=[-0.2, -0.2], text=["Kzinti win", "Humans win"], text_font_size="10px",
             text_color="#6b7280", **text)
    box = ColumnDataSource({"left": [], "bottom": [], "right": [], "top": []})
    arrow = ColumnDataSource({"tx0": [], "ty0": [], "tx1": [], "ty1": []})
    head = ColumnDataSource({"tx": [], "ty": [], "angle": []})
    label = ColumnDataSource({"tx": [], "ty": [], "text": []})
    marker = ColumnDataSource({"tx": [], "ty": [], "marker": []})
    fig.quad(left="left", bottom="bottom", right="right", top="top", source=box, fill_alpha=0, line_dash="dashed",
             line_color="#111827", line_width=2)
    fig.segment(x0="tx0", y0="ty0", x1="tx1", y1="ty1", source=arrow, line_color="#111827", line_width=3)
    fig.scatter(x="tx", y="ty", angle="angle", source=head, marker="triangle", size=14, fill_color="#111827",
                line_color="#111827")
    fig.text(x="tx", y="ty", text="text", source=label, text_font_size="11px", text_color="#000000", **text)
    dot = fig.scatter(x="tx", y="ty", source=marker, marker="diamond", size=26, fill_color="#f59e0b",
                      line_color="#111827", line_width=2)
    fig.add_tools(HoverTool(renderers=[dot], tooltips=[("", "@marker")]))

    def redraw() -> None:
        move = views.last_move(session)
        x0, x1, y = move["x0"], move["x1"], move["y"]
        box.data = {"left": [x - HALF for x in x0], "bottom": [0] * len(x0), "right": [x + HALF for x in x0],
                    "top": [1] * len(x0)}
        arrow.data = {"tx0": x0, "ty0": y, "tx1": x1, "ty1": y}
        head.data = {"tx": x1, "ty": y, "angle": move["angle"]}
        label.data = {"tx": move["lx"], "ty": move["ly"], "text": move["label"]}
        marker.data = {"tx": [views.marker_space(session)], "ty": [0.2], "marker": ["Expansion Marker"]}

    return follow_pane(fig, on or session, ("version", "last_move"), redraw, **options)


SIDES = (("Humans", views.HUMAN_COLOUR), ("Kzinti", views.KZIN_COLOUR))


def forces(session: KzinSession, on: param.Parameterized | None = None, **options: Any) -> pn.pane.Bokeh:
    """P(force) of each side of the battle in view, and the chance to win in the title; redrawn when ``on``'s
    ``version``, ``selection``, ``guess`` or ``predict`` changes."""
    fig = plain_figure("forces", height=230, min_width=300, y_range=Range1d(0, 1), title="Force distributions")
    fig.yaxis.formatter = NumeralTickFormatter(format="0%")
    fig.yaxis.axis_label = "P(force)"
    fig.xaxis.axis_label = "force"
    fig.title.text_font_size = "12pt"
    sources = {side: ColumnDataSource({"left": [], "right": [], "top": [], "bottom": []}) for side, _ in SIDES}
    bars = {side: fig.quad(left="left", right="right", top="top", bottom="bottom", source=sources[side],
                           fill_color=colour, fill_alpha=0.45, line_color=colour, name=side) for side, colour in SIDES}
    legend_above(fig, bars)

    def redraw() -> None:
        sides = views.force_sides(session)
        top = 0.0
        for side, _colour in SIDES:
            if side in sides:
                force, p = views.force_distribution(*sides[side])
                sources[side].data = {"left": force - 0.5, "right": force + 0.5, "top": p, "bottom": np.zeros(len(p))}
                top = max(top, float(p.max()))
            else:
                sources[side].data = {"left": [], "right": [], "top": [], "bottom": []}
        fig.title.text = views.forces_title(session)
        fig.y_range.end = 1.15 * top or 1

    return follow_pane(fig, on or session, ("version", "selection", "guess", "predict"), redraw, **options)


def running(session: KzinSession, on: param.Parameterized | None = None, **options: Any) -> pn.pane.Bokeh:
    """The estimated chance of winning the game at the start of every turn, with its 95% interval; redrawn when
    ``on``'s ``running_odds`` changes."""
    fig = plain_figure("running", height=230, min_width=300, y_range=Range1d(0, 1),
                       title="Chance of winning the game, turn by turn")
    fig.yaxis.formatter = NumeralTickFormatter(format="0.0%")
    fig.yaxis.axis_label = "P(win the game)"
    fig.xaxis.axis_label = "turn"
    fig.title.text_font_size = "12pt"
    source = ColumnDataSource({"turn": [], "win": [], "low": [], "high": []})
    band = fig.varea(x="turn", y1="low", y2="high", source=source, fill_color="#93c5fd", fill_alpha=0.5)
    line = fig.line(x="turn", y="win", source=source, line_color=views.HUMAN_COLOUR, line_width=2)
    dots = fig.scatter(x="turn", y="win", source=source, size=6, fill_color=views.HUMAN_COLOUR,
                       line_color=views.HUMAN_COLOUR)
    fig.add_tools(HoverTool(renderers=[dots], tooltips=[("turn", "@turn"), ("P(win the game)", "@win{0.0%}"),
                                                        ("95% interval", "@low{0.0%} to @high{0.0%}")]))
    legend_above(fig, {"95% interval": band, "estimate": line})

    def redraw() -> None:
        d = views.running_data(session.running_odds)
        source.data = d
        fig.y_range.end = min(1.0, 1.15 * max(d["high"], default=0.0)) or 1

    return follow_pane(fig, on or session, ("running_odds",), redraw, **options)
