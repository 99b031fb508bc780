"""Kung-Fu Zoo in headless Chromium: click a die and a spot, drag the flick, see the odds, commit, watch it.

The server runs in the test process, so each step waits on the dashboard's own state (not on sleeps) and
then checks what the page shows. Screenshots of the main states go to ``/tmp/zoo_shots/``.
"""

from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path

import pytest
from browser_helpers import BOARD_READY, choose_file, drag_data, serve_pages, to_page, wait_for
from playwright.sync_api import expect

from apps import zoo
from apps.zoo import adapter as za
from engine.zoo.faces import orientation_with_up
from engine.zoo.game import Die
from engine.zoo.session import DRAG_MM_PER_M_S, ZooSession

pytestmark = pytest.mark.browser

SHOTS = Path(os.environ.get("ZOO_SHOTS", "/tmp/zoo_shots"))
WAIT = 30.0  # s: the machine is shared, so page updates can lag behind the server's state


def until(cond, page, timeout=WAIT, message=None):
    try:
        wait_for(cond, page, timeout=timeout)
    except AssertionError as exc:
        raise AssertionError(f"{exc}: {message() if message else ''}") from None


def serve(serve_app):
    return serve_pages(serve_app, zoo.create_app)


def open_game(page, url, pages, count=1):
    page.set_viewport_size({"width": 1280, "height": 1000})
    page.goto(url)
    page.wait_for_function(BOARD_READY, arg="arena", timeout=30_000)
    until(lambda: len(pages) >= count, page)
    return pages[count - 1]


def shot(page, name):
    page.wait_for_timeout(300)
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def click(page, x, y):
    page.evaluate("window.scrollTo(0, 0)")  # the arena must be in the viewport (mouse coordinates are viewport's)
    page.mouse.click(*to_page(page, x, y, "arena"))


LIVE_ARROW = """() => [...Bokeh.index.all_views()].some(v => v.model.name === 'arena' && v.model.renderers.some(r => {
  const d = r.data_source ? r.data_source.data : null;
  const x1 = d ? (d instanceof Map ? d.get('x1') : d['x1']) : null;
  return x1 && x1.length == 1 && !('x2' in (d instanceof Map ? Object.fromEntries(d) : d)) && Number.isFinite(x1[0]);
}))"""


def drag(page, start, vector, shot_name=None):
    """A real mouse drag on the arena, from data point ``start`` by ``vector``; ``shot_name``: a screenshot before
    the release (the live arrow)."""

    def before_release() -> None:
        page.wait_for_function(LIVE_ARROW, timeout=WAIT * 1000)  # drawn in the browser while dragging
        shot(page, shot_name)

    def scroll() -> None:
        page.wait_for_timeout(400)  # a press right after a click would be read as part of a double tap
        page.evaluate("window.scrollTo(0, 0)")

    drag_data(page, "arena", start, vector, before=scroll, before_release=before_release if shot_name else None)


SCROLL_TO = """(name) => [...Bokeh.index.all_views()].find(v => v.model.name === name && v.frame)
  .el.scrollIntoView({block: 'center'})"""
"""JS: scroll the figure named ``name`` into the middle of the viewport (mouse coordinates are the viewport's)."""


def figure_title(page, name):
    return page.evaluate("(name) => [...Bokeh.index.all_views()].find(v => v.model.name === name).model.title.text",
                         name)


def expect_title(page, name, pattern, timeout=WAIT):
    """The title the browser shows on the figure ``name`` comes to match ``pattern`` (a regular expression)."""
    import re

    until(lambda: re.search(pattern, figure_title(page, name)), page, timeout=timeout,
          message=lambda: f"the {name} title is {figure_title(page, name)!r}")


def aim_vector(direction, speed, normal_deg):
    h = math.radians(normal_deg + direction)
    return speed * DRAG_MM_PER_M_S * math.cos(h), speed * DRAG_MM_PER_M_S * math.sin(h)


