"""The arena's physics: Coulomb sliding, stopping, caging, rail hops, no tunnelling, determinism."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.zoo.constants import arena, constants
from engine.zoo.faces import orientation_with_up
from engine.zoo.physics import DieBody, Launch, PhysicsParams, default_params, launch_point, simulate

MU = constants()["friction"]["floor"]
G = constants()["friction"]["gravity"]
HALF = constants()["die"]["edge"] / 2


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


@pytest.mark.parametrize("speed", [600.0, 900.0, 1200.0])
def test_slide_distance_is_coulomb(speed: float) -> None:
    """A die sliding freely stops after v^2 / (2 mu g), within 3%."""
    r = simulate([], Launch("A", 30.0, 150.0, 0.0, speed, 0), rng(), launch_tumbles=False)
    travelled = r.dice["A"].x - 30.0
    predicted = speed**2 / (2 * MU * G)
    assert abs(travelled / predicted - 1) < 0.03, (travelled, predicted)
    assert abs(r.dice["A"].y - 150.0) < 1e-6


def test_a_die_stops_in_the_time_friction_predicts() -> None:
    speed = 1000.0
    r = simulate([], Launch("A", 30.0, 150.0, 0.0, speed, 0), rng(), launch_tumbles=False)
    p = default_params()
    assert r.time < p.max_time
    assert abs(r.time - speed / (MU * G)) < 0.03  # at-rest checks every few steps
    again = simulate([r.dice["A"]], None, rng())
    assert again.steps <= p.rest_check_every
    assert (again.dice["A"].x, again.dice["A"].y) == (r.dice["A"].x, r.dice["A"].y)


def test_a_die_whose_centre_reaches_a_hole_is_caged() -> None:
    hx, hy = arena().holes["SW"]
    start = (100.0, 100.0)
    heading = math.atan2(hy - start[1], hx - start[0])
    r = simulate([], Launch("A", *start, heading, 1000.0, 0), rng())
    assert r.caged == {"A": "SW"}
    assert "A" not in r.dice


def test_a_die_that_stops_short_of_a_hole_is_not_caged() -> None:
    hx, hy = arena().holes["SW"]
    start = (150.0, 150.0)
    heading = math.atan2(hy - start[1], hx - start[0])
    # Stops after v^2/(2 mu g) = 52 mm, far from the hole.
    r = simulate([], Launch("A", *start, heading, 600.0, 0), rng())
    assert r.caged == {} and "A" in r.dice


def test_hard_hit_on_a_rail_hops_out_and_a_softer_one_bounces() -> None:
    hop = constants()["flick"]["hop_speed_m_s"] * 1000
    x0 = 100.0
    # Speed at the west wall: sqrt(v^2 - 2 mu g d), d = x0 - half edge.
    d = x0 - HALF
    fast = math.sqrt((hop + 200) ** 2 + 2 * MU * G * d)
    slow = math.sqrt((hop - 300) ** 2 + 2 * MU * G * d)
    out = simulate([], Launch("A", x0, 150.0, math.pi, fast, 0), rng())
    assert out.left == {"A": "W"} and "A" not in out.dice
    back = simulate([], Launch("A", x0, 150.0, math.pi, slow, 0), rng())
    assert back.left == {} and back.dice["A"].x > HALF + 1  # bounced back into the arena


def test_max_speed_never_tunnels_through_rails() -> None:
    """With hopping switched off, a die at the highest flick speed stays inside the rails at every step."""
    vmax = constants()["flick"]["max_speed_m_s"] * 1000
    p = PhysicsParams.from_constants(hop_speed=math.inf)
    p = PhysicsParams(**{**p.__dict__, "frame_rate": 1e6})  # a frame every step
    size = arena().size
    for k, angle in enumerate(np.linspace(-80, 80, 9)):
        rail = "SENW"[k % 4]
        x, y, normal = launch_point(rail, 150.0 + 10 * k - 40)
        r = simulate([], Launch("A", x, y, normal + math.radians(angle), vmax, 0), rng(k), record=True, params=p)
        xs = [f["dice"]["A"][0] for f in r.frames if "A" in f["dice"]]
        ys = [f["dice"]["A"][1] for f in r.frames if "A" in f["dice"]]
        assert len(xs) > 10
        # Contact is resolved within a step: the die sinks less than a quarter of its width into a rail.
        assert min(xs) > HALF / 2 and max(xs) < size - HALF / 2
        assert min(ys) > HALF / 2 and max(ys) < size - HALF / 2
        assert r.left == {}
        if "A" not in r.dice:  # it may end in a cage
            assert "A" in r.caged
            continue
        assert HALF - 0.5 < r.dice["A"].x < size - HALF + 0.5 and HALF - 0.5 < r.dice["A"].y < size - HALF + 0.5


def test_max_speed_never_tunnels_through_a_die() -> None:
    vmax = constants()["flick"]["max_speed_m_s"] * 1000
    p = PhysicsParams.from_constants(hop_speed=math.inf)
    p = PhysicsParams(**{**p.__dict__, "frame_rate": 1e6})  # a frame every step
    target = DieBody("B", 150.0, 150.0, 0.0, 0)
    r = simulate([target], Launch("A", 60.0, 150.0, 0.0, vmax, 0), rng(), record=True, params=p)
    for f in r.frames:
        ax, bx = f["dice"]["A"][0], f["dice"]["B"][0]
        assert bx - ax > HALF, f  # less than a step's overlap (8 mm): the striker never passes through
    assert r.dice["B"].x > 150.0 + 50  # the hit moved it


def test_simulation_is_deterministic_for_a_generator_state() -> None:
    back = orientation_with_up("back")
    dice = [DieBody(f"B{i}", 60.0 + 40 * i, 100.0 + 30 * (i % 3), 0.3 * i, back) for i in range(5)]
    x, y, normal = launch_point("S", 150.0)
    launch = Launch("A", x, y, normal + 0.2, 1800.0, orientation_with_up("head"))
    a = simulate(dice, launch, rng(7), record=True)
    b = simulate(dice, launch, rng(7), record=True)
    assert a.dice == b.dice and a.caged == b.caged and a.left == b.left and a.frames == b.frames
    assert a.steps == b.steps


def test_trajectory_frames_cover_the_run() -> None:
    x, y, normal = launch_point("S", 150.0)
    r = simulate([DieBody("B", 150.0, 200.0, 0.0, 0)], Launch("A", x, y, normal, 1500.0, 0), rng(), record=True)
    rate = default_params().frame_rate
    assert r.frames[0]["t"] == 0.0 and r.frames[-1]["t"] == pytest.approx(r.time, abs=1e-3)
    assert len(r.frames) >= int(r.time * rate)
    assert set(r.frames[0]["dice"]) == {"A", "B"}
    last = r.frames[-1]["dice"]
    for die_id, body in r.dice.items():
        assert last[die_id][:2] == [round(body.x, 2), round(body.y, 2)]
        assert last[die_id][3] == body.face


def test_a_run_does_not_depend_on_the_runs_before_it() -> None:
    """The arena's pymunk objects are reused between runs; nothing may carry over (cagings, hops, overlaps)."""
    dice = [DieBody(f"B{i}", 40.0 + 45 * i, 40.0 + 30 * (i % 4), 0.5 * i, 0) for i in range(6)]
    x, y, normal = launch_point("S", 120.0)
    launch = Launch("A", x, y, normal - 0.5, 2300.0, 0)
    first = simulate(dice, launch, rng(1), record=True)
    hx, hy = arena().holes["NE"]
    for k in range(4):  # cage, hop out, and end with dice still pushed apart from an overlap
        simulate(dice[::-1], Launch("Z", 150.0, 150.0, math.atan2(hy - 150, hx - 150) + 0.1 * k, 2400.0, 0), rng(k))
        simulate(dice[:3], Launch("Y", 100.0, 150.0, math.pi, 2500.0, 0), rng(k))
        overlapping = [DieBody(f"O{j}", 100.0 + 6 * j, 100.0 + 3 * j, 0.2 * j, 0) for j in range(8)]
        simulate(overlapping, None, rng(k))
    again = simulate(dice, launch, rng(1), record=True)
    assert again.frames == first.frames and again.dice == first.dice and again.caged == first.caged


def test_a_die_cannot_be_in_the_arena_twice() -> None:
    with pytest.raises(ValueError, match="once"):
        simulate([DieBody("A", 100.0, 100.0, 0.0, 0)], Launch("A", 150.0, 9.5, math.pi / 2, 500.0, 0), rng())
    r = simulate([DieBody("B", 100.0, 100.0, 0.0, 0)], Launch("A", 150.0, 9.5, math.pi / 2, 500.0, 0), rng())
    assert set(r.dice) == {"A", "B"}  # the refused call left the reused pymunk objects usable
