"""The dashboard in headless Chromium: the landing page, its links, and no browser console errors."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from apps import discover_games, landing, server

pytestmark = pytest.mark.browser

BOKEH_RENDERED = "() => window.Bokeh && Bokeh.index && [...Bokeh.index.all_views()].length > 0"


def test_landing_page_of_the_real_dashboard(page, serve_app, console_errors):
    games = discover_games()
    url = serve_app(server.routes(games), title=server.titles(games))
    page.goto(url)
    page.wait_for_function(BOKEH_RENDERED)
    expect(page).to_have_title(landing.TITLE)
    expect(page.get_by_role("heading", name=landing.TITLE)).to_be_visible()
    if not games:
        expect(page.get_by_text("No game is built yet")).to_be_visible()
    for game in games:
        link = page.get_by_role("link", name=game.title)
        expect(link).to_have_attribute("href", game.path)
        expect(page.get_by_text(game.description)).to_be_visible()
    for game in games:  # every listed game opens a page that renders
        response = page.goto(url.rstrip("/") + game.path)
        assert response is not None and response.ok, game.slug
        page.wait_for_function(BOKEH_RENDERED)
    page.goto(url)
    expect(page.get_by_role("link", name="Experiments")).to_have_attribute("href", "/experiments")
    page.get_by_role("link", name="Experiments").click()
    expect(page.get_by_role("button", name="Start")).to_be_visible(timeout=30_000)
    expect(page).to_have_title("Experiments · Tabletop Dojo")
    assert console_errors == []


FAKE_GAME = '''
import panel as pn

TITLE = "Fake Dice"
DESCRIPTION = "Roll one die against another."
ORDER = 1


def create_app(served=False):
    return pn.pane.Markdown("Fake Dice table is ready" if served else "not told it is served")
'''


def test_a_listed_game_is_reached_by_its_link(page, serve_app, console_errors, make_package):
    games = discover_games(make_package({"dice.py": FAKE_GAME}))
    url = serve_app(server.routes(games), title=server.titles(games))
    page.goto(url)
    expect(page.get_by_text("Roll one die against another.")).to_be_visible()
    page.get_by_role("link", name="Fake Dice").click()
    expect(page.get_by_text("Fake Dice table is ready")).to_be_visible()
    assert page.url == url + "dice"
    expect(page).to_have_title("Fake Dice · Tabletop Dojo")
    assert console_errors == []
