"""The Kung-Fu Zoo dashboard without a browser: the page's gestures and buttons drive the session and the
Bokeh sources follow (the browser tests drive the same code through real clicks and drags)."""

from __future__ import annotations

import pandas as pd
import pytest
from bokeh.models import HoverTool
from helpers import Script, in_arena

from apps import _zoo_arena as za
from apps import zoo
from engine.core import wilson_interval
from engine.zoo.session import ZooSession


def dashboard(**session: object) -> zoo.ZooDashboard:
    s = ZooSession(**{"seed": 3, "seats": ["person", "person"], "odds_workers": 1, **session})
    return zoo.ZooDashboard(session=s, background=False)


def test_the_module_contract_and_a_new_session_per_page() -> None:
    assert zoo.ORDER == 3 and zoo.TITLE == "Kung-Fu Zoo" and "\n" not in zoo.DESCRIPTION
    a, b = zoo.create_app(), zoo.create_app()
    assert a.dashboard.session is not b.dashboard.session
    assert a.dashboard.session.seats == ["person", "bot"] and a.dashboard.session.odds_workers == 1
    # Outside a server the odds of the opening aim are worked out at once, on the worker thread.
    assert a.dashboard.wait_idle(120) and b.dashboard.wait_idle(120)  # (and none is left running for later tests)
    assert a.dashboard.odds is not None and a.dashboard.odds.samples == 500 and a.dashboard.grid is not None


def test_click_a_die_and_a_dot_drag_the_aim_and_commit() -> None:
    d = dashboard()
    s = d.session
    assert d.tap(*za.bench_xy(0, 1)) and s.die == "C2"
    assert d.tap(-10.0, 150.0) and s.spot == "W-dot"
    assert d._src["launch"].data["x"] == [-9.5] and d._src["dots"].data["x"]  # the die set on the rail top at the dot
    d.pan_start(-9.5, 150.0)
    assert d.pan_end(90.5, 150.0) and (s.direction, s.speed) == (0.0, 1.0)
    aim = d._src["aim"].data
    assert aim["x0"] == [-9.5] and aim["x1"] == [pytest.approx(90.5)]  # the arrow: 10 cm a metre a second
    assert not d._commit.disabled
    assert d.commit()
    assert not d.animating  # no browser: the flick is shown at once
    row = d._src["dice"].data["id"].index("C2")
    assert d._src["dice"].data["status"][row] == "arena" and d._src["dice"].data["x"][row] > 20
    assert "P2 (Elephant) to make a flick" in d._status.object
    assert "flick C2 from W-dot" in d._log.object["move"].iloc[0]


def test_refusals_change_nothing_and_say_why() -> None:
    d = dashboard()
    s = d.session
    before, version = s.state.to_json(), s.version
    assert not d.tap(*za.bench_xy(1, 0)) and "belongs to" in s.message
    assert not d.tap(150.0, 150.0)  # the empty floor
    d.pan_start(10.0, 10.0)
    assert not d.pan_end(10.1, 10.0) and "drag further" in s.message.lower()
    d._files.load_file(type("E", (), {"new": b"not json"})())
    assert "Could not load" in s.message and d._alert.alert_type == "danger"
    assert s.state.to_json() == before and s.version == version
    d._team_w[1].value = "crocodile"
    assert not d.new_game() and "different team" in s.message
    assert s.state.to_json() == before


def test_a_rail_click_off_the_dot_takes_the_ambush_when_only_it_allows() -> None:
    d = dashboard()
    s = d.session
    assert d.tap(*za.bench_xy(0, 0))
    assert not d._src["bands"].data["left"]  # anywhere on a rail only with the Ambush: not shown until asked
    assert d.use_ability() and s.use_ability_flag and d._src["bands"].data["left"]
    assert d.tap(100.0, -10.0) and s.spot == "S@100.0" and s.use_ability_flag
    assert s.proposal_problem() is None


