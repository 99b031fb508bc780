"""The Man-Kzin Wars page without a browser: one session per page, components that follow the session.

Outside a server Panel runs the page's async work (the advisor, the running odds) to the end at once, so
each check here sees the page as it is once the background work is done.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pandas as pd
import panel as pn
import pytest
from bokeh.document import Document
from bokeh.models import ImportedStyleSheet, InlineStyleSheet, Plot

from apps import discover_games, kzin
from apps.kzin import views
from apps.kzin.page import KzinPage, notice_html
from engine.core.session import Level, Notice
from engine.kzin.cards import CARDS, card
from engine.kzin.rules import Attack, FallBack, Pass
from engine.kzin.session import KzinSession

pytestmark = pytest.mark.no_event_loop  # the page's async work runs to the end at once only off a running loop

SEED = 226  # a decline, then an invasion with a Fleet and a Tactics card in play, then a liberation


def light(session: KzinSession | None = None) -> KzinPage:
    """A page with little background work (the machine is shared), rendered to Bokeh models as a browser's."""
    session = session or KzinSession(seed=SEED, advisor_rollouts=100)
    page = KzinPage(session=session, running_rollouts=100)
    page.root = pn.panel(page).get_root(Document())
    return page


def figure(page: KzinPage, name: str) -> Plot:
    return next(p for p in page.root.select({"type": Plot}) if p.name == name)


def to_battle(page: KzinPage, phase: str) -> None:
    """Decline by the page's own buttons until a battle of ``phase`` with a Fleet in play."""
    s = page.session
    for _ in range(30):
        if s.decision() == phase and s.state.fleets_in_play():
            return
        page.decisions.buttons["fall back" if s.decision() == "invasion" else "pass"].clicks += 1
    raise AssertionError(f"no {phase} with a Fleet in 30 moves")


def tiles(page: KzinPage) -> list[pn.widgets.Button]:
    shown = page.tiles.shown()
    assert all(t.visible for t in shown) and not any(t.visible for t in page.tiles.buttons[len(shown):])
    return shown


def check_buttons_follow_can(page: KzinPage) -> None:
    s = page.session
    for name, button in page.decisions.buttons.items():
        ok, reason = s.can(name)
        assert button.disabled == (not ok), name
        if not ok and button.visible:
            assert reason in views.reasons_html(s).replace("&#x27;", "'")


def test_the_package_follows_the_app_contract():
    game = next(g for g in discover_games() if g.slug == "kzin")
    assert (game.title, game.order) == ("Man-Kzin Wars", 1) and "\n" not in game.description
    assert not any(isinstance(v, KzinSession | KzinPage) for v in vars(kzin).values())


def test_create_app_twice_gives_independent_sessions():
    a, b = kzin.create_app(), kzin.create_app()
    sa, sb = a.session, b.session
    assert a is not b and sa is not sb and not a.autosave
    before = sb.state.to_json()
    assert sa.fall_back() if sa.decision() == "invasion" else sa.pass_turn()
    assert sa.version > sb.version and sb.state.to_json() == before


def test_buttons_and_tiles_follow_the_session_through_a_game():
    page = light()
    s = page.session
    check_buttons_follow_can(page)
    to_battle(page, "invasion")
    check_buttons_follow_can(page)
    buttons = page.decisions.buttons
    assert buttons["defend"].disabled  # no Fleet selected yet: defend is refused
    assert "attack" not in buttons and buttons["defend"].visible and buttons["fall back"].visible
    assert [b.label for b in page.decisions.slots] == ["Defend", "Fall back"]
    table = [v for v in s.table() if v.type in ("H", "T")]
    shown = tiles(page)
    assert len(shown) == len(table)
    for tile, view in zip(shown, table, strict=True):
        assert tile.disabled == (not view.selectable)
        assert view.name in tile.label and ("counts only" in tile.label) == (not view.selectable)
    fleet = next(i for i, v in enumerate(table) if v.type == "H")
    shown[fleet].clicks += 1
    assert s.selection == [table[fleet].kind]
    shown = tiles(page)
    assert shown[fleet].label.startswith("✓") and shown[fleet].styles["--tile-background"] == views.TYPE_COLOURS["H"]
    check_buttons_follow_can(page)
    assert not buttons["defend"].disabled
    shown[fleet].clicks += 1
    assert s.selection == [] and not tiles(page)[fleet].label.startswith("✓")
    check_buttons_follow_can(page)
    for tile, view in zip(tiles(page), table, strict=True):  # a disabled tile's click (if one arrived) is refused
        if not view.selectable:
            tile.clicks += 1
            assert s.selection == []


