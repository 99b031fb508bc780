"""The dashboard shell without a browser: game discovery, the landing page and the server's routes."""

from __future__ import annotations

from pathlib import Path

import panel as pn
import pytest

import apps
from apps import discover_games, landing, server

GAME = '''
TITLE = "{title}"
DESCRIPTION = "{description}"
ORDER = {order}

def create_app(served=False):
    return {{"fresh": [], "served": served}}
'''


def fake_apps(make_package):
    return make_package({
        "zebra.py": GAME.format(title="Zebra Cup", description="Flick the zebras.", order=2),
        "alpha.py": GAME.format(title="Alpha War", description="Hold the line.", order=1),
        "beta.py": GAME.format(title="Beta Raid", description="Raid the lair.", order=1),
        "landing.py": "def create_app():\n    return None\n",
        "server.py": "def create_app():\n    return None\n",
        "_private.py": "def create_app():\n    return None\n",
        "helpers.py": "TITLE = 'not a game'\n",
        "widgets/board.py": "def create_app():\n    return None\n",
    })


def test_discovery_finds_games_only_sorted_by_order_then_title(make_package):
    games = discover_games(fake_apps(make_package))
    assert [g.slug for g in games] == ["alpha", "beta", "zebra"]
    alpha = games[0]
    assert (alpha.title, alpha.description, alpha.order, alpha.path) == ("Alpha War", "Hold the line.", 1, "/alpha")
    assert alpha.create_app() is not alpha.create_app()  # a fresh session model each call


def test_a_game_module_missing_its_constants_is_an_error_not_a_silent_skip(make_package):
    package = make_package({"kzin.py": "TITLE = 'Man-Kzin Wars'\n\ndef create_app():\n    return None\n"})
    with pytest.raises(TypeError, match="not DESCRIPTION, ORDER"):
        discover_games(package)


def test_a_description_must_be_one_line(make_package):
    source = 'TITLE = "K"\nDESCRIPTION = """one\ntwo"""\nORDER = 1\n\ndef create_app():\n    return None\n'
    package = make_package({"kzin.py": source})
    with pytest.raises(ValueError, match="one line"):
        discover_games(package)


def test_the_real_apps_package_lists_every_game_module_and_package_and_nothing_else():
    folder = Path(apps.__file__).parent
    sources = {f.stem: f for f in folder.glob("*.py")} | {d.name: d / "__init__.py" for d in folder.iterdir()
                                                          if (d / "__init__.py").is_file()}
    expected = {name for name, f in sources.items() if name not in apps.NOT_GAMES
                and not name.startswith("_") and "def create_app(" in f.read_text()}
    assert "kzin" in expected and (folder / "kzin").is_dir()  # a game may be a package of components
    assert {g.slug for g in discover_games()} == expected


def test_a_game_package_is_found_like_a_module(make_package):
    source = 'TITLE = "Alpha"\nDESCRIPTION = "Hold the line."\nORDER = 1\n\ndef create_app():\n    return object()\n'
    package = make_package({"alpha/__init__.py": source, "alpha/board.py": ""})
    assert [g.slug for g in discover_games(package)] == ["alpha"]


def test_landing_lists_each_game_with_its_description_and_link(make_package):
    games = discover_games(fake_apps(make_package))
    text = landing.game_list_markdown(games)
    assert text.index("Alpha War") < text.index("Beta Raid") < text.index("Zebra Cup")
    for g in games:
        assert f"[{g.title}](/{g.slug})\n{g.description}" in text
    assert landing.NO_GAMES not in text


def test_landing_says_plainly_when_no_game_is_built():
    view = landing.create_app(games=[])
    assert view.select(pn.pane.Markdown)[1].object == landing.NO_GAMES


def test_each_landing_page_is_a_new_object_tree():
    first, second = landing.create_app(games=[]), landing.create_app(games=[])
    assert first is not second
    ids = {id(obj) for obj in first.select()}
    assert ids.isdisjoint(id(obj) for obj in second.select())


def test_routes_serve_the_landing_page_at_root_and_each_game_at_its_slug(make_package):
    games = discover_games(fake_apps(make_package))
    table = server.routes(games)
    assert list(table) == ["/", "experiments", "alpha", "beta", "zebra"]
    assert table["zebra"]() == {"fresh": [], "served": True}  # the server tells the page it is served
    assert games[2].create_app() == {"fresh": [], "served": False}  # a notebook's page is not
    page = table["/"]()
    assert "Zebra Cup" in page.select(pn.pane.Markdown)[1].object
    assert set(server.titles(games)) == set(table)


def test_every_app_module_is_small_and_uses_no_private_name_of_panel_or_bokeh():
    """Issue 11's rules for the whole of ``apps/``: no module over ~420 lines, no ``apps._background``, no import
    from a private Panel or Bokeh module, and no attribute that starts with ``_`` but ours: a private name read
    anywhere must be one that ``apps/`` itself defines (a method, or an attribute it sets), so never
    ``pn.state._curdoc``, ``doc._held_events`` or a model's ``_pending_writes``."""
    import ast

    # CPython's, not Panel's or Bokeh's: its only account of the small-object arenas (apps._memory's report)
    cpython_own = {"_debugmallocstats"}
    folder = Path(apps.__file__).parent
    trees = {str(p.relative_to(folder)): ast.parse(p.read_text()) for p in sorted(folder.rglob("*.py"))}
    ours: set[str] = set()
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                ours.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                ours.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                ours.add(node.id)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                ours.add(node.target.id)
    for name, tree in trees.items():
        assert len((folder / name).read_text().splitlines()) <= 420, name
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                parts = node.module.split(".")
                assert "_background" not in parts, name
                if parts[0] in ("panel", "bokeh"):
                    assert not any(p.startswith("_") for p in parts), (name, node.module)
                    assert not any(a.name.startswith("_") for a in node.names), (name, node.module)
            if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
                of_sys = isinstance(node.value, ast.Name) and node.value.id == "sys"
                assert node.attr in ours or (of_sys and node.attr in cpython_own), (name, node.lineno, node.attr)
