"""Kung Fu 2100 in headless Chromium: enter the lair by clicking, fight the bot with chits to a loss and on to
the next turn, the hot-seat set-up and hand-over, two tabs, with no error on the server or in the browser.

The server runs in the test process, so each step waits on the session's own state (not on sleeps) and
then checks what the page shows. Screenshots of the main states go to ``/tmp/kf_shots/``.
"""

from __future__ import annotations

import re
import time
from fractions import Fraction
from pathlib import Path

import pytest
from browser_helpers import (
    BOARD_DETAILS,
    BOARD_READY,
    choose_file,
    page_report,
    serve_pages,
    to_page,
    wait_for,
)
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import expect

from apps import kf2100
from apps.kf2100 import game_theory
from apps.kf2100.lair import levels_text
from engine.core import dump_state
from engine.core.session import Level
from engine.kf2100.actions import Attack
from engine.kf2100.state import KungFuGame, skirmish
from engine.kf2100.steps import Step

pytestmark = pytest.mark.browser

SHOTS = Path("/tmp/kf_shots")
WAIT = 30_000  # ms: the machine is shared, so page updates can lag behind the server's state
FACE_UP_IDS = re.compile(r"^(CM|J\d+|S\d+|U\d+|A\d+)")


def until(cond, page):
    wait_for(cond, page, timeout=WAIT / 1000)


def serve(serve_app):
    return serve_pages(serve_app, kf2100.create_app)


def open_game(page, url, pages, count=1):
    page.set_viewport_size({"width": 1420, "height": 1000})
    page.goto(url)
    page.wait_for_function(BOARD_READY, arg="board", timeout=WAIT)
    until(lambda: len(pages) >= count, page)
    dash = pages[count - 1]
    delay = page.locator(".bot-delay input")  # the bot's step time: quick for the tests
    delay.fill("60")
    delay.press("Enter")
    until(lambda: dash.bots.delay == 60, page)
    return dash


def shot(page, name, text=None):
    if text:
        expect(page.get_by_text(text).first).to_be_visible(timeout=WAIT)
    page.wait_for_timeout(300)
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def click_square(page, dash, square):
    m = dash.board.model
    page.mouse.click(*to_page(page, *m.centre(*m.col_row(square))))


def click_figure(page, dash, fid):
    page.mouse.click(*to_page(page, *dash.board.model.centre(*dash.board.frames["where"][fid])))


def click_until(page, click, cond):
    """Click, and click again if the page took two quick clicks on one spot for a double tap."""
    for _ in range(3):
        click()
        try:
            wait_for(cond, page, timeout=3.0)
            return
        except AssertionError:
            continue
    until(cond, page)


def human_turn(dash, player=0):
    return lambda: dash.session.person_to_move() == player and not dash.session.pending


def refused(s):
    return s.notice.level is Level.WARNING


def decide(page, dash, press, errors):
    """One decision of the human's through the page, pressed until the game takes it.

    The version is read before the question: the test thread may see a bot's action half applied, and
    then the version moves on by itself and the caller asks again. A press the page has not drawn yet is
    tried again; after ``2 * WAIT`` the failure says what the page showed and the browser's errors.
    """
    s = dash.session
    version = s.version
    deadline = time.time() + 2 * WAIT / 1000
    while s.version == version:
        try:
            press()
            wait_for(lambda: s.version > version, page, timeout=10.0)  # a loaded machine can take 5 s to play it
        except (PlaywrightError, AssertionError):
            if s.version == version and time.time() > deadline:
                pytest.fail(f"the page did not take the decision at {s.notice.text!r}: {page_report(page, errors)}")


