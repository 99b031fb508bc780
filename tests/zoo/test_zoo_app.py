"""The Kung-Fu Zoo page without a browser: its gestures and buttons drive the session, the arena's Bokeh
sources follow, and its background work (odds, heat map, bots) is run here as Panel runs it on a page's loop
(the browser tests drive the same code through real clicks and drags)."""

from __future__ import annotations

import asyncio
from typing import Any

import pandas as pd
import pytest
from bokeh.models import HoverTool
from helpers import Script, in_arena

import apps.zoo.panels as zp
from apps import zoo
from apps.zoo import adapter as za
from apps.zoo import views
from engine.core import wilson_interval
from engine.core.session import Level
from engine.zoo.session import RoundResult, ZooSession

pytestmark = pytest.mark.no_event_loop  # asyncio.run needs a thread without Playwright's running loop


def page(**session: object) -> zoo.ZooPage:
    s = ZooSession(**{"seed": 3, "seats": ["person", "person"], "odds_workers": 1, **session})
    return zoo.ZooPage(session=s, background=False)


def a_result() -> RoundResult:
    """A round's result waiting to be seen."""
    return RoundResult(1, "cage", ("P1 (Crocodile)", "P2 (Elephant)"), 0, "P1 (Crocodile) won round 1.", (), (), (),
                       False, ())


def run(work: Any) -> list[Any]:
    """One of the page's async works (a coroutine, or an async generator: its yields) run to its end on an event
    loop, as Panel runs it on the page's loop."""
    async def drain() -> list[Any]:
        if asyncio.iscoroutine(work):
            await work
            return []
        return [x async for x in work]
    return asyncio.run(drain())


def test_the_module_contract_and_a_new_session_per_page() -> None:
    assert zoo.ORDER == 3 and zoo.TITLE == "Kung-Fu Zoo" and "\n" not in zoo.DESCRIPTION
    a, b = zoo.create_app(), zoo.create_app()
    assert a.session is not b.session and not a.served  # outside a server: nothing animates, nothing autosaved
    assert [seat.kind for seat in a.session.seats] == ["person", "bot"] and a.session.odds_workers == 1
    assert a.controls.files.autosave is None


def test_click_a_die_and_a_dot_drag_the_aim_and_commit() -> None:
    p = page()
    s, a = p.session, p.arena
    assert a.tap(*za.bench_xy(0, 1)) and s.die == "C2"
    assert a.tap(-10.0, 150.0) and s.spot == "W-dot"
    assert a.sources["launch"].data["x"] == [-9.5] and a.sources["dots"].data["x"]  # on the rail top at the dot
    a.pan_start(-9.5, 150.0)
    assert a.pan_end(90.5, 150.0) and (s.direction, s.speed) == (0.0, 1.0)
    aim = a.sources["aim"].data
    assert aim["x0"] == [-9.5] and aim["x1"] == [pytest.approx(90.5)]  # the arrow: 10 cm a metre a second
    assert p.flick.can_commit() and not p.flick.commit.disabled
    assert p.flick.commit_flick()
    assert not a.animating and a.shown == s.version  # no browser: the flick is shown at once
    row = a.sources["dice"].data["id"].index("C2")
    assert a.sources["dice"].data["status"][row] == "arena" and a.sources["dice"].data["x"][row] > 20
    assert "P2 (Elephant) to make a flick" in views.status_html(s)
    assert "flick C2 from W-dot" in views.log_frame(s)["move"].iloc[0]


def test_refusals_change_nothing_and_say_why() -> None:
    p = page()
    s, a = p.session, p.arena
    before, version = s.state.to_json(), s.version
    assert not a.tap(*za.bench_xy(1, 0)) and "belongs to" in s.notice.text and s.notice.level is Level.WARNING
    assert not a.tap(150.0, 150.0)  # the empty floor
    a.pan_start(10.0, 10.0)
    assert not a.pan_end(10.1, 10.0) and "drag further" in s.notice.text.lower()
    p.controls.files.load_file(type("E", (), {"new": b"not json"})())
    assert "Could not load" in s.notice.text and s.notice.level is Level.DANGER
    assert s.state.to_json() == before and s.version == version
    p.controls.teams[1].value = "crocodile"
    assert not p.controls.new_game() and "different team" in s.notice.text
    assert s.state.to_json() == before