def test_drag_a_flick_see_the_odds_commit_and_watch_it_play(page, serve_app, console_errors, tmp_path):
    url, pages = serve(serve_app)
    dash = open_game(page, url, pages)
    s = dash.session
    assert [seat.kind for seat in s.seats] == ["person", "bot"]
    shot(page, "1_start")
    # Choose C2 on the bench, the west dot, the back face; then drag the flick from the die.
    click(page, *za.bench_xy(0, 1))
    until(lambda: s.die == "C2", page)
    click(page, -10.0, 150.0)
    until(lambda: s.spot == "W-dot", page)
    page.get_by_role("button", name="back", exact=True).click()
    until(lambda: s.face == "back", page)
    expect(page.locator(".bk-Canvas").first).to_be_visible()
    drag(page, (9.5, 150.0), aim_vector(8.0, 1.3, 0.0), shot_name="2a_dragging")
    released = time.perf_counter()
    until(lambda: s.proposed_flick() is not None and abs(s.direction - 8.0) < 1.0 and abs(s.speed - 1.3) < 0.03, page)
    until(lambda: dash.odds.odds_for(str(s.proposed_flick())) is not None, page)
    print(f"first odds {time.perf_counter() - released:.2f} s after the mouse was released")
    expect(page.locator(".p-cage")).to_be_visible(timeout=WAIT * 1000)
    until(lambda: dash.odds.odds is not None and dash.odds.odds.samples == 500 and not dash.odds.busy, page)
    print(f"all 500 odds {time.perf_counter() - released:.2f} s after the mouse was released")
    expect(page.locator(".odds-n")).to_contain_text("500 simulated flicks", timeout=WAIT * 1000)
    until(lambda: dash.odds.grid is not None and dash.odds.mapped == dash.odds.cells, page, timeout=60)
    expect_title(page, "heatmap", "a cell: click to aim|no cell caged")
    shot(page, "2_aimed_with_odds")
    shown = dash.odds.odds

    page.get_by_role("button", name="Commit flick").click()
    until(lambda: dash.arena.animating, page)
    page.wait_for_timeout(150)
    shot(page, "3_animating")
    until(lambda: not dash.arena.animating and dash.arena.fps_log, page)
    assert dash.arena.fps_log[-1]["drawn"] >= 2
    entry = s.log[1]
    assert entry["player"] == 0 and entry["text"].startswith("flick C2 from W-dot face=back")
    assert entry["odds"]["cage_opponent"] == pytest.approx(shown.cage_opponent.value)
    fighting = " · ".join(f"{s.state.game.player_name(q)} {s.state.still_fighting(q)}" for q in range(2))
    expect(page.locator(".fighting")).to_have_text(fighting, timeout=WAIT * 1000)
    # The bot (P2) answers: its flick animates too, then it is P1's turn again.
    # settled, not merely "not animating": the bot's flick is in the log a tick before its animation starts
    until(lambda: len(s.log) >= 3 and dash.arena.settled() and s.state.to_move == 0, page, timeout=60)
    expect(page.locator(".prompt")).to_contain_text("P1 (Crocodile) to make a flick", timeout=WAIT * 1000)
    assert len(dash.arena.fps_log) >= 2
    print("animations in the browser:", [f"{e['fps']:.0f} fps over {e['seconds']:.2f} s" for e in dash.arena.fps_log])
    shot(page, "4_after_the_bot")

    # Save (a download), play on, a bad file changes nothing, the saved file brings the battle back.
    with page.expect_download() as info:
        page.get_by_text("Save game").click()
    saved = Path(info.value.path()).read_text()
    assert json.loads(saved)["game"] == json.loads(s.save())["game"]
    kept = s.state.to_json()
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "something else"}')
    version = s.version
    choose_file(page, bad)
    until(lambda: "Could not load" in s.notice.text, page)
    expect(page.get_by_text("Could not load").first).to_be_visible(timeout=WAIT * 1000)
    assert s.version == version and s.state.to_json() == kept
    assert console_errors == []


def caging_position() -> tuple[str, float, float]:
    """A saved battle where P1's Crocodile on the north dot cages the Elephant at (48.6, 65.7), in front of the
    south-west cage, with the aim that does it. The physics is deterministic: the same position, flick and seed
    give the same outcome, so the aim is checked here on a session of its own, as the page will play it."""
    s = ZooSession(seed=5, seats=["person", "person"], odds_workers=1)
    st = s.state
    st.rail_rule = None
    st.dice["E1"] = Die(1, "arena", 48.6, 65.7, 0.3, orientation_with_up("back"))
    saved, direction, speed = s.save(), -21.5, 1.5
    check = ZooSession(seed=5, seats=["person", "person"], odds_workers=1)
    assert check.try_load(saved)
    assert check.choose_die("C1") and check.launch_spot("N-dot") and check.set_face("back")
    check.param.update(direction=direction, speed=speed)
    check.commit_flick()
    assert check.state.dice["E1"].status == "caged" and check.state.phase == "extra"
    return saved, direction, speed


