"""The Man-Kzin Wars page without a browser: one session per page, controls that follow the session."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest

from apps import discover_games, kzin
from engine.kzin.cards import CARDS
from engine.kzin.session import KzinSession

SEED = 226  # a decline, then an invasion with a Fleet and a Tactics card in play, then a liberation


def light(session: KzinSession | None = None) -> kzin.KzinDashboard:
    """A dashboard with little background work (the machine is shared)."""
    session = session or KzinSession(seed=SEED, advisor_rollouts=100)
    dash = kzin.KzinDashboard(session=session, running_rollouts=100)
    assert dash.wait_idle()
    return dash


def to_battle(dash: kzin.KzinDashboard, phase: str) -> None:
    """Decline by the page's own buttons until a battle of ``phase`` with a Fleet in play."""
    s = dash.session
    for _ in range(30):
        if s.decision() == phase and s.state.fleets_in_play():
            return
        dash._buttons["fall back" if s.decision() == "invasion" else "pass"].clicks += 1
    raise AssertionError(f"no {phase} with a Fleet in 30 moves")


def check_buttons_follow_can(dash: kzin.KzinDashboard) -> None:
    s = dash.session
    for command, button in dash._buttons.items():
        ok, reason = s.can(command)
        assert button.disabled == (not ok), command
        if not ok and button.visible:
            assert reason in dash._reasons.object.replace("&#x27;", "'")


def test_the_module_follows_the_app_contract():
    game = next(g for g in discover_games() if g.slug == "kzin")
    assert (game.title, game.order) == ("Man-Kzin Wars", 1) and "\n" not in game.description
    assert not any(isinstance(v, KzinSession | kzin.KzinDashboard) for v in vars(kzin).values())


def test_create_app_twice_gives_independent_sessions():
    a, b = kzin.create_app(), kzin.create_app()
    sa, sb = a.dashboard.session, b.dashboard.session
    assert a is not b and sa is not sb and a.dashboard is not b.dashboard
    before = sb.state.to_json()
    a.dashboard.command("fall back" if sa.decision() == "invasion" else "pass")
    assert sa.version > sb.version and sb.state.to_json() == before
    for page in (a, b):
        assert page.dashboard.wait_idle()


def test_buttons_and_tiles_follow_the_session_through_a_game():
    dash = light()
    s = dash.session
    check_buttons_follow_can(dash)
    to_battle(dash, "invasion")
    check_buttons_follow_can(dash)
    assert dash._buttons["defend"].disabled  # no Fleet selected yet: defend is refused
    assert dash._buttons["attack"].visible is False and dash._buttons["defend"].visible
    views = [v for v in s.table() if v.type in ("H", "T")]
    tiles = dash._tiles.objects
    assert len(tiles) == len(views)
    for tile, view in zip(tiles, views, strict=True):
        assert tile.disabled == (not view.selectable)
        assert view.name in tile.label and ("counts only" in tile.label) == (not view.selectable)
    fleet = next(i for i, v in enumerate(views) if v.type == "H")
    tiles[fleet].clicks += 1
    assert s.selection == [views[fleet].kind]
    assert tiles[fleet].label.startswith("✓") and "selected" in tiles[fleet].css_classes
    check_buttons_follow_can(dash)
    assert not dash._buttons["defend"].disabled
    tiles[fleet].clicks += 1
    assert s.selection == [] and not tiles[fleet].label.startswith("✓")
    check_buttons_follow_can(dash)
    unselectable = [t for t, v in zip(tiles, views, strict=True) if not v.selectable]
    for tile in unselectable:  # a disabled tile's click (if one arrived) is refused and changes nothing
        tile.clicks += 1
        assert s.selection == []


def test_odds_follow_the_selection_exactly():
    dash = light()
    s = dash.session
    to_battle(dash, "invasion")
    assert "Select at least one Fleet" in kzin.odds_html(s, s.version, s.selection)
    forces = kzin.force_distributions(s)
    assert forces["Humans"]["top"] == [] and sum(forces["Kzinti"]["top"]) == pytest.approx(1)
    chosen = [v for v in s.table() if v.selectable]
    for v in chosen:
        dash.click_tile(v.kind, v.copy)
    p = s.win_probability()
    text = kzin.odds_html(s, s.version, s.selection)
    assert f"{p.numerator}/{p.denominator}" in text and f"{100 * float(p):.1f}%" in text
    assert f"{100 * float(p):.1f}%" in dash._force_fig.title.text
    # The plotted distributions give the same chance (Humans win ties).
    h, k = (kzin.force_distributions(s)[side] for side in ("Humans", "Kzinti"))
    hp = {round(left + 0.5): q for left, q in zip(h["left"], h["top"], strict=True)}
    kp = {round(left + 0.5): q for left, q in zip(k["left"], k["top"], strict=True)}
    assert sum(qh * qk for fh, qh in hp.items() for fk, qk in kp.items() if fh >= fk) == pytest.approx(float(p))
    assert dash._force_sources["Humans"].data["top"] == h["top"]