def test_a_rail_click_off_the_dot_never_arms_the_ambush() -> None:
    """Issue 13: with a Crocodile, a click on a rail off the dot used to arm the Ambush silently. It is
    refused with how to arm it; the card's button arms it, and then the same click is the Ambush's spot."""
    p = page()
    s, a = p.session, p.arena
    assert a.tap(*za.bench_xy(0, 0))
    assert not a.sources["bands"].data["left"]  # anywhere on a rail only with the Ambush: not shown until armed
    assert not a.tap(100.0, -10.0) and s.spot == "S-dot" and not s.use_ability_flag and not s.state.spent[0]
    assert "arm the ability first" in s.notice.text
    assert p.abilities.button.label == "Arm Ambush"
    assert p.abilities.use() and s.use_ability_flag and a.sources["bands"].data["left"]
    assert p.abilities.button.label == "Disarm Ambush" and "armed for this flick" in p.abilities.cards.object
    assert a.tap(100.0, -10.0) and s.spot == "S@100.0" and s.proposal_problem() is None
    assert p.abilities.use() and not s.use_ability_flag and s.spot == "S-dot"  # disarmed: back on the dot


def test_a_die_knocked_out_is_placed_by_a_click(monkeypatch: pytest.MonkeyPatch) -> None:
    p = page()
    s, a = p.session, p.arena
    in_arena(s.state, dice=["E1"])
    s.state.rail_rule = None
    Script(monkeypatch).then(left={"E1": "N"})
    assert s.choose_die("C1") and s.propose_flick(0.0, 1.0) and p.flick.commit_flick()
    assert s.state.phase == "place" and "places E1 face-up" in s.notice.text
    assert not a.tap(30.0, 30.0) and "cage" in s.notice.text  # over a cage: refused
    assert a.tap(200.0, 210.0)
    e1 = s.state.dice["E1"]
    assert (e1.status, e1.x, e1.y, e1.face) == ("arena", 200.0, 210.0, "head")
    assert s.die == "E2" and a.sources["sel"].data["x"] and a.sources["dots"].data["x"]  # P2's flick is set up


def test_the_odds_come_in_refined_steps_and_agree_with_the_session() -> None:
    p = page()
    s = p.session
    assert s.choose_die("C1") and s.launch_spot("S-dot") and s.propose_flick(-10.0, 1.3)
    seen: list[tuple[int, bool]] = []
    p.odds.param.watch(lambda *_e: seen.append((p.odds.odds.samples if p.odds.odds else 0, p.odds.busy)),
                       ["odds", "busy"])
    run(p.odds._estimate())
    assert [n for n, _ in seen] == [0, 50, 140, 230, 320, 410, 500] and seen[-1][1] is False  # busy, then 6 steps
    assert p.odds.odds.summary() == s.odds(samples=500).summary()  # the same estimate as the session's own
    assert "500 simulated flicks" in p.odds.text.object and "refining" not in p.odds.text.object
    assert p.odds.odds_for(str(s.proposed_flick())) is not None and p.odds.progress.value == 500


@pytest.mark.parametrize("case", ["dust kick", "bot", "round over"])
def test_the_odds_and_the_heat_map_say_why_there_are_none(case: str) -> None:
    """Issue 13: the heat map said "mapping…" for ever under Dust Kick and on the bots' turns."""
    p = page(teams=["gorilla", "zebra"])
    s = p.session
    if case == "dust kick":
        assert s.choose_die("G1") and s.commit_flick() is not None
        assert s.use_ability("P1") and s.choose_die("Z1") and s.commit_flick() is not None  # dirt in P1's face
        words = "Eyes closed (Dust Kick)"
    elif case == "bot":
        assert s.set_seats(["bot", "person"])
        words = "played by the computer"
    else:
        s.round_result = a_result()
        words = "The round is over"
    run(p.odds._estimate())
    assert words in p.odds.text.object and p.odds.odds is None and not p.odds.busy
    run(p.odds._map())
    assert p.odds.grid is None and p.odds.cells == 0 and words in p.odds.why_not
    assert words in p.odds.heat.title.text and "mapping" not in p.odds.heat.title.text


