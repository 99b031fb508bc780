"""What every dashboard's HoloViews charts share."""

from __future__ import annotations

import holoviews as hv


def use_bokeh() -> None:
    """Make Bokeh HoloViews' current backend, as ``hv.extension("bokeh")`` does but without sending the notebook
    any JavaScript (a notebook loads that itself, once, in its own first cell)."""
    if hv.Store.current_backend != "bokeh" or "bokeh" not in hv.Store.renderers:
        hv.renderer("bokeh")
        hv.Store.set_current_backend("bokeh")

