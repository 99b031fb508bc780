"""A reloaded tab loses nothing: every dashboard offers to resume the game the last page was playing."""

from __future__ import annotations

import json

import pytest
from browser_helpers import BOARD_READY, dashboard_of, serve_pages, wait_for
from playwright.sync_api import expect

from apps import kf2100, kzin, zoo

pytestmark = pytest.mark.browser

BOARDS = {kzin: "track", kf2100: "board", zoo: "arena"}
WAIT = 30_000  # ms: a loaded machine may take that long to update the page


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
    version = first.version
    page.get_by_role("button", name="New game").click()
    # the game as it stands once the new game is made (its seed is set a moment before: Kung Fu 2100's version
    # moves on after it) and no bot is to move, so that nothing changes it between this read and the reload
    wait_for(lambda: first.version > version and first.seed == 7 and not first.bot_to_move(), page,
             timeout=WAIT / 1000)
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
