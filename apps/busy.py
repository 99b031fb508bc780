"""A line that says what a page is working out in the background, after a spinner drawn by CSS.

One HTML pane per piece of work, made once and bound to a text parameter: the text comes and goes, the pane stays.
A pane or spinner hidden and shown, or a new pane yielded for every state of the work, makes a browser lay the
whole page out again and every chart on it redrawn (BokehJS does it for each part hidden, shown or replaced), and
the server build and send new models.
"""

from __future__ import annotations

import html

BUSY_CSS = """
:host .busy { display: flex; align-items: center; gap: 10px; margin: 8px 0; color: #374151; }
:host .busy::before { content: ""; flex: none; width: 14px; height: 14px; border-radius: 50%;
  border: 3px solid #d1d5db; border-top-color: #2563eb; animation: dojo-spin 0.8s linear infinite; }
@keyframes dojo-spin { to { transform: rotate(360deg); } }
"""
"""The stylesheet of a pane showing :func:`busy_html`."""

FAILED = {"color": "#b91c1c"}
"""The style of a pane that says why background work failed."""


def busy_html(text: str) -> str:
    """``text`` (escaped) after a spinner; '' for no work."""
    return f"<div class='busy' role='status'>{html.escape(text)}</div>" if text else ""


__all__ = ["BUSY_CSS", "FAILED", "busy_html"]
