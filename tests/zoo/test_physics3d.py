"""The 3-D arena (MuJoCo) against theory and against the rules the 2-D engine broke.

Theory is computed here from the constants (v^2 / (2 mu g), the design restitution, a chi-square's tail by
numerical integration), never read back from the module under test.
"""

from __future__ import annotations

import itertools
import math

import mujoco
import numpy as np
import pytest

from engine.zoo import calibration as cal
from engine.zoo.arena3d import (
    DieBody,
    Launch,
    Params3D,
    default_params,
    face_up,
    launch_point,
    pose_matrix,
    restitution_dampratio,
    simulate,
    snap,
)
from engine.zoo.constants import FACE_NAMES, arena, constants
from engine.zoo.faces import orientation_with_up, up_face

MU = constants()["friction"]["floor"]
G = constants()["friction"]["gravity"]
EDGE = constants()["die"]["edge"]
NO_JITTER = Params3D.from_constants(strike_jitter=0.0)


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


# --- calibration against theory ----------------------------------------------------------------------------

@pytest.mark.parametrize("speed", [0.4, 0.7, 1.0])
def test_a_push_without_spin_slides_v2_over_2_mu_g_and_keeps_its_face(speed: float) -> None:
    r = simulate([], Launch("A", 30.0, 150.0, 0.0, speed * 1000, orientation_with_up("back"), strike=0.0), rng(),
                 params=NO_JITTER, must_tumble=False)
    theory = (speed * 1000) ** 2 / (2 * MU * G)
    # Within 2% (0.5 mm on the shortest slide): the 2 ms step stops a slide up to a step's travel early.
    assert abs((r.dice["A"].x - 30.0) / theory - 1) < 0.02, (r.dice["A"].x - 30.0, theory)
    assert abs(r.dice["A"].y - 150.0) < 0.5
    assert r.dice["A"].face == "back" and not r.tumbled


def test_head_on_hits_bounce_with_the_design_restitution() -> None:
    """Soft contacts only approximate an instant bounce: each hit within 0.1 of the design value, the mean of
    the three speeds within 0.06."""
    out = cal.restitution()
    for key, design in (("die_die", constants()["restitution"]["die_die"]),
                        ("die_rail", constants()["restitution"]["die_rail"])):
        es = [h["e"] for h in out[key]["hits"]]
        assert all(e is not None and abs(e - design) < 0.1 for e in es), (key, es)
        assert abs(sum(es) / len(es) - design) < 0.06, (key, es)


def test_a_graze_always_strikes() -> None:
    """Overlaps of 0.5-4 mm sideways at 1.5-2.5 m/s: the 2-D engine's 8 mm steps passed through such dice."""
    out = cal.grazes()
    assert out["struck"] == out["passes"] == 12, [r for r in out["rows"] if not (r["touched"] and r["moved"])]


def test_a_die_lying_at_the_dot_is_struck_by_every_flick_from_it() -> None:
    out = cal.die_on_dot(n=16)
    assert out["struck"] == out["struck_first"] == 16


def test_a_die_at_rest_that_nothing_hits_never_changes() -> None:
    out = cal.untouched(n=3)
    assert out["dice"] == 18 and out["changed_face"] == 0 and out["moved"] == 0


def test_soft_flicks_keep_their_face_more_often_than_a_fair_die() -> None:
    """About a quarter keep it (0.25 measured): 200 flicks put the 95% interval's low end above 1/6."""
    out = cal.soft_flicks(n=200)
    assert out["landed"] == 200
    assert out["low"] > 1 / 6, out


def test_the_softest_flicks_tip_over_the_rail_edge_predictably() -> None:
    """At 0.2-0.3 m/s the die tips off the rail's edge: one face far more often than a fair die gives it."""
    out = cal.soft_flicks(n=20, speeds=(0.2, 0.3))
    assert out["p_commonest"] > 0.5, out


def test_hard_flick_faces_are_measured_and_the_chi_square_is_right() -> None:
    out = cal.hard_flicks(n=60)
    counts = list(out["counts"].values())
    assert sum(counts) == out["landed"] > 10 and out["landed"] + out["caged"] + out["out"] == 60
    e = out["landed"] / 6
    assert out["chi_square"] == pytest.approx(sum((c - e) ** 2 / e for c in counts))
    assert 0.0 <= out["p_value"] <= 1.0


@pytest.mark.parametrize("x", [1.0, 5.0, 11.07, 20.0])
def test_the_chi_square_tail_matches_numerical_integration(x: float) -> None:
    """chi2_sf_5's closed form against integrating the density x^(3/2) e^(-x/2) / (2^(5/2) Gamma(5/2))."""
    t = np.linspace(x, x + 200.0, 400001)
    density = t ** 1.5 * np.exp(-t / 2) / (2 ** 2.5 * math.gamma(2.5))
    assert cal.chi2_sf_5(x) == pytest.approx(float(np.trapezoid(density, t)), rel=1e-6)
    assert cal.chi2_sf_5(11.07) == pytest.approx(0.05, abs=2e-4)  # the table's 5% point for 5 dof


