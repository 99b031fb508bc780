"""Man-Kzin Wars tables in headless Chromium, each browser a separate context (its own cookies).

A player makes a table by opening ``/kzin``; a watcher opens its link and sees every move live, and their
clicks change nothing; a reloaded tab gets its seat back; a third browser cannot take or act for the taken
seat; and the player's websocket frames never carry the generator (the deck order and every future die) or
the secret seed it came from.
"""

from __future__ import annotations

import gc
import re
import time
import urllib.request
import weakref
from dataclasses import replace

import panel as pn
import pytest
from browser_helpers import BOARD_READY, HAS_TEXT, MARKER_ON, wait_for
from playwright.sync_api import expect

from apps._files import data_dir
from apps._memory import server_sessions
from apps._tables import TOKEN_COOKIE, TablePage, table_page, use_registry, watchers_of
from apps.kzin import KzinPage
from engine.core.seal import Sealer
from engine.core.tables import TableRegistry
from engine.kzin.table import KZIN_TABLE

pytestmark = pytest.mark.browser

WAIT = 20.0  # s: the machine is shared
SERVED: list[str] = []
"""The server sessions of the ``tables`` fixture's pages (ids as :func:`server_sessions` gives them): the heap also
holds sessions of the servers of earlier tests, stopped with their callbacks as they were, never discarded."""


def status_text(session) -> str:
    """The page's status line as text (what every view of the table shows after a move)."""
    s = session.state
    if s.phase == "over":
        return f"Game over: the {s.winner} won on turn {s.turn}."
    return f"Turn {s.turn} · Expansion Marker on space {s.kem} "


@pytest.fixture
def tables(serve_app):
    """Serve ``/kzin`` as ``dojo serve`` does, with light background work; yields (base URL, pages)."""
    folder = data_dir()
    use_registry(TableRegistry(folder / "tables", {"kzin": replace(KZIN_TABLE, session_options={
        "advisor_rollouts": 200})}, Sealer.in_folder(folder)))
    pages: list[TablePage] = []
    SERVED.clear()

    def kzin() -> object:
        SERVED.append(pn.state.curdoc.session_context.id[:8])
        page = table_page("kzin", lambda t, _token, may_act: KzinPage(session=t.session, may_act=may_act,
                                                                      secret_seed=True, running_rollouts=100))
        pages.append(page)
        return page

    url = serve_app({"kzin": kzin}, session_history=-1, check_unused_sessions_milliseconds=200,
                    unused_session_lifetime_milliseconds=500)
    yield url, pages


def ours() -> list[dict]:
    """This test's server sessions not yet discarded (see :data:`SERVED`)."""
    return [s for s in server_sessions() if s["id"] in SERVED and not s["destroyed"]]


def open_page(page, url, pages):
    count = len(pages)
    page.goto(url)
    page.wait_for_function(BOARD_READY, arg="track", timeout=WAIT * 1000)
    wait_for(lambda: len(pages) > count, page, timeout=WAIT)
    return pages[-1]


def decline(page, table):
    """Click the decision that needs no card (Fall back or Pass) and wait for the game to move on."""
    s = table.session
    version = s.version
    name = "Fall back" if s.decision() == "invasion" else "Pass"
    page.get_by_role("button", name=name).click()
    wait_for(lambda: s.version > version, page, timeout=WAIT, seen=lambda: f"{name} clicked at version {version}, "
             f"the game at {s.version} ({s.decision()}), its log ending {s.log[-1:]}")


def shows(page, text: str) -> None:
    page.wait_for_function(HAS_TEXT, arg=text, timeout=WAIT * 1000)