def test_a_page_with_no_fleet_or_tactics_in_play_then_one_again_updates_without_error():
    """The seed-5 break: the tiles' placeholder for an empty table was zipped against the next turn's cards."""
    page = light(KzinSession(seed=5, advisor_rollouts=100))
    s = page.session
    for _ in range(12):
        counts = len(tiles(page))
        assert counts == len([v for v in s.table() if v.type in ("H", "T")])
        assert page.advisor.follow_advice() or s.state.phase == "over"
        if s.state.phase == "over":
            break
    assert s.state.turn >= 8 or s.state.phase == "over"


def test_odds_and_the_forces_chart_follow_the_selection_exactly():
    page = light()
    s = page.session
    to_battle(page, "invasion")
    assert "Select at least one Fleet" in views.odds_html(s)
    sides = views.force_sides(s)
    assert set(sides) == {"Kzinti"}
    forces = figure(page, "forces")
    for v in [v for v in s.table() if v.selectable]:
        page.tiles.click(v.kind, v.copy)
    p = s.win_probability()
    text = views.odds_html(s)
    assert f"{p.numerator}/{p.denominator}" in text and f"{100 * float(p):.1f}%" in text
    assert forces.title.text == f"Force distributions: you win {100 * float(p):.1f}%"
    # The plotted distributions give the same chance (Humans win ties), read back from the chart's own data.
    drawn = {}
    for r in forces.renderers:
        data = r.data_source.data
        if "top" in data and len(data["top"]):
            drawn[r.name if r.name else len(drawn)] = dict(zip((np.asarray(data["left"]) + 0.5).round().astype(int),
                                                               data["top"], strict=True))
    hp, kp = list(drawn.values())
    assert sum(qh * qk for fh, qh in hp.items() for fk, qk in kp.items() if fh >= fk) == pytest.approx(float(p))


def test_the_conquest_line_gives_each_phase_its_own_force():
    s = KzinSession(seed=SEED)
    st = s.state
    for name in ("Stasis Fields", "Military Outposts"):
        k = card(name).index
        st.in_play[k] += 1
        st.pile[k] -= 1
    invasion = sum(c.const_in("invasion") for c in st.conquest_in_play())
    liberation = sum(c.const_in("liberation") for c in st.conquest_in_play())
    assert liberation == invasion + 4  # the +2 Liberation bonus of each
    assert views.conquest_line(s).startswith(f"{invasion:+d} in an Invasion, {liberation:+d} in a Liberation")
    assert views.conquest_line(s) in views.table_html(s)


def test_a_battle_is_logged_with_its_odds_and_the_track_shows_the_marker():
    page = light()
    s = page.session
    to_battle(page, "invasion")
    for v in [v for v in s.table() if v.selectable]:
        page.tiles.click(v.kind, v.copy)
    p = float(s.win_probability())
    kem_before = s.state.kem
    assert page.decisions.decide(s.decisions()[0])
    log = views.log_frame(s)
    battle = log[log["event"] == "invasion battle"].iloc[0]
    assert battle["chance it had"] == f"{100 * p:.1f}%"
    assert f"You had {p:.0%}" in s.notice.text
    track = figure(page, "track")
    marker = next(r.data_source.data for r in track.renderers if "marker" in r.data_source.data)
    assert list(marker["tx"]) == [s.state.kem]
    labels = [list(r.data_source.data["text"]) for r in track.renderers if "text" in r.data_source.data]
    moved = [f"last move {kem_before} → {s.state.kem}"]
    assert (moved in labels) == (s.last_move is not None) == (s.state.kem != kem_before)
    # its layers are left out of the range computation (apps.kzin.charts.FIXED): the axes stay the chart's own
    assert (track.x_range.start, track.x_range.end, track.y_range.start, track.y_range.end) == (0.4, 12.6, -0.35, 1.6)