def test_an_opponent_knocked_out_is_placed_by_a_click(monkeypatch: pytest.MonkeyPatch) -> None:
    d = dashboard()
    s = d.session
    in_arena(s.state, dice=["E1"])
    s.state.rail_rule = None
    Script(monkeypatch).then(left={"E1": "N"})
    assert s.choose_die("C1") and s.propose_flick(0.0, 1.0) and d.commit()
    assert s.state.phase == "place" and "places E1 face-up" in s.message
    assert not d.tap(30.0, 30.0) and "cage" in s.message  # over a cage: refused
    assert d.tap(200.0, 210.0)
    e1 = s.state.dice["E1"]
    assert (e1.status, e1.x, e1.y, e1.face) == ("arena", 200.0, 210.0, "head")
    assert s.die == "E2" and d._src["sel"].data["x"] and d._src["dots"].data["x"]  # P2's flick is set up


def test_the_heat_map_aims_and_the_odds_come_in_refined_steps() -> None:
    d = dashboard()
    s = d.session
    assert s.choose_die("C1") and s.launch_spot("S-dot")
    d.grid = s.odds_grid([-15.0, 0.0, 15.0], [0.8, 1.6], samples=2)
    assert d.heat_tap(14.0, 1.55) and (s.direction, s.speed) == (15.0, 1.6)
    seen = []
    d._apply_odds = lambda job, odds, n, busy: seen.append((n, busy, odds))  # type: ignore[method-assign]
    d._estimate(d._snapshot())
    assert [n for n, _, _ in seen] == [0, 50, 140, 230, 320, 410, 500]
    assert [b for _, b, _ in seen][-1] is False
    final = seen[-1][2]
    assert final.summary() == s.odds(samples=500).summary()  # the same estimate as the session's own


def test_new_game_from_the_controls_and_ability_buttons() -> None:
    d = dashboard()
    d._mode_w.value = "Points Battle"
    d._players_w.value = 3
    d._team_w[2].value = "zebra"
    d._seed_w.value = 11
    assert d.new_game()
    s = d.session
    assert (s.mode, s.players, s.seed, s.teams) == ("points", 3, 11, ["crocodile", "elephant", "zebra"])
    assert "3-player Points Battle" in d._status.object and "not in play" in d._cards.object
    d._mode_w.value = "Cage Battle"
    d._players_w.value = 2
    d._team_w[0].value = "zebra"
    d._team_w[1].value = "gorilla"
    assert d.new_game() and s.teams == ["zebra", "gorilla"]
    assert d._ability_btn.label == "Use Dust Kick" and d._ability_target.options == ["P2"]
    d._ability_target.value = "P2"
    assert d.use_ability() and s.state.spent[0] and "spent this round" in d._cards.object
    assert s.choose_die("Z1") and s.propose_flick(0.0, 1.0) and d.commit()
    # P2 had dirt kicked in the face: a spot and an aim, but no arrow (not even while dragging) and no odds.
    assert s.state.to_move == 1 and s.choose_die("G1") and s.propose_flick(10.0, 1.0)
    assert d._src["launch"].data["preview"] == [0.0] and d._src["aim"].data["x0"] == []
    assert "Eyes closed" in d._odds_pane.object
    assert d._snapshot()["flick"] is None  # nothing to estimate


def test_log_frame_and_alerts() -> None:
    s = ZooSession(seed=3, seats=["person", "person"], odds_workers=1)
    s.choose_die("C1")
    s.propose_flick(0.0, 1.0)
    s.commit_flick()
    t = zoo.log_frame(s)
    assert isinstance(t, pd.DataFrame) and list(t["#"]) == [1, 0]
    assert zoo.alert_type("Could not load: x") == "danger" and zoo.alert_type("E1 caged in SW") == "success"


def test_the_status_line_shows_what_decides_the_round() -> None:
    cage = dashboard()
    in_arena(cage.session.state, faces={"C1": "feet"}, dice=["C1", "E1"])
    line = zoo.status_html(cage.session)
    names = [cage.session.state.game.player_name(q) for q in range(2)]
    assert f"Animals still fighting: <span class='fighting'>{names[0]} 3 · {names[1]} 4</span>" in line
    assert "Points on the table" not in line
    points = dashboard(mode="points")
    in_arena(points.session.state, faces={"C1": "head"}, dice=["C1"])
    score = points.session.state.round_score(0)
    assert score > 0 and f"<span class='table-points'>{points.session.state.game.player_name(0)} {score} ·" in (
        zoo.status_html(points.session))