def test_a_caging_grants_the_extra_flick(page, serve_app, console_errors, tmp_path):
    saved, direction, speed = caging_position()
    url, pages = serve(serve_app)
    dash = open_game(page, url, pages)
    s = dash.session
    file = tmp_path / "cage.json"
    file.write_text(saved)
    choose_file(page, file)
    until(lambda: "Battle loaded" in s.notice.text and [q.kind for q in s.seats] == ["person", "person"], page)
    click(page, *za.bench_xy(0, 0))
    until(lambda: s.die == "C1", page)
    click(page, 150.0, 310.0)
    until(lambda: s.spot == "N-dot", page)
    page.get_by_role("button", name="back", exact=True).click()
    until(lambda: s.face == "back", page)
    drag(page, (150.0, 309.5), aim_vector(direction, speed, -90.0))
    until(lambda: abs(s.direction - direction) < 0.6 and abs(s.speed - speed) < 0.03, page)
    for label, value in (("Direction (°)", direction), ("Speed (m/s)", speed)):  # the exact aim checked above
        box = page.get_by_label(label)
        box.fill(str(value))
        box.press("Enter")
    until(lambda: (s.direction, s.speed) == (direction, speed), page)
    until(lambda: dash.odds.odds_for(str(s.proposed_flick())) is not None, page)
    page.get_by_role("button", name="Commit flick").click()
    until(lambda: dash.arena.animating, page)
    until(lambda: not dash.arena.animating, page)
    assert s.state.dice["E1"].status == "caged"
    assert s.state.phase == "extra" and s.state.to_move == 0
    expect(page.locator(".prompt")).to_contain_text("an extra flick", timeout=WAIT * 1000)
    expect(page.get_by_role("button", name="Pass the extra flick")).to_be_visible()
    shot(page, "5_caged_extra_flick")
    page.get_by_role("button", name="Pass the extra flick").click()
    until(lambda: s.state.to_move == 1 and s.state.phase == "flick", page)

    # An Elephant knocked out of the arena: its owner clicks where it goes back, face-up.
    file.write_text(knocked_out())
    choose_file(page, file)
    until(lambda: s.state.phase == "place", page)
    expect(page.locator(".prompt")).to_contain_text("places E1 face-up anywhere", timeout=WAIT * 1000)
    page.wait_for_timeout(400)
    click(page, 200.0, 220.0)
    until(lambda: s.state.dice["E1"].status == "arena", page, message=lambda: s.notice.text)
    e1 = s.state.dice["E1"]
    assert (e1.x, e1.y, e1.face) == (pytest.approx(200.0, abs=1.0), pytest.approx(220.0, abs=1.0), "head")
    assert s.state.phase == "flick" and s.state.to_move == 1
    shot(page, "7_placed_back")
    assert console_errors == []


def knocked_out() -> str:
    """A saved battle in which P2 must put their Elephant E1, knocked out of the arena, back in."""
    s = ZooSession(seed=5, seats=["person", "person"], odds_workers=1)
    st = s.state
    st.dice["C1"] = Die(0, "arena", 100.0, 100.0, 0.0, orientation_with_up("back"))
    st.dice["E1"].status = "out"
    st.phase, st.to_move, st.pending, st.resume = "place", 1, [[1, "E1", "head"]], [0, False]
    return s.save()


