"""Kung Fu 2100 tables in headless Chromium, each browser a separate context (its own cookies and token).

The Terminators in one browser and the Clone Master in another play a turn: the Terminators wait at their
entries, T1 enters the lair by the disposal and walks into the kitchen, where a face-down Jelly turns face up,
and the two fight a combat with chits. Each browser sees the other's moves appear without a reload. Every
websocket frame of both browsers is recorded for the whole test: the Terminators' never names a counter that is
still face down (nor holds the table's secret seed), while the Clone Master's names every one of them, so the
search would catch a leak. A reloaded tab gets its seat back, a third browser cannot take or act for a taken
seat, and a watcher's clicks change nothing. One browser may also hold both seats (the hot-seat hand-over), or
hand the other side to a bot. Screenshots of both browsers in the combat go to ``/tmp/kf_table_shots/``.
"""

from __future__ import annotations

import re
import time
import urllib.parse
from dataclasses import replace
from pathlib import Path

import pytest
from browser_helpers import BOARD_DETAILS, BOARD_READY, HAS_TEXT, to_page, wait_for
from playwright.sync_api import expect

from apps import kf2100
from apps._files import data_dir
from apps._tables import TOKEN_COOKIE, TablePage, use_registry, watchers_of
from engine.core import dump_state
from engine.core.seal import Sealer
from engine.core.tables import TableRegistry, new_token
from engine.kf2100.state import PHASE_TITLES
from engine.kf2100.steps import Step
from engine.kf2100.table import KF2100_TABLE

pytestmark = pytest.mark.browser

WAIT = 30.0  # s: the machine is shared
SHOTS = Path("/tmp/kf_table_shots")
OUTLOOK_BARS = """() => {
  const v = [...Bokeh.index.all_views()].find(v => v.model.name === "hits" && v.frame);
  if (!v) return -1;
  let n = 0;
  for (const r of v.model.renderers) {
    const d = r.data_source ? r.data_source.data : null;
    const get = (k) => d instanceof Map ? d.get(k) : (d ? d[k] : undefined);
    if (get("label") !== undefined) n = Math.max(n, get("label").length);
  }
  return n;
}"""
"""JS: how many bars the whole-combat outlook draws."""
BASE64 = re.compile(r'"[A-Za-z0-9+/=_-]{64,}"')
"""A long base64 string in a frame (an array's bytes, a token): left out of the search for names."""
TERMINATORS, CLONE_MASTER = "Terminators", "Clone Master"


@pytest.fixture
def tables(serve_app):
    """Serve ``/kf2100`` as ``dojo serve`` does; yields (base URL, registry, the pages built)."""
    folder = data_dir()
    game = replace(KF2100_TABLE, secret_seed=lambda: 3_141_592_653_589_793_238)  # the same dice in every run
    reg = use_registry(TableRegistry(folder / "tables", {"kf2100": game}, Sealer.in_folder(folder)))
    pages: list[TablePage] = []

    def page() -> object:
        built = kf2100.create_table_app()
        pages.append(built)
        return built

    url = serve_app({"kf2100": page}, session_history=-1, check_unused_sessions_milliseconds=200,
                    unused_session_lifetime_milliseconds=500)
    yield url, reg, pages


def token_of(ctx) -> str:
    return next(c["value"] for c in ctx.cookies() if c["name"] == TOKEN_COOKIE)


def record(page) -> list[str]:
    """Every text frame the page's websocket receives from now on."""
    frames: list[str] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: frames.append(payload)
                                          if isinstance(payload, str) else None))
    return frames


def names_in(frames: list[str], ids: list[str]) -> list[str]:
    """The ids named (as a whole word) anywhere in the frames."""
    text = BASE64.sub('""', "\n".join(frames))
    return [fid for fid in ids if re.search(rf"\b{re.escape(fid)}\b", text)]


def browser_with(browser, url: str, token: str):
    ctx = browser.new_context(viewport={"width": 1420, "height": 1000})
    ctx.add_cookies([{"name": TOKEN_COOKIE, "value": token, "url": url}])
    return ctx


