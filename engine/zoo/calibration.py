"""Calibration of the 3-D arena against theory: what ``dojo zoo calibrate`` prints and the tests assert.

Each function runs the MuJoCo arena (``arena3d``) and returns plain numbers next to what theory or the
design says they should be:

* ``slide``: a push through the centre (no spin) slides v^2 / (2 mu g) on the floor and keeps its face;
* ``restitution``: a head-on hit of two dice on the floor, and of a die on a rail, against the design values;
* ``grazes``: dice passing each other with a small overlap sideways always touch (no pass-through);
* ``die_on_dot``: a die lying at a rail's dot is struck by every flick from that dot;
* ``untouched``: a die at rest that nothing hits never moves or changes face;
* ``soft_flicks``: how often a soft flick keeps the face set up (the tumble model promised more than 1/6);
* ``hard_flicks``: the measured face distribution of hard flicks and its chi-square against a fair die.

Nothing here assumes the answer; sample sizes are arguments so the tests can run small ones.
"""

from __future__ import annotations

import math
from typing import Any

import mujoco
import numpy as np

from engine.core import wilson_interval
from engine.zoo.arena3d import RAILS, DieBody, Launch, Params3D, default_params, launch_point, prepared, simulate
from engine.zoo.constants import FACE_NAMES, constants
from engine.zoo.faces import orientation_with_up


def _theory_slide(speed_m_s: float, p: Params3D) -> float:
    """mm a die slides from ``speed`` under Coulomb friction alone: v^2 / (2 mu g)."""
    return (speed_m_s * 1000.0) ** 2 / (2 * p.mu_floor * p.gravity)


def slide(speeds: tuple[float, ...] = (0.4, 0.7, 1.0), params: Params3D | None = None) -> list[dict[str, Any]]:
    """A die on the floor pushed through its centre (strike 0, no sideways offset) at each speed."""
    p = params or default_params()
    p = Params3D(**{**p.__dict__, "strike_jitter": 0.0})
    out = []
    for v in speeds:
        start = 30.0
        r = simulate([], Launch("A", start, p.size / 2, 0.0, v * 1000.0, orientation_with_up("back"), strike=0.0),
                     np.random.default_rng(0), params=p, must_tumble=False)
        die = r.dice.get("A")
        out.append({"speed_m_s": v, "slid_mm": None if die is None else die.x - start,
                    "theory_mm": _theory_slide(v, p), "face": None if die is None else die.face,
                    "ratio": None if die is None else (die.x - start) / _theory_slide(v, p)})
    return out


def _hit(dice: list[DieBody], launch: Launch, sensor: int, p: Params3D, axis: int = 0,
         target: int | None = 1) -> tuple[float, float] | None:
    """Approach and separation speed along ``axis`` of the launched die against ``target`` (dof slot) or a
    fixed rail (None), read from the contact sensor ``sensor`` of the launched die, step by step."""
    m, d, vadr = prepared(dice, launch, p)
    v0 = vadr[0] + axis
    vt = None if target is None else vadr[target] + axis
    before: float | None = None
    touched = False
    for _ in range(int(1.0 / p.timestep)):
        rel = d.qvel[v0] - (d.qvel[vt] if vt is not None else 0.0)
        mujoco.mj_step(m, d)
        if d.sensordata[sensor] > 0 and not touched:
            touched, before = True, float(rel)
        elif touched and d.sensordata[sensor] == 0:
            after = float(d.qvel[v0] - (d.qvel[vt] if vt is not None else 0.0))
            assert before is not None
            return before, after
    return None


def restitution(speeds: tuple[float, ...] = (0.5, 1.0, 2.0), params: Params3D | None = None) -> dict[str, Any]:
    """Measured restitution of head-on hits on the floor: die on die (B at rest 50 mm ahead) and die on the
    east rail, for each speed, against the design values."""
    p = params or default_params()
    p = Params3D(**{**p.__dict__, "strike_jitter": 0.0})
    y = p.size / 2
    dice_rows, rail_rows = [], []
    for v in speeds:
        launch = Launch("A", 100.0, y, 0.0, v * 1000.0, orientation_with_up("back"), strike=0.0)
        hit = _hit([DieBody("B", 150.0, y, 0.0, orientation_with_up("back"))], launch, len(RAILS), p)
        dice_rows.append({"speed_m_s": v, "e": None if hit is None else -hit[1] / hit[0]})
        launch = Launch("A", p.size - 40.0, y, 0.0, v * 1000.0, orientation_with_up("back"), strike=0.0)
        hit = _hit([], launch, RAILS.index("E"), p, target=None)
        rail_rows.append({"speed_m_s": v, "e": None if hit is None else -hit[1] / hit[0]})
    return {"die_die": {"design": p.e_die_die, "hits": dice_rows},
            "die_rail": {"design": p.e_die_rail, "hits": rail_rows}}