def test_two_tabs_play_independent_games(page, serve_app, console_errors):
    url, pages = serve(serve_app)
    first = open_game(page, url, pages)
    other = page.context.new_page()
    second = open_game(other, url, pages, count=2)
    assert first.session is not second.session
    second.bots.active = False
    seed = other.get_by_label("Seed")
    seed.fill("7")
    seed.press("Enter")
    until(lambda: second.controls.seed.value == 7, other)
    other.get_by_role("button", name="New game").click()
    until(lambda: second.session.seed == 7, other)
    expect(other.get_by_text("seed 7").first).to_be_visible(timeout=WAIT * 1000)
    before = second.session.state.to_json()
    page.bring_to_front()
    click(page, *za.bench_xy(0, 2))
    until(lambda: first.session.die == "C3", page)
    page.wait_for_function(BOARD_READY, arg="arena", timeout=WAIT * 1000)  # the tab brought back is drawn again
    drag(page, (150.0, 9.5), aim_vector(0.0, 1.0, 90.0))
    until(lambda: first.session.proposal_problem() is None and abs(first.session.speed - 1.0) < 0.03, page,
          message=lambda: first.session.notice.text)
    page.get_by_role("button", name="Commit flick").click()
    until(lambda: len(first.session.log) >= 2, page)
    assert second.session.state.to_json() == before and len(second.session.log) == 1
    assert first.session.seed == 1
    expect(page.get_by_text("seed 7")).to_have_count(0)
    other.close()
    assert console_errors == []


# --- issue 13: the page tells the outcome -----------------------------------------------------------------------
SOURCE = """([fig, renderer]) => {
  const v = [...Bokeh.index.all_views()].find(v => v.model.name === fig);
  const d = v.model.renderers.find(r => r.name === renderer).data_source.data;
  return Object.fromEntries(d instanceof Map ? d : Object.entries(d));
}"""


def drawn(page, renderer, fig="arena"):
    """The data the browser draws with one named renderer of a figure (columns as lists)."""
    return {k: list(v) for k, v in page.evaluate(SOURCE, [fig, renderer]).items()}


def load(page, dash, tmp_path, text, name="battle.json"):
    version = dash.session.version
    file = tmp_path / name
    file.write_text(text)
    choose_file(page, file)
    until(lambda: dash.session.version > version and "Battle loaded" in dash.session.notice.text, page,
          message=lambda: dash.session.notice.text)


def test_a_round_ends_on_its_result_card_and_the_final_board_stays_until_next_round(page, serve_app, console_errors,
                                                                                   tmp_path):
    """Caging the last Elephant fighting wins the round: the card says who won and how, the board stays as the
    round ended (the next round's choice waits), and Next round goes on."""
    saved, direction, speed = caging_position()
    data = json.loads(saved)
    s = ZooSession(seed=5, seats=["person", "person"], odds_workers=1)
    s.load(saved)
    for e in ("E2", "E3", "E4"):
        s.state.dice[e].status = "caged"  # E1 is the last Elephant fighting
    saved = s.save()
    assert json.loads(saved)["format"] == data["format"]
    url, pages = serve(serve_app)
    dash = open_game(page, url, pages)
    s = dash.session
    load(page, dash, tmp_path, saved)
    click(page, *za.bench_xy(0, 0))
    until(lambda: s.die == "C1", page)
    click(page, 150.0, 310.0)
    until(lambda: s.spot == "N-dot", page)
    page.get_by_role("button", name="back", exact=True).click()
    until(lambda: s.face == "back", page)
    drag(page, (150.0, 309.5), aim_vector(direction, speed, -90.0))
    until(lambda: abs(s.direction - direction) < 0.6 and abs(s.speed - speed) < 0.03, page)
    for label, value in (("Direction (°)", direction), ("Speed (m/s)", speed)):  # the exact aim checked above
        box = page.get_by_label(label)
        box.fill(str(value))
        box.press("Enter")
    until(lambda: (s.direction, s.speed) == (direction, speed), page)
    page.get_by_role("button", name="Commit flick").click()
    until(lambda: s.round_result is not None and dash.arena.settled(), page, timeout=60)
    assert s.state.dice["E1"].status == "caged" and s.state.wins == [1, 0] and s.state.phase == "first"
    card = page.locator(".round-result")
    expect(card).to_contain_text("P1 (Crocodile) wins round 1", timeout=WAIT * 1000)
    expect(card).to_contain_text("no animal left fighting")
    c1 = s.state.dice["C1"]

    def c1_drawn() -> tuple[float, float]:
        board = drawn(page, "dice")
        i = board["id"].index("C1")
        return board["x"][i], board["y"][i]

    # the final board, as the browser draws it once the flick has played out there (a loaded machine draws it
    # a moment after the card shows)
    until(lambda: c1_drawn() == (pytest.approx(c1.x), pytest.approx(c1.y)), page)
    expect(page.get_by_role("button", name="P2 (Elephant) starts")).to_be_hidden()  # the card comes first
    shot(page, "8_round_result_cage")
    page.get_by_role("button", name="Next round").click()
    until(lambda: s.round_result is None, page)
    expect(card).to_be_hidden(timeout=WAIT * 1000)
    page.get_by_role("button", name="P2 (Elephant) starts").click()
    until(lambda: s.state.round_no == 2 and s.state.to_move == 1, page)
    assert console_errors == []