def test_enter_by_the_disposal_fight_the_bot_with_chits_and_play_on(page, serve_app, console_errors, server_errors,
                                                                    tmp_path):
    url, pages = serve(serve_app)
    dash = open_game(page, url, pages)
    s = dash.session
    shot(page, "1_entry", "Where does T1 wait")

    # T1 waits at the disposal by a click on its square; T2 and T3 by the buttons.
    click_until(page, lambda: click_square(page, dash, "c3"), lambda: s.state.figs["T1"].entry == "disposal")
    for fid, entry in (("T2", "disposal"), ("T3", "loo")):
        page.get_by_role("button", name=f"{fid} at the {entry}").click()
        until(lambda fid=fid, entry=entry: s.state.figs[fid].entry == entry, page)
    until(human_turn(dash), page)

    # Select T1 where it waits; the squares it can reach are highlighted with their cost.
    click_until(page, lambda: click_figure(page, dash, "T1"),
                lambda: s.selected == "T1" and dash.board.frames["costs"]["text"])
    costs = sorted(map(int, dash.board.frames["costs"]["text"]))
    assert costs == sorted(s.reachable("T1").values()) and costs[0] == 1
    shot(page, "2_t1_selected", "T1 selected")

    # A wall is refused with the reason, and nothing changes.
    before = s.save()
    click_square(page, dash, "a1")
    until(lambda: refused(s), page)
    expect(page.get_by_text("a1 is a wall").first).to_be_visible(timeout=WAIT)
    assert s.save() == before

    # Enter the lair by the disposal, then walk on.
    click_until(page, lambda: click_square(page, dash, "c3"),
                lambda: s.state.figs["T1"].pos == s.game.board.square("c3"))
    assert any(e.get("event") == "T1 enters by the disposal" for e in s.state.log)
    click_until(page, lambda: click_figure(page, dash, "T1"), lambda: s.selected == "T1")
    mp, cost = s.state.figs["T1"].mp, s.reachable()["e4"]
    click_until(page, lambda: click_square(page, dash, "e4"),
                lambda: s.state.figs["T1"].pos == s.game.board.square("e4"))
    assert s.state.figs["T1"].mp == mp - cost
    # A move inside the room is taken back (no die rolled, nothing revealed), then made again.
    assert s.can_undo()
    page.get_by_role("button", name="Take back the last move").click()
    until(lambda: s.state.figs["T1"].pos == s.game.board.square("c3") and s.state.figs["T1"].mp == mp, page)
    expect(page.get_by_text("Move taken back.").first).to_be_visible(timeout=WAIT)
    click_until(page, lambda: click_figure(page, dash, "T1"), lambda: s.selected == "T1")
    click_until(page, lambda: click_square(page, dash, "e4"),
                lambda: s.state.figs["T1"].pos == s.game.board.square("e4"))
    shot(page, "3_t1_entered")

    # A combat against the bot, loaded from a saved position: T1 next to Jelly J3.
    game = KungFuGame("basic")
    fight = tmp_path / "fight.json"
    fight.write_text(dump_state(skirmish(game, {"T1": "n9", "J3": "o9"}, phase="combat1")))
    choose_file(page, fight)
    until(lambda: s.state.combat is not None and s.person_to_move() == 0, page)
    expect(page.get_by_text("Game loaded").first).to_be_visible(timeout=WAIT)
    until(lambda: dash.outlook.current() is not None, page)  # the whole-combat distribution, off the loop
    assert sum(dash.outlook.current().marginal(0).values()) == pytest.approx(1)
    expect(page.get_by_text("Terminators take").first).to_be_visible(timeout=WAIT)
    page.get_by_role("button", name="fist + kick + kick").click()
    until(lambda: s.state.step is Step.LEAD, page)
    assert s.state.combat.chits["T1"] == ["fist", "kick", "kick"] and "J3" in s.state.combat.chits
    page.get_by_role("button", name="Terminators lead").click()
    until(lambda: s.state.step is Step.ATTACK, page)
    page.get_by_role("button", name="T1: Lightning Kick").click()
    until(lambda: dash.board.armed == ("T1", "kick"), page)
    expect(page.get_by_text("Chance to hit, by the answer given")).to_be_visible(timeout=WAIT)
    expect(page.locator("table.odds", has_text="→ J3")).to_contain_text("T1 Lightning Kick → J3", timeout=WAIT)
    expect(page.locator("table.crt-heat td.outlined")).to_have_count(6, timeout=WAIT)  # the kick's row of the CRT
    # Beside the CRT, the exchange of T1 on J3 as a zero-sum game, solved exactly (value and both mixes).
    [game] = game_theory.exchanges(s, ("T1", "kick"))
    value = f"{game.value.numerator}/{game.value.denominator}" if game.value.denominator > 1 else str(game.value)
    expect(page.locator(".exchange")).to_contain_text(f"T1 on J3: value {value}", timeout=WAIT)
    expect(page.locator(".exchange")).to_contain_text("Attacker's minimax mix", timeout=WAIT)
    shot(page, "4_combat_armed", "Combat: Attack")
    rolls = len(s.log)
    click_until(page, lambda: click_figure(page, dash, "J3"),
                lambda: s.state.combat is None or s.state.combat.attack is not None or len(s.log) > rolls)
    until(lambda: s.state.combat is None or len(s.log) > rolls, page)
    assert s.log[rolls]["what"].startswith("T1 kick on J3")

    # Play the exchange out: answers, aims and losses by the buttons and the board.
    def press_for(step):
        """The press that makes the human's decision at this step of the exchange."""
        if step is Step.ANSWER:
            answer = page.locator("button:visible", has_text=re.compile(r"^T1 \w+ \(hit"))
            return lambda: answer.first.click(timeout=5000)
        if step is Step.LOSS:
            return lambda: page.locator("button:visible", has_text="Lose ").first.click(timeout=5000)
        return lambda: click_figure(page, dash, "J3")  # the target of an aim, or of the chit armed first

    losses = 0
    for _ in range(40):
        until(lambda: s.state.combat is None or human_turn(dash)(), page)
        c = s.state.combat
        if c is None:
            break
        step = s.state.step
        if step is Step.ATTACK:
            attack = next(a for a in s.legal() if isinstance(a, Attack))
            if dash.board.armed != (attack.figure, attack.chit):
                page.locator("button:visible", has_text=f"{attack.figure}: ").first.click()
                until(lambda: dash.board.armed is not None, page)
        if step is Step.LOSS:
            losses += 1
            if losses == 1:
                shot(page, "5_loss", "is hit: choose the level to lose")
        decide(page, dash, press_for(step), console_errors)
    assert s.state.combat is None or s.state.phase != "combat1"
    hits = [e for e in s.log[rolls:] if e["result"] == "hit"]
    assert hits, "this seeded exchange lands at least one hit"
    # The damage is on the counters (levels left per technique) and in the figures table.
    for fid in ("T1", "J3"):
        f = s.state.figs[fid]
        labels = dict(zip(dash.board.frames["labels"]["text"], dash.board.frames["labels"]["levels"], strict=True))
        if f.on_board and f.status == "active":
            assert labels[fid] == "".join(map(str, f.levels))
    for fid in {h["target"] for h in hits} & {"T1", "J3"}:
        if s.state.figs[fid].status != "dead":
            levels = levels_text(s.state.figs[fid].to_dict())
            assert any(f"{v}/{s0}" != f"{s0}/{s0}" for v, s0 in zip(s.state.figs[fid].levels,
                                                                     s.state.figs[fid].start, strict=True))
            expect(page.get_by_role("cell", name=levels, exact=True).first).to_be_visible(timeout=WAIT)
    # The roll log shows every roll with the chance it had.
    first = s.log[rolls]
    expect(page.get_by_role("cell", name=first["what"]).first).to_be_visible(timeout=WAIT)
    chance = f"{first['p']} ({100 * float(Fraction(first['p'])):.0f}%)"
    expect(page.get_by_role("cell", name=chance, exact=True).first).to_be_visible(timeout=WAIT)
    shot(page, "6_after_combat")
    assert losses, "this seeded exchange has T1 choose a level to lose"

    # On to the next turn: the Terminators end their phases by the buttons, the bot and the dice play theirs.
    for _ in range(30):
        until(lambda: s.state.turn > 1 or s.state.is_terminal() or human_turn(dash)(), page)
        if s.state.turn > 1 or s.state.is_terminal():
            break
        end = page.locator("button:visible", has_text=re.compile(r"^(End |Leave the door)"))
        decide(page, dash, lambda end=end: end.first.click(timeout=5000), console_errors)
    until(lambda: s.state.turn == 2 and human_turn(dash)(), page)
    expect(page.get_by_text("Turn 2,").first).to_be_visible(timeout=WAIT)
    shot(page, "7_next_turn")

    # The same file once more: the input forgot it after the first load, so it loads again and the
    # position before the exchange is back.
    choose_file(page, fight)
    until(lambda: all(s.state.figs[f].levels == list(s.state.figs[f].start) and s.state.figs[f].on_board
                      for f in ("T1", "J3")) and s.state.combat is not None and not s.state.combat.chits, page)
    expect(page.get_by_role("button", name="fist + kick + kick")).to_be_visible(timeout=WAIT)
    assert console_errors == [] and server_errors == []


