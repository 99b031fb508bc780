"""Kung Fu 2100 in headless Chromium: the way of a move picked by clicks on the board (issue 14's routes).

T1 stands in the south corridor (j10) with a face-down Servant in the servants' work area. The cheapest path to
the door gap i12 keeps to the corridor and wakes no one; the player marks a way through h10, the page draws it
and says it wakes the work area, and the click on i12 moves T1 along it: the Servant is turned up on the board.
Every step waits on the state it expects (the server's, then what the browser has drawn), never on a sleep.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from browser_helpers import BOARD_DETAILS, BOARD_READY, choose_file, page_report, serve_pages, to_page, wait_for
from playwright.sync_api import expect

from apps import kf2100
from engine.core import dump_state
from engine.kf2100.actions import Move
from engine.kf2100.state import KungFuGame, skirmish
from engine.kf2100.steps import Step

pytestmark = pytest.mark.browser

SHOTS = Path("/tmp/kf_shots")
WAIT = 30_000  # ms: the machine is shared, so page updates can lag well behind the server's state
WORK_AREA = "Servants' work area"
WAY_DRAWN = """([xs, ys]) => {
  const v = [...Bokeh.index.all_views()].find(v => v.model.name === "board" && v.frame);
  for (const r of v.model.renderers) {  // the way: a line through the centres of its squares
    const d = r.data_source ? r.data_source.data : null;
    const get = (k) => d instanceof Map ? d.get(k) : (d ? d[k] : undefined);
    const lx = get("xs"), ly = get("ys");
    if (!lx || lx.length !== 1) continue;
    const same = (a, b) => a.length === b.length && Array.from(a).every((q, i) => Math.abs(q - b[i]) < 1e-9);
    if (same(lx[0], xs) && same(ly[0], ys)) return true;
  }
  return false;
}"""
"""JS: whether the browser draws the way through these centres."""


def until(cond, page, errors=None):
    try:
        wait_for(cond, page, timeout=WAIT / 1000)
    except AssertionError:
        pytest.fail(f"not met in time: {page_report(page, errors)}")


def click_square(page, dash, square):
    m = dash.board.model
    page.mouse.click(*to_page(page, *m.centre(*m.col_row(square))))


def test_a_way_picked_by_clicks_wakes_the_room_it_crosses(page, serve_app, console_errors, server_errors,
                                                          tmp_path):
    url, pages = serve_pages(serve_app, kf2100.create_app)
    page.set_viewport_size({"width": 1420, "height": 1000})
    page.goto(url)
    page.wait_for_function(BOARD_READY, arg="board", timeout=WAIT)
    until(lambda: len(pages) == 1, page)
    dash = pages[0]
    s, b = dash.session, dash.board
    corridor = skirmish(KungFuGame("basic"), {"T1": "j10", "S1": "g16"}, face_up=False)
    cheap = corridor.clone()
    cheap.apply_action(Move("T1", "i12"))
    assert not cheap.figs["S1"].face_up  # the cheapest path keeps to the corridor: no room wakes
    position = tmp_path / "corridor.json"
    position.write_text(dump_state(corridor))
    choose_file(page, position)
    until(lambda: s.state.step is Step.MOVE and s.person_to_move() == 0 and "S1" in s.state.figs
          and s.state.figs["T1"].pos == s.game.board.square("j10"), page, console_errors)
    expect(page.get_by_text("Game loaded").first).to_be_visible(timeout=WAIT)
    # the board follows the loaded game on the page's next tick, and the browser draws it after that
    until(lambda: b.frames["where"].get("T1") == b.model.col_row("j10"), page, console_errors)
    page.wait_for_function(f"() => ({BOARD_DETAILS})().some(t => t.startsWith('T1: Terminator on j10'))",
                           timeout=WAIT)

    # Select T1: the way is the cheapest path until the player picks one.
    def select():
        click_square(page, dash, "j10")

    for _ in range(3):  # a quick second click on one spot can be read as a double tap: click again if so
        select()
        try:
            wait_for(lambda: s.selected == "T1", page, timeout=5.0)
            break
        except AssertionError:
            continue
    until(lambda: s.selected == "T1", page, console_errors)
    expect(page.get_by_text("By the cheapest path").first).to_be_visible(timeout=WAIT)

    # Mark the way through h10 (a green square, so the switch makes the click a square of the way).
    page.get_by_role("button", name="Mark the way").click()
    until(lambda: b.mark_way, page, console_errors)
    click_square(page, dash, "h10")
    until(lambda: s.way == ["h10"], page, console_errors)
    expect(page.get_by_text(f"2 of 5 movement points; wakes {WORK_AREA}").first).to_be_visible(timeout=WAIT)
    centres = [b.model.centre(*b.model.col_row(sq)) for sq in ("j10", "i10", "h10")]
    page.wait_for_function(WAY_DRAWN, arg=[[x for x, _ in centres], [y for _, y in centres]], timeout=WAIT)
    SHOTS.mkdir(exist_ok=True)
    page.mouse.move(5, 5)  # no hover box over the way
    page.screenshot(path=str(SHOTS / "route_marked.png"))

    # Switch marking off; the green i12 now costs 5 by this way, and its click moves T1 along it.
    page.get_by_role("button", name="Mark the way").click()
    until(lambda: not b.mark_way, page, console_errors)
    assert s.reachable()["i12"] == 5
    click_square(page, dash, "i12")
    until(lambda: s.state.figs["T1"].pos == s.game.board.square("i12"), page, console_errors)
    assert str(s.last_action) == "move T1 i12 via i10 h10 h11 h12"
    assert s.state.figs["S1"].face_up and s.state.figs["T1"].mp == 0
    # The browser shows the Servant woken (face up, named on the board) and the way gone.
    page.wait_for_function(f"() => ({BOARD_DETAILS})().some(t => t.startsWith('S1: Servant'))", timeout=WAIT)
    page.wait_for_function(f"() => !({WAY_DRAWN})([{[x for x, _ in centres]}, {[y for _, y in centres]}])",
                           timeout=WAIT)
    assert console_errors == []
    assert server_errors == []


# --- the Clone Master's standing control at a table ---------------------------------------------------------

@pytest.fixture
def tables(serve_app):
    """Serve ``/kf2100`` as ``dojo serve`` does (a table page a browser); yields (base URL, registry, pages)."""
    from dataclasses import replace

    from apps._files import data_dir
    from apps._tables import use_registry
    from engine.core.seal import Sealer
    from engine.core.tables import TableRegistry
    from engine.kf2100.table import KF2100_TABLE

    folder = data_dir()
    game = replace(KF2100_TABLE, secret_seed=lambda: 2_718_281_828_459_045)  # the same dice in every run
    reg = use_registry(TableRegistry(folder / "tables", {"kf2100": game}, Sealer.in_folder(folder)))
    pages: list = []

    def page() -> object:
        built = kf2100.create_table_app()
        pages.append(built)
        return built

    yield serve_app({"kf2100": page}), reg, pages


def test_the_clone_masters_browser_reveals_him_during_the_terminators_move(tables, browser, server_errors):
    import urllib.parse

    from apps._tables import TOKEN_COOKIE
    from engine.core.tables import new_token
    from engine.kf2100.actions import End

    url, reg, pages = tables
    t_token, c_token = new_token(), new_token()
    table = reg.create("kf2100", t_token)
    s = table.session
    position = skirmish(KungFuGame("basic"), {"T1": "g3", "T2": "n9", "CM": "s9"}, face_up=False)
    position.apply_action(End())  # he lets his window at the phase start go by
    s.load(dump_state(position))
    link = f"{url}kf2100?table={table.id}"
    browsers = []
    for token in (t_token, c_token):
        ctx = browser.new_context(viewport={"width": 1420, "height": 1000})
        ctx.add_cookies([{"name": TOKEN_COOKIE, "value": token, "url": url}])
        browsers.append(ctx.new_page())
    t, c = browsers
    opened = []
    for page, address in ((t, link), (c, f"{link}&seat={urllib.parse.quote('Clone Master')}")):
        count = len(pages)
        page.goto(address)
        page.wait_for_function(BOARD_READY, arg="board", timeout=WAIT)
        until(lambda count=count: len(pages) > count, page)
        opened.append(pages[-1].game)
    mine, his = opened
    until(lambda: table.seats_of(c_token) == ["Clone Master"] and his.sides.held == [1] and mine.sides.held == [0], c)
    assert s.state.step is Step.MOVE and s.person_to_move() == 0 and not s.hand_over
    reveal = c.get_by_role("button", name="Reveal the Clone Master now")
    expect(reveal).to_be_visible(timeout=WAIT)
    assert not mine.standing.shown() and t.get_by_role("button", name="Reveal the Clone Master now").count() == 0

    # The Terminators move T1; then, in the middle of their move, the Clone Master reveals himself.
    until(lambda: mine.board.frames["where"].get("T1") == mine.board.model.col_row("g3"), t)
    for _ in range(3):  # a quick second click on one spot can be read as a double tap: click again if so
        click_square(t, mine, "g3")
        try:
            wait_for(lambda: s.selected == "T1", t, timeout=5.0)
            break
        except AssertionError:
            continue
    until(lambda: s.selected == "T1", t)
    click_square(t, mine, "g5")
    until(lambda: s.state.figs["T1"].pos == s.game.board.square("g5"), t)
    # his browser has drawn the move (and the decision panel redrawn with it) before he clicks
    c.wait_for_function(f"() => ({BOARD_DETAILS})().some(d => d.startsWith('T1: Terminator on g5'))", timeout=WAIT)
    for _ in range(3):  # a click that lands on a button the panel is just redrawing is pressed again
        reveal.click(timeout=WAIT)
        try:
            wait_for(lambda: s.state.step is Step.BONUS_MOVE, c, timeout=5.0)
            break
        except AssertionError:
            continue
    until(lambda: s.state.step is Step.BONUS_MOVE and s.state.figs["CM"].face_up, c)
    t.wait_for_function(f"() => ({BOARD_DETAILS})().some(d => d.startsWith('CM: Clone Master on s9'))", timeout=WAIT)
    expect(reveal).to_be_hidden(timeout=WAIT)

    # His bonus move, by a click on his board; then the Terminators' move goes on where it was.
    until(lambda: "u9" in his.session.reachable("CM") and his.board.frames["costs"]["text"], c)
    click_square(c, his, "u9")
    until(lambda: s.state.step is Step.MOVE and s.person_to_move() == 0, c)
    assert s.state.figs["CM"].pos == s.game.board.square("u9") and s.state.figs["T1"].mp == 3
    t.wait_for_function(f"() => ({BOARD_DETAILS})().some(d => d.startsWith('CM: Clone Master on u9'))", timeout=WAIT)
    assert server_errors == []
