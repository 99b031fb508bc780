"""The 24 orientations and quarter rolls (the 3-D physics' faces are calibrated in test_physics3d.py)."""

from __future__ import annotations

from collections import Counter

import pytest

from engine.zoo.arena3d import face_up, feet_up_matrix, pose_matrix, snap
from engine.zoo.constants import FACE_NAMES, STUNNED
from engine.zoo.faces import roll_table, rotations, up_face, up_faces

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


def test_the_arena_turns_any_pose_feet_up_where_it_lies() -> None:
    """The FAQ's ruling for a flick that did not tumble, from every flat pose: feet up, the yaw kept."""
    for o in range(24):
        for yaw in (0.0, 0.3, -0.7):
            r = feet_up_matrix(pose_matrix(yaw, o))
            assert face_up(r) == STUNNED
            assert snap(r)[0] == pytest.approx(yaw, abs=1e-9)