def last_animal_to_enter() -> str:
    """A Points Battle with every animal in the arena but C4, which P1 flicks to end the round."""
    from helpers import in_arena

    s = ZooSession(seed=6, mode="points", seats=["person", "person"], odds_workers=1)
    st = s.state
    in_arena(st, faces={"C1": "head", "C2": "back", "C3": "tail", "E1": "left", "E2": "head", "E3": "feet",
                        "E4": "right"}, dice=["C1", "C2", "C3", "E1", "E2", "E3", "E4"])
    st.rail_rule, st.to_move = None, 0
    return s.save()


def test_a_points_round_shows_each_animal_face_and_points_both_totals_and_the_difference(page, serve_app,
                                                                                       console_errors, tmp_path):
    url, pages = serve(serve_app)
    dash = open_game(page, url, pages)
    s = dash.session
    load(page, dash, tmp_path, last_animal_to_enter())
    click(page, *za.bench_xy(0, 3))
    until(lambda: s.die == "C4", page)
    drag(page, (150.0, 9.5), aim_vector(0.0, 0.6, 90.0))
    until(lambda: s.proposal_problem() is None and abs(s.speed - 0.6) < 0.03, page,
          message=lambda: f"{s.notice.text} (speed {s.speed}, {s.proposal_problem()})")
    page.get_by_role("button", name="Commit flick").click()
    until(lambda: s.round_result is not None and dash.arena.settled(), page, timeout=60)
    r = s.round_result
    card = page.locator(".round-result")
    expect(card).to_contain_text("Round 1: the points", timeout=WAIT * 1000)
    for a in r.animals:
        expect(card).to_contain_text(f"{a.die} {a.face} ({za.FACE_LETTERS[a.face]}) {a.points:+d}")
    totals = card.locator(".total").all_inner_texts()
    assert totals == [str(t) for t in r.totals]
    assert r.totals == tuple(sum(a.points for a in r.animals if a.player == q) for q in (0, 1))
    expect(card.locator(".difference")).to_have_text(f"{r.totals[0] - r.totals[1]:+d}")

    def final_board() -> list[tuple[str, float, float, str]]:
        board = drawn(page, "dice")
        return [(a.die, *(board[k][board["id"].index(a.die)] for k in ("x", "y", "status"))) for a in r.animals]

    # the board as the round ended, whatever the next round has done to the dice, once the browser draws it (the
    # card's text can show before the flick's last board reaches the browser)
    ended = [(a.die, pytest.approx(a.x), pytest.approx(a.y), "arena") for a in r.animals]
    until(lambda: final_board() == ended, page, message=lambda: f"the browser draws {final_board()}")
    shot(page, "9_round_result_points")
    page.get_by_role("button", name="Next round").click()
    expect(card).to_be_hidden(timeout=WAIT * 1000)
    assert console_errors == []


