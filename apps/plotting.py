"""What every dashboard's HoloViews charts share."""

from __future__ import annotations

import holoviews as hv


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