def test_a_watcher_sees_the_game_live_and_their_clicks_change_nothing(tables, browser, server_errors):
    url, pages = tables
    player_ctx, watcher_ctx = browser.new_context(), browser.new_context()
    player, watcher = player_ctx.new_page(), watcher_ctx.new_page()
    mine = open_page(player, url + "kzin", pages)
    expect(player).to_have_url(re.compile(r"/kzin\?table=[A-Za-z0-9_-]+$"), timeout=WAIT * 1000)
    table = mine.table
    assert table.id in player.url and table.seats_of(_token(player_ctx)) == ["Humans"]
    theirs = open_page(watcher, player.url, pages)
    assert theirs.table is table and table.watching == 1
    shows(watcher, "You are watching")
    spaces = {table.session.state.kem}
    # Each move of the player appears on the watcher's page without a reload: status and track, till the marker
    # has moved. The table's deal is random: twelve declines left it where it was in one run under load, so as many
    # moves as the game takes (a declined game ends with the marker on Earth or at the Home Worlds).
    for moves in range(60):
        if table.session.decision() is None or (moves >= 3 and len(spaces) > 1):
            break
        decline(player, table)
        shows(watcher, status_text(table.session))
        # The chart too: a HoloViews redraw scheduled from the player's document onto the watcher's rescheduled
        # itself for ever, and the watcher's track never moved.
        watcher.wait_for_function(MARKER_ON, arg=["track", table.session.state.kem], timeout=WAIT * 1000)
        spaces.add(table.session.state.kem)
    assert len(spaces) > 1, "the moves never moved the marker: the track check saw no change"
    # Once the pages are idle (their background work done: each change it makes is a callback on its page's next
    # tick, which blocks the session's expiry until its messages are written), no session has callbacks queued
    # for good (those redraws blocked the watcher's session from ever being discarded).
    games = [mine.game, theirs.game]
    wait_for(lambda: not table.session.running_odds_todo() and all(g.advisor.thinking == "" for g in games), player,
             timeout=3 * WAIT, seen=lambda: (f"{len(table.session.running_odds_todo())} turn(s) to estimate, "
                                             f"advisors: {[g.advisor.thinking for g in games]}"))
    assert len(ours()) >= 2, ours()  # the player's and the watcher's at least: the check below is on them
    wait_for(lambda: all(s["expiry blocks"] == 0 for s in ours()), player, timeout=WAIT, seen=ours)
    version, log = table.session.version, list(table.session.log)
    if table.session.decision() is not None:
        name = "Fall back" if table.session.decision() == "invasion" else "Pass"
        watcher.get_by_role("button", name=name).click()
    shows(watcher, "Not done: you are watching this table")
    watcher.get_by_role("button", name="New game").click()
    watcher.wait_for_timeout(500)
    assert table.session.version == version and table.session.log == log  # nothing changed
    assert theirs.bar.said.startswith("Not done: you are watching") and mine.bar.said == ""
    player_ctx.close()
    watcher_ctx.close()
    assert server_errors == []


def test_a_reloaded_tab_gets_its_seat_back_and_a_third_browser_cannot_act_for_it(tables, browser):
    url, pages = tables
    a_ctx, c_ctx = browser.new_context(), browser.new_context()
    a = a_ctx.new_page()
    first = open_page(a, url + "kzin", pages)
    expect(a).to_have_url(re.compile(r"table="), timeout=WAIT * 1000)
    table = first.table
    link = a.url
    again = open_page(a, link, pages)  # a reload: the cookie brings the same token
    assert again.table is table and again.bar.may_act()
    shows(a, "Humans: you")
    decline(a, table)
    c = c_ctx.new_page()
    third = open_page(c, link + "&seat=Humans", pages)
    shows(c, "You are watching: the Humans' seat is taken by another player.")
    assert table.seats_of(_token(c_ctx)) == [] and table.seats_of(_token(a_ctx)) == ["Humans"]
    version = table.session.version
    if table.session.decision() is not None:
        name = "Fall back" if table.session.decision() == "invasion" else "Pass"
        c.get_by_role("button", name=name).click()
        shows(c, "Not done: you are watching this table")
    c.wait_for_timeout(300)
    assert table.session.version == version and not third.bar.may_act()
    a_ctx.close()
    c_ctx.close()


