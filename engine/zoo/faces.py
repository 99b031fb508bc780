"""A die's 3D orientation (one of the 24 rotations of a cube) and the tumble model (DESIGN).

The physics simulates only position and yaw. A die's orientation is a rotation matrix taking the die's
own axes (x: head, y: left side, z: back) to its body frame (x, y along the square seen from above, z up).
Tumbling changes it by quarter rolls towards one of the four body directions +x, +y, -x, -y. Because the
body frame turns with the die's yaw, a roll "along the direction of travel" is found by turning the world
direction into the body frame and snapping it to the nearest side of the square.

The tumble model's parameters live in ``constants.toml`` ``[tumble]``.
"""

from __future__ import annotations

import itertools
import math
from functools import cache

import numpy as np

from engine.zoo.constants import FACE_NAMES, STUNNED, constants, faces

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


def roll_towards(orientation: int, body_angle: float, world_dx: float, world_dy: float) -> int:
    """One quarter roll towards a world direction, for a die whose body is turned by ``body_angle``."""
    c, s = math.cos(body_angle), math.sin(body_angle)
    lx, ly = c * world_dx + s * world_dy, -s * world_dx + c * world_dy
    if abs(lx) >= abs(ly):
        d = 0 if lx >= 0 else 2
    else:
        d = 1 if ly >= 0 else 3
    return roll_table()[orientation][d]


# --- the tumble model ----------------------------------------------------------------------------------

def launch_event_rate(speed_m_s: float) -> float:
    t = constants()["tumble"]
    return t["events_base"] + t["events_per_m_s"] * speed_m_s


def launch_completion(speed_m_s: float) -> float:
    t = constants()["tumble"]
    return min(1.0, t["complete_base"] + t["complete_per_m_s"] * speed_m_s)


def launch_direction_probabilities() -> tuple[float, float, float, float]:
    """P(forward, left, backward, right) of a completed launch roll, in ``ROLL_DIRECTIONS`` order."""
    t = constants()["tumble"]
    total = t["forward"] + t["backward"] + 2 * t["sideways"]
    return (t["forward"] / total, t["sideways"] / total, t["backward"] / total, t["sideways"] / total)


def launch_tumble(orientation: int, speed_m_s: float, rng: np.random.Generator) -> tuple[int, bool]:
    """The orientation after the drop off the rail, and whether the die tumbled at all.

    The body's x axis points along the direction of travel at launch. A die that does not tumble keeps
    its orientation here; the simulation turns it feet-up where it lands (the FAQ) unless a hit rolls it.
    """
    events = int(rng.poisson(launch_event_rate(speed_m_s)))
    if events == 0:
        return orientation, False
    complete = launch_completion(speed_m_s)
    probs = launch_direction_probabilities()
    table = roll_table()
    for _ in range(events):
        if rng.random() < complete:
            u = rng.random()
            d = 0
            acc = probs[0]
            while u >= acc and d < 3:
                d += 1
                acc += probs[d]
            orientation = table[orientation][d]
    return orientation, True


def feet_up(orientation: int) -> int:
    """The orientation with the feet up, reached by the fewest rolls (forward first)."""
    if up_face(orientation) == STUNNED:
        return orientation
    table = roll_table()
    for d in range(4):
        if up_face(table[orientation][d]) == STUNNED:
            return table[orientation][d]
    return table[table[orientation][0]][0]  # the face is on top of the feet: two rolls


def hit_rolls(closing_speed_m_s: float) -> int:
    """Quarter rolls caused by a hit of this normal closing speed."""
    t = constants()["tumble"]
    if closing_speed_m_s <= t["tip_speed_m_s"]:
        return 0
    return min(t["max_hit_rolls"], int(closing_speed_m_s / t["tip_speed_m_s"]))


def hit_tumble(orientation: int, body_angle: float, dx: float, dy: float, closing_speed_m_s: float,
               rng: np.random.Generator) -> tuple[int, int]:
    """Rolls from a hit towards world direction (dx, dy); returns the orientation and the rolls made.

    Each of the ``hit_rolls`` possible quarter rolls completes with probability ``hit_complete``.
    """
    done = 0
    p = constants()["tumble"]["hit_complete"]
    for _ in range(hit_rolls(closing_speed_m_s)):
        if rng.random() < p:
            orientation = roll_towards(orientation, body_angle, dx, dy)
            done += 1
    return orientation, done


def launch_face_distribution(face: str, speed_m_s: float, max_events: int = 60) -> dict[str, float]:
    """The exact distribution of the up face after a launch (a Markov chain over the 24 orientations).

    An independent derivation of what ``launch_tumble`` samples, used by calibration tests and the notebook.
    """
    start = orientation_with_up(face)
    lam = launch_event_rate(speed_m_s)
    complete = launch_completion(speed_m_s)
    probs = launch_direction_probabilities()
    table = roll_table()
    step = np.zeros((24, 24))
    for o in range(24):
        step[o, o] += 1 - complete
        for d in range(4):
            step[o, table[o][d]] += complete * probs[d]
    dist = np.zeros(24)
    vec = np.zeros(24)
    vec[start] = 1.0
    result = {f: 0.0 for f in FACE_NAMES}
    result[STUNNED] += math.exp(-lam)  # no tumble: turned feet-up (when nothing hits it)
    for k in range(1, max_events + 1):
        vec = vec @ step
        pk = math.exp(-lam + k * math.log(lam) - math.lgamma(k + 1)) if lam > 0 else 0.0
        dist += pk * vec
    for o in range(24):
        result[up_face(o)] += float(dist[o])
    return result
