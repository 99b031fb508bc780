"""The Experiments page (``/experiments``): the large runs of the three games, set up, watched and downloaded.

Not a game: the server routes it beside the games and the landing page links it (see :mod:`apps.server`).
"""

from __future__ import annotations

from typing import Any

from apps.experiments.page import ExperimentsPage

TITLE = "Experiments"
DESCRIPTION = "Rulings grids, bot tournaments and odds maps on Dask, plotted with their intervals as they come in."
PATH = "/experiments"


def create_app(experiment: str | None = None) -> Any:
    """A fresh page (one per tab); ``experiment`` (a kind of :data:`engine.experiments.EXPERIMENTS`) is shown
    first, else the one the address asks for (``?run=zoo-odds-map``), else the Man-Kzin Wars rulings."""
    import panel as pn

    from engine.experiments import EXPERIMENTS

    if experiment is None and pn.state.location is not None:
        asked = pn.state.location.query_params.get("run")
        experiment = asked if asked in EXPERIMENTS else None
    page = ExperimentsPage(**({"experiment": experiment} if experiment else {}))
    return pn.Column(page, sizing_mode="stretch_width", styles={"max-width": "1400px", "margin": "0 auto"})