def test_the_heat_map_is_mapped_in_small_pieces_and_aims_where_clicked(monkeypatch: pytest.MonkeyPatch) -> None:
    p = page()
    s = p.session
    assert s.choose_die("C1") and s.launch_spot("S-dot") and s.propose_flick(0.0, 1.2)
    pieces: list[int] = []
    real = zp.odds_grid

    def counted(*args: Any) -> pd.DataFrame:
        pieces.append(len(args[2]) * args[5])
        return real(*args)

    monkeypatch.setattr(zp, "odds_grid", counted)
    titles: list[str] = []
    p.odds.param.watch(lambda _e: titles.append(p.odds.heat.title.text), "mapped")
    run(p.odds._map())
    g = p.odds.grid
    assert s.propose_flick(-30.0, 0.8)  # a re-aim keeps the map: nothing is mapped again
    again = len(pieces)
    run(p.odds._map())
    assert len(pieces) == again and p.odds.grid is not None and len(p.odds.grid) == len(g)
    cells = len(zp.GRID_DIRECTIONS) * len(zp.GRID_SPEEDS)
    assert len(g) == cells and (g["samples"] == zp.GRID_SAMPLES).all() and p.odds.mapped == cells
    assert max(pieces) <= zp.MAP_PIECE_CELLS * zp.GRID_SAMPLES  # a superseded map stops within one piece
    assert any("cells so far" in t for t in titles[:-1])  # the title says how far the map is while mapping
    assert f"{zp.GRID_SAMPLES} flicks" in p.odds.heat.title.text and "so far" not in p.odds.heat.title.text
    data = p.odds._heat_src.data
    for k in range(cells):
        n = int(g["samples"][k])
        caged = round(g["p_cage_opponent"][k] * n)
        low, high = wilson_interval(caged, n)
        assert data["tip"][k] == f"{100 * caged / n:.1f}% (95% interval {100 * low:.1f}–{100 * high:.1f}%)"
        assert data["count"][k] == f"{caged} of {n} flicks caged an opponent"
    hover = [t for t in p.odds.heat.tools if isinstance(t, HoverTool)]
    assert len(hover) == 1 and {("caging", "@tip"), ("simulated", "@count")} <= set(hover[0].tooltips)
    assert p.odds.heat_tap(14.0, 1.55) and (s.direction, s.speed) == (15.0, 1.6)


def test_the_heat_map_title_says_what_was_measured() -> None:
    def grid(caged: list[int], n: int | list[int]) -> pd.DataFrame:
        ns = [n] * len(caged) if isinstance(n, int) else n
        rows = []
        for k, (c, m) in enumerate(zip(caged, ns, strict=True)):
            low, high = wilson_interval(c, m)
            rows.append({"direction": 15.0 * k, "speed": 1.2, "samples": m, "p_cage_opponent": c / m,
                         "p_cage_opponent_low": low, "p_cage_opponent_high": high})
        return pd.DataFrame(rows)

    none = views.heat_title(grid([0, 0, 0], 18), "")
    assert none == "Caging odds by aim: no cell caged in 18 flicks each" and "no aim cages" not in none
    cell = views.heat_data(grid([0], 18))
    assert (cell["tip"], cell["count"]) == (["0.0% (95% interval 0.0–17.6%)"], ["0 of 18 flicks caged an opponent"])
    assert views.heat_title(grid([0, 2, 0], 18), "") == "Caging odds by aim, % of 18 flicks a cell: click to aim"
    assert views.heat_title(grid([0, 0], [18, 36]), "") == "Caging odds by aim: no cell caged in 18+ flicks each"
    assert views.heat_title(None, "", 4, 66) == "Caging odds by aim: mapping… 4 of 66 cells"
    assert views.heat_title(None, "Eyes closed.") == "Caging odds by aim: none now. Eyes closed."
    assert views.heat_data(None) == {k: [] for k in views.HEAT_COLUMNS}