def test_hot_seat_set_up_and_hand_over_hide_the_clone_masters_counters(page, serve_app, console_errors,
                                                                      server_errors):
    url, pages = serve(serve_app)
    dash = open_game(page, url, pages)
    s = dash.session
    page.get_by_role("combobox").nth(2).select_option("person")  # Clone Master seat
    page.get_by_role("button", name="New game").click()
    until(lambda: s.hot_seat() and s.handover == 1, page)
    expect(page.get_by_text("Hand the screen to the Clone Master").first).to_be_visible(timeout=WAIT)
    page.get_by_role("button", name="I am the Clone Master: show my side").click()
    until(lambda: s.handover is None and s.viewer == 1, page)
    shot(page, "0_set_up", "to place CM")
    square = s.legal()[0].square
    click_until(page, lambda: click_square(page, dash, square),
                lambda: s.state.figs["CM"].pos == s.game.board.square(square))
    until(lambda: "CM" in dash.board.frames["where"], page)
    expect(page.get_by_text(f"to place {s.state.queue[0]} ").first).to_be_visible(timeout=WAIT)
    page.get_by_role("button", name="Place the rest automatically").click()
    until(lambda: s.state.phase == "entry" and s.handover == 0, page)
    expect(page.get_by_text("Hand the screen to the Terminators").first).to_be_visible(timeout=WAIT)
    # The board the browser draws shows every Clone Master counter face down, with no name.
    names = dash.board.frames["counters"]["name"]
    assert names.count("face-down counter") == 33 and not any(FACE_UP_IDS.match(n) for n in names)
    page.wait_for_function(f"() => ({BOARD_DETAILS})().filter(d => d.startsWith('a face-down')).length == 33",
                           timeout=WAIT)
    assert not any(FACE_UP_IDS.match(d) for d in page.evaluate(BOARD_DETAILS))
    expect(page.get_by_role("cell", name="J1", exact=True)).to_have_count(0, timeout=WAIT)
    shot(page, "8_hot_seat_hand_over", "Hand the screen to the Terminators")
    click_square(page, dash, "c3")  # clicks are refused until the screen is taken
    until(lambda: s.notice.text.startswith("hand the screen"), page)
    page.get_by_role("button", name="I am the Terminators: show my side").click()
    until(lambda: s.handover is None and s.viewer == 0, page)
    assert not any(FACE_UP_IDS.match(n) for n in dash.board.frames["counters"]["name"])
    assert not any(FACE_UP_IDS.match(d) for d in page.evaluate(BOARD_DETAILS))
    assert console_errors == [] and server_errors == []