def test_the_players_frames_hold_no_generator_state_nor_seed(tables, browser):
    url, pages = tables
    ctx = browser.new_context()
    page = ctx.new_page()
    frames: list[str] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: frames.append(
        payload if isinstance(payload, str) else payload.decode("utf-8", "replace"))))
    mine = open_page(page, url + "kzin", pages)
    s = mine.table.session
    secrets = {str(s.seed)}
    for _ in range(4):
        state = s.rng.bit_generator.state
        secrets |= {str(state["state"]["state"]), str(state["state"]["inc"])}
        if s.decision() is None:
            break
        decline(page, mine.table)
        shows(page, status_text(s))
    page.wait_for_timeout(500)
    received = "".join(frames)
    assert "Expansion Marker on space" in received and len(frames) > 10  # the recorder saw the page's updates
    leaked = [x for x in secrets if x in received]
    assert leaked == [], "the browser received the generator's state or the seed"
    assert str(s.seed) not in mine.game.controls.files.download.filename
    saved = s.save()
    assert not any(x in saved for x in secrets)  # the file a seat downloads keeps them sealed
    ctx.close()


def open_sessions() -> int:
    """Sessions the server has begun and not yet ended (Panel's public session record)."""
    return sum(1 for s in pn.state.session_info["sessions"].values() if s["ended"] is None)


def _token(ctx) -> str:
    return next(c["value"] for c in ctx.cookies() if c["name"] == TOKEN_COOKIE)


def close_pages(link, pages, browser, player):
    """Open and close four watchers' pages of ``link`` and make a plain GET; wait until their sessions end
    (Panel's session record is the process's: sessions of other tests' servers are counted in the baseline)."""
    baseline = open_sessions()
    for _ in range(4):
        other = browser.new_context()
        open_page(other.new_page(), link, pages)
        other.close()
    urllib.request.urlopen(link, timeout=30).read()  # a session no browser connects to
    deadline = time.time() + 30
    while time.time() < deadline and open_sessions() > baseline:
        player.wait_for_timeout(200)
    assert open_sessions() <= baseline, f"{open_sessions() - baseline} closed session(s) still open"


def test_closed_pages_of_a_table_leave_no_watcher_on_its_session(tables, browser):
    """The session outlives every page of it: a closed page's views must let go of it."""
    url, pages = tables
    ctx = browser.new_context()
    player = ctx.new_page()
    table = open_page(player, url + "kzin", pages).table
    player.wait_for_timeout(500)
    baseline = len(watchers_of(table))
    close_pages(player.url, pages, browser, player)
    # a session's end is recorded before Panel runs its destroy callbacks, which let go of the table
    wait_for(lambda: table.watching == 0 and len(watchers_of(table)) == baseline, player, timeout=WAIT)
    ctx.close()


def test_closed_pages_of_a_table_are_collected(tables, browser):
    """Every page of the table but the player's open one is collected once its tab has closed.

    Counted, not picked out by order: on a loaded machine a browser may connect after the server has discarded
    its session as unused (this server keeps one 500 ms), and Bokeh then makes a session, and a page, anew for it,
    so the player's live page need not be the first one made (a CI run took it for a closed page still held)."""
    url, pages = tables
    ctx = browser.new_context()
    player = ctx.new_page()
    open_page(player, url + "kzin", pages)
    close_pages(player.url, pages, browser, player)
    made = [weakref.ref(p) for p in pages]
    del pages[:]
    assert len(made) >= 6  # the player's page, four watchers' and the plain GET's

    def alive() -> int:
        return sum(r() is not None for r in made)

    # A closed page is held by its document (the page's session-destroyed callback) until the server lets the
    # document go, which with both cores of the machine busy has taken over 30 s.
    deadline = time.time() + 90
    while time.time() < deadline and alive() > 1:
        gc.collect()
        player.wait_for_timeout(200)
    # the player's page is held by its open session, so one left means every closed one went
    assert alive() == 1, f"{alive() - 1} closed page(s) of the table still held"
    ctx.close()