def open_page(page, link, pages) -> TablePage:
    count = len(pages)
    page.goto(link)
    page.wait_for_function(BOARD_READY, arg="board", timeout=WAIT * 1000)
    wait_for(lambda: len(pages) > count, page, timeout=WAIT)
    return pages[-1]


def shows(page, text: str) -> None:
    page.wait_for_function(HAS_TEXT, arg=text, timeout=WAIT * 1000)


def until(cond, page) -> None:
    wait_for(cond, page, timeout=WAIT)


def kitchen_table(reg, token):
    """A new table whose Terminators' seat ``token`` holds, at its first turn, with one face-down Jelly moved
    into the kitchen by the disposal (the bot dealt the rest); returns (table, that Jelly's id)."""
    table = reg.create("kf2100", token)
    s = table.session
    st = s.state.clone()
    jelly = next(f for f in st.figs.values() if f.kind == "jelly" and not f.face_up)
    jelly.pos = st.game.board.square("e2")
    s.load(dump_state(st))
    return table, jelly.id


def board_click(page, mine: TablePage, x_y) -> None:
    page.mouse.click(*to_page(page, *x_y))


def click_square(page, mine: TablePage, square: str) -> None:
    m = mine.game.board.model
    board_click(page, mine, m.centre(*m.col_row(square)))


def click_figure(page, mine: TablePage, fid: str) -> None:
    board_click(page, mine, mine.game.board.model.centre(*mine.game.board.frames["where"][fid]))


def press(page, s, name: str) -> None:
    """Press the button ``name`` and wait for the game to take it."""
    version = s.version
    page.get_by_role("button", name=name).first.click(timeout=WAIT * 1000)
    until(lambda: s.version > version, page)