def test_the_damping_ratio_of_a_damped_oscillator() -> None:
    """zeta for restitution e: exp(-zeta pi / sqrt(1 - zeta^2)) = e."""
    for e in (0.3, 0.45, 0.6, 0.9):
        z = restitution_dampratio(e)
        assert math.exp(-z * math.pi / math.sqrt(1 - z * z)) == pytest.approx(e)
    with pytest.raises(ValueError, match="between 0 and 1"):
        restitution_dampratio(1.2)


# --- geometry: cages, rails -----------------------------------------------------------------------------------

def test_a_die_sliding_into_a_hole_falls_into_its_cage() -> None:
    hx, hy = arena().holes["SW"]
    r = simulate([], Launch("A", hx + 80.0, hy, math.pi, 1000.0, orientation_with_up("back"), strike=0.0), rng(),
                 params=NO_JITTER)
    assert r.caged == {"A": "SW"} and "A" not in r.dice


def test_a_die_stops_on_the_rim_or_tips_in_by_where_its_centre_ends() -> None:
    """Pushed towards a hole's centre to stop with its centre 4 mm short of the rim it stays there (within
    2 mm: the rim pieces' seams cost a little speed); 4 mm past the rim (its centre over the hole, most of its
    base still on the floor) it tips in. The path runs between two rim pieces' seams."""
    hx, hy = arena().holes["NE"]
    radius = arena().hole_radius
    start, heading = 100.0, math.radians(52.5)  # mm from the hole's centre, along this heading towards it
    for stop, caged in ((radius + 4.0, False), (radius - 4.0, True)):
        speed = math.sqrt(2 * MU * G * (start - stop))
        x, y = hx - start * math.cos(heading), hy - start * math.sin(heading)
        r = simulate([], Launch("A", x, y, heading, speed, orientation_with_up("back"), strike=0.0), rng(),
                     params=NO_JITTER, must_tumble=False)
        assert bool(r.caged) is caged, (stop, r.caged, r.dice)
        if not caged:
            d = r.dice["A"]
            assert math.hypot(d.x - hx, d.y - hy) == pytest.approx(stop, abs=2.0)


def test_a_slow_push_into_a_rail_bounces_back_and_a_hard_tumbling_flick_can_hop_out() -> None:
    r = simulate([], Launch("A", 250.0, 150.0, 0.0, 700.0, orientation_with_up("back"), strike=0.0), rng(),
                 params=NO_JITTER, must_tumble=False)
    assert r.left == {} and r.dice["A"].x < 300.0 - EDGE / 2 and r.contacts == ["rail:E"]
    outs = []
    for k in range(12):
        x, y, normal = launch_point("S", 150.0)
        out = simulate([], Launch("A", x, y, normal + 0.05 * (k - 6), 2500.0, orientation_with_up("head"),
                                  strike=1.0), rng(k))
        outs.append(out.left)
    assert {"A": "N"} in outs, outs  # some fly over the far rail


def test_a_die_never_goes_through_the_floor_or_a_rail() -> None:
    p = Params3D.from_constants(frame_rate=1000.0)
    for k, rail in enumerate("SENW"):
        x, y, normal = launch_point(rail, 100.0 + 30 * k)
        r = simulate([], Launch("A", x, y, normal + 0.6, 2500.0, orientation_with_up("head"), strike=0.3), rng(k),
                     record=True, params=p)
        reach = arena().hole_radius + EDGE * math.sqrt(2) / 2  # nearer a hole's centre a die can tip into it
        for f in r.frames:
            fx, fy, _, _, fz = {**f["dice"], **f.get("gone", {})}["A"][:5]
            inside = 0 < fx < 300 and 0 < fy < 300
            by_hole = any(math.hypot(fx - hx, fy - hy) < reach for hx, hy in arena().holes.values())
            if inside and not by_hole:
                assert fz > EDGE / 2 - 1.5, f  # never sunk into the floor
        assert set(r.left) | set(r.caged) | set(r.dice) == {"A"}


# --- the rules read from the physics ----------------------------------------------------------------------------

def test_the_rail_a_die_starts_on_is_not_counted_as_touched() -> None:
    """The 2-D engine counted the start rail (0.5 mm away) as the rail hit first on every flick."""
    x, y, normal = launch_point("S", 150.0)
    r = simulate([DieBody("B", 150.0, 150.0, 0.0, orientation_with_up("back"))],
                 Launch("A", x, y, normal, 1200.0, orientation_with_up("head"), strike=0.0), rng(), params=NO_JITTER)
    assert r.contacts and r.contacts[0] == "B"
    assert r.rail_before_strike is False