def test_a_battle_is_logged_with_its_odds_and_the_track_shows_the_marker():
    dash = light()
    s = dash.session
    to_battle(dash, "invasion")
    for v in [v for v in s.table() if v.selectable]:
        dash.click_tile(v.kind, v.copy)
    p = float(s.win_probability())
    assert dash.command("defend")
    assert s.log_frame()["event"].str.endswith("battle").sum() == 1
    log = kzin.log_frame(s, s.version)
    battle = log[log["event"] == "invasion battle"].iloc[0]
    assert battle["chance it had"] == f"{100 * p:.1f}%"
    assert f"You had {p:.0%}" in s.message
    assert dash._track_sources["marker"].data["space"] == [s.state.kem]
    kem_before = int(log[log["event"] == "turn start"].iloc[0]["detail"].split()[-1])
    if "and won" in battle["outcome"] or s.state.kem == kem_before:  # held: the marker did not move
        assert s.last_move is None and dash._track_sources["move"].data["label"] == []
    else:
        assert s.last_move == (kem_before, s.state.kem)
        assert dash._track_sources["move"].data["label"] == [f"last move {kem_before} → {s.state.kem}"]


def test_new_game_with_an_emptied_rule_field_is_refused_and_keeps_the_game():
    dash = light()
    s = dash.session
    dash.command("fall back" if s.decision() == "invasion" else "pass")
    before, version = s.state.to_json(), s.version
    dash._rule_widgets["kzin_base_force"].value = None
    dash.new_game()
    assert s.message == "Enter Kzin base force: a whole number from 0 to 30."
    assert s.state.to_json() == before and s.version == version and s.kzin_base_force == 10


def test_advice_and_running_odds_come_from_the_background_and_go_stale_on_a_move():
    dash = light()
    s = dash.session
    to_battle(dash, "liberation")
    assert dash.wait_idle()
    version, advice = dash.advice
    assert version == s.version and dash._advice_ready(s.version, dash.advice) is advice
    assert "Recommended" in dash._advice_html(s.version, dash.advice) and not dash._follow.disabled
    assert [e["turn"] for e in s.running_odds] == sorted({e["turn"] for e in s.log if e["event"] == "turn start"})
    assert all(0 <= e["low"] <= e["win"] <= e["high"] <= 1 for e in s.running_odds)
    dash.command("pass")
    assert dash._advice_ready(s.version, dash.advice) is None  # the old advice is not shown for the new decision
    assert dash.wait_idle()
    if s.decision():
        assert dash.advice[0] == s.version


def test_follow_advice_plays_the_recommendation():
    dash = light()
    s = dash.session
    to_battle(dash, "liberation")
    assert dash.wait_idle()
    rec = dash.advice[1].recommended
    turn = s.state.turn
    assert dash.follow_advice()
    assert s.state.turn > turn or s.state.phase == "over"
    played = [e for e in s.log if e["turn"] == turn and e["event"] in ("pass", "liberation battle")]
    assert len(played) == 1
    if rec.battle_odds is None:
        assert played[0]["event"] == "pass"
    else:
        assert played[0]["detail"].startswith("attack with " + ", ".join(rec.card_names) + ";")


def test_save_and_load_through_the_controls():
    dash = light()
    s = dash.session
    to_battle(dash, "liberation")
    saved = dash._files.download.callback().getvalue()
    assert json.loads(saved)["game"] == json.loads(s.save())["game"]
    other = light(KzinSession(seed=3, start_space=5, kzin_base_force=8, advisor_rollouts=100))
    before = other.session.state.to_json()
    for bad in (b"{not json", b'{"format": "something else"}', "ünïcode".encode("latin-1")):
        other._files.load_file(SimpleNamespace(new=bad))
        assert "Could not load" in other.session.message
        assert other.session.state.to_json() == before
    assert other._rule_widgets["start_space"].value == 5
    other._files.upload.value = saved.encode()
    assert other.session.state.to_json() == s.state.to_json()
    assert other._seed.value == SEED and other._rule_widgets["start_space"].value == 9
    assert other._rule_widgets["kzin_base_force"].value == 10
    assert dash._files.download.filename == f"man-kzin-wars-seed{SEED}-turn{s.state.turn}.json"


def test_new_game_takes_the_seed_and_rule_options_from_the_controls():
    dash = light()
    dash._seed.value = 12
    dash._rule_widgets["start_space"].value = 6
    dash._rule_widgets["kzin_fleet_force"].value = False
    dash._new.clicks += 1
    s = dash.session
    rules = s.state.rules
    assert s.seed == 12 and rules.start_space == 6 and rules.kzin_fleet_force is False
    assert s.log[0]["detail"] == "seed 12"
    fresh = KzinSession(seed=12, start_space=6, kzin_fleet_force=False)
    assert s.state.to_json() == fresh.state.to_json()
    dash._seed.value = None
    dash._new.clicks += 1
    assert "seed" in s.message and s.seed == 12


def test_the_deck_view_shows_counts_not_order():
    dash = light()
    s = dash.session
    frame = kzin.deck_frame(s, s.version)
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
    frame = kzin.deck_frame(s, s.version)
    words = "reshuffled at the end of this turn" if reshuffle else "the game ends this turn"
    assert frame["left in deck"].sum() == 0 and all(words in c for c in frame["chance next"])


def test_benchmark_prints_milliseconds(capsys):
    rows = kzin.benchmark(repeats=4)
    out = capsys.readouterr().out
    assert [name for name, _ in rows] == [f"kzin {what} + derived views, {stat}"
                                         for what in ("card click", "decision") for stat in ("median", "worst")]
    assert all(ms > 0 for _, ms in rows) and " ms" in out


def test_a_failure_in_the_background_is_shown_not_swallowed(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("numba is unwell")

    monkeypatch.setattr(kzin, "advise", broken)
    dash = light()
    assert "The background odds failed" in dash.error and "numba is unwell" in dash.error
    assert dash.error in dash._progress_text(1.0, False, [], dash.error)
    dash.command("fall back" if dash.session.decision() == "invasion" else "pass")  # the page still plays
    assert dash.wait_idle()