def shot(page, name: str) -> None:
    SHOTS.mkdir(exist_ok=True)
    page.wait_for_timeout(400)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def test_two_browsers_play_a_turn_with_an_entry_a_move_and_a_combat_each_seeing_only_its_side(
        tables, browser, server_errors):
    url, reg, pages = tables
    t_token, c_token = new_token(), new_token()
    table, jelly = kitchen_table(reg, t_token)
    s = table.session
    link = f"{url}kf2100?table={table.id}"
    t_ctx, c_ctx = browser_with(browser, url, t_token), browser_with(browser, url, c_token)
    t, c = t_ctx.new_page(), c_ctx.new_page()
    t_frames, c_frames = record(t), record(c)
    mine = open_page(t, link, pages)
    theirs = open_page(c, f"{link}&seat={urllib.parse.quote(CLONE_MASTER)}", pages)
    assert table.seats_of(t_token) == [TERMINATORS] and table.seats_of(c_token) == [CLONE_MASTER]
    assert mine.game.sides.held == [0] and theirs.game.sides.held == [1] and not s.hand_over
    shows(t, "Terminators: you")
    shows(c, "Clone Master: you")

    # The entry: the Terminators wait at their entries by the buttons; the Clone Master waits, then stays hidden.
    shows(c, "Waiting for the Terminators")
    for fid, entry in (("T1", "disposal"), ("T2", "disposal"), ("T3", "loo")):
        press(t, s, f"{fid} at the {entry}")
    until(lambda: s.state.step is Step.CM_WINDOW, t)
    shows(t, "Waiting for the Clone Master")
    press(c, s, "Stay hidden")

    # The move: T1 enters by the disposal and walks on; the Clone Master's board follows each step.
    until(lambda: s.person_to_move() == 0 and s.state.step is Step.MOVE, t)
    for square in ("c3", "d2"):
        until(lambda: "T1" in mine.game.board.frames["where"], t)
        click_figure(t, mine, "T1")
        until(lambda: s.selected == "T1", t)
        before = s.state.figs["T1"].pos
        click_square(t, mine, square)
        until(lambda before=before: s.state.figs["T1"].pos != before, t)
        c.wait_for_function(f"() => ({BOARD_DETAILS})().some(d => d.startsWith('T1: Terminator on {square}'))",
                            timeout=WAIT * 1000)
    assert s.state.figs[jelly].face_up  # the kitchen entered: its counter turned face up, for both
    c.wait_for_function(f"() => ({BOARD_DETAILS})().some(d => d.startsWith('{jelly}: '))", timeout=WAIT * 1000)
    t.wait_for_function(f"() => ({BOARD_DETAILS})().some(d => d.startsWith('{jelly}: '))", timeout=WAIT * 1000)
    press(t, s, f"End {PHASE_TITLES['move1']}")
    if s.state.step is Step.CM_WINDOW:  # the Clone Master may reveal himself before the combat phase
        press(c, s, "Stay hidden")

    # The combat: each side picks its chits in secret; the other sees only how many.
    until(lambda: s.state.step is Step.PICK and s.person_to_move() == 0, t)
    press(t, s, "fist + fist + kick")
    shows(c, "3 hidden")
    shot(t, "1_terminators_wait_for_the_pick")
    shot(c, "1_clone_master_picks")
    j_chits = next(b for b in s.legal() if b.figure == jelly).chits
    press(c, s, " + ".join(j_chits))
    shows(t, "2 hidden")
    shows(c, " ".join(j_chits))  # its own chits, by name, on its own page
    press(t, s, "Terminators lead")
    t.get_by_role("button", name="T1: Iron Fist").click()
    until(lambda: mine.game.board.armed == ("T1", "fist"), t)
    shows(t, "Chance to hit, by the answer given")
    for page in (t, c):  # the whole-combat outlook, worked out off the loop, drawn in both browsers
        page.wait_for_function(f"() => ({OUTLOOK_BARS})() > 0", timeout=WAIT * 1000)
    expect(t.locator("table.crt-heat td.outlined")).to_have_count(6, timeout=WAIT * 1000)  # the fist's row of the CRT
    shot(t, "2_terminators_armed")
    rolls = len(s.log)
    for _ in range(3):
        click_figure(t, mine, jelly)
        try:
            wait_for(lambda: s.state.combat is None or s.state.combat.attack is not None, t, timeout=5)
            break
        except AssertionError:
            continue
    # The exchange played out by whoever is to act, each on their own page.
    for _ in range(30):
        until(lambda: s.state.combat is None or s.person_to_move() is not None, t)
        if s.state.combat is None:
            break
        side = s.person_to_move()
        page, held = (t, mine) if side == 0 else (c, theirs)
        step, version = s.state.step, s.version
        if step is Step.ANSWER:
            other = c if side == 0 else t
            # the other's move: the cell of the attack against its answer
            expect(other.locator("table.crt-heat td.outlined")).to_have_count(1, timeout=WAIT * 1000)
            shot(page, f"3_{'terminators' if side == 0 else 'clone_master'}_answer")
            page.locator("button:visible", has_text="(hit").first.click(timeout=WAIT * 1000)
        elif step is Step.LOSS:
            page.locator("button:visible", has_text="Lose ").first.click(timeout=WAIT * 1000)
        elif step is Step.PICK:
            page.get_by_role("button", name=" + ".join(s.legal()[0].chits), exact=True).click(timeout=WAIT * 1000)
        elif step is Step.LEAD:
            page.get_by_role("button", name="Terminators lead").click(timeout=WAIT * 1000)
        elif step in (Step.ATTACK, Step.AIM):
            attack = next(a for a in s.legal() if hasattr(a, "target"))
            if step is Step.ATTACK and held.game.board.armed != (attack.figure, attack.chit):
                page.locator("button:visible", has_text=f"{attack.figure}: ").first.click(timeout=WAIT * 1000)
                until(lambda held=held: held.game.board.armed is not None, page)
            click_figure(page, held, attack.target)
        else:
            pytest.fail(f"no press for the step {step}")
        try:
            wait_for(lambda version=version: s.version > version, page, timeout=8)
        except AssertionError:
            continue  # a click the page had not drawn yet: asked again
    assert len(s.log) > rolls and s.log[rolls]["what"].startswith(f"T1 fist on {jelly}")
    first = s.log[rolls]["what"]
    for page in (t, c):  # the roll log is live in both browsers
        expect(page.get_by_role("cell", name=first).first).to_be_visible(timeout=WAIT * 1000)
    shot(t, "4_terminators_after")
    shot(c, "4_clone_master_after")

    # No Terminators' frame named a counter still face down; the Clone Master's named every one.
    hidden_ids = [f.id for f in s.state.figs.values() if f.side == 1 and not f.face_up]
    assert len(hidden_ids) >= 30 and jelly not in hidden_ids
    assert len(t_frames) > 20 and names_in(t_frames, ["T1", jelly]) == ["T1", jelly]  # the recorder saw them
    assert names_in(t_frames, hidden_ids) == [], "the Terminators' browser received a face-down counter's name"
    assert names_in(c_frames, hidden_ids) == hidden_ids
    assert str(s.seed) not in "".join(t_frames + c_frames)
    on_board = [fid for fid in hidden_ids if s.state.figs[fid].on_board]
    t.wait_for_function(f"() => ({BOARD_DETAILS})().filter(d => d.startsWith('a face-down counter')).length == "
                        f"{len(on_board)}", timeout=WAIT * 1000)
    t_ctx.close()
    c_ctx.close()
    assert server_errors == []