def test_a_stunned_die_keeps_its_hatch_while_it_moves(page, serve_app, console_errors, tmp_path):
    """While a flick plays out, every die it moves is drawn by the animation, a stunned one hatched there; the
    hatch it had on the board is hidden with it (it used to stay behind where the die had been)."""
    from helpers import in_arena

    s0 = ZooSession(seed=7, seats=["person", "person"], odds_workers=1)
    in_arena(s0.state, faces={"C1": "feet"}, dice=["C1", "E1"])
    s0.state.rail_rule = None
    url, pages = serve(serve_app)
    dash = open_game(page, url, pages)
    s = dash.session
    load(page, dash, tmp_path, s0.save())

    def hatched():
        board = drawn(page, "dice")
        return board["halpha"][board["id"].index("C1")] > 0

    until(hatched, page)  # hatched on the board
    click(page, *za.bench_xy(0, 1))
    until(lambda: s.die == "C2", page)
    drag(page, (150.0, 9.5), aim_vector(-20.0, 2.2, 90.0))
    until(lambda: s.proposal_problem() is None and abs(s.speed - 2.2) < 0.05, page)
    page.get_by_role("button", name="Commit flick").click()
    playing: list[dict] = []

    def plays_c1() -> bool:  # both layers read at once, while the browser plays the flick
        playing[:] = [drawn(page, "moving"), drawn(page, "dice")]
        return "C1" in playing[0]["id"]

    until(plays_c1, page)
    moving, board = playing
    shot(page, "10_hatch_moves_with_its_die")
    assert moving["halpha"][moving["id"].index("C1")] > 0 or s.state.dice["C1"].face != "feet"
    i = board["id"].index("C1")
    assert board["alpha"][i] == 0 and board["halpha"][i] == 0  # nothing left behind on the board layer
    until(lambda: dash.arena.settled(), page, timeout=60)
    c1 = s.state.dice["C1"]
    if c1.status == "arena":  # the board layer shows the final position and its hatch once the browser has it

        def final_board() -> bool:
            board = drawn(page, "dice")
            i = board["id"].index("C1")
            return ((board["x"][i], board["y"][i]) == (pytest.approx(c1.x), pytest.approx(c1.y))
                    and (board["halpha"][i] > 0) is (c1.face == "feet"))

        until(final_board, page)
    assert console_errors == []


def test_the_heat_map_says_why_it_has_no_map(page, serve_app, console_errors, tmp_path):
    """Under Dust Kick and on a bot's turn there is nothing to map: the title says so (it said "mapping…" for
    ever)."""
    s0 = ZooSession(seed=8, teams=["gorilla", "zebra"], seats=["person", "person"], odds_workers=1)
    s0.state.dust[0] = True
    url, pages = serve(serve_app)
    dash = open_game(page, url, pages)
    load(page, dash, tmp_path, s0.save())
    expect_title(page, "heatmap", r"none now\. Eyes closed \(Dust Kick\)")
    expect(page.locator(".no-odds")).to_contain_text("Eyes closed (Dust Kick)", timeout=WAIT * 1000)
    shot(page, "11_heat_map_dust_kick")
    dash.bots.active = False  # the bot's turn stays on the page
    s0 = ZooSession(seed=8, seats=["bot", "person"], odds_workers=1)
    load(page, dash, tmp_path, s0.save(), "bot.json")
    expect_title(page, "heatmap", "none now.*played by the computer")
    assert dash.odds.cells == 0 and not dash.odds.busy
    assert console_errors == []


def test_a_rail_click_off_the_dot_does_not_arm_the_ambush(page, serve_app, console_errors):
    url, pages = serve(serve_app)
    dash = open_game(page, url, pages)
    s = dash.session
    click(page, *za.bench_xy(0, 0))
    until(lambda: s.die == "C1", page)
    click(page, 100.0, -10.0)  # the south rail, off its dot
    until(lambda: "arm the ability first" in s.notice.text, page)
    assert s.spot == "S-dot" and not s.use_ability_flag
    expect(page.locator(".notice")).to_contain_text("arm the ability first", timeout=WAIT * 1000)
    assert drawn(page, "bands")["left"] == []  # no band to flick from: the Ambush is not armed
    page.get_by_role("button", name="Arm Ambush").click()
    until(lambda: s.use_ability_flag, page)
    expect(page.get_by_role("button", name="Disarm Ambush")).to_be_visible(timeout=WAIT * 1000)
    page.wait_for_timeout(400)
    click(page, 100.0, -10.0)
    until(lambda: s.spot == "S@100.0", page, message=lambda: s.notice.text)
    until(lambda: len(drawn(page, "bands")["left"]) == 4, page,  # drawn on the arena's next tick, then sent
          message=lambda: f"the browser draws the bands {drawn(page, 'bands')}")
    assert s.proposal_problem() is None and not s.state.spent[0]  # armed, spent only by the flick
    shot(page, "12_ambush_armed")
    assert console_errors == []



def leaning_battle() -> str:
    """A saved battle with C1 leaning 30 degrees against the west rail (its back still most nearly up) and E1
    flat in the middle, P1 to flick."""
    import numpy as np
    from helpers import in_arena

    from engine.zoo.arena3d import snap
    from engine.zoo.arena3d.pose import quat_mat

    s = ZooSession(seed=7, seats=["person", "person"], odds_workers=1)
    in_arena(s.state, faces={"C1": "back", "E1": "back"}, dice=["C1", "E1"])
    s.state.rail_rule = None
    tilt = math.radians(-30.0)  # about the north axis: the top leans west
    q = (math.cos(tilt / 2), 0.0, math.sin(tilt / 2), 0.0)
    yaw, orientation = snap(quat_mat(np.array(q)))
    c1 = s.state.dice["C1"]
    c1.x, c1.y, c1.z, c1.quat, c1.angle, c1.orientation = 12.0, 150.0, 12.0, q, yaw, orientation
    return s.save()


