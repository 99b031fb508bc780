"""The dashboard's front page: the games that are built, each with a one-line description and a link."""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import quote

import panel as pn

from apps import GameApp, discover_games
from apps._tables import TOKEN_COOKIE, ago, registry
from engine.core.tables import TableInfo

TITLE = "Tabletop Dojo"
INTRO = (
    "Three tabletop games as Python rules engines, played in the browser with the probabilities "
    "behind every decision on screen."
)
NO_GAMES = "No game is built yet. Each game appears here as soon as its app exists in `apps/`."
MAX_LISTED = 30
"""The most tables listed per game (the last moved first)."""
NOTEBOOKS = "The same engines are in the notebooks: run `dojo lab` (or `make lab`) to open JupyterLab on `notebooks/`."


EXPERIMENTS = ("### [Experiments](/experiments)\nLarge runs of the games (the Man-Kzin Wars rulings' win rates, Kung "
               "Fu 2100 bot tournaments, Kung-Fu Zoo odds maps), plotted with their intervals as they come in.")


def game_list_markdown(games: Sequence[GameApp]) -> str:
    """The list of games as Markdown, or a plain statement that there is none yet."""
    if not games:
        return NO_GAMES
    return "\n\n".join(f"### [{g.title}]({g.path})\n{g.description}" for g in games)


def tables_markdown(games: Sequence[GameApp], infos: Sequence[TableInfo], token: str | None) -> str:
    """The open tables of each game played at tables (seats taken and free, the game's state, its last move),
    with a link to a new table and, for each, "join" (a free seat) or "watch"; first the tables this browser
    holds a seat at, to resume."""
    at_tables = [g for g in games if g.create_table_app is not None]
    if not at_tables:
        return ""
    titles = {g.slug: g.title for g in games}
    mine = [i for i in infos if i.held_by(token)]
    lines = ["## Tables"]
    if mine:
        lines.append("**Resume your tables:** " + " · ".join(
            f"[{titles.get(i.game, i.game)}, {i.summary} ({ago(i.last_move)})](/{i.game}?table={i.id})" for i in mine))
    for g in at_tables:
        rows = [i for i in infos if i.game == g.slug][:MAX_LISTED]
        lines.append(f"### {g.title} tables\n[New table]({g.path})")
        if not rows:
            lines.append("No table yet.")
            continue
        table = ["| table | seats | game | last move | |", "|---|---|---|---|---|"]  # one block: a blank line ends it
        for i in rows:
            seats = ", ".join(f"{name}: {i.state_of(name)}" for name in i.seats)
            free = [name for name in i.seats if i.state_of(name) == "free"]
            links = [f"[join as {name}]({g.path}?table={i.id}&seat={quote(name)})" for name in free]
            links.append(f"[watch]({g.path}?table={i.id})")
            cells = [f"`{i.id}`", _cell(seats), _cell(i.summary), ago(i.last_move), " · ".join(links)]
            table.append("| " + " | ".join(cells) + " |")
        lines.append("\n".join(table))
    return "\n\n".join(lines)


def _cell(text: str) -> str:
    """Text for a cell of a Markdown table: a ``|`` in it would end the cell."""
    return text.replace("|", "\\|")


def create_app(games: Sequence[GameApp] | None = None) -> pn.viewable.Viewable:
    """A fresh landing page (new objects each call, so each browser tab has its own)."""
    games = discover_games() if games is None else list(games)
    infos = registry().listing() if any(g.create_table_app for g in games) else []
    token = pn.state.cookies.get(TOKEN_COOKIE)
    return pn.Column(
        pn.pane.Markdown(f"# {TITLE}\n\n{INTRO}", name="intro"),
        pn.pane.Markdown(game_list_markdown(games), name="games"),
        pn.pane.Markdown(tables_markdown(games, infos, token), name="tables", renderer_options={"html": False}),
        pn.pane.Markdown(EXPERIMENTS, name="experiments"),
        pn.pane.Markdown(NOTEBOOKS, name="notebooks", styles={"color": "#555"}),
        name="landing",
        sizing_mode="stretch_width",
        styles={"max-width": "48rem", "margin": "0 auto"},
    )


if __name__.startswith("bokeh"):
    create_app().servable(title=TITLE)
