"""Issue 18, point 3: a closed tab leaves nothing behind.

Each game's page is opened and closed many times in headless Chromium, and fetched with plain GETs (which
build a session no browser ever connects to). Once the server has discarded the unused sessions, the live
session count is back at zero and every page the server built, with its dashboard, can be collected.
"""

from __future__ import annotations

import gc
import time
import urllib.request
import weakref
from typing import Any

import panel as pn
import pytest
from browser_helpers import BOARD_READY

from apps import kf2100, kzin, zoo

pytestmark = pytest.mark.browser

BOARDS = {"kf2100": (kf2100, "board"), "zoo": (zoo, "arena"), "kzin": (kzin, "track")}
TABS = 6
GETS = 6
FAST_CLEANUP = {"check_unused_sessions_milliseconds": 200, "unused_session_lifetime_milliseconds": 500}


def open_sessions() -> int:
    """Sessions the server has begun and not yet ended (Panel's public session record)."""
    return sum(1 for s in pn.state.session_info["sessions"].values() if s["ended"] is None)


@pytest.mark.parametrize("game", list(BOARDS))
def test_closed_tabs_and_plain_gets_leave_nothing_behind(browser, serve_app, game: str) -> None:
    module, board = BOARDS[game]
    kept: list[weakref.ref] = []

    def factory() -> Any:
        page = module.create_app(served=True)
        kept.append(weakref.ref(page))
        if getattr(page, "dashboard", None) is not None:
            kept.append(weakref.ref(page.dashboard))
        return page

    before = open_sessions()
    url = serve_app(factory, session_history=-1, **FAST_CLEANUP)
    for _ in range(TABS):
        context = browser.new_context()
        tab = context.new_page()
        tab.goto(url)
        tab.wait_for_function(BOARD_READY, arg=board, timeout=30_000)
        tab.wait_for_timeout(300)  # a bot step or a worker's first result on its way
        context.close()
    for _ in range(GETS):
        urllib.request.urlopen(url, timeout=30).read()
    assert len(kept) >= TABS + GETS

    deadline = time.time() + 30
    while open_sessions() > before and time.time() < deadline:
        time.sleep(0.2)
    assert open_sessions() == before, f"{open_sessions() - before} session(s) still open"
    alive: list[Any] = []
    # A worker thread still running for a closed tab holds its page until its call returns: on a fresh clone the
    # first call compiles the numba kernels (a minute or more on a loaded machine). The wait ends when they go.
    deadline = time.time() + 180
    while time.time() < deadline:
        gc.collect()
        alive = [r() for r in kept if r() is not None]
        if not alive:
            break
        time.sleep(0.2)  # a worker thread may still be finishing for a closed tab
    kinds = sorted({type(a).__name__ for a in alive})
    assert not alive, f"{len(alive)} page object(s) kept after their tabs closed: {kinds}"