def test_new_game_from_the_controls_and_ability_buttons() -> None:
    p = page()
    c = p.controls
    c.mode.value = "Points Battle"
    c.players.value = 3
    c.teams[2].value = "zebra"
    c.seed.value = 11
    assert c.new_game()
    s = p.session
    assert (s.mode, s.players, s.seed, s.teams) == ("points", 3, 11, ["crocodile", "elephant", "zebra"])
    assert "3-player Points Battle" in views.status_html(s) and "not in play" in p.abilities.cards.object
    c.mode.value = "Cage Battle"
    c.players.value = 2
    c.teams[0].value, c.teams[1].value = "zebra", "gorilla"
    assert c.new_game() and s.teams == ["zebra", "gorilla"]
    assert p.abilities.button.label == "Use Dust Kick" and p.abilities.target.options == ["P2"]
    p.abilities.target.value = "P2"
    assert p.abilities.use() and s.state.spent[0] and "spent this round" in p.abilities.cards.object
    assert s.choose_die("Z1") and s.propose_flick(0.0, 1.0) and p.flick.commit_flick()
    # P2 had dirt kicked in the face: a spot and an aim, but no arrow (not even while dragging) and no odds.
    assert s.state.to_move == 1 and s.choose_die("G1") and s.propose_flick(10.0, 1.0)
    assert p.arena.sources["launch"].data["preview"] == [0.0] and p.arena.sources["aim"].data["x0"] == []
    assert "Eyes closed" in views.why_no_odds(s, False)


def test_the_status_line_shows_what_decides_the_round() -> None:
    cage = page()
    in_arena(cage.session.state, faces={"C1": "feet"}, dice=["C1", "E1"])
    line = views.status_html(cage.session)
    names = [cage.session.state.game.player_name(q) for q in range(2)]
    assert f"Animals still fighting: <span class='fighting'>{names[0]} 3 · {names[1]} 4</span>" in line
    assert "Points on the table" not in line
    points = page(mode="points")
    in_arena(points.session.state, faces={"C1": "head"}, dice=["C1"])
    score = points.session.state.round_score(0)
    assert score > 0 and f"<span class='table-points'>{points.session.state.game.player_name(0)} {score} ·" in (
        views.status_html(points.session))


def test_trunk_shot_aims_from_where_the_elephant_lies() -> None:
    p = page(teams=["elephant", "crocodile"])
    s, a = p.session, p.arena
    in_arena(s.state, dice=["E1", "E2", "E3", "E4", "C1"])
    s.state.rail_rule = None
    assert s.choose_die("E1")
    assert p.abilities.use() and s.spot == "here" and s.use_ability_flag
    assert a.sources["launch"].data["x"] == [s.state.dice["E1"].x]
    a.pan_start(0.0, 0.0)
    assert a.pan_end(0.0, -100.0) and (s.direction, s.speed) == (270.0, 1.0)  # an absolute heading: south
    assert p.flick.commit_flick() and s.state.spent[0] and "spent" in p.abilities.cards.object


