"""Clicks on a Bokeh figure, taken in the browser and handed to Python through a small data source.

The browser writes each click (a tap or a double tap) into a ``gesture`` ``ColumnDataSource`` (:data:`GESTURE_JS`)
that Python watches with ``on_change("data", ...)``: not a Python callback of the Bokeh event, which in a notebook
loses a widget change the browser sends with it. The Kung-Fu Zoo's arena writes its finished drags there too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from bokeh.models import ColumnDataSource, CustomJS
from bokeh.plotting import figure

GESTURE_COLUMNS = ("kind", "x0", "y0", "x1", "y1", "seq")

GESTURE_JS = """{
  const d = gesture.data, seqs = d instanceof Map ? d.get('seq') : d['seq'];
  const seq = seqs && seqs.length ? Number(seqs[0]) : 0, st = window.dojoZooDrag;
  const g = cb_obj.event_name !== 'panend' ? ['tap', cb_obj.x, cb_obj.y, cb_obj.x, cb_obj.y]
    : (st ? ['drag', st[0], st[1], cb_obj.x, cb_obj.y] : null);
  if (g) { gesture.data = {kind: [g[0]], x0: [g[1]], y0: [g[2]], x1: [g[3]], y1: [g[4]], seq: [seq + 1]}; }
}
"""
"""JS: a click (tap or double tap) or a finished drag, written into the ``gesture`` source that Python watches.

In a notebook a Python callback of a Bokeh event (``fig.on_event``) on a figure in a ``pn.pane.Bokeh`` runs while
Panel holds the rest of the browser's message, and Panel's push after it drops what was held: a face chosen just
before a drag arrived with the drag's press in one message and never reached the session (the log said
``face=head``). A change of a source's data is held and dispatched in order with the message's other changes.
The ``seq`` counts the gestures, so two clicks on one spot are two changes."""


def gesture_source() -> ColumnDataSource:
    """An empty source for :data:`GESTURE_JS` to write into."""
    return ColumnDataSource({k: [] for k in GESTURE_COLUMNS})


def take_clicks(fig: figure, gesture: ColumnDataSource,
                on_gesture: Callable[[str, float, float, float, float], Any]) -> None:
    """Write every click on ``fig`` into ``gesture`` in the browser, and call ``on_gesture(kind, x0, y0, x1, y1)``
    in Python for each gesture written there (a click: ``kind`` "tap", its point twice)."""
    tapped = CustomJS(args={"gesture": gesture}, code=GESTURE_JS)
    fig.js_on_event("tap", tapped)
    fig.js_on_event("doubletap", tapped)  # two quick clicks are two clicks

    def changed(_attr: str, _old: Any, new: Mapping[str, Any]) -> None:
        kind, x0, y0, x1, y1 = (list(new.get(k, []))[:1] for k in GESTURE_COLUMNS[:5])
        if kind and x0 and y0 and x1 and y1:
            on_gesture(str(kind[0]), float(x0[0]), float(y0[0]), float(x1[0]), float(y1[0]))

    gesture.on_change("data", changed)