TILT_WATCH = """([die, ms]) => new Promise((resolve) => {
  const v = [...Bokeh.index.all_views()].find(v => v.model.name === 'arena' && v.frame);
  const src = v.model.renderers.find(r => r.name === 'moving').data_source;
  const get = (k) => (src.data instanceof Map ? src.data.get(k) : src.data[k]);
  const end = performance.now() + ms;
  function look() {
    const ids = get('id') || [], alpha = get('alpha') || [];
    if (ids.filter((d, k) => d === die && alpha[k] > 0).length >= 2) { resolve(true); return; }
    if (performance.now() > end) { resolve(false); return; }
    requestAnimationFrame(look);
  }
  look();
})"""
"""JS: whether the animation draws ``die`` with two or more faces (tilted) within ``ms``, looked at every frame."""

CUBES = """(poses) => poses.map(([x, y, w, a, b, c]) => window.dojoZooCube(x, y, w, a, b, c))"""


def test_dice_are_drawn_as_cubes_tumble_with_their_tilt_and_replay_slowly(page, serve_app, console_errors,
                                                                           tmp_path):
    url, pages = serve(serve_app)
    dash = open_game(page, url, pages)
    s = dash.session
    load(page, dash, tmp_path, leaning_battle())
    until(lambda: drawn(page, "faces")["id"].count("C1") == 2, page)  # the leaning die shows its side
    assert drawn(page, "faces")["id"].count("E1") == 1
    shot(page, "11_leaning_die")
    # The strike slider, by keyboard (the handle takes the arrow keys): up to the highest strike.
    handle = page.locator(".noUi-handle").first
    handle.focus()
    for _ in range(40):  # each press moves it a step (a loaded machine may report a press late)
        if s.strike == 1.0:
            break
        handle.press("ArrowRight")
        page.wait_for_timeout(150)
    until(lambda: s.strike == 1.0, page, message=lambda: f"strike {s.strike}")
    click(page, *za.bench_xy(0, 1))
    until(lambda: s.die == "C2", page)
    click(page, 150.0, -10.0)
    until(lambda: s.spot == "S-dot", page)
    drag(page, (150.0, 9.5), aim_vector(-12.0, 1.1, 90.0))
    until(lambda: s.proposal_problem() is None and abs(s.speed - 1.1) < 0.05, page)
    # The exact aim typed in, so that the flick and its roll are the same every run (a drag lands a little off).
    for label, value in (("Direction (°)", -12.0), ("Speed (m/s)", 1.1)):
        box = page.get_by_label(label)
        box.fill(str(value))
        box.press("Enter")
    until(lambda: (s.direction, s.speed) == (-12.0, 1.1), page)
    assert str(s.proposed_flick()).endswith("strike=1.0")
    version = s.version
    page.get_by_role("button", name="Commit flick").click()
    until(lambda: s.version > version, page, message=lambda: s.notice.text)  # played (settled until it is)
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(SHOTS / "12_tumbling.png"))
    until(lambda: dash.arena.settled(), page, timeout=60)
    # The high strike rolled it: the physics' frames show the die on an edge or a corner (two or three faces seen
    # from above) for a while (about 0.2 s of a 0.38 s flick).
    rolled = [float(f["t"]) for f in s.last_frames if len(za.cube_faces(*f["dice"]["C2"][:3], za.rotation(
        {"quat": f["dice"]["C2"][5:9]}))) >= 2]
    assert rolled and rolled[-1] - rolled[0] > 0.05, "the high strike never rolled the flicked die"
    flick_log = dict(dash.arena.fps_log[-1])
    duration = float(s.last_frames[-1]["t"])
    assert flick_log["wall"] >= 0.9 * duration
    # The browser's projection (used for every animation frame) is the page's own (adapter.cube_faces).
    arena_dice = [d for d, die in s.state.dice.items() if die.status == "arena" and die.quat is not None]
    poses = [[s.state.dice[d].x, s.state.dice[d].y, *s.state.dice[d].quat] for d in arena_dice]
    for d, seen in zip(arena_dice, page.evaluate(CUBES, poses), strict=True):
        die = s.state.dice[d]
        mine = za.cube_faces(die.x, die.y, die.z, za.rotation({"quat": die.quat}))
        assert [f["letter"] for f in seen] == [za.FACE_LETTERS[f["face"]] for f in mine]
        for js, py in zip(seen, mine, strict=True):
            assert js["xs"] == pytest.approx(py["xs"], abs=1e-6) and js["ys"] == pytest.approx(py["ys"], abs=1e-6)
    # The browser draws it tilted: watched frame by frame in the slow replay, the same animation at a quarter of
    # the speed. At full speed the tilt lasts a dozen animation frames, fewer than a loaded machine's browser may
    # draw.
    page.evaluate(f"() => {{ window.dojoTiltSeen = ({TILT_WATCH})(['C2', {1000 * (WAIT + 10 + 4 * duration)}]); }}")
    page.get_by_role("button", name="Replay slowly").click()
    until(lambda: dash.arena.animating, page)
    page.evaluate("window.scrollTo(0, 0)")
    for k in range(4):  # a film of the slow replay (each at once, a sixth of the replay apart)
        page.wait_for_timeout(int(1000 * duration * 4 / 6))
        page.screenshot(path=str(SHOTS / f"13_replaying_slowly_{k}.png"))
    until(lambda: dash.arena.settled() and len(dash.arena.fps_log) >= 2, page, timeout=60 + 8 * duration)
    assert page.evaluate("() => window.dojoTiltSeen"), "the rolling die was never drawn tilted in the slow replay"
    replay = dash.arena.fps_log[-1]
    print(f"flick {duration:.2f} s played in {flick_log['wall']:.2f} s, replayed in {replay['wall']:.2f} s")
    assert replay["wall"] >= 3.9 * duration and replay["seconds"] >= duration
    assert console_errors == []