def test_new_game_with_an_emptied_rule_field_is_refused_and_keeps_the_game():
    page = light()
    s = page.session
    assert s.fall_back() if s.decision() == "invasion" else s.pass_turn()
    before, version = s.state.to_json(), s.version
    page.controls.rules["kzin_base_force"].value = None
    assert not page.controls.new_game()
    assert s.notice == Notice("Enter Kzin base force: a whole number from 0 to 30.", Level.WARNING)
    assert s.state.to_json() == before and s.version == version and s.kzin_base_force == 10


def test_advice_and_running_odds_come_from_the_async_work_and_follow_each_move():
    page = light()
    s = page.session
    to_battle(page, "liberation")
    version, advice = page.advisor.advice
    assert version == s.version and page.advisor.ready(page.advisor.advice, s.version) is advice
    assert not page.advisor.follow.disabled
    assert [e["turn"] for e in s.running_odds] == sorted({e["turn"] for e in s.log if e["event"] == "turn start"})
    assert all(0 <= e["low"] <= e["win"] <= e["high"] <= 1 for e in s.running_odds)
    running = figure(page, "running")
    turns = next(list(r.data_source.data["turn"]) for r in running.renderers if "turn" in r.data_source.data)
    assert turns == [e["turn"] for e in s.running_odds]
    assert s.pass_turn()
    if s.decision():
        assert page.advisor.advice[0] == s.version


def test_follow_advice_plays_the_recommendation():
    page = light()
    s = page.session
    to_battle(page, "liberation")
    rec = page.advisor.advice[1].recommended
    turn = s.state.turn
    page.advisor.follow.clicks += 1
    assert s.state.turn > turn or s.state.phase == "over"
    played = [e for e in s.log if e["turn"] == turn and e["event"] in ("pass", "liberation battle")]
    assert len(played) == 1
    if rec.battle_odds is None:
        assert played[0]["event"] == "pass"
    else:
        assert played[0]["detail"].startswith("attack with " + ", ".join(rec.card_names) + ";")


def test_save_and_load_through_the_controls():
    page = light()
    s = page.session
    to_battle(page, "liberation")
    files = page.controls.files
    saved = files.download.callback().getvalue()
    assert json.loads(saved)["game"] == json.loads(s.save())["game"]
    other = light(KzinSession(seed=3, start_space=5, kzin_base_force=8, advisor_rollouts=100))
    before = other.session.state.to_json()
    for bad in (b"{not json", b'{"format": "something else"}', "ünïcode".encode("latin-1")):
        other.controls.files.load_file(SimpleNamespace(new=bad))
        assert "Could not load" in other.session.notice.text and other.session.notice.level == Level.DANGER
        assert other.session.state.to_json() == before
    assert other.controls.rules["start_space"].value == 5
    other.controls.files.upload.value = saved.encode()
    assert other.session.state.to_json() == s.state.to_json()
    assert other.controls.seed.value == SEED and other.controls.rules["start_space"].value == 9
    assert other.controls.rules["kzin_base_force"].value == 10
    assert files.download.filename == f"man-kzin-wars-seed{SEED}-turn{s.state.turn}.json"


def test_new_game_takes_the_seed_and_rule_options_from_the_controls():
    page = light()
    controls = page.controls
    controls.seed.value = 12
    controls.rules["start_space"].value = 6
    controls.rules["kzin_fleet_force"].value = False
    controls.new.clicks += 1
    s = page.session
    rules = s.state.rules
    assert s.seed == 12 and rules.start_space == 6 and rules.kzin_fleet_force is False
    assert s.log[0]["detail"] == "seed 12"
    fresh = KzinSession(seed=12, start_space=6, kzin_fleet_force=False)
    assert s.state.to_json() == fresh.state.to_json()
    controls.seed.value = None
    controls.new.clicks += 1
    assert "seed" in s.notice.text and s.seed == 12