def grazes(offsets: tuple[float, ...] = (14.0, 16.0, 17.0, 17.5), speeds: tuple[float, ...] = (1.5, 2.0, 2.5),
           params: Params3D | None = None) -> dict[str, Any]:
    """A die sliding past a resting die with centres ``offset`` mm apart sideways (dice 18 mm wide: an overlap
    of 18 - offset mm). Counts the passes in which the resting die was touched and moved."""
    p = params or default_params()
    p = Params3D(**{**p.__dict__, "strike_jitter": 0.0})
    y = p.size / 2
    rows = []
    for off in offsets:
        for v in speeds:
            launch = Launch("A", 40.0, y, 0.0, v * 1000.0, orientation_with_up("back"), strike=0.0)
            target = DieBody("B", 110.0, y + off, 0.0, orientation_with_up("back"))
            r = simulate([target], launch, np.random.default_rng(0), params=p, must_tumble=False)
            moved = "B" not in r.dice or math.hypot(r.dice["B"].x - 110.0, r.dice["B"].y - y - off) > 0.5
            rows.append({"offset_mm": off, "speed_m_s": v, "touched": "B" in r.contacts, "moved": moved})
    return {"passes": len(rows), "struck": sum(r["touched"] and r["moved"] for r in rows), "rows": rows}


def die_on_dot(n: int = 24, seed: int = 0, params: Params3D | None = None) -> dict[str, Any]:
    """A die lying in the arena at the south dot (against the rail) and ``n`` flicks from that dot with random
    direction (within 60 degrees), speed (0.2-2.5 m/s) and strike: how many strike it (touch it first)."""
    p = params or default_params()
    rng = np.random.default_rng(seed)
    c = constants()["flick"]
    struck = first = 0
    for _ in range(n):
        x, y, normal = launch_point("S", p.size / 2, p)
        heading = normal + math.radians(rng.uniform(-60.0, 60.0))
        speed = rng.uniform(c["min_speed_m_s"], c["max_speed_m_s"]) * 1000.0
        lying = DieBody("B", p.size / 2, p.edge / 2 + 0.5, 0.0, orientation_with_up("back"))
        r = simulate([lying], Launch("A", x, y, heading, speed, orientation_with_up("head"),
                                     strike=float(rng.uniform())), rng, params=p)
        struck += "B" in r.contacts
        first += bool(r.contacts) and r.contacts[0] == "B"
    return {"flicks": n, "struck": struck, "struck_first": first}


def untouched(n: int = 12, seed: int = 1, params: Params3D | None = None) -> dict[str, Any]:
    """Dice at rest in the north half (every face, random yaw) while a soft flick from the south rail stops
    short of them: how many moved more than 0.1 mm or changed face."""
    p = params or default_params()
    rng = np.random.default_rng(seed)
    changed = moved = 0
    total = 0
    for k in range(n):
        dice = [DieBody(f"B{i}", 40.0 + 44.0 * i, 230.0 + 10.0 * (i % 2), float(rng.uniform(-math.pi, math.pi)),
                        orientation_with_up(FACE_NAMES[(i + k) % 6])) for i in range(6)]
        x, y, normal = launch_point("S", float(rng.uniform(60.0, 240.0)), p)
        r = simulate(dice, Launch("A", x, y, normal, 400.0, orientation_with_up("head")), rng, params=p)
        for d in dice:
            total += 1
            after = r.dice.get(d.id)
            if after is None or after.face != d.face:
                changed += 1
            if after is None or math.hypot(after.x - d.x, after.y - d.y) > 0.1:
                moved += 1
    return {"dice": total, "changed_face": changed, "moved": moved}