def test_a_points_battle_maps_the_expected_points_of_each_aim(page, serve_app, console_errors, tmp_path):
    from helpers import in_arena

    s0 = ZooSession(seed=4, mode="points", seats=["person", "person"], odds_workers=1)
    in_arena(s0.state, faces={"E1": "head", "E2": "back"}, dice=["E1", "E2"])
    s0.state.rail_rule, s0.state.to_move = None, 0
    url, pages = serve(serve_app)
    dash = open_game(page, url, pages)
    s = dash.session
    load(page, dash, tmp_path, s0.save())
    click(page, *za.bench_xy(0, 0))
    until(lambda: s.die == "C1", page)
    drag(page, (150.0, 9.5), aim_vector(0.0, 1.2, 90.0))
    until(lambda: s.proposal_problem() is None and abs(s.speed - 1.2) < 0.05, page)
    page.get_by_role("button", name="Expected points", exact=True).click()
    until(lambda: dash.odds.measure == "points", page)
    until(lambda: dash.odds.grid is not None and dash.odds.mapped == dash.odds.cells, page, timeout=90)
    expect_title(page, "heatmap", "Expected points by aim, 18 flicks a cell: click to aim")
    grid = dash.odds.grid
    until(lambda: drawn(page, "heatmap_cells", fig="heatmap")["p"] == pytest.approx(
        [float(v) for v in grid["points_mean"]]), page,
        message=lambda: f"the browser maps {drawn(page, 'heatmap_cells', fig='heatmap')['p'][:6]}…")
    page.locator(".bk-Canvas").nth(1).scroll_into_view_if_needed()
    shot(page, "14_expected_points_map")
    # A click on a cell aims there (the map's clicks reach the session through a source the browser writes).
    k = next(i for i in range(len(grid)) if abs(float(grid["speed"][i]) - s.speed) > 0.3)
    cell = (float(grid["direction"][k]), float(grid["speed"][k]))
    page.evaluate(SCROLL_TO, "heatmap")
    page.mouse.click(*to_page(page, *cell, "heatmap"))
    until(lambda: (s.direction, s.speed) == pytest.approx(cell), page,
          message=lambda: f"a click on the cell {cell} aimed at {(s.direction, s.speed)}")
    assert console_errors == []