def test_the_deck_view_shows_counts_not_order():
    s = KzinSession(seed=SEED)
    frame = views.deck_frame(s)
    assert frame["left in deck"].sum() == sum(s.state.pile)
    names = {c.name for c in CARDS}
    assert not names & set(np.ravel(frame.astype(str).to_numpy()))


@pytest.mark.parametrize("reshuffle", [True, False])
def test_an_empty_deck_says_what_comes_next_instead_of_zero_chances(reshuffle):
    s = KzinSession(seed=SEED, reshuffle=reshuffle)
    st = s.state
    st.discard = [d + p for d, p in zip(st.discard, st.pile, strict=True)]
    st.pile = [0] * len(st.pile)
    assert s.deck_counts()["p_next"].isna().all()
    frame = views.deck_frame(s)
    words = "reshuffled at the end of this turn" if reshuffle else "the game ends this turn"
    assert frame["left in deck"].sum() == 0 and all(words in c for c in frame["chance next"])


def test_notices_are_shown_by_level_and_never_as_markup():
    payload = "<img src=x onerror=alert(1)> & <b>bold</b>"
    shown = notice_html(Notice(payload, Level.DANGER))
    assert "<img" not in shown and "&lt;img src=x onerror=alert(1)&gt;" in shown and "class='notice danger'" in shown
    assert notice_html(Notice("")) == ""


def test_a_refused_action_from_a_button_is_a_notice_and_changes_nothing():
    page = light()
    s = page.session
    to_battle(page, "liberation")
    before, version = s.state.to_json(), s.version
    assert not page.decisions.decide(Attack())  # no Fleet selected
    assert not page.decisions.decide(FallBack())  # not an invasion
    assert s.notice.level == Level.WARNING and s.state.to_json() == before and s.version == version
    assert page.decisions.decide(Pass())


