"""Orientations of a die: flat poses (yaw and one of the 24 rotations of ``faces.rotations``), the face up,
snapping a 3-D pose to the nearest flat one, and turning a die feet-up where it lies."""

from __future__ import annotations

import math
from dataclasses import dataclass

import mujoco
import numpy as np

from engine.zoo.constants import STUNNED, faces
from engine.zoo.faces import rotations, up_face


def _rot_z(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


@dataclass(frozen=True)
class _Rots:
    mats: np.ndarray  # (24, 3, 3): die axes -> body frame
    faces: tuple[str, ...]


_ROTS: _Rots | None = None


def _rots() -> _Rots:
    global _ROTS
    if _ROTS is None:
        _ROTS = _Rots(np.array(rotations(), dtype=float), tuple(up_face(o) for o in range(24)))
    return _ROTS


def pose_matrix(angle: float, orientation: int) -> np.ndarray:
    """World rotation of a die lying flat: the die's axes turned by ``orientation``, then by yaw ``angle``."""
    return _rot_z(angle) @ _rots().mats[orientation]


def mat_quat(r: np.ndarray) -> np.ndarray:
    q = np.zeros(4)
    mujoco.mju_mat2Quat(q, np.ascontiguousarray(r, dtype=float).reshape(9))
    return q


def quat_mat(q: np.ndarray) -> np.ndarray:
    r = np.zeros(9)
    mujoco.mju_quat2Mat(r, np.asarray(q, dtype=float))
    return r.reshape(3, 3)


def face_up(r: np.ndarray) -> str:
    """The face whose outward normal points most nearly up (world rotation ``r`` of the die's axes)."""
    zrow = r[2]
    axis = int(np.argmax(np.abs(zrow)))
    sign = 1 if zrow[axis] > 0 else -1
    return next(f.name for f in faces() if f.axis == axis and f.sign == sign)


def snap(r: np.ndarray) -> tuple[float, int]:
    """The yaw (within 45 degrees of 0) and the orientation (0-23) of the flat pose nearest to rotation ``r``."""
    rots = _rots()
    best: tuple[float, float, int] | None = None
    for o in range(24):
        a = r @ rots.mats[o].T  # should be a turn about z
        yaw = math.atan2(a[1, 0], a[0, 0])
        if abs(yaw) > math.pi / 4 + 1e-9:
            continue
        score = a[2, 2] + a[0, 0] + a[1, 1]
        if best is None or score > best[0] + 1e-12:
            best = (score, yaw, o)
    assert best is not None
    return best[1], best[2]


def feet_up_matrix(r: np.ndarray) -> np.ndarray:
    """The die turned feet-up where it lies, keeping its heading as far as it can be kept."""
    yaw, _ = snap(r)
    rots = _rots()
    for o in range(24):
        if rots.faces[o] == STUNNED:
            return _rot_z(yaw) @ rots.mats[o]
    raise AssertionError("no feet-up orientation")  # pragma: no cover
