"""The dashboard's Panel apps, one module or package per game, plus the landing page and the server.

A game app is a module ``apps/<slug>.py`` or a package ``apps/<slug>/`` (a page built of components)
defining ``TITLE`` (str), ``DESCRIPTION`` (one line),
``ORDER`` (int, the landing page's sort key) and ``create_app()``, which builds a fresh session
model and view on every call (one session per browser tab, so nothing mutable at module level).
The landing page and ``dojo serve`` find the games with :func:`discover_games`, so a game that is
not built yet is simply absent.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

NOT_GAMES = frozenset({"landing", "server", "experiments"})


@dataclass(frozen=True)
class GameApp:
    """What the landing page and the server need to know about one game app."""

    slug: str
    title: str
    description: str
    order: int
    create_app: Callable[[], Any]
    create_table_app: Callable[[], Any] | None = None
    """The page of one of the game's tables, when the game is played at tables (``dojo serve`` routes to it)."""

    @property
    def path(self) -> str:
        return f"/{self.slug}"


def _game_app(slug: str, module: ModuleType) -> GameApp:
    missing = [name for name in ("TITLE", "DESCRIPTION", "ORDER") if not hasattr(module, name)]
    if missing:
        raise TypeError(f"{module.__name__} defines create_app() but not {', '.join(missing)}")
    description = str(module.DESCRIPTION).strip()
    if "\n" in description:
        raise ValueError(f"{module.__name__}.DESCRIPTION must be one line")
    table_app = getattr(module, "create_table_app", None)
    return GameApp(slug, str(module.TITLE), description, int(module.ORDER), module.create_app,
                   table_app if callable(table_app) else None)


def discover_games(package: ModuleType | None = None) -> list[GameApp]:
    """Every game app in ``package`` (``apps`` by default), sorted by ``ORDER`` then title.

    Skips the landing page, the server, private modules (``_x``) and modules or packages without ``create_app``.
    A game module that fails to import raises: a broken game should not vanish from the dashboard silently.
    """
    if package is None:
        import apps as package
    found = []
    for info in pkgutil.iter_modules(package.__path__):
        if info.name in NOT_GAMES or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        if callable(getattr(module, "create_app", None)):
            found.append(_game_app(info.name, module))
    return sorted(found, key=lambda g: (g.order, g.title))
