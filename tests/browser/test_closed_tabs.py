"""Issue 18, point 3: a closed tab leaves nothing behind.

Each game's page is opened and closed many times in headless Chromium, and fetched with plain GETs (which
build a session no browser ever connects to). Once the server has discarded the unused sessions, the live
session count is back at zero, every page the server built, with its dashboard, can be collected, and no kind
of object that a page is made of (documents, server sessions, game sessions, Panel components, Bokeh models,
HoloViews plots and streams, param watchers) is more numerous than after a warm-up round of the same page:
a leak of any of them fails here by count, whatever the machine's memory does.
"""

from __future__ import annotations

import time
import urllib.request
import weakref
from typing import Any

import pytest
from browser_helpers import BOARD_READY

from apps import kf2100, kzin, zoo
from apps._memory import live_objects, open_sessions

pytestmark = pytest.mark.browser

BOARDS = {"kf2100": (kf2100, "board"), "zoo": (zoo, "arena"), "kzin": (kzin, "track")}
ONE_PAGE_KEPT = pytest.mark.xfail(strict=False, reason=(
    "issue 18: now and then (about one run in two) one Kung Fu 2100 or Kung-Fu Zoo dashboard and its page outlive "
    "their closed tab, next to a destroyed Bokeh document that stays alive; one at a time, it does not grow. The "
    "rewrites of apps/kf2100.py and apps/zoo.py (kf-idiom, zoo-idiom) are to free it: drop this mark then"))
TABS = 6
GETS = 6
WARM_TABS = 2
"""Tabs of the warm-up round: what every later page shares (imports, compiled code, caches) is built then."""
FAST_CLEANUP = {"check_unused_sessions_milliseconds": 200, "unused_session_lifetime_milliseconds": 500}
KEPT_KINDS = ("documents", "server sessions", "game sessions", "panel viewables", "bokeh models",
              "holoviews plots", "holoviews streams", "param watchers")
"""What a closed tab's page is made of: none may be more numerous after many tabs than after the warm-up."""


def open_and_close(browser: Any, url: str, board: str, tabs: int, gets: int) -> None:
    for _ in range(tabs):
        context = browser.new_context()
        tab = context.new_page()
        tab.goto(url)
        tab.wait_for_function(BOARD_READY, arg=board, timeout=30_000)
        tab.wait_for_timeout(300)  # a bot step or a worker's first result on its way
        context.close()
    for _ in range(gets):
        urllib.request.urlopen(url, timeout=30).read()


def wait_for_sessions_to_end(before: int, timeout: float = 30) -> None:
    deadline = time.time() + timeout
    while open_sessions() > before and time.time() < deadline:
        time.sleep(0.2)
    assert open_sessions() == before, f"{open_sessions() - before} session(s) still open"


def settled_counts(kept: list[weakref.ref], timeout: float = 30) -> tuple[dict[str, int], list[Any]]:
    """The live object counts once every page in ``kept`` is collected (or the time is up), and those alive."""
    deadline = time.time() + timeout
    while True:
        counts = live_objects()  # collects first
        alive = [r() for r in kept if r() is not None]
        if not alive or time.time() > deadline:
            return counts, alive
        time.sleep(0.2)  # a worker thread may still be finishing for a closed tab


@pytest.mark.parametrize("game", [pytest.param(g, marks=ONE_PAGE_KEPT) if g != "kzin" else g
                                  for g in BOARDS])
def test_closed_tabs_and_plain_gets_leave_nothing_behind(browser, serve_app, game: str) -> None:
    module, board = BOARDS[game]
    kept: list[weakref.ref] = []

    def factory() -> Any:
        page = module.create_app()
        kept.append(weakref.ref(page))
        if getattr(page, "dashboard", None) is not None:
            kept.append(weakref.ref(page.dashboard))
        return page

    before = open_sessions()
    url = serve_app(factory, session_history=-1, **FAST_CLEANUP)
    open_and_close(browser, url, board, WARM_TABS, 1)
    wait_for_sessions_to_end(before)
    warm, alive = settled_counts(kept)
    assert not alive, f"{len(alive)} warm-up page object(s) kept: {sorted({type(a).__name__ for a in alive})}"

    open_and_close(browser, url, board, TABS, GETS)
    assert len(kept) >= TABS + GETS
    wait_for_sessions_to_end(before)
    after, alive = settled_counts(kept)
    kinds = sorted({type(a).__name__ for a in alive})
    assert not alive, f"{len(alive)} page object(s) kept after their tabs closed: {kinds}"
    grown = {kind: (warm[kind], after[kind]) for kind in KEPT_KINDS if after[kind] > warm[kind]}
    assert not grown, f"after {TABS} tabs and {GETS} GETs, more objects alive than after the warm-up: {grown}"