def test_a_reloaded_tab_gets_its_seat_back_a_third_browser_cannot_act_and_a_watcher_changes_nothing(
        tables, browser, server_errors):
    url, _, pages = tables
    a_ctx, w_ctx = browser.new_context(viewport={"width": 1420, "height": 1000}), browser.new_context()
    a = a_ctx.new_page()
    first = open_page(a, url + "kf2100", pages)  # no table: one is made, its maker takes the Terminators' seat
    expect(a).to_have_url(re.compile(r"/kf2100\?table=[A-Za-z0-9_-]+$"), timeout=WAIT * 1000)
    table, s = first.table, first.table.session
    link = a.url
    again = open_page(a, link, pages)  # a reload: the cookie brings the same token back
    assert again.table is table and again.game.sides.held == [0] and again.bar.may_act()
    shows(a, "Terminators: you")
    press(a, s, "T1 at the disposal")

    w = w_ctx.new_page()
    w_frames = record(w)
    watcher = open_page(w, f"{link}&seat={TERMINATORS}", pages)
    shows(w, "You are watching: the Terminators' seat is taken by another player.")
    assert watcher.game.sides.held == [] and table.seats_of(token_of(a_ctx)) == [TERMINATORS]
    shows(w, "Waiting for the Terminators")  # a watcher is offered no decision
    version, state = s.version, s.state.to_dict()
    click_square(w, watcher, "c3")  # where T2 would wait: refused, and the page says why
    shows(w, "Not done: you are watching this table")
    w.get_by_role("button", name="New game").click()
    w.wait_for_timeout(500)
    assert s.version == version and s.state.to_dict() == state  # nothing changed
    assert first.bar.said == "" and again.bar.said == ""
    # The watcher's board is the public one: no face-down counter is named in its frames.
    hidden_ids = [f.id for f in s.state.figs.values() if f.side == 1 and not f.face_up]
    press(a, s, "T2 at the disposal")  # the player's move appears on the watcher's page
    w.wait_for_function(f"() => ({BOARD_DETAILS})().some(d => d.startsWith('T2: Terminator') && "
                        "d.includes('waiting at the disposal'))", timeout=WAIT * 1000)
    assert names_in(w_frames, hidden_ids) == []
    a_ctx.close()
    w_ctx.close()
    assert server_errors == []