def test_rail_first_is_read_from_the_order_of_touches() -> None:
    seen = set()
    target = DieBody("B", 250.0, 200.0, 0.0, orientation_with_up("back"))
    for k in range(10):
        x, y, normal = launch_point("S", 150.0)
        r = simulate([target], Launch("A", x, y, normal + math.radians(-70 + 8 * k), 2000.0,
                                      orientation_with_up("head")), rng(k))
        if "B" in r.contacts:
            first = r.contacts.index("B")
            assert r.rail_before_strike is any(c.startswith("rail:") for c in r.contacts[:first])
            seen.add(r.rail_before_strike)
        else:
            assert r.rail_before_strike is None
    assert seen == {True, False}


def test_a_die_that_does_not_tumble_is_turned_feet_up() -> None:
    """A push through the centre from inside the arena (Trunk Shot) does not tumble: feet-up where it stops."""
    launch = Launch("A", 100.0, 150.0, 0.0, 600.0, orientation_with_up("head"), strike=0.0)
    r = simulate([], launch, rng(), params=NO_JITTER)
    assert not r.tumbled and r.dice["A"].face == "feet"
    assert any("feet-up" in e for e in r.events)
    raw = simulate([], launch, rng(), params=NO_JITTER, must_tumble=False)
    assert raw.dice["A"].face == "head" and raw.dice["A"].x == pytest.approx(r.dice["A"].x)


def test_a_flick_that_rolls_over_tumbles() -> None:
    x, y, normal = launch_point("S", 150.0)
    r = simulate([], Launch("A", x, y, normal, 1200.0, orientation_with_up("head"), strike=1.0), rng())
    assert r.tumbled and not any("feet-up" in e for e in r.events)


# --- orientation, frames, determinism -------------------------------------------------------------------------

def test_flat_poses_round_trip_through_snap() -> None:
    for o in range(24):
        for yaw in (-0.7, 0.0, 0.3):
            r = pose_matrix(yaw, o)
            assert face_up(r) == up_face(o)
            yaw2, o2 = snap(r)
            assert up_face(o2) == up_face(o)
            assert np.allclose(pose_matrix(yaw2, o2), r, atol=1e-9)


def test_frames_are_dense_and_end_at_the_result() -> None:
    x, y, normal = launch_point("S", 150.0)
    r = simulate([DieBody("B", 150.0, 180.0, 0.2, orientation_with_up("left"))],
                 Launch("A", x, y, normal, 1500.0, orientation_with_up("head")), rng(), record=True)
    rate = default_params().frame_rate
    assert r.frames[0]["t"] == 0.0 and r.frames[-1]["t"] == pytest.approx(r.time, abs=1e-3)
    assert len(r.frames) >= int(r.time * rate)
    assert all(len(pose) == 9 and pose[3] in FACE_NAMES for f in r.frames for pose in f["dice"].values())
    for die_id, body in r.dice.items():
        last = r.frames[-1]["dice"][die_id]
        assert last[:2] == [round(body.x, 2), round(body.y, 2)] and last[3] == body.face
        q = np.array(last[5:])
        assert np.linalg.norm(q) == pytest.approx(1.0, abs=1e-4)


def test_same_inputs_and_seed_give_the_same_flick() -> None:
    dice = [DieBody(f"B{i}", 60.0 + 40 * i, 100.0 + 30 * (i % 3), 0.3 * i, orientation_with_up("back"))
            for i in range(5)]
    x, y, normal = launch_point("S", 150.0)
    launch = Launch("A", x, y, normal + 0.2, 1800.0, orientation_with_up("head"))
    a = simulate(dice, launch, rng(7), record=True)
    simulate(dice[::-1], Launch("Z", 150.0, 150.0, 1.0, 2400.0, 0), rng(3))  # a different run in between
    b = simulate(dice, launch, rng(7), record=True)
    assert a.dice == b.dice and a.frames == b.frames and a.contacts == b.contacts and a.steps == b.steps


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="once"):
        simulate([DieBody("A", 100.0, 100.0, 0.0, 0)], Launch("A", 150.0, -9.5, math.pi / 2, 500.0, 0), rng())
    with pytest.raises(ValueError, match="strike"):
        simulate([], Launch("A", 150.0, -9.5, math.pi / 2, 500.0, 0, strike=1.5), rng())
    with pytest.raises(ValueError, match="rim_zone"):
        Params3D.from_constants(rim_zone=20.0)
    with pytest.raises(ValueError, match="no rail"):
        launch_point("X", 150.0)