def test_trunk_shot_aims_from_where_the_elephant_lies() -> None:
    d = dashboard(teams=["elephant", "crocodile"])
    s = d.session
    in_arena(s.state, dice=["E1", "E2", "E3", "E4", "C1"])
    s.state.rail_rule = None
    assert s.choose_die("E1")
    assert d.use_ability() and s.spot == "here" and s.use_ability_flag
    e1 = s.state.dice["E1"]
    assert d._src["launch"].data["x"] == [e1.x]
    d.pan_start(0.0, 0.0)
    assert d.pan_end(0.0, -100.0) and (s.direction, s.speed) == (270.0, 1.0)  # an absolute heading: south
    assert d.commit() and s.state.spent[0] and "Trunk Shot" in zoo.cards_html(s) and "spent" in d._cards.object


def test_the_loser_of_a_round_chooses_who_starts_with_a_button(monkeypatch: pytest.MonkeyPatch) -> None:
    d = dashboard()
    s = d.session
    st = s.state
    in_arena(st, dice=["C1", "E1"])
    for e in ("E2", "E3", "E4"):
        st.dice[e].status = "caged"
    st.rail_rule = None
    Script(monkeypatch).then(caged={"E1": "SW"})
    assert s.choose_die("C2") and s.propose_flick(0.0, 1.0) and d.commit()
    assert st.phase == "first" and st.to_move == 1 and st.wins == [1, 0]
    buttons = d._first.objects
    assert [b.label for b in buttons] == ["P1 (Crocodile) starts", "P2 (Elephant) starts"]
    buttons[1].clicks += 1
    assert st.phase == "flick" and st.round_no == 2 and st.to_move == 1


def test_setting_the_widgets_to_match_the_session_is_not_a_command() -> None:
    d = dashboard()
    s = d.session
    assert d.tap(*za.bench_xy(0, 0)) and d.tap(150.0, 310.0) and d.tap(*za.bench_xy(0, 0))
    assert d._spot_w.value == "N-dot" and d._face_w.value == "head"
    other = ZooSession(seed=9, seats=["person", "person"])
    assert other.choose_die("C3") and other.set_face("tail")
    d._files.load_file(type("E", (), {"new": other.save().encode()})())
    # The widgets follow the loaded battle; the session was not steered by them on the way.
    assert s.message.startswith("Battle loaded") and s.spot == "S-dot" and s.face == "head"
    assert d._spot_w.value == "S-dot" and d._seed_w.value == 9
    d._syncing = True  # while the page sets its widgets, their watchers do not steer the session
    d._face_w.value = "tail"
    d._spot_w.value = "W-dot"
    assert (s.face, s.spot) == ("head", "S-dot")
    d._syncing = False
    d._face_w.value = "back"  # a player's own change acts
    assert s.face == "back"


@pytest.mark.parametrize(("mode", "players", "counts"), [("cage", 2, False), ("cage", 3, False), ("points", 2, True),
                                                         ("points", 3, True)])
def test_expected_points_are_shown_only_where_points_count(mode: str, players: int, counts: bool) -> None:
    seats = ["person"] * players
    d = dashboard(mode=mode, players=players, teams=["crocodile", "elephant", "gorilla"][:players], seats=seats)
    s = d.session
    assert s.state.game.mode == mode and s.choose_die("C1") and s.propose_flick(0.0, 1.0)
    d.odds = s.odds(samples=20)
    d._show_odds()
    pane = d._odds_pane.object
    assert "Cage an opponent" in pane and "20 simulated flicks" in pane
    assert ("Expected points" in pane) is counts and ("p-points" in pane) is counts
    if counts:
        assert f"{d.odds.points_mean:+.2f}" in pane and f"{d.odds.points_low:+.2f} to" in pane
    assert d.commit()
    shown = zoo.log_frame(s)["odds shown"].iloc[0]
    assert shown.startswith("cage ") and shown.endswith("(n=20)") and ("points" in shown) is counts


