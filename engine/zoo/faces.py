"""A die's 3D orientation: one of the 24 rotations of a cube, and the face each shows up.

An orientation is a rotation matrix taking the die's own axes (x: head, y: left side, z: back) to its body
frame (x, y along the square seen from above, z up); the yaw turns the body frame in the arena. The 3-D
arena (``engine.zoo.arena3d``) snaps a die's resting pose to the nearest of these flat poses. A quarter roll
over a bottom edge (``roll_table``) is the step between neighbouring orientations.
"""

from __future__ import annotations

import itertools
from functools import cache

import numpy as np

from engine.zoo.constants import FACE_NAMES, faces

Matrix = tuple[tuple[int, int, int], tuple[int, int, int], tuple[int, int, int]]

ROLL_DIRECTIONS = ("+x", "+y", "-x", "-y")
"""Quarter rolls towards a side of the square in the body frame; index 0 is forward along the body's x."""


def _matmul(a: Matrix, b: Matrix) -> Matrix:
    return tuple(tuple(sum(a[i][k] * b[k][j] for k in range(3)) for j in range(3)) for i in range(3))  # type: ignore[return-value]


def _det(m: Matrix) -> int:
    return round(float(np.linalg.det(np.array(m))))


@cache
def rotations() -> tuple[Matrix, ...]:
    """The 24 proper rotations of a cube (signed permutation matrices of determinant +1), in a fixed order."""
    out = []
    for perm in itertools.permutations(range(3)):
        for signs in itertools.product((1, -1), repeat=3):
            m = tuple(tuple(signs[i] if perm[i] == j else 0 for j in range(3)) for i in range(3))
            if _det(m) == 1:  # type: ignore[arg-type]
                out.append(m)
    return tuple(sorted(out, reverse=True))  # type: ignore[arg-type]


# A roll towards +x tips the die over its +x bottom edge: the top goes to +x, +x goes down, down to -x, -x up.
_ROLL_MATRICES: dict[str, Matrix] = {
    "+x": ((0, 0, 1), (0, 1, 0), (-1, 0, 0)),
    "-x": ((0, 0, -1), (0, 1, 0), (1, 0, 0)),
    "+y": ((1, 0, 0), (0, 0, 1), (0, -1, 0)),
    "-y": ((1, 0, 0), (0, 0, -1), (0, 1, 0)),
}


@cache
def roll_table() -> tuple[tuple[int, int, int, int], ...]:
    """``roll_table()[orientation][d]``: the orientation after a quarter roll towards ``ROLL_DIRECTIONS[d]``."""
    rots = rotations()
    index = {m: i for i, m in enumerate(rots)}
    return tuple(
        tuple(index[_matmul(_ROLL_MATRICES[d], m)] for d in ROLL_DIRECTIONS)  # type: ignore[misc]
        for m in rots
    )


@cache
def up_faces() -> tuple[str, ...]:
    """``up_faces()[orientation]``: the name of the face looking up."""
    out = []
    for m in rotations():
        row = m[2]  # which die axis maps to body +z
        axis = next(j for j in range(3) if row[j] != 0)
        face = next(f for f in faces() if f.axis == axis and f.sign == row[axis])
        out.append(face.name)
    return tuple(out)


def up_face(orientation: int) -> str:
    return up_faces()[orientation]


@cache
def orientation_with_up(face: str) -> int:
    """The canonical orientation showing ``face`` up (how a player sets a die on the rail)."""
    if face not in FACE_NAMES:
        raise ValueError(f"no face {face!r}; faces are {', '.join(FACE_NAMES)}")
    return up_faces().index(face)