def test_the_benchmark_flicks_an_eight_dice_position() -> None:
    from engine.zoo.bench import aimed_flick, flicks_3d, mid_game_state

    state = mid_game_state()
    wall, cpu, dice = flicks_3d(state, aimed_flick(state), 3)
    assert dice == 8 and wall > 0 and cpu > 0


def test_a_spot_taken_by_a_leaning_die_moves_the_launch_along_the_rail() -> None:
    """A die tilted against the south rail reaches over its edge at the dot: the flicked die is set down at
    the nearest free point along the rail instead of inside it, and says so."""
    tilt = math.radians(40.0)
    r = pose_matrix(0.0, orientation_with_up("back"))
    c, s = math.cos(tilt), math.sin(tilt)
    lean = np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]]) @ r  # top tipped towards the rail (-y)
    q = np.zeros(4)
    mujoco.mju_mat2Quat(q, lean.reshape(9))
    leaning = DieBody("B", 150.0, 10.0, 0.0, orientation_with_up("back"), z=16.0, quat=tuple(q))
    x, y, normal = launch_point("S", 150.0)
    out = simulate([leaning], Launch("A", x, y, normal, 800.0, orientation_with_up("head")), rng())
    assert any("spot was taken" in e for e in out.events), out.events


@pytest.fixture(scope="module")
def quick_calibration() -> dict:
    return cal.calibrate(quick=True)


@pytest.mark.parametrize("as_json", [False, True])
def test_dojo_zoo_calibrate_prints_the_measurements(monkeypatch, capsys, quick_calibration, as_json: bool) -> None:
    import argparse
    import json

    from engine.zoo.cli import register

    monkeypatch.setattr(cal, "calibrate", lambda quick=False: dict(quick_calibration))
    parser = argparse.ArgumentParser(prog="dojo")
    register(parser.add_subparsers())
    args = parser.parse_args(["zoo", "calibrate", "--quick", *(["--json"] if as_json else [])])
    assert args.func(args) == 0
    out = capsys.readouterr().out
    if as_json:
        data = json.loads(out)
        assert set(data) >= {"slide", "restitution", "grazes", "die_on_dot", "untouched", "soft_flicks",
                             "softest_flicks", "hard_flicks", "seconds"}
    else:
        h = quick_calibration["hard_flicks"]
        assert "v^2 / (2 mu g)" in out and f"chi-square against a fair die {h['chi_square']:.1f}" in out
        assert f"{quick_calibration['grazes']['struck']} of 12 passes" in out


def test_the_animation_shows_each_hit_with_the_dice_touching() -> None:
    """Between the regular frames (here 50 ms apart, longer than a hit) a hit gets its own frame, in which
    the two dice are touching."""
    target = DieBody("B", 150.0, 120.0, 0.0, orientation_with_up("back"))
    x, y, normal = launch_point("S", 150.0)
    sparse = Params3D.from_constants(strike_jitter=0.0, frame_rate=20.0)
    r = simulate([target], Launch("A", x, y, normal, 2000.0, orientation_with_up("head"), strike=0.0), rng(),
                 params=sparse, record=True)
    assert "B" in r.contacts
    gaps = [math.dist(f["dice"]["A"][:2], f["dice"]["B"][:2]) for f in r.frames if {"A", "B"} <= set(f["dice"])]
    assert min(gaps) < EDGE * 1.05, min(gaps)  # centres an edge apart or closer: faces in contact
    times = [f["t"] for f in r.frames]
    assert times == sorted(times)


def test_a_caged_die_leaves_the_frames_as_it_falls_and_yaw_turns_the_short_way() -> None:
    """The page reads a die in ``dice`` as in play: a caged die is there until its centre drops below the
    floor, then in ``gone``; between frames a die's yaw changes by less than an eighth of a turn."""
    hx, hy = arena().holes["SW"]
    x, y, _ = launch_point("S", hx + 5.0)
    heading = math.atan2(hy - y, hx - x)
    r = simulate([], Launch("A", x, y, heading, 600.0, orientation_with_up("head"), strike=0.0), rng(),
                 params=NO_JITTER, record=True, must_tumble=False)
    assert r.caged == {"A": "SW"}, (r.caged, r.dice)
    shown = [("A" in f["dice"]) for f in r.frames]
    k = shown.index(False)
    assert all(shown[:k]) and not any(shown[k:]) and all("A" in f["gone"] for f in r.frames[k:])
    assert r.frames[k]["gone"]["A"][4] < 0 <= r.frames[k - 1]["dice"]["A"][4]
    yaws = [{**f["dice"], **f.get("gone", {})}["A"][2] for f in r.frames]
    assert max(abs(b - a) for a, b in itertools.pairwise(yaws)) < math.pi / 4
