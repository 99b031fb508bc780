"""The 24 orientations, quarter rolls and the tumble model's calibration."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from engine.core import wilson_interval
from engine.zoo.constants import FACE_NAMES, STUNNED
from engine.zoo.faces import (
    feet_up,
    launch_face_distribution,
    launch_tumble,
    orientation_with_up,
    roll_table,
    rotations,
    up_face,
    up_faces,
)
from engine.zoo.physics import DieBody, Launch, launch_point, simulate

Z99 = 3.2905  # two-sided 99.9%


def test_24_rotations_each_face_up_four_ways() -> None:
    rots = rotations()
    assert len(set(rots)) == 24
    assert Counter(up_faces()) == {f: 4 for f in FACE_NAMES}


def test_rolls_are_quarter_turns() -> None:
    table = roll_table()
    for d in range(4):
        assert sorted(table[o][d] for o in range(24)) == list(range(24))  # a permutation
    for o in range(24):
        for d in range(4):
            o4 = o
            for _ in range(4):
                o4 = table[o4][d]
            assert o4 == o  # four quarter rolls the same way come back
            assert table[table[o][d]][(d + 2) % 4] == o  # a roll and its opposite cancel
            # one roll never leaves the same face up, and never shows the opposite face
            before, after = up_face(o), up_face(table[o][d])
            assert after != before
            assert {before, after} not in ({"head", "tail"}, {"back", "feet"}, {"left", "right"})


def test_two_rolls_the_same_way_show_the_opposite_face() -> None:
    opposite = {"head": "tail", "tail": "head", "back": "feet", "feet": "back", "left": "right", "right": "left"}
    table = roll_table()
    for o in range(24):
        for d in range(4):
            assert up_face(table[table[o][d]][d]) == opposite[up_face(o)]


def test_feet_up_turns_any_orientation_feet_up() -> None:
    assert all(up_face(feet_up(o)) == STUNNED for o in range(24))


def test_exact_launch_distribution_is_a_distribution() -> None:
    for speed in (0.2, 1.0, 2.5):
        dist = launch_face_distribution("back", speed)
        assert sum(dist.values()) == pytest.approx(1.0, abs=1e-9)
        assert min(dist.values()) >= 0


def test_sampled_launch_tumble_matches_the_exact_chain() -> None:
    """The sampler against the Markov-chain derivation (the FAQ's feet-up when there is no tumble included)."""
    rng = np.random.default_rng(3)
    n = 4000
    for speed in (0.3, 1.2):
        start = orientation_with_up("head")
        counts: Counter[str] = Counter()
        for _ in range(n):
            o, tumbled = launch_tumble(start, speed, rng)
            counts[up_face(o if tumbled else feet_up(o))] += 1
        exact = launch_face_distribution("head", speed)
        for face in FACE_NAMES:
            lo, hi = wilson_interval(counts[face], n, Z99)
            assert lo <= exact[face] <= hi, (speed, face, counts[face] / n, exact[face])


def test_hard_launch_is_close_to_a_fair_cube_exactly() -> None:
    dist = launch_face_distribution("head", 2.5)
    assert max(abs(p - 1 / 6) for p in dist.values()) < 0.01


def _flicks(face: str, speed: float, n: int, seed: int) -> Counter[str]:
    """Flicks from the south dot straight in, into an empty arena, through the full physics."""
    x, y, normal = launch_point("S", 150.0)
    rng = np.random.default_rng(seed)
    out: Counter[str] = Counter()
    for k in range(n):
        heading = normal + math.radians(-20 + 40 * k / n)
        r = simulate([], Launch("A", x, y, heading, speed * 1000, orientation_with_up(face)), rng)
        out[r.dice["A"].face if "A" in r.dice else "gone"] += 1
    return out


def test_hard_flicks_land_on_each_face_about_a_sixth_of_the_time() -> None:
    n = 900
    counts = _flicks("head", 1.75, n, seed=11)
    landed = sum(counts[f] for f in FACE_NAMES)
    assert landed >= n // 2  # the rest end in cages
    for face in FACE_NAMES:
        lo, hi = wilson_interval(counts[face], landed, Z99)
        assert lo <= 1 / 6 <= hi, (face, counts[face] / landed)


def test_soft_flicks_keep_their_starting_face_more_than_a_sixth_of_the_time() -> None:
    n = 400
    counts = _flicks("back", 0.3, n, seed=5)
    lo, _ = wilson_interval(counts["back"], n)
    assert lo > 1 / 6, counts


def test_a_die_at_rest_that_nothing_hits_never_changes() -> None:
    resting = DieBody("R", 250.0, 250.0, 0.4, orientation_with_up("left"))
    x, y, normal = launch_point("S", 100.0)
    for seed in range(30):
        r = simulate([resting], Launch("A", x, y, normal, 800.0, 0), np.random.default_rng(seed))
        assert r.dice["R"] == resting
    alone = simulate([resting], None, np.random.default_rng(0))
    assert alone.dice["R"] == resting
