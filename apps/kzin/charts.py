"""The Man-Kzin Wars charts as HoloViews DynamicMaps bound to the session's parameters.

A DynamicMap redraws in place when a parameter it depends on changes, in a served tab and in a notebook
cell alike (HoloViews sends the new data through the same channel Panel uses for widgets), so no chart
is fed by hand. Each chart's Bokeh figure is named (``track``, ``forces``, ``running``) for the browser
tests.
"""

from __future__ import annotations

import holoviews as hv
import panel as pn
import param
from bokeh.models import NumeralTickFormatter

from apps.kzin import views
from apps.plotting import use_bokeh
from engine.kzin.cards import SPACES
from engine.kzin.session import KzinSession

NO_TOOLS = {"default_tools": [], "tools": [], "toolbar": None}
FIXED = {"apply_ranges": False}
"""On a layer of a chart whose axes its ``xlim``/``ylim`` fix (the track): an update does not work out the layer's
extents for ranges that never change (a fifth of a decision's chart updates, measured)."""


def _named(name: str) -> dict:
    return {"backend_opts": {"plot.name": name}}


def track(session: KzinSession, on: param.Parameterized | None = None) -> hv.Overlay:
    """The 12 spaces from Earth to the Kzin Home Worlds, the Expansion Marker and its last move; redrawn when
    ``on``'s ``version`` or ``last_move`` changes (the session's own by default; a page passes its copy from
    :func:`apps.live.in_this_document`)."""
    use_bokeh()
    spaces = [int(s["space"]) for s in SPACES]
    colours = ["#dbeafe" if s["side"] == "Human" else "#fee2e2" for s in SPACES]
    board = hv.Rectangles([(x - 0.47, 0, x + 0.47, 1, c) for x, c in zip(spaces, colours, strict=True)],
                          kdims=["tx0", "ty0", "tx1", "ty1"], vdims=["colour"]).opts(
        color="colour", line_color="#9ca3af", **NO_TOOLS, **FIXED)
    numbers = hv.Labels([(x, 0.8, str(x)) for x in spaces], kdims=["tx", "ty"], vdims=["text"]).opts(
        text_font_size="13px", text_font_style="bold", text_color="#374151", **NO_TOOLS, **FIXED)
    names = hv.Labels([(int(s["space"]), 0.5, s["location"].replace(" ", "\n")) for s in SPACES],
                      kdims=["tx", "ty"], vdims=["text"]).opts(text_font_size="10px", text_color="#374151",
                                                               **NO_TOOLS, **FIXED)
    ends = hv.Labels([(1, -0.2, "Kzinti win"), (12, -0.2, "Humans win")], kdims=["tx", "ty"],
                     vdims=["text"]).opts(text_font_size="10px", text_color="#6b7280", **NO_TOOLS, **FIXED)

    # The moving layers are made once with their options and cloned with each move's data: a clone keeps its
    # template's options, where an element built and styled anew in every redraw cost about three times as much.
    box_of_move = hv.Rectangles([], kdims=["tx0", "ty0", "tx1", "ty1"]).opts(
        fill_alpha=0, line_dash="dashed", line_color="#111827", line_width=2, **NO_TOOLS, **FIXED)
    arrow = hv.Segments([], kdims=["tx0", "ty0", "tx1", "ty1"]).opts(color="#111827", line_width=3, **NO_TOOLS,
                                                                    **FIXED)
    head = hv.Points([], kdims=["tx", "ty"], vdims=["angle"]).opts(
        marker="triangle", angle=hv.dim("angle"), size=14, color="#111827", **NO_TOOLS, **FIXED)
    label = hv.Labels([], kdims=["tx", "ty"], vdims=["text"]).opts(text_font_size="11px", **NO_TOOLS, **FIXED)
    marker = hv.Points([], kdims=["tx", "ty"], vdims=["marker"]).opts(
        marker="diamond", size=26, color="#f59e0b", line_color="#111827", line_width=2,
        tools=["hover"], default_tools=[], toolbar=None, **FIXED)

    def moving(version: int, last_move: tuple | None) -> hv.Overlay:
        move = views.last_move(session)
        x0, x1, y, zeros = move["x0"], move["x1"], move["y"], [0] * len(move["x0"])
        return hv.Overlay([
            box_of_move.clone({"tx0": [x - 0.47 for x in x0], "ty0": zeros, "tx1": [x + 0.47 for x in x0],
                               "ty1": [1] * len(x0)}),
            arrow.clone({"tx0": x0, "ty0": y, "tx1": x1, "ty1": y}),
            head.clone({"tx": x1, "ty": y, "angle": move["angle"]}),
            label.clone({"tx": move["lx"], "ty": move["ly"], "text": move["label"]}),
            marker.clone({"tx": [views.marker_space(session)], "ty": [0.2], "marker": ["Expansion Marker"]})])

    on = on or session
    dynamic = hv.DynamicMap(pn.bind(moving, on.param.version, on.param.last_move))
    return (board * numbers * names * ends * dynamic).opts(
        hv.opts.Overlay(height=190, responsive=True, min_width=600, xlim=(0.4, 12.6), ylim=(-0.35, 1.6),
                        xaxis=None, yaxis=None, show_frame=False, show_grid=False, toolbar=None,
                        **_named("track")))