def _flicks(n: int, speeds: tuple[float, float], strikes: tuple[float, float], seed: int, p: Params3D,
            face: str = "head") -> list[str | None]:
    """Up faces (raw physics, no feet-up ruling; "caged" or "out" for a die that left) of ``n`` flicks of a
    lone die from the south dot with random direction within 45 degrees, speed and strike in the ranges."""
    rng = np.random.default_rng(seed)
    out: list[str | None] = []
    for _ in range(n):
        x, y, normal = launch_point("S", p.size / 2, p)
        heading = normal + math.radians(rng.uniform(-45.0, 45.0))
        launch = Launch("A", x, y, heading, rng.uniform(*speeds) * 1000.0, orientation_with_up(face),
                        strike=float(rng.uniform(*strikes)))
        r = simulate([], launch, rng, params=p, must_tumble=False)
        out.append(r.dice["A"].face if "A" in r.dice else ("caged" if r.caged else "out"))
    return out


def soft_flicks(n: int = 60, seed: int = 2, speeds: tuple[float, float] = (0.4, 0.7),
                params: Params3D | None = None) -> dict[str, Any]:
    """How often a soft flick (any strike, set up head-up) ends head-up, with a 95% interval, and how
    concentrated its outcome is (the commonest face and its share)."""
    p = params or default_params()
    faces = _flicks(n, speeds, (0.0, 1.0), seed, p)
    landed = [f for f in faces if f in FACE_NAMES]
    kept = sum(f == "head" for f in landed)
    lo, hi = wilson_interval(kept, len(landed))
    counts = {f: landed.count(f) for f in FACE_NAMES}
    modal = max(counts, key=lambda f: counts[f])
    return {"flicks": n, "landed": len(landed), "kept": kept, "p_kept": kept / max(1, len(landed)),
            "low": lo, "high": hi, "fair": 1 / 6, "speeds_m_s": list(speeds), "counts": counts,
            "commonest": modal, "p_commonest": counts[modal] / max(1, len(landed))}


def hard_flicks(n: int = 300, seed: int = 3, speeds: tuple[float, float] = (1.5, 2.5),
                params: Params3D | None = None) -> dict[str, Any]:
    """The face distribution of hard flicks at the default strike, set up head-up, with its chi-square
    against a fair die (5 degrees of freedom) and the p-value."""
    p = params or default_params()
    faces = _flicks(n, speeds, (p.strike, p.strike), seed, p)
    landed = [f for f in faces if f in FACE_NAMES]
    counts = {f: landed.count(f) for f in FACE_NAMES}
    chi2 = chi_square(list(counts.values()))
    return {"flicks": n, "landed": len(landed), "caged": faces.count("caged"), "out": faces.count("out"),
            "counts": counts, "chi_square": chi2, "dof": 5,
            "p_value": chi2_sf_5(chi2), "speeds_m_s": list(speeds), "strike": p.strike}


def chi_square(counts: list[int]) -> float:
    """Pearson's chi-square of counts against equal probabilities."""
    total = sum(counts)
    if total == 0:
        return 0.0
    e = total / len(counts)
    return sum((c - e) ** 2 / e for c in counts)


def chi2_sf_5(x: float) -> float:
    """P(chi-square with 5 degrees of freedom > x), in closed form:
    erfc(sqrt(x/2)) + sqrt(2x/pi) e^(-x/2) (1 + x/3)."""
    if x <= 0:
        return 1.0
    return math.erfc(math.sqrt(x / 2)) + math.sqrt(2 * x / math.pi) * math.exp(-x / 2) * (1 + x / 3)


def calibrate(quick: bool = False, params: Params3D | None = None) -> dict[str, Any]:
    """Every calibration at once (``quick``: small samples, a few seconds)."""
    p = params or default_params()
    return {
        "timestep_s": p.timestep,
        "slide": slide(params=p),
        "restitution": restitution(params=p),
        "grazes": grazes(params=p),
        "die_on_dot": die_on_dot(n=12 if quick else 48, params=p),
        "untouched": untouched(n=4 if quick else 12, params=p),
        "soft_flicks": soft_flicks(n=40 if quick else 200, params=p),
        "softest_flicks": soft_flicks(n=20 if quick else 100, speeds=(0.2, 0.3), params=p),
        "hard_flicks": hard_flicks(n=120 if quick else 600, params=p),
    }



