"""A reloaded tab loses nothing: every dashboard offers to resume the game the last page was playing."""

from __future__ import annotations

import json

import pytest
from browser_helpers import BOARD_READY, dashboard_of, serve_pages, wait_for
from playwright.sync_api import expect

from apps import kf2100, kzin, zoo

pytestmark = pytest.mark.browser

BOARDS = {kzin: "track", kf2100: "board", zoo: "arena"}
WAIT = 20_000


@pytest.mark.parametrize("module", list(BOARDS), ids=lambda m: m.__name__.split(".")[-1])
def test_reload_then_resume_brings_back_the_same_game(page, serve_app, console_errors, module):
    url, pages = serve_pages(serve_app, module.create_app)
    page.goto(url)
    page.wait_for_function(BOARD_READY, arg=BOARDS[module], timeout=WAIT)
    wait_for(lambda: pages, page)
    first = dashboard_of(pages[0]).session
    expect(page.get_by_role("button", name="Resume the last game")).to_have_count(0)
    seed = page.get_by_label("Seed")
    seed.fill("7")
    seed.press("Enter")
    page.get_by_role("button", name="New game").click()
    wait_for(lambda: first.seed == 7, page, timeout=WAIT / 1000)
    page.wait_for_timeout(500)  # let a bot's first moves land
    played = json.loads(first.save())["game"]

    page.reload()
    page.wait_for_function(BOARD_READY, arg=BOARDS[module], timeout=WAIT)
    wait_for(lambda: len(pages) == 2, page)
    second = dashboard_of(pages[1]).session
    assert second.seed != 7
    page.get_by_role("button", name="Resume the last game").click()
    wait_for(lambda: second.seed == 7, page, timeout=WAIT / 1000)
    assert json.loads(second.save())["game"] == played
    expect(page.get_by_role("button", name="Resume the last game")).to_have_count(0)
    assert console_errors == []
