"""Man-Kzin Wars in the browser: the track, the cards in play, the decisions and the odds behind them.

``create_app()`` builds a new :class:`~engine.kzin.session.KzinSession` and a :class:`KzinPage` on it for
every browser tab (or notebook cell). The page is a set of Panel components bound to the session's
parameters (:mod:`apps.kzin.controls`, :mod:`apps.kzin.panels`, :mod:`apps.kzin.charts`), and what they show
is computed by the pure functions of :mod:`apps.kzin.views`.
"""

from __future__ import annotations

import panel as pn

from apps.kzin.page import TITLE, KzinPage

DESCRIPTION = "Hold off the Kzinti from Earth to their Home Worlds, with the exact odds of every battle on screen."
ORDER = 1


def create_app(autosave: bool | None = None) -> KzinPage:
    """A new session and page; ``autosave`` defaults to whether a server is building the page (a notebook
    cell keeps nothing on disk)."""
    if autosave is None:
        doc = pn.state.curdoc
        autosave = doc is not None and doc.session_context is not None
    return KzinPage(autosave=autosave)


__all__ = ["DESCRIPTION", "ORDER", "TITLE", "KzinPage", "create_app"]