def test_each_heat_map_cell_hovers_its_count_and_95_interval() -> None:
    d = dashboard()
    s = d.session
    assert s.choose_die("C1") and s.launch_spot("S-dot") and s.propose_flick(0.0, 1.2)
    d._map(d._snapshot())  # as the worker maps it, in pieces
    g = d.grid
    cells = len(zoo.GRID_DIRECTIONS) * len(zoo.GRID_SPEEDS)
    assert len(g) == cells and (g["samples"] == zoo.GRID_SAMPLES).all()
    # No piece keeps a new aim waiting for more than MAP_PIECE_FLICKS flicks.
    assert all(len(piece) * zoo.GRID_SAMPLES <= zoo.MAP_PIECE_FLICKS for piece in d._grid_rows[1])
    data = d._heat_src.data
    assert set(data) == set(za.HEAT_COLUMNS) and len(data["tip"]) == cells
    for k in range(cells):
        n = int(g["samples"][k])
        caged = round(g["p_cage_opponent"][k] * n)
        low, high = wilson_interval(caged, n)
        assert data["tip"][k] == f"{100 * caged / n:.1f}% (95% interval {100 * low:.1f}–{100 * high:.1f}%)"
        assert data["count"][k] == f"{caged} of {n} flicks caged an opponent"
        assert data["aim"][k] == f"{g['direction'][k]:g}° at {g['speed'][k]:g} m/s"
    hover = [t for t in d._heat.tools if isinstance(t, HoverTool)]
    assert len(hover) == 1 and hover[0].renderers
    assert {("caging", "@tip"), ("simulated", "@count")} <= set(hover[0].tooltips)
    assert f"{zoo.GRID_SAMPLES} flicks" in d._heat.title.text


def test_the_heat_map_title_says_what_was_measured() -> None:
    def grid(caged: list[int], n: int | list[int]) -> pd.DataFrame:
        ns = [n] * len(caged) if isinstance(n, int) else n
        rows = []
        for k, (c, m) in enumerate(zip(caged, ns, strict=True)):
            low, high = wilson_interval(c, m)
            rows.append({"direction": 15.0 * k, "speed": 1.2, "samples": m, "p_cage_opponent": c / m,
                         "p_cage_opponent_low": low, "p_cage_opponent_high": high})
        return pd.DataFrame(rows)

    none = zoo.heat_title(grid([0, 0, 0], 18), aimed=True)
    assert none == "Caging odds by aim: no cell caged in 18 flicks each"
    assert "no aim cages" not in none  # 0 of 18 is an estimate, not a certainty
    cell = za.heat_data(grid([0], 18))
    assert (cell["tip"], cell["count"]) == (["0.0% (95% interval 0.0–17.6%)"], ["0 of 18 flicks caged an opponent"])
    assert zoo.heat_title(grid([0, 2, 0], 18), aimed=True) == "Caging odds by aim, % of 18 flicks a cell: click to aim"
    assert zoo.heat_title(grid([0, 0], [18, 36]), aimed=True) == "Caging odds by aim: no cell caged in 18+ flicks each"
    assert zoo.heat_title(None, aimed=True) == "Caging odds by aim: mapping…"
    assert zoo.heat_title(None, aimed=False) == "Caging odds by aim"
    assert za.heat_data(None) == {k: [] for k in za.HEAT_COLUMNS}


def test_a_new_aim_stops_the_map_after_its_piece_and_the_map_resumes(monkeypatch: pytest.MonkeyPatch) -> None:
    d = dashboard()
    s = d.session
    assert s.choose_die("C1") and s.launch_spot("S-dot") and s.propose_flick(0.0, 1.2)
    calls: list[int] = []
    real = zoo.odds_grid

    def counted(*args: object, **kwargs: object) -> pd.DataFrame:
        calls.append(len(args[2]) * kwargs["samples"])  # type: ignore[arg-type]
        if len(calls) == 2:
            s.propose_flick(10.0, 1.2)  # the player re-aims while the second piece is mapped
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(zoo, "odds_grid", counted)
    d._map(d._snapshot())
    assert len(calls) == 2 and d.grid is None  # stopped after the piece under way, for the new aim's odds
    d._map(d._snapshot())
    pieces = len(d._grid_rows[1])
    assert d.grid is not None and len(calls) == pieces  # resumed where it stopped, nothing mapped twice
    assert max(calls) <= zoo.MAP_PIECE_FLICKS and sum(calls) == len(d.grid) * zoo.GRID_SAMPLES
