"""What every dashboard's charts share: Bokeh figures whose data sources follow parameters, and HoloViews' backend.

A chart that changes with every click is a Bokeh figure drawn once, whose ``ColumnDataSource``s a watcher fills
again (:func:`follow_pane`): a HoloViews DynamicMap redraws its whole overlay on each change (every layer's glyphs,
every range), 35-70 ms a chart on this project's machine, where replacing a source's data costs about a
millisecond. HoloViews stays for the notebooks' charts, drawn once."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import holoviews as hv
import panel as pn
import param
from bokeh.models import Legend, LegendItem
from bokeh.plotting import figure
from panel.io.state import set_curdoc


def use_bokeh() -> None:
    """Make Bokeh HoloViews' current backend, as ``hv.extension("bokeh")`` does but without sending the notebook
    any JavaScript (a notebook loads that itself, once, in its own first cell), drawing on a 2-D canvas.

    HoloViews draws with WebGL by default. The charts here are a few dozen glyphs each, and a browser without a GPU
    for WebGL (headless, a virtual machine, many school laptops) emulates it: every figure of a page is drawn again
    whenever the page is laid out, and on the Man-Kzin Wars page the emulated WebGL's copies to the page took about
    half of the other browser's time for a move at a table (Chromium's profiler)."""
    renderer = hv.renderer("bokeh")
    renderer.webgl = False
    if hv.Store.current_backend != "bokeh":
        hv.Store.set_current_backend("bokeh")


def plain_figure(name: str, **options: Any) -> Any:
    """A figure with no tools and no toolbar, drawn on a 2-D canvas (:func:`use_bokeh` says why), as wide as its
    place unless ``options`` say otherwise."""
    return figure(name=name, tools="", toolbar_location=None, output_backend="canvas",
                  **{"sizing_mode": "stretch_width", **options})


def follow_pane(fig: Any, on: param.Parameterized, names: Sequence[str], redraw: Callable[[], None],
                **options: Any) -> pn.pane.Bokeh:
    """``fig`` in a pane, drawn now and again whenever one of ``on``'s parameters ``names`` changes.

    A redraw changes Bokeh models, which a served page's document allows only under its lock, so on a served page it
    runs on the page's next tick (``pn.state.execute``; a change may come from an async task, which runs outside
    the lock, and Panel's test of the lock does not tell that case apart), elsewhere at once. In a notebook cell
    Panel sends a change made to a Bokeh model by hand only with its next push of its own, so each redraw is pushed
    (``pn.io.push_notebook``, Panel's documented way; nothing to do on a served page)."""
    pane = pn.pane.Bokeh(fig, **options)

    def draw() -> None:
        redraw()
        pn.io.push_notebook(pane)

    def follow(*_events: Any) -> None:
        if fig.document is None:  # not shown yet
            redraw()
            return
        with set_curdoc(fig.document):
            pn.state.execute(draw, schedule=True)

    on.param.watch(follow, list(names))
    redraw()
    return pane


def legend_above(fig: Any, renderers: dict[str, Any]) -> None:
    """A legend in a line above the chart, clear of what it draws."""
    items = [LegendItem(label=label, renderers=[r]) for label, r in renderers.items()]
    fig.add_layout(Legend(items=items, orientation="horizontal", location="center", border_line_alpha=0), "above")