def test_one_browser_holds_both_seats_with_the_hand_over_or_hands_a_side_to_the_bot(tables, browser, server_errors):
    url, _, pages = tables
    ctx = browser.new_context(viewport={"width": 1420, "height": 1000})
    page = ctx.new_page()
    mine = open_page(page, url + "kf2100", pages)
    table, s = mine.table, mine.table.session
    expect(page).to_have_url(re.compile(r"table="), timeout=WAIT * 1000)
    for fid, entry in (("T1", "disposal"), ("T2", "loo"), ("T3", "loo")):
        press(page, s, f"{fid} at the {entry}")
    until(lambda: s.state.step is Step.CM_WINDOW, page)
    page.get_by_role("button", name=f"Take the {CLONE_MASTER}'s seat").click()  # hot-seat: both seats, one screen
    until(lambda: mine.game.sides.held == [0, 1] and s.hand_over and s.handover == 1, page)
    shows(page, "Hand the screen to the Clone Master")
    press(page, s, "I am the Clone Master: show my side")
    press(page, s, "Stay hidden")
    until(lambda: s.handover == 0, page)
    shows(page, "Hand the screen to the Terminators")
    # The Clone Master's seat to the bot: the hand-over is off, the bot plays its side from now on.
    page.get_by_role("button", name=f"Hand the {CLONE_MASTER} to a bot").click()
    until(lambda: table.seats[CLONE_MASTER] == "bot" and mine.game.sides.held == [0] and not s.hand_over, page)
    until(lambda: s.person_to_move() == 0, page)
    press(page, s, f"End {PHASE_TITLES['move1']}")
    until(lambda: s.state.phase != "move1" and (s.person_to_move() == 0 or s.state.is_terminal()), page)
    assert s.state.turn > 1 or s.state.phase != "move1"
    ctx.close()
    assert server_errors == []


LAYER_ORDER = """() => {
  const v = [...Bokeh.index.all_views()].find(v => v.model.name === "board" && v.frame);
  const has = (r, k) => r.data_source && (r.data_source.data instanceof Map ? r.data_source.data.has(k)
                                                                             : k in r.data_source.data);
  const rs = v.model.renderers;
  const text = (r) => { const d = r.data_source.data; return d instanceof Map ? d.get("text") : d.text; };
  return {rooms: rs.findIndex(r => has(r, "text") && [...text(r)].includes("Kitchen")),
          counters: rs.findIndex(r => has(r, "detail"))};
}"""
"""JS: where the room names and the counters are in the board's drawing order (later is drawn on top)."""


def test_the_page_fits_a_1280_px_window_and_room_names_are_drawn_under_the_counters(tables, browser,
                                                                                     server_errors):
    url, _, pages = tables
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    page = ctx.new_page()
    open_page(page, url + "kf2100", pages)
    shows(page, "Terminators: you")
    seen: dict[str, object] = {}

    def laid_out() -> bool:
        """The page as laid out now (a loaded browser lays it out a moment after the text shows); True once the
        layout is the one asserted below, which a page that never gets there fails on after ``WAIT``."""
        seen["widths"] = w = page.evaluate(
            "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        seen["board"] = board = page.locator(".bk-Canvas, canvas").first.bounding_box()
        seen["move"] = move = page.get_by_text("Your move").first.bounding_box()
        return (w[0] <= w[1] and board is not None and move is not None
                and move["x"] > board["x"] + 500 and move["y"] < board["y"] + 200)

    end = time.time() + WAIT
    while not laid_out() and time.time() < end:
        page.wait_for_timeout(200)
    widths, board, move = seen["widths"], seen["board"], seen["move"]
    assert widths[0] <= widths[1], f"the page scrolls sideways at 1280 px: {widths}"
    assert move["x"] > board["x"] + 500 and move["y"] < board["y"] + 200  # the decisions beside the lair
    order = page.evaluate(LAYER_ORDER)
    assert 0 <= order["rooms"] < order["counters"], f"room names drawn over the counters: {order}"
    shot(page, "5_at_1280_px")
    ctx.close()
    assert server_errors == []


def test_closed_pages_of_a_table_leave_no_watcher_on_its_session_or_table(tables, browser):
    """The table outlives its pages: a closed page's board, panels and seats must let go of it."""
    url, _, pages = tables
    ctx = browser.new_context()
    player = ctx.new_page()
    table = open_page(player, url + "kf2100", pages).table
    player.wait_for_timeout(500)
    baseline = len(watchers_of(table))
    for _ in range(3):
        other = browser.new_context()
        open_page(other.new_page(), player.url, pages)
        assert table.watching == 1 and len(watchers_of(table)) > baseline
        other.close()
        deadline = time.time() + 30  # the server ends a closed tab's session a moment later
        while time.time() < deadline and table.watching:
            player.wait_for_timeout(200)
        assert table.watching == 0
    assert len(watchers_of(table)) == baseline
    ctx.close()
