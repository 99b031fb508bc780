"""Kung-Fu Zoo at a table in headless Chromium: four players in four browser contexts (each its own cookies),
one team each, and a watcher.

The table's maker opens ``/zoo``, makes it a four-player battle, and the others join by the table's link with
their seat. A flick made in one browser plays out in all four: each browser's own arena moves the dice frame
by frame (seen in the browser, not only the board it ends on). A player cannot act for another team, a watcher's
clicks change nothing, and a reloaded tab gets its seat back. Screenshots go to ``/tmp/zoo_shots/``.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import replace
from pathlib import Path
from urllib.parse import quote

import pytest
from browser_helpers import BOARD_READY, HAS_TEXT, drag_data, page_report, to_page, wait_for
from playwright.sync_api import expect

from apps._files import data_dir
from apps._tables import TOKEN_COOKIE, TablePage, table_page, use_registry
from apps.zoo import ZooPage
from apps.zoo import adapter as za
from engine.core.seal import Sealer
from engine.core.tables import TableRegistry
from engine.zoo.session import DRAG_MM_PER_M_S
from engine.zoo.table import ZOO_TABLE

pytestmark = pytest.mark.browser

WAIT = 30.0  # s: the machine is shared by several helpers' browsers
SHOTS = Path(os.environ.get("ZOO_SHOTS", "/tmp/zoo_shots"))
SEATS = ("P1 (Crocodile)", "P2 (Elephant)", "P3 (Gorilla)", "P4 (Zebra)")
WATCH_MOVING = """() => {
  // Record, at every animation frame, where the arena's moving dice are drawn (the overlay the animation fills).
  const view = [...Bokeh.index.all_views()].find(v => v.model.name === 'arena');
  const moving = view.model.renderers.find(r => r.name === 'moving').data_source;
  window.zooSeen = [];
  const look = () => {
    // the moving dice are drawn as the faces of their cubes: one polygon a face, placed at its centre
    const d = moving.data, xs = d instanceof Map ? d.get('xs') : d['xs'], ys = d instanceof Map ? d.get('ys') : d['ys'];
    const mid = (p) => Array.from(p).reduce((a, b) => a + b, 0) / p.length;
    if (xs && xs.length) window.zooSeen.push([...xs].map((p, i) => mid(p).toFixed(1) + ',' + mid(ys[i]).toFixed(1))
      .join(' '));
    requestAnimationFrame(look);
  };
  requestAnimationFrame(look);
}"""


@pytest.fixture
def tables(serve_app):
    """Serve ``/zoo`` as ``dojo serve`` does, with the bots light and no odds worked out (five pages share two
    loaded cores); yields (base URL, the pages built)."""
    folder = data_dir()
    light = {**ZOO_TABLE.session_options, "bot_candidates": 2, "bot_samples": 1}
    use_registry(TableRegistry(folder / "tables", {"zoo": replace(ZOO_TABLE, session_options=light)},
                               Sealer.in_folder(folder)))
    pages: list[TablePage] = []

    def zoo() -> object:
        page = table_page("zoo", lambda t, _token, may_act: ZooPage(session=t.session, served=True, may_act=may_act,
                                                                    background=False))
        pages.append(page)
        return page

    url = serve_app({"zoo": zoo}, session_history=-1)
    yield url, pages


def open_page(page, url, pages):
    count = len(pages)
    page.set_viewport_size({"width": 1280, "height": 1000})
    page.goto(url)
    page.wait_for_function(BOARD_READY, arg="arena", timeout=WAIT * 1000)
    wait_for(lambda: len(pages) > count, page, timeout=WAIT)
    return pages[-1]


def shows(page, text: str) -> None:
    try:
        page.wait_for_function(HAS_TEXT, arg=text, timeout=WAIT * 1000)
    except Exception:
        shot(page, "failed")
        raise AssertionError(f"{text!r} not shown: {page_report(page)}") from None


def shot(page, name: str) -> None:
    page.wait_for_timeout(300)
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def click(page, x: float, y: float) -> None:
    page.evaluate("window.scrollTo(0, 0)")
    page.mouse.click(*to_page(page, x, y, "arena"))


def drag(page, start, vector) -> None:
    """A real drag on the arena that follows it if a late redraw above shifts it (``browser_helpers.drag_data``)."""

    def scroll() -> None:
        page.wait_for_timeout(400)  # a press right after a click would be read as part of a double tap
        page.evaluate("window.scrollTo(0, 0)")

    drag_data(page, "arena", start, vector, before=scroll)


def token(ctx) -> str:
    return next(c["value"] for c in ctx.cookies() if c["name"] == TOKEN_COOKIE)


def test_four_players_at_one_table_see_every_flick_play_out_and_act_only_for_their_team(tables, browser,
                                                                                      server_errors):
    url, pages = tables
    contexts = [browser.new_context() for _ in range(5)]
    tabs = [ctx.new_page() for ctx in contexts]
    maker = open_page(tabs[0], url + "zoo", pages)
    expect(tabs[0]).to_have_url(re.compile(r"/zoo\?table=[A-Za-z0-9_-]+$"), timeout=WAIT * 1000)
    table, link = maker.table, tabs[0].url
    s = table.session
    assert table.seats_of(token(contexts[0])) == [SEATS[0]]
    # The maker chooses four teams: Players, then New game (a secret seed: no seed box at a table).
    assert not tabs[0].get_by_label("Seed").is_visible()
    players = tabs[0].get_by_label("Players")
    players.fill("4")
    players.press("Enter")
    wait_for(lambda: maker.game.controls.players.value == 4, tabs[0], timeout=WAIT)
    tabs[0].get_by_role("button", name="New game").click()
    wait_for(lambda: table.seat_names() == list(SEATS), tabs[0], timeout=WAIT)
    shows(tabs[0], '4-player "All Valley" Cage Battle, round 1')
    views = [maker]
    for q in (1, 2, 3):  # each joins by the link with their seat
        views.append(open_page(tabs[q], f"{link}&seat={quote(SEATS[q])}", pages))
        assert table.seats_of(token(contexts[q])) == [SEATS[q]]
    watcher = open_page(tabs[4], link, pages)
    for q, tab in enumerate(tabs[:4]):
        shows(tab, f"{SEATS[q]}: you")
    shows(tabs[4], "You are watching")
    assert table.watching == 1

    # P2 cannot act for P1, whose move it is: a click on P1's die and Commit are refused on P2's page only.
    version, proposal = s.version, str(s.proposed_flick())
    click(tabs[1], *za.bench_xy(0, 1))
    shows(tabs[1], "Not done: it is the P1 (Crocodile)'s move, and their seat is held by another player.")
    tabs[1].get_by_role("button", name="Commit flick").click()
    tabs[4].get_by_role("button", name="Commit flick").click()  # the watcher, too
    shows(tabs[4], "Not done: you are watching this table")
    tabs[4].get_by_role("button", name="New game").click()
    tabs[4].wait_for_timeout(500)
    assert s.version == version and str(s.proposed_flick()) == proposal and len(s.log) == 1
    assert maker.bar.said == "" and views[2].bar.said == "" and watcher.bar.said.startswith("Not done: you are")

    # P1 aims in their browser; the aim reaches every page; the flick plays out in all four.
    click(tabs[0], *za.bench_xy(0, 1))
    wait_for(lambda: s.die == "C2", tabs[0], timeout=WAIT)
    click(tabs[0], -10.0, 150.0)
    wait_for(lambda: s.spot == "W-dot", tabs[0], timeout=WAIT)
    h = math.radians(8.0)
    drag(tabs[0], (9.5, 150.0), (1.3 * DRAG_MM_PER_M_S * math.cos(h), 1.3 * DRAG_MM_PER_M_S * math.sin(h)))
    wait_for(lambda: s.proposed_flick() is not None and abs(s.direction - 8.0) < 1.0, tabs[0], timeout=WAIT)
    for tab in tabs[:4]:
        tab.evaluate(WATCH_MOVING)
    tabs[0].get_by_role("button", name="Commit flick").click()
    wait_for(lambda: len(s.log) == 2, tabs[0], timeout=WAIT)
    for q, (tab, view) in enumerate(zip(tabs[:4], views, strict=True)):
        arena = view.game.arena
        wait_for(lambda a=arena: a.fps_log and not a.animating and a.shown == s.version, tab, timeout=WAIT)
        seen = tab.evaluate("window.zooSeen")
        assert len(set(seen)) >= 3, f"browser {q + 1} drew the moving dice at {len(set(seen))} places: {seen[:5]}"
        assert arena.fps_log[-1]["drawn"] >= 2  # frames drawn after the first, as the browser reported them
    assert s.state.current_player() == 1 and s.log[1]["player"] == 0
    for tab in tabs:  # the turn, the log follow on every page, the watcher's too
        shows(tab, "P2 (Elephant) to make a flick")
        shows(tab, "flick C2 from W-dot")
    shot(tabs[1], "tables_p2_after_p1_flicked")
    shot(tabs[0], "tables_p1_after_its_flick")

    # Now P1 is refused and P2 may act; a reloaded P2 tab gets its seat back.
    version = s.version
    click(tabs[0], *za.bench_xy(1, 1))
    shows(tabs[0], "Not done: it is the P2 (Elephant)'s move")
    assert s.version == version
    again = open_page(tabs[1], tabs[1].url, pages)
    shows(tabs[1], f"{SEATS[1]}: you")
    assert again.table is table and again.bar.may_act() and table.seats_of(token(contexts[1])) == [SEATS[1]]
    click(tabs[1], *za.bench_xy(1, 1))
    wait_for(lambda: s.die == "E2", tabs[1], timeout=WAIT)
    assert s.version == version
    # P2 flicks (the default aim) from the tab it reloaded; P3's browser, caught mid-flick.
    now = [maker, again, *views[2:]]
    played = [len(v.game.arena.fps_log) for v in now]
    tabs[1].get_by_role("button", name="Commit flick").click()
    wait_for(lambda: views[2].game.arena.animating, tabs[2], timeout=WAIT)
    tabs[2].screenshot(path=str(SHOTS / "tables_p3_while_p2_flicks.png"))
    wait_for(lambda: len(s.log) == 3 and s.log[2]["player"] == 1, tabs[1], timeout=WAIT)
    for tab, view, n in zip(tabs[:4], now, played, strict=True):  # each browser reports the flick it played
        wait_for(lambda a=view.game.arena, n=n: len(a.fps_log) == n + 1 and a.shown == s.version, tab, timeout=WAIT)
        shows(tab, "P3 (Gorilla) to make a flick")
    for ctx in contexts:
        ctx.close()
    assert server_errors == []


def test_a_flick_reaches_another_browser_as_one_message_before_the_moves_other_changes(tables, browser,
                                                                                         server_errors):
    """What another browser at the table receives when a flick is committed: the animation (its frames, the moving
    dice where they stand, the board with them hidden, the aim cleared) in one message, and only then what else
    the move changes there (its buttons). Sent as ten messages behind those changes, the animation started ~100 ms
    later (apps._tables_bench)."""
    from apps._browser import take_every_seat, zoo_move

    url, pages = tables
    contexts = [browser.new_context() for _ in range(2)]
    tabs = [ctx.new_page() for ctx in contexts]
    received: list[str] = []  # the watcher's websocket, text frames (a binary frame is a buffer of the one before)
    tabs[1].on("websocket", lambda ws: ws.on("framereceived",
                                             lambda data: received.append(data if isinstance(data, str) else "")))
    maker = open_page(tabs[0], url + "zoo", pages)
    expect(tabs[0]).to_have_url(re.compile(r"/zoo\?table=[A-Za-z0-9_-]+$"), timeout=WAIT * 1000)
    take_every_seat(tabs[0])
    watcher = open_page(tabs[1], tabs[0].url, pages)
    s = maker.table.session
    shows(tabs[1], "You are watching")
    tabs[1].wait_for_timeout(1000)  # the pages settle
    start = len(received)
    assert zoo_move(tabs[0]) == "Commit flick"
    wait_for(lambda: len(s.log) == 2 and watcher.game.arena.fps_log, tabs[1], timeout=WAIT)
    changes = [m for m in received[start:] if m.startswith('{"events"')]
    frames = [i for i, m in enumerate(changes) if '"qw"' in m]  # the frames' quaternion column
    assert len(frames) == 1, f"the flick's frames came in {len(frames)} messages"
    one = changes[frames[0]]
    for column, what in (('"halpha"', "the moving dice"), ('"ly"', "the board's dice"), ('"x2"', "the aim")):
        assert column in one, f"{what} not in the animation's message"
    assert not any('"disabled"' in m for m in changes[:frames[0]]), "a button changed before the animation came"
    assert any('"disabled"' in m for m in changes[frames[0] + 1:]), "the watcher's Commit button never changed"
    for ctx in contexts:
        ctx.close()
    assert server_errors == []


def test_the_odds_of_the_aimed_flick_follow_on_another_players_page(serve_app, browser, server_errors):
    """Each page works out the odds of the aim it shows (as ``dojo serve`` builds the page): P1 aims, and P2's page
    comes to the same 500-flick estimate of that very flick, its heat map with it."""
    from apps import zoo as zoo_app

    folder = data_dir()
    use_registry(TableRegistry(folder / "tables", {"zoo": ZOO_TABLE}, Sealer.in_folder(folder)))
    pages: list[TablePage] = []

    def zoo() -> object:
        page = zoo_app.create_table_app()
        pages.append(page)
        return page

    url = serve_app({"zoo": zoo}, session_history=-1)
    contexts = [browser.new_context() for _ in range(2)]
    tabs = [ctx.new_page() for ctx in contexts]
    mine = open_page(tabs[0], url + "zoo", pages)
    expect(tabs[0]).to_have_url(re.compile(r"table="), timeout=WAIT * 1000)
    theirs = open_page(tabs[1], f"{tabs[0].url}&seat={quote(SEATS[1])}", pages)
    s = mine.table.session
    click(tabs[0], -10.0, 150.0)
    wait_for(lambda: s.spot == "W-dot", tabs[0], timeout=WAIT)
    flick = str(s.proposed_flick())
    for view, tab in ((mine, tabs[0]), (theirs, tabs[1])):
        odds = view.game.odds
        wait_for(lambda o=odds: o.odds_for(flick) is not None and o.odds.samples == 500 and not o.busy, tab,
                 timeout=90)
        expect(tab.locator(".odds-n")).to_contain_text("500 simulated flicks", timeout=WAIT * 1000)
    a, b = mine.game.odds.odds, theirs.game.odds.odds
    assert a.cage_opponent.value == b.cage_opponent.value and a.lose_own.value == b.lose_own.value
    wait_for(lambda: theirs.game.odds.mapped > 0, tabs[1], timeout=90)
    for ctx in contexts:
        ctx.close()
    assert server_errors == []


def test_a_seat_handed_to_the_bot_answers_once_the_flick_has_played_out_on_every_page(tables, browser,
                                                                                      server_errors):
    url, pages = tables
    contexts = [browser.new_context() for _ in range(2)]
    tabs = [ctx.new_page() for ctx in contexts]
    mine = open_page(tabs[0], url + "zoo", pages)
    expect(tabs[0]).to_have_url(re.compile(r"table="), timeout=WAIT * 1000)
    watching = open_page(tabs[1], tabs[0].url, pages)
    table, s = mine.table, mine.table.session
    tabs[0].get_by_role("button", name=f"Take the {SEATS[1]}'s seat").click()  # P1 holds both, then hands P2 over
    wait_for(lambda: table.seats_of(token(contexts[0])) == list(SEATS[:2]), tabs[0], timeout=WAIT)
    tabs[0].get_by_role("button", name=f"Hand the {SEATS[1]} to a bot").click()
    wait_for(lambda: table.seats[SEATS[1]] == "bot" and s.seats[1].kind == "bot", tabs[0], timeout=WAIT)
    shows(tabs[1], f"{SEATS[1]}: a bot")
    wait_for(lambda: mine.game.flick.can_commit(), tabs[0], timeout=WAIT)
    tabs[0].get_by_role("button", name="Commit flick").click()
    wait_for(lambda: len(s.log) == 2, tabs[0], timeout=WAIT)
    wait_for(lambda: len(s.log) == 3, tabs[0], timeout=60)
    assert s.log[2]["player"] == 1 and s.log[2]["text"].startswith("flick E")
    for tab, view in ((tabs[0], mine), (tabs[1], watching)):  # two whole animations: the bot did not cut the first
        wait_for(lambda a=view.game.arena: len(a.fps_log) == 2 and a.shown == s.version, tab, timeout=WAIT)
        shows(tab, "P1 (Crocodile) to make a flick")
    for ctx in contexts:
        ctx.close()
    assert server_errors == []


def test_only_the_tables_maker_may_change_the_number_of_teams(tables, browser, server_errors):
    """P2's browser asks for four teams: refused on its page, with the reason, and the battle and seats stay."""
    url, pages = tables
    contexts = [browser.new_context() for _ in range(2)]
    tabs = [ctx.new_page() for ctx in contexts]
    maker = open_page(tabs[0], url + "zoo", pages)
    expect(tabs[0]).to_have_url(re.compile(r"table="), timeout=WAIT * 1000)
    table, s = maker.table, maker.table.session
    theirs = open_page(tabs[1], f"{tabs[0].url}&seat={quote(SEATS[1])}", pages)
    shows(tabs[1], f"{SEATS[1]}: you")
    state, log, seats = s.state.to_json(), list(s.log), dict(table.seats)
    players = tabs[1].get_by_label("Players")
    players.fill("4")
    players.press("Enter")
    wait_for(lambda: theirs.game.controls.players.value == 4, tabs[1], timeout=WAIT)
    tabs[1].get_by_role("button", name="New game").click()
    shows(tabs[1], "Not done: only the table's maker may change the number of players at it.")
    wait_for(lambda: theirs.game.controls.players.value == 2, tabs[1], timeout=WAIT)  # the box shows the battle's
    assert s.state.to_json() == state and s.log == log and table.seats == seats and s.players == 2
    assert maker.bar.said == ""
    for ctx in contexts:
        ctx.close()
    assert server_errors == []
