"""The dashboard's front page: the games that are built, each with a one-line description and a link."""

from __future__ import annotations

from collections.abc import Sequence

import panel as pn

from apps import GameApp, discover_games

TITLE = "Tabletop Dojo"
INTRO = (
    "Three tabletop games as Python rules engines, played in the browser with the probabilities "
    "behind every decision on screen."
)
NO_GAMES = "No game is built yet. Each game appears here as soon as its app exists in `apps/`."
NOTEBOOKS = "The same engines are in the notebooks: run `dojo lab` (or `make lab`) to open JupyterLab on `notebooks/`."


EXPERIMENTS = ("### [Experiments](/experiments)\nLarge runs of the games (the Man-Kzin Wars rulings' win rates, Kung "
               "Fu 2100 bot tournaments, Kung-Fu Zoo odds maps), plotted with their intervals as they come in.")


def game_list_markdown(games: Sequence[GameApp]) -> str:
    """The list of games as Markdown, or a plain statement that there is none yet."""
    if not games:
        return NO_GAMES
    return "\n\n".join(f"### [{g.title}]({g.path})\n{g.description}" for g in games)


def create_app(games: Sequence[GameApp] | None = None) -> pn.viewable.Viewable:
    """A fresh landing page (new objects each call, so each browser tab has its own)."""
    games = discover_games() if games is None else list(games)
    return pn.Column(
        pn.pane.Markdown(f"# {TITLE}\n\n{INTRO}", name="intro"),
        pn.pane.Markdown(game_list_markdown(games), name="games"),
        pn.pane.Markdown(EXPERIMENTS, name="experiments"),
        pn.pane.Markdown(NOTEBOOKS, name="notebooks", styles={"color": "#555"}),
        name="landing",
        sizing_mode="stretch_width",
        styles={"max-width": "48rem", "margin": "0 auto"},
    )


if __name__.startswith("bokeh"):
    create_app().servable(title=TITLE)
