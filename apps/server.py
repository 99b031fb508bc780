"""``dojo serve``: the landing page at ``/`` and every game app at ``/<slug>``, one session per tab."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

import panel as pn

from apps import GameApp, discover_games, landing


def routes(games: Sequence[GameApp] | None = None) -> dict[str, Callable[[], Any]]:
    """``{"/": landing page, "<slug>": create_app, ...}``: factories ``pn.serve`` calls once per session."""
    games = tuple(discover_games() if games is None else games)

    def landing_page() -> Any:  # a plain function: pn.serve calls functions per session, not partials
        return landing.create_app(games)

    table: dict[str, Callable[[], Any]] = {"/": landing_page}
    for game in games:
        table[game.slug] = game.create_app
    return table


def titles(games: Sequence[GameApp]) -> dict[str, str]:
    """The browser tab title of each route (same keys as :func:`routes`)."""
    return {"/": landing.TITLE, **{g.slug: f"{g.title} · {landing.TITLE}" for g in games}}


def can_show() -> bool:
    """Whether opening a browser makes sense here (a desktop, not a headless server)."""
    return sys.platform in ("darwin", "win32") or bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def serve(port: int = 5006, address: str = "127.0.0.1", show: bool | None = None) -> None:
    """Serve the dashboard until interrupted, printing its URL first."""
    games = discover_games()
    host = "localhost" if address in ("127.0.0.1", "localhost", "::1") else address
    origins = [f"localhost:{port}", f"127.0.0.1:{port}", f"{host}:{port}"]
    print(f"Tabletop Dojo dashboard: http://{host}:{port}/  ({len(games)} game(s); Ctrl+C stops it)", flush=True)
    pn.serve(
        routes(games),
        port=port,
        address=address,
        show=can_show() if show is None else show,
        title=titles(games),
        websocket_origin=sorted(set(origins)),
        liveness=True,
        verbose=False,
    )
