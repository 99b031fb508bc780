"""The Zoo page's 3-D pieces without a browser: the strike height control, the dice drawn as projected cubes,
the slow replay and the expected points on the heat map (the browser tests drive the same code)."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import numpy as np
import param
import pytest
from helpers import in_arena

import apps.zoo.panels as zp
from apps import zoo
from apps.zoo import adapter as za
from apps.zoo.arena import REPLAY_RATE
from engine.core import make_rng
from engine.zoo.arena3d.pose import face_up, quat_mat
from engine.zoo.game import STRIKE_DEFAULT
from engine.zoo.session import ZooSession

pytestmark = pytest.mark.no_event_loop  # asyncio.run needs a thread without Playwright's running loop


def page(**session: object) -> zoo.ZooPage:
    s = ZooSession(**{"seed": 3, "seats": ["person", "person"], "odds_workers": 1, **session})
    return zoo.ZooPage(session=s, background=False)


def run(work: Any) -> None:
    asyncio.run(work)


def test_the_strike_control_sets_the_flick_its_odds_and_its_map() -> None:
    p = page()
    s, c = p.session, p.flick
    assert s.choose_die("C1") and s.launch_spot("S-dot") and s.propose_flick(0.0, 1.2)
    assert c.strike.value == s.strike == STRIKE_DEFAULT
    key = p.odds._map_key()
    with param.edit_constant(c.strike):  # the slider released at 0.9, as the browser reports it
        c.strike.param.update(value=0.9, value_throttled=0.9)
    assert s.strike == 0.9 and str(s.proposed_flick()).endswith("strike=0.9")
    assert p.odds._map_key() != key  # the heat map is worked out again for the new strike
    run(p.odds._estimate())
    assert p.odds.odds.flick == str(s.proposed_flick())
    s.set_strike(0.2)
    assert c.strike.value == 0.2  # the control follows the session
    assert not s.set_strike(3.0) and c.strike.value == 0.2 and s.strike == 0.2


def _shoelace(xs: list[float], ys: list[float]) -> float:
    return 0.5 * abs(sum(xs[i] * ys[i - 1] - xs[i - 1] * ys[i] for i in range(len(xs))))


def test_a_cube_seen_from_above_covers_its_shadow() -> None:
    """The faces drawn are the ones facing up, and together they cover the cube's shadow straight down, whose
    area is edge^2 (|r_zx| + |r_zy| + |r_zz|) for the rotation r (each face's area times its normal's z)."""
    e = za.edge()
    rng = np.random.default_rng(5)
    for _ in range(50):
        q = rng.normal(size=4)
        rot = quat_mat(q / np.linalg.norm(q))
        seen = za.cube_faces(100.0, 120.0, 9.0, rot)
        shadow = e * e * sum(abs(c) for c in rot[2] if abs(c) > za.MIN_UP)
        assert sum(_shoelace(f["xs"], f["ys"]) for f in seen) == pytest.approx(shadow)
        assert 1 <= len(seen) <= za.SLOTS and seen[0]["face"] == face_up(rot)
        assert [f["up"] for f in seen] == sorted((f["up"] for f in seen), reverse=True)
    flat = za.cube_faces(50.0, 60.0, 9.0, quat_mat(np.array([1.0, 0.0, 0.0, 0.0])))
    assert len(flat) == 1 and flat[0]["face"] == "back" and (flat[0]["cx"], flat[0]["cy"]) == (50.0, 60.0)
    assert sorted(flat[0]["xs"]) == pytest.approx([50 - e / 2] * 2 + [50 + e / 2] * 2)


def test_a_leaning_die_is_drawn_with_its_tilt_and_its_letter_on_its_top_face() -> None:
    p = page()
    s, a = p.session, p.arena
    in_arena(s.state, faces={"C1": "back"}, dice=["C1", "E1"])
    tilt = math.radians(35.0)  # C1 leans 35 degrees about the east axis, its back still most nearly up
    s.state.dice["C1"].quat = (math.cos(tilt / 2), math.sin(tilt / 2), 0.0, 0.0)
    s.state.dice["C1"].z = 12.0
    a.draw()
    faces, dice = a.sources["faces"].data, a.sources["dice"].data
    c1 = [i for i, d in enumerate(faces["id"]) if d == "C1"]
    e1 = [i for i, d in enumerate(faces["id"]) if d == "E1"]
    assert len(c1) == 2 and len(e1) == 1  # the leaning die shows its top and one side; the flat one its top
    areas = sorted(_shoelace(faces["xs"][i], faces["ys"][i]) for i in c1)
    e = za.edge()
    assert areas == pytest.approx(sorted([e * e * math.cos(tilt), e * e * math.sin(tilt)]))
    colour = za.TEAM_COLOURS["crocodile"]
    assert faces["fill"][c1[0]] == za.shade(colour, math.cos(tilt)) != faces["fill"][c1[1]]
    assert faces["fill"][e1[0]] == za.TEAM_COLOURS["elephant"]  # facing straight up: the team colour itself
    i = dice["id"].index("C1")
    x, y = s.state.dice["C1"].x, s.state.dice["C1"].y
    assert dice["face"][i] == "B" and dice["tx"][i] == pytest.approx(x)
    assert dice["ty"][i] == pytest.approx(y - e / 2 * math.sin(tilt))  # the top face's centre, seen from above
    assert za.at(s, x, y) == "C1"


def test_replay_slowly_plays_the_last_flick_at_a_quarter_of_its_speed() -> None:
    p = page()
    s, a, c = p.session, p.arena, p.flick
    assert not a.replay() and "no flick to replay" in s.notice.text
    assert s.choose_die("C1") and s.launch_spot("S-dot") and s.propose_flick(0.0, 1.4)
    assert c.replay.disabled
    frames = s.commit_flick()
    assert frames and a.settled() and not c.replay.disabled
    c.replay.clicks += 1  # the button
    assert a.animating and not a.settled()
    rows, anim, text = (a.sources[k].data for k in ("frames", "anim", "animtext"))
    n = len(text["id"])
    assert set(rows["rate"]) == {REPLAY_RATE} and len(rows["t"]) == n * len(frames)
    assert len(anim["id"]) == za.SLOTS * n and rows["x"][:n] == [frames[0]["dice"][d][0] for d in text["id"]]
    moving = set(text["id"])
    board = a.sources["dice"].data
    assert all(board["alpha"][k] == 0 for k, d in enumerate(board["id"]) if d in moving)  # drawn by the replay
    assert not a.replay() and "Wait for the flick" in s.notice.text
    a.sources["done"].data = {"seq": [a._anim_seq], "fps": [60.0], "drawn": [600], "seconds": [frames[-1]["t"]]}
    assert a.settled() and a.last_fps == 60.0 and a.sources["anim"].data["id"] == []


def test_the_heat_map_shows_expected_points_from_the_same_samples(monkeypatch: pytest.MonkeyPatch) -> None:
    """One cell's expected points, pinned against the mean change of the lead over the very flicks the map plays
    (its noisy aims and seeds drawn here again from the piece's seed, each flick played on its own copy)."""
    monkeypatch.setattr(zp, "GRID_DIRECTIONS", (-15.0, 0.0, 15.0))
    monkeypatch.setattr(zp, "GRID_SPEEDS", (1.2,))
    p = page(mode="points")
    s = p.session
    assert s.choose_die("C1") and s.launch_spot("S-dot") and s.propose_flick(0.0, 1.2)
    run(p.odds._map())
    grid = p.odds.grid
    assert len(grid) == 3
    # Piece 0 holds the cells -15 and 0 degrees (seed 0); the 0-degree cell's flicks are the second draw.
    rng, n = make_rng(0), zp.GRID_SAMPLES
    noise = s.noise()
    for direction in (-15.0, 0.0):
        dirs = direction + noise.angle_sd * rng.standard_normal(n)
        speeds = 1.2 * (1.0 + noise.speed_sd * rng.standard_normal(n))
        seeds = rng.integers(0, 2**63, size=n)
    base = s.proposed_flick()
    gains = []
    for d, v, seed in zip(dirs, speeds, seeds, strict=True):
        st = s.state.clone(rng=np.random.Generator(np.random.PCG64(int(seed))))
        before = st.margin(0)
        st.apply_action(base.with_aim(float(np.clip(d, -80.0, 80.0)), float(np.clip(v, 0.2, 2.5))))
        assert "round_scores" not in (st.last or {})  # the round goes on: the lead is the state's margin
        gains.append(st.margin(0) - before)
    k = grid.index[grid["direction"] == 0.0][0]
    assert grid["points_mean"][k] == pytest.approx(float(np.mean(gains)))
    assert p.odds.shown_measure() == "caging"  # the caging odds, as before, until the player chooses points
    assert p.odds.measure_choice.visible
    p.odds.measure_choice.value = "points"
    assert p.odds.measure == "points"
    p.odds.draw_heat()
    data = p.odds._heat_src.data
    assert data["p"][k] == pytest.approx(float(np.mean(gains))) and data["text"][k] == f"{np.mean(gains):+.1f}"
    assert "Expected points" in p.odds.heat.title.text and p.odds.mapper.low == -p.odds.mapper.high
    assert ("expected points", "@tip") in p.odds.hover.tooltips


def test_a_cage_battle_maps_the_caging_odds_only() -> None:
    p = page()
    p.odds.measure = "points"
    assert p.odds.shown_measure() == "caging" and not p.odds.measure_choice.visible
    p.odds.draw_heat()
    assert p.odds.heat.title.text.startswith("Caging odds") and p.odds.mapper.low == 0.0