def forces(session: KzinSession, on: param.Parameterized | None = None) -> hv.DynamicMap:
    """P(force) of each side of the battle in view, and the chance to win in the title (redrawn as :func:`track`
    is, on ``version``, ``selection``, ``guess`` and ``predict``)."""
    use_bokeh()

    sides_drawn = {side: hv.Histogram(([0.0, 1.0], [0.0]), kdims=["force"], vdims=["P(force)"], label=side).opts(
        color=colour, fill_alpha=0.45, line_color=colour, **NO_TOOLS)
        for side, colour in (("Humans", views.HUMAN_COLOUR), ("Kzinti", views.KZIN_COLOUR))}  # cloned as track's

    def draw(version: int, selection: list[int], guess: float | None, predict: bool) -> hv.Overlay:
        sides = views.force_sides(session)
        layers, top = [], 0.0
        for side, drawn in sides_drawn.items():
            if side in sides:
                force, p = views.force_distribution(*sides[side])
                edges, values = [*(force - 0.5), force[-1] + 0.5], list(p)
                top = max(top, float(p.max()))
            else:
                edges, values = [0.0, 1.0], [0.0]
            layers.append(drawn.clone((edges, values)))
        return hv.Overlay(layers).opts(title=views.forces_title(session), ylim=(0, 1.15 * top or 1))

    on = on or session
    return hv.DynamicMap(pn.bind(draw, on.param.version, on.param.selection, on.param.guess, on.param.predict)).opts(
        hv.opts.Overlay(height=230, responsive=True, min_width=300, legend_position="top",
                        yformatter=NumeralTickFormatter(format="0%"), ylabel="P(force)", toolbar=None,
                        **_named("forces")),
        hv.opts.Histogram(framewise=True))


def running(session: KzinSession, on: param.Parameterized | None = None) -> hv.DynamicMap:
    """The estimated chance of winning the game at the start of every turn, with its 95% interval (redrawn as
    :func:`track` is, on ``running_odds``)."""
    use_bokeh()

    def draw(running_odds: list[dict]) -> hv.Overlay:
        d = views.running_data(running_odds)
        band = hv.Area((d["turn"], d["low"], d["high"]), kdims=["turn"], vdims=["low", "high"],
                       label="95% interval").opts(color="#93c5fd", alpha=0.5, line_alpha=0, **NO_TOOLS)
        line = hv.Curve((d["turn"], d["win"]), kdims=["turn"], vdims=["P(win the game)"], label="estimate").opts(
            color=views.HUMAN_COLOUR, line_width=2, **NO_TOOLS)
        dots = hv.Scatter((d["turn"], d["win"], d["low"], d["high"]), kdims=["turn"],
                          vdims=["P(win the game)", "low", "high"]).opts(
            color=views.HUMAN_COLOUR, size=6, tools=["hover"], default_tools=[], toolbar=None)
        return (band * line * dots).opts(ylim=(0, min(1.0, 1.15 * max(d["high"], default=0.0)) or 1))

    return hv.DynamicMap(pn.bind(draw, (on or session).param.running_odds)).opts(
        hv.opts.Overlay(height=230, responsive=True, min_width=300, legend_position="top",
                        yformatter=NumeralTickFormatter(format="0.0%"), ylabel="P(win the game)", toolbar=None,
                        title="Chance of winning the game, turn by turn", **_named("running")),
        hv.opts.Area(framewise=True), hv.opts.Curve(framewise=True), hv.opts.Scatter(framewise=True))
