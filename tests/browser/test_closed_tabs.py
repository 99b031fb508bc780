"""Issue 18, point 3: a closed tab leaves nothing behind.

Each game's page is served as ``dojo serve`` serves it (:func:`apps.server.routes`: a game at tables gets its
table page). One tab stays open (at a table, it made the table); then more tabs of the same address are opened and
closed in headless Chromium, and the address is fetched with plain GETs (which build a session no browser ever
connects to). Counted from a baseline taken with the first tab open: once the server has discarded the closed
sessions, every page built for them is collected, the live Bokeh documents and server sessions are back at the
baseline, and so are the watchers on the table's shared game session. Every wait has a deadline (the machine is
shared), none is a fixed sleep.
"""

from __future__ import annotations

import gc
import time
import urllib.request
import weakref
from typing import Any

import bokeh.document
import bokeh.server.session
import panel as pn
import pytest
from browser_helpers import BOARD_READY, wait_for

from apps._tables import watchers_of
from apps.server import routes

pytestmark = pytest.mark.browser

BOARDS = {"kf2100": "board", "zoo": "arena", "kzin": "track"}
TABS = 6
GETS = 6
FAST_CLEANUP = {"check_unused_sessions_milliseconds": 200, "unused_session_lifetime_milliseconds": 500}
"""Closed tabs' sessions go in a second (Bokeh's default: 15 s, checked every 17 s). Bokeh counts a session's
unused time from its creation, and the session the page's HTML request built goes unused until the browser has
loaded the page's scripts and opened its websocket; discarded before that, the websocket makes a new session of
the same id and the page is built a second time (measured at load 9: 2 of 4 tabs built twice, their websockets
2.7 and 3.7 s after the request; with Bokeh's 15 s, none of 4)."""
DEADLINE = 60.0  # s: a loaded machine discards sessions and finishes worker threads late


def open_sessions() -> int:
    """Bokeh server sessions not yet discarded (``ServerSession.destroyed``). Panel's session record is not used:
    under load it said 0 open while a tab was connected."""
    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, bokeh.server.session.ServerSession) and not o.destroyed)


def live(kind: type) -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, kind))


def page_counts(first: Any) -> dict[str, int]:
    """What a closed tab must give back: documents, server sessions, and the watchers on the first tab's table
    (its game session outlives every page of it)."""
    counts = {"documents": live(bokeh.document.Document), "server sessions": live(bokeh.server.session.ServerSession)}
    table = getattr(first, "table", None)
    if table is not None:
        counts["table watchers"] = len(watchers_of(table))
    return counts


HELD_BY_PANEL_WRITES = (
    "every closed page was collected and every closed session discarded, but a discarded session's document (and "
    "its ServerSession) is still held: traced (Zoo, 2026-12-01) to Panel 1.9.4's write futures, "
    "panel/io/document.py:368-371 (write_events adds a write to a document's entry in the module-level "
    "WeakKeyDictionary _WRITE_FUTURES after _destroy_document, line 317, has emptied it; the write fails on the "
    "closed socket, and the failure's traceback holds the document, its key, so the entry never goes). An update "
    "landing on a page as its tab closes; Panel documents no remedy")


@pytest.mark.parametrize("game", list(BOARDS))
def test_closed_tabs_and_plain_gets_leave_nothing_behind(browser, serve_app, game: str) -> None:
    board = BOARDS[game]
    made = routes()[game]
    pages: list[Any] = []
    documents: list[weakref.ref] = []  # each page's document, not kept alive by the test

    def factory() -> Any:
        page = made()
        pages.append(page)
        documents.append(weakref.ref(pn.state.curdoc))
        return page

    stale = open_sessions()  # an earlier test's stopped server never discards its sessions
    url = serve_app({game: factory}, session_history=-1, **FAST_CLEANUP) + game
    keeper = browser.new_context()
    tab = keeper.new_page()
    tab.goto(url)
    tab.wait_for_function(BOARD_READY, arg=board, timeout=60_000)
    if getattr(pages[0], "table", None) is not None:  # once loaded, the page puts its table in the address
        tab.wait_for_url("**table=*", timeout=30_000)
    link = tab.url  # the table's link for a game at tables, else the game's address
    # A page whose websocket came later than FAST_CLEANUP's lifetime was built twice (the first session discarded
    # unused, a second of the same id built for the websocket): the kept tab's page is the one whose document
    # still has its session.
    deadline = time.time() + DEADLINE
    while open_sessions() > stale + 1 and time.time() < deadline:
        tab.wait_for_timeout(500)
    assert open_sessions() == stale + 1, f"{open_sessions() - stale} sessions open for one tab"
    live_pages = [p for p, d in zip(pages, documents, strict=True) if (doc := d()) is not None and doc.session_context]
    assert len(live_pages) == 1, f"{len(live_pages)} pages with a session for one tab"
    first = live_pages[0]
    del live_pages
    sessions_before = open_sessions()
    baseline = page_counts(first)

    for _ in range(TABS):
        context = browser.new_context()
        other = context.new_page()
        count = len(pages)
        other.goto(link)
        other.wait_for_function(BOARD_READY, arg=board, timeout=60_000)
        wait_for(lambda c=count: len(pages) > c, other, timeout=30)
        context.close()
    for _ in range(GETS):
        urllib.request.urlopen(link, timeout=60).read()
    closed = [weakref.ref(p) for p in pages if p is not first]
    assert len(closed) >= TABS + GETS
    pages.clear()

    deadline = time.time() + DEADLINE
    while open_sessions() > sessions_before and time.time() < deadline:
        tab.wait_for_timeout(500)
    assert open_sessions() == sessions_before, f"{open_sessions() - sessions_before} closed session(s) still open"
    while True:
        alive = [r() for r in closed if r() is not None]
        counts = page_counts(first)
        back = not alive and all(counts[k] <= baseline[k] for k in baseline)
        if back or time.time() > deadline:
            break
        del alive
        tab.wait_for_timeout(200)  # a worker thread may still be finishing for a closed tab
    kinds = sorted({type(a).__name__ for a in alive})
    assert not alive, f"{len(alive)} page(s) kept after their tabs closed: {kinds}"
    watchers_back = counts.get("table watchers", 0) <= baseline.get("table watchers", 0)
    if watchers_back and counts["documents"] > baseline["documents"] and open_sessions() == sessions_before:
        keeper.close()
        pytest.xfail(HELD_BY_PANEL_WRITES + f" (baseline {baseline}, after the tabs closed {counts})")
    assert all(counts[k] <= baseline[k] for k in baseline), f"baseline {baseline}, after the tabs closed {counts}"
    keeper.close()