def test_a_cage_round_ends_on_its_result_card_over_the_final_board(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 13: the round's result was never shown and the board was cleared. The card says who won and how,
    the final board stays (the choose-first buttons wait) until Next round."""
    p = page()
    s, a = p.session, p.arena
    st = s.state
    in_arena(st, dice=["C1", "E1"])
    for e in ("E2", "E3", "E4"):
        st.dice[e].status = "caged"
    st.rail_rule = None
    Script(monkeypatch).then(caged={"E1": "SW"}, land=(120.0, 140.0))
    assert s.choose_die("C2") and s.propose_flick(0.0, 1.0) and p.flick.commit_flick()
    assert st.phase == "first" and st.to_move == 1 and st.wins == [1, 0]
    card = p.result.card.object
    assert "P1 (Crocodile) wins round 1" in card and "no animal left fighting" in card and "E1 fell" not in card
    assert p.result.next.visible and not any(b.visible for b in p.flick.first)  # the card first
    data = a.sources["dice"].data
    c2 = data["id"].index("C2")
    assert (data["status"][c2], data["x"][c2], data["y"][c2]) == ("arena", 120.0, 140.0)  # the final board
    assert not a.tap(*za.bench_xy(0, 0)) and "Next round" in s.notice.text
    p.result.next.clicks += 1
    assert s.round_result is None and not p.result.next.visible
    buttons = [b for b in p.flick.first if b.visible]
    assert [b.label for b in buttons] == ["P1 (Crocodile) starts", "P2 (Elephant) starts"]
    buttons[1].clicks += 1
    assert st.phase == "flick" and st.round_no == 2 and st.to_move == 1


def test_a_points_round_ends_on_each_animal_face_points_totals_and_difference(monkeypatch: pytest.MonkeyPatch
                                                                             ) -> None:
    from engine.zoo.constants import face_points

    p = page(mode="points")
    s = p.session
    st = s.state
    in_arena(st, faces={"C1": "head", "C2": "back", "C3": "tail", "E1": "left", "E2": "head", "E3": "feet",
                        "E4": "right"}, dice=["C1", "C2", "C3", "E1", "E2", "E3", "E4"])
    st.rail_rule, st.to_move = None, 0
    Script(monkeypatch).then(face="head", land=(240.0, 240.0))
    assert s.choose_die("C4") and s.propose_flick(0.0, 1.0) and p.flick.commit_flick()
    r = s.round_result
    assert r is not None and r.mode == "points"
    faces = {"C1": "head", "C2": "back", "C3": "tail", "C4": "head", "E1": "left", "E2": "head", "E3": "feet",
             "E4": "right"}
    totals = [sum(face_points(f) for d, f in faces.items() if d[0] == t) for t in "CE"]
    assert r.totals == tuple(totals) and r.difference == totals[0] - totals[1]
    card = p.result.card.object
    for d, f in faces.items():
        assert f"{d} {f} ({za.FACE_LETTERS[f]}) {face_points(f):+d}" in card
    assert f"<b class='difference'>{totals[0] - totals[1]:+d}</b>" in card
    assert all(f"<td class='total' style='font-weight:700'>{t}</td>" in card for t in totals)


def test_a_stunned_die_is_hatched_with_its_own_alpha_and_its_hatch_moves_with_it() -> None:
    """Issue 13: a stunned die's hatch stayed where it was while the die moved (the hatch had a fixed alpha, so
    hiding the die for the animation left its hatch behind)."""
    p = page()
    s, a = p.session, p.arena
    in_arena(s.state, faces={"C1": "feet"}, dice=["C1", "E1"])
    a.draw()
    data = a.sources["dice"].data
    c1, e1 = data["id"].index("C1"), data["id"].index("E1")
    assert data["hatch"][c1] == "x" and data["halpha"][c1] > 0 and data["halpha"][e1] == 0
    hidden = za.hide(dict(data), {"C1"})
    assert hidden["alpha"][c1] == 0 and hidden["halpha"][c1] == 0  # hidden while it moves, hatch and all
    feet, back, head = ([0.0, 1.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.7071, 0.0, -0.7071, 0.0])  # up: F, B, H
    frames = [{"t": 0.0, "dice": {"C1": [60.0, 70.0, 0.0, "feet", 9.0, *feet], "E1": [105.0, 70.0, 0.0, "back", 9.0,
                                                                                      *back]}},
              {"t": 0.1, "dice": {"C1": [80.0, 90.0, 0.2, "feet", 9.0, *feet], "E1": [105.0, 70.0, 0.0, "head", 9.0,
                                                                                      *head]}}]
    first, _text, rows = za.animation_data(s, frames, 1)
    assert first["halpha"][first["id"].index("C1")] > 0 and first["halpha"][first["id"].index("E1")] == 0
    assert rows["hatch"] == [1.0, 0.0, 1.0, 0.0] and rows["x"] == [60.0, 105.0, 80.0, 105.0]
    for name in ("faces", "moving"):  # both layers draw the hatch with each die's own alpha
        assert next(r for r in a.figure.renderers if r.name == name).glyph.hatch_alpha == "halpha"


def test_setting_the_widgets_to_match_the_session_is_not_a_command() -> None:
    p = page()
    s, a, f = p.session, p.arena, p.flick
    assert a.tap(*za.bench_xy(0, 0)) and a.tap(150.0, 310.0) and a.tap(*za.bench_xy(0, 0))
    assert f.spot.value == "N-dot" and f.face.value == "head"
    other = ZooSession(seed=9, seats=["person", "person"])
    assert other.choose_die("C3") and other.set_face("tail")
    p.controls.files.load_file(type("E", (), {"new": other.save().encode()})())
    # The widgets follow the loaded battle; the session was not steered by them on the way.
    assert s.notice.text.startswith("Battle loaded") and s.spot == "S-dot" and s.face == "head"
    assert f.spot.value == "S-dot" and p.controls.seed.value == 9
    f._mirror.sync(lambda: (setattr(f.face, "value", "tail"), setattr(f.spot, "value", "W-dot")))
    assert (s.face, s.spot) == ("head", "S-dot")
    f.face.value = "back"  # a player's own change acts
    assert s.face == "back"


@pytest.mark.parametrize(("mode", "players", "counts"), [("cage", 2, False), ("cage", 3, False), ("points", 2, True),
                                                         ("points", 3, True)])
def test_expected_points_are_shown_only_where_points_count(mode: str, players: int, counts: bool) -> None:
    p = page(mode=mode, players=players, teams=["crocodile", "elephant", "gorilla"][:players],
             seats=["person"] * players)
    s = p.session
    assert s.state.game.mode == mode and s.choose_die("C1") and s.propose_flick(0.0, 1.0)
    odds = s.odds(samples=20)
    pane = views.odds_html(odds, False, "", points=mode == "points")
    assert "Cage an opponent" in pane and "20 simulated flicks" in pane
    assert ("Expected points" in pane) is counts and ("p-points" in pane) is counts
    p.odds.odds = odds
    assert p.flick.commit_flick()
    shown = views.log_frame(s)["odds shown"].iloc[0]
    assert shown.startswith("cage ") and shown.endswith("(n=20)") and ("points" in shown) is counts


def test_the_bot_plays_its_seat_on_the_page_and_waits_for_a_result_to_be_seen() -> None:
    p = page(seats=["bot", "person"], bot_candidates=2, bot_samples=1)
    s = p.session
    run(p.bots._turn())
    assert len(s.log) == 2 and s.log[1]["player"] == 0 and s.state.to_move == 1
    assert s.log[1]["odds"]["samples"] > 0  # logged with the odds it was chosen by
    run(p.bots._turn())
    assert len(s.log) == 2 and not p.bots.thinking  # a person is to move: nothing to do
    s.set_seats(["bot", "bot"])
    s.round_result = a_result()
    before = len(s.log)
    run(p.bots._turn())
    assert len(s.log) == before  # the result is shown first


def test_the_benchmark_prints_its_figures(capsys):
    """``python -m apps._bench`` prints the Zoo's clicks, odds and heat-map times (it once printed only a title)."""
    from apps._bench import BENCHMARKS

    rows = BENCHMARKS["zoo"](repeats=1)
    out = capsys.readouterr().out
    names = {name for name, _ in rows}
    assert {"zoo commit + derived views, median", "zoo odds, all 500 flicks, median s"} <= names
    assert all(v > 0 for _, v in rows) and "zoo heat map, all cells, worst s" in out