def test_a_failure_in_the_advisor_is_shown_not_swallowed(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("numba is unwell")

    monkeypatch.setattr("engine.kzin.session.advise", broken)
    page = light()
    s = page.session
    assert "The advisor failed" in page.advisor.error and "numba is unwell" in page.advisor.error
    assert page.advisor.follow.disabled
    assert s.fall_back() if s.decision() == "invasion" else s.pass_turn()  # the page still plays


def test_log_and_deck_tables_escape_what_they_show():
    s = KzinSession(seed=SEED)
    s.log = [*s.log, {"turn": 1, "event": "<img src=x onerror=alert(1)>", "detail": "x", "odds": None,
                      "outcome": ""}]
    html = pn.pane.DataFrame(views.log_frame(s)).object.to_html(escape=True)
    assert "<img" not in html and isinstance(views.log_frame(s), pd.DataFrame)


def test_the_dashboard_benchmark_prints_milliseconds(capsys):
    from apps._bench import kzin_benchmark

    rows = kzin_benchmark(repeats=3)
    out = capsys.readouterr().out
    assert [name for name, _ in rows] == [f"kzin {what} + derived views, {stat}" for what in ("card click", "decision")
                                         for stat in ("first", "median", "worst", "most CPU")]
    assert all(ms > 0 for _, ms in rows) and " ms" in out


def test_the_advice_says_what_each_option_does_and_how_sure_it_is_and_can_play_on():
    page = light()
    s = page.session
    to_battle(page, "liberation")
    advice = page.advisor.advice[1]
    frame = views.advice_frame(advice)
    assert list(frame["what it does"]) == [o.effect for o in advice.evaluated]
    m = advice.margin()
    text = views.margin_html(advice)
    assert f"{100 * m.difference:+.2f} points" in text and ("separated: the best is best" in text) == m.separated
    assert not page.advisor.play_on.disabled
    page.advisor.play_on.clicks += 1  # outside a server the longer run finishes at once
    sure = page.advisor.advice[1]
    assert page.advisor.sure_of == s.version and page.advisor.play_on.disabled
    assert sure.rollouts_per_state >= advice.rollouts_per_state and any("rollouts a state" in n for n in sure.notes)
    assert page.advisor.follow_advice()


def test_predict_then_see_hides_the_chance_until_a_guess_and_scores_the_guesses():
    page = light()
    s = page.session
    s.predict = True
    scored = []
    for _ in range(40):
        if s.state.phase == "over" or len(scored) == 2:
            break
        if s.decision() and s.state.fleets_in_play():
            fleet = next(v for v in s.table() if v.selectable and v.type == "H")
            page.tiles.click(fleet.kind, fleet.copy)
            p = float(s.win_probability())
            assert s.hides_odds() and f"{100 * p:.1f}%" not in views.odds_html(s)
            assert figure(page, "forces").title.text == "Force distributions"
            guess = 0.5 if p < 0.75 else 0.9
            page.odds_guess.value = 100 * guess
            assert s.guess == guess and not s.hides_odds()
            assert f"{100 * p:.1f}%" in views.odds_html(s) and f"off by {100 * abs(guess - p):.1f} points" in (
                views.odds_html(s))
            assert figure(page, "forces").title.text.endswith(f"{100 * p:.1f}%")
            assert page.decisions.decide(s.decisions()[0])
            battle = [e for e in s.log if e["event"].endswith("battle")][-1]
            scored.append((guess, p, battle["outcome"] == "won"))
            assert s.guess is None and f"You had guessed {guess:.0%}" in s.notice.text
        else:
            assert s.fall_back() if s.decision() == "invasion" else s.pass_turn()
    assert len(scored) == 2 and [(r["guess"], r["exact"], r["won"]) for r in s.predictions] == scored
    c = s.calibration()
    assert c["brier"] == pytest.approx(sum((g - w) ** 2 for g, _, w in scored) / 2)
    assert c["exact_brier"] == pytest.approx(sum((p - w) ** 2 for _, p, w in scored) / 2)
    assert f"Brier score {c['brier']:.3f}" in views.calibration_html(s)
    other = KzinSession(seed=1)
    other.load(s.save())
    assert other.predictions == s.predictions


def test_a_click_made_before_the_game_moved_on_is_refused_not_played_on_the_next_turn(monkeypatch):
    """A double click on Fall back: the second click was made for the same moment as the first, and must not
    decline the next turn too. Clicks run on the page's next tick; here that tick is held back by hand."""
    from apps.kzin import controls

    page = light()
    s = page.session
    to_battle(page, "liberation")
    held = []
    monkeypatch.setattr(controls.pn.state, "execute", lambda fn, schedule=False: held.append(fn))
    page.decisions.buttons["pass"].clicks += 1
    page.decisions.buttons["pass"].clicks += 1  # the second click of a double click, made before the first ran
    fleet = next(v for v in s.table() if v.selectable and v.type == "H")
    page.tiles.buttons[page.tiles.shown().index(next(t for t, v in zip(page.tiles.shown(), [
        v for v in s.table() if v.type in ("H", "T")], strict=True) if v.kind == fleet.kind))].clicks += 1
    assert len(held) == 3 and s.state.turn == s.state.turn  # nothing has run yet
    turn, log = s.state.turn, len(s.log)
    held[0]()
    assert s.state.turn > turn
    after = (s.state.to_json(), list(s.selection), len(s.log))
    held[1]()
    held[2]()
    assert (s.state.to_json(), list(s.selection), len(s.log)) == after and len(s.log) > log
    assert "earlier moment of the game" in s.notice.text


def test_predict_then_see_hides_the_advisor_too_until_the_guess():
    page = light()
    s = page.session
    to_battle(page, "liberation")
    said, options = page.advisor._said, page.advisor._options
    assert "Recommended" in said.object and len(options.object) >= 2
    s.predict = True
    assert "Predict, then see" in said.object and options.object is None  # shown empty: never hidden (see Decisions)
    fleet = next(v for v in s.table() if v.selectable and v.type == "H")
    page.tiles.click(fleet.kind, fleet.copy)
    s.guess = 0.3
    assert "Recommended" in said.object and options.object is not None
    assert said is page.advisor._said and options is page.advisor._options


def test_the_expert_is_offered_beside_the_rollout_advisor_and_following_it_plays_its_choice():
    from engine.kzin import expert

    page = light()
    s = page.session
    to_battle(page, "liberation")
    assert page.advisor.advice[1].rollout_policy == "threshold" and s.advisor == "rollouts"
    page.advisor.choice.value = "expert"  # the page's own choice of advisor
    assert s.advisor == "expert"
    version, advice = page.advisor.advice
    assert version == s.version and advice.rollout_policy == "expert"
    chosen = sorted(expert.decide(s.state))
    assert list(advice.recommended.cards) == chosen
    assert "The expert plays" in views.advice_html(advice) and views.margin_html(advice) == ""
    assert set(views.advice_frame(advice)["95% interval"]) == {"learned estimate"}
    assert page.advisor.play_on.disabled and not page.advisor.follow.disabled
    for o in advice.evaluated:  # the table's estimate of each option: p V(won) + (1 - p) V(lost)
        if o.battle_odds is None:
            v = expert.state_value(s.state.after_declining())
        else:
            q = float(o.battle_odds)
            v = q * expert.state_value(s.state.after_battle(list(o.cards), True)) + (1 - q) * expert.state_value(
                s.state.after_battle(list(o.cards), False))
        assert o.game_win == pytest.approx(v)
    turn = s.state.turn
    page.advisor.follow.clicks += 1
    played = [e for e in s.log if e["turn"] == turn and e["event"] in ("pass", "liberation battle")]
    assert len(played) == 1
    if chosen:
        names = ", ".join(CARDS[k].name for k in chosen)
        assert played[0]["detail"].startswith(f"attack with {names};")
    else:
        assert played[0]["event"] == "pass"
    page.advisor.choice.value = "rollouts"
    if s.decision():
        assert page.advisor.advice[1].rollout_policy == "threshold"


def test_the_background_work_changes_texts_not_models():
    """The advisor's and the running odds' work, and the advice, show through panes made once: a move changes their
    texts and visibility, and no Bokeh model is made or dropped for them (a new pane per step of the work made
    Panel build new models and lay every page at a table out again, ahead of the move itself; issue 12)."""
    page = light()
    s = page.session
    work = pn.Column(page.advisor._work, page.advisor._shown, page.running).get_root(Document())

    def shown() -> set[str]:  # the models that show something (a stylesheet Panel adds is not one)
        return {m.id for m in work.references() if not isinstance(m, (ImportedStyleSheet, InlineStyleSheet))}

    before = shown()
    for _ in range(3):  # each move's work runs to the end at once (no event loop here)
        if s.decision() is None:
            break
        assert s.fall_back() if s.decision() == "invasion" else s.pass_turn()
    assert len(s.running_odds) >= 2
    assert shown() == before


def test_a_moves_background_work_starts_after_what_the_move_queued_on_the_loop(monkeypatch):
    """At a table a move queues the redraw of every other page on the server's event loop after the first step of
    its own background work (the advisor, the running odds): the work's rollouts start only once that redraw is
    done (measured before: the other browser's status waited up to 1.4 s behind them on a loaded machine)."""
    import asyncio
    import time

    from apps.kzin import panels

    page = light()
    s = page.session
    order: list[str] = []
    real_advice, real_estimate = s.advice_for, panels.estimate_turn
    monkeypatch.setattr(s, "advice_for", lambda *a: (order.append("advice"), real_advice(*a))[1])
    monkeypatch.setattr(panels, "estimate_turn", lambda *a: (order.append("odds"), real_estimate(*a))[1])
    s.running_odds = []  # every turn start is to be estimated again
    assert s.decision() is not None and s.running_odds_todo()

    def redraw() -> None:  # another page's redraw, queued by the move behind the work's first step
        time.sleep(0.3)  # it holds the loop; a worker thread would run meanwhile
        order.append("redraw")

    async def drain(work: object) -> None:
        async for _ in work:  # type: ignore[attr-defined]
            pass

    async def move() -> None:
        works = [asyncio.ensure_future(drain(page.advisor._think(s.version, s.advisor_rollouts, -1, s.advisor))),
                 asyncio.ensure_future(drain(page.running._estimate(s.version)))]
        asyncio.get_running_loop().call_soon(redraw)
        await asyncio.gather(*works)

    asyncio.run(move())
    assert order[0] == "redraw" and {"advice", "odds"} <= set(order), order
    assert page.advisor.ready(page.advisor.advice, s.version) is not None and page.advisor.thinking == ""