def test_two_tabs_play_independent_games_and_a_bad_file_is_refused(page, serve_app, console_errors, server_errors,
                                                                   tmp_path):
    url, pages = serve(serve_app)
    first = open_game(page, url, pages)
    other = page.context.new_page()
    second = open_game(other, url, pages, count=2)
    assert first.session is not second.session
    other.get_by_role("combobox").first.select_option("solo")
    other.get_by_role("button", name="New game").click()
    # the scenario box sets the session's scenario at once; the game itself is the solo one only once the click
    # on New game has been played (before that, the basic game still stands, with the human to move)
    until(lambda: second.session.game.solo and human_turn(second)(), other)
    before = second.session.save()
    click_until(page, lambda: click_square(page, first, "c3"),
                lambda: first.session.state.figs["T1"].entry == "disposal")
    assert second.session.save() == before and first.session.scenario == "basic"
    # Solo: the Terminator wakes on g2 and moves by clicks.
    click_until(other, lambda: click_figure(other, second, "T1"), lambda: second.session.selected == "T1")
    target = sorted(second.session.reachable())[0]
    click_until(other, lambda: click_square(other, second, target),
                lambda: second.session.state.figs["T1"].pos == second.session.game.board.square(target))
    shot(other, "9_solo_moved")
    assert first.session.state.figs["T1"].entry == "disposal"
    # A bad file gets a message and the game stays.
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "something else"}')
    kept = first.session.save()
    choose_file(page, bad)
    until(lambda: first.session.notice.text.startswith("Could not load"), page)
    expect(page.get_by_text("Could not load").first).to_be_visible(timeout=WAIT)
    assert first.session.save() == kept

    # The Clone Master's side by clicks: activate a face-down Jelly, reveal the Clone Master and make his
    # bonus move, then move the Jelly (a saved position in his move, the Terminators played by the bot).
    s = first.session
    page.get_by_role("combobox").nth(1).select_option("bot")
    page.get_by_role("combobox").nth(2).select_option("person")
    page.get_by_role("button", name="New game").click()
    until(lambda: s.seat(1) == "person" and s.state.step is Step.SETUP and s.person_to_move() == 1, page)
    cm_move = tmp_path / "cm_move.json"
    cm_move.write_text(dump_state(skirmish(KungFuGame("basic"), {"T1": "c3", "CM": "o10", "J1": "n9"},
                                           phase="cm_move", face_up=False)))
    choose_file(page, cm_move)
    until(lambda: s.state.phase == "cm_move" and s.person_to_move() == 1 and "J1" in first.board.frames["where"],
          page)
    click_until(page, lambda: click_square(page, first, "n9"), lambda: s.state.figs["J1"].face_up)
    click_until(page, lambda: click_square(page, first, "o10"), lambda: s.state.bonus_mp == 4)
    until(lambda: first.board.frames["costs"]["text"], page)
    shot(page, "10_clone_master_bonus_move", "bonus move of up to 4")
    target = max(s.reachable("CM"), key=lambda q: s.reachable("CM")[q])
    click_until(page, lambda: click_square(page, first, target),
                lambda: s.state.bonus_mp == 0 and s.state.figs["CM"].pos == s.game.board.square(target))
    click_until(page, lambda: click_square(page, first, "n9"), lambda: s.selected == "J1")
    step = sorted(s.reachable("J1"))[0]
    click_until(page, lambda: click_square(page, first, step),
                lambda: s.state.figs["J1"].pos == s.game.board.square(step))
    other.close()
    assert console_errors == [] and server_errors == []


def test_a_finished_game_ends_on_its_victory_screen(page, serve_app, console_errors, server_errors, tmp_path):
    from apps.kf2100 import victory
    from engine.core import play_game
    from engine.core.rng import make_rng
    from engine.kf2100.bots import HeuristicBot

    game = KungFuGame("solo")
    end = play_game(game.new_initial_state(make_rng(3)), [HeuristicBot(0), HeuristicBot(1, solo=True)], make_rng(3))
    done = tmp_path / "finished.json"
    done.write_text(dump_state(end))
    url, pages = serve(serve_app)
    dash = open_game(page, url, pages)
    choose_file(page, done)
    until(lambda: dash.session.state.phase == "over", page)
    t, c = end.solo_points()
    expect(page.locator("h2.result")).to_have_text(victory.RESULTS[end.result], timeout=WAIT)
    expect(page.get_by_text(f"Terminators {t} · Clone Master {c}")).to_be_visible(timeout=WAIT)
    expect(page.get_by_text("Solo score")).to_be_visible(timeout=WAIT)
    shot(page, "7_victory")
    # The rules and the CRT are at hand outside a combat too: a card that opens.
    page.get_by_text("Rules and the CRT").click()
    expect(page.get_by_text("whoever answered").first).to_be_visible(timeout=WAIT)
    expect(page.locator("table.crt-reference")).to_contain_text("Lightning Kick", timeout=WAIT)
    expect(page.get_by_text("Most points wins")).to_be_visible(timeout=WAIT)
    shot(page, "8_reference")
    assert console_errors == [] and server_errors == []
