"""The arena in 3-D with MuJoCo: a floor with four real corner holes, rails with height, cubes that tumble.

The model is built from ``constants.toml`` (``[arena]``, ``[die]``, ``[friction]``, ``[restitution]``,
``[physics3d]``), in metres and kilograms; this module's interface is in millimetres like ``physics.py``.

* **Floor**: a plane at z = 0, without seams for a sliding die to catch on. Each corner hole is a regular
  polygon cut out of a square of "rim pieces" (convex prisms ``floor_depth`` deep, one per side of the
  polygon, coplanar with the plane). A die whose centre comes within ``rim_zone`` of a hole's centre collides
  with that hole's rim pieces instead of the plane (its collision bits are switched, checked every
  ``rim_check_every`` steps, close enough that the plane never carries a die over a hole). So a die falls
  into a hole by geometry: it tips over the rim once its centre passes it and lands in the well, on the
  table plane ``floor_depth`` below.
* **Rails**: boxes ``rail_height`` above the floor; their midpoints carry the dots (sites, for drawing).
* **Dice**: free boxes of the designed edge and mass (sharp edges: MuJoCo's box-box collider is fast and
  gives up to eight contact points; a rounded mesh would cost several times more).
* **Contacts**: friction is Coulomb (elliptic cones) with the design coefficients. MuJoCo's contacts are
  soft: a hit is a damped spring with time constant ``contact_timeconst`` whose damping ratio is that of a
  damped oscillator with the design restitution, zeta = -ln e / sqrt(pi^2 + ln^2 e). ``dojo zoo calibrate``
  measures what that gives. Geom priorities pick the pair's parameters: floor > rails > dice.
* **Sleeping**: ``<flag sleep="enable"/>``: a die slower than ``sleep_tolerance`` for ten steps sleeps and
  costs nothing until something touches it; a run ends when every die sleeps.

A flick is a strike (``Launch``): a die set on the rail top at a dot (or anywhere on a rail), square to it,
is struck on its back face at height ``strike`` (low: a push that slides; high: topspin that tumbles), with a
small random sideways offset of the strike point drawn from the generator (a little yaw spin). It slides
off the rail's inner edge and drops onto the floor. Rulings this module applies (stated so they can be
checked):

* **Faces**: a die's face is the one whose outward normal points most nearly up, also for a die at rest
  leaning on a rail or on another die.
* **Must tumble** (FAQ): the flicked die tumbled if at some moment a face other than the one it started with
  pointed up within ``acos(tumble_settle)``; a tip that falls back is not a tumble. A flicked die that did
  not tumble is turned feet-up where it lies.
* **Contacts after the launch**: the flicked die's touches of dice and rails are listed in order. Touches of
  the rail it starts on count only once it has left its start: its centre more than half its space diagonal
  from that rail's inner face, so that it can touch it again only by coming back.
* **Caged**: a die whose centre ends below the floor's top inside a hole. **Out**: a die whose centre ends
  over a rail or beyond (it hopped out, or never left the rail it was flicked from); ``left`` names the rail.
* **A spot already taken**: a die is set on the rail top, square to it and ``launch_gap`` short of its inner
  edge, so it never overlaps a die lying in the arena at that dot; a flick from the dot strikes that die at
  once. Should it overlap a die leaning over the rail's edge, it is set down at the nearest free point along
  the rail (``free_spot_step`` at a time, up to ``free_spot_reach``), and an event says so.

For the game (not switched yet): a result's ``DieBody`` carries the die's exact pose (``z``, ``quat``); a
state that keeps only (x, y, yaw, orientation) puts a die that ended leaning, or on another die, back flat
on the floor at its (x, y), where it may overlap a neighbour.

Runs are deterministic: MuJoCo is deterministic on one machine, every run starts from a reset state, and
the only random draw is the strike offset from the generator passed in.
"""

from __future__ import annotations

import math
import os
import threading
from dataclasses import dataclass, field
from typing import Any

import mujoco
import numpy as np

from engine.zoo.constants import STUNNED, arena, constants, faces
from engine.zoo.faces import rotations, up_face

RAILS = ("S", "E", "N", "W")
"""The four rails, named by compass side of the square arena (x east, y north)."""

MM = 0.001
"""Metres per millimetre: the model is in SI units."""


@dataclass
class DieBody:
    """A die in the arena: centre (mm), yaw (radians) and orientation (one of the 24, ``faces.rotations``).

    ``z`` and ``quat`` (w, x, y, z) give the exact 3-D pose when known (a die at rest leaning); without them
    the die lies flat on the floor, turned by ``angle`` with ``orientation``.
    """

    id: str
    x: float
    y: float
    angle: float
    orientation: int
    z: float | None = None
    quat: tuple[float, float, float, float] | None = None

    @property
    def face(self) -> str:
        return up_face(self.orientation)


@dataclass(frozen=True)
class Launch:
    """A die set down at (x, y) and struck towards ``heading`` (radians, world) at ``speed`` (mm/s).

    A start over a rail sets the die on the rail top, square to the rail (``angle`` None); a start inside the
    playfield (Trunk Shot) on the floor, turned by ``angle`` or by the heading. ``strike`` in [0, 1] is the
    strike height control (None: the constants' default).
    """

    die: str
    x: float
    y: float
    heading: float
    speed: float
    orientation: int
    strike: float | None = None
    angle: float | None = None


@dataclass
class SimResult:
    """What a flick did. ``dice`` holds the dice still in the arena, at rest."""

    dice: dict[str, DieBody]
    caged: dict[str, str] = field(default_factory=dict)  # die -> hole (SW, SE, NE, NW)
    left: dict[str, str] = field(default_factory=dict)  # die -> rail it went over
    tumbled: bool = True
    rail_before_strike: bool | None = None  # a rail was touched before the first die (None: no die touched)
    contacts: list[str] = field(default_factory=list)  # the flicked die's touches in order: "rail:S", die ids
    events: list[str] = field(default_factory=list)
    frames: list[dict[str, Any]] = field(default_factory=list)
    time: float = 0.0
    steps: int = 0


def restitution_dampratio(e: float) -> float:
    """The damping ratio of a damped oscillator that bounces back with restitution ``e`` (0 < e < 1)."""
    if not 0.0 < e < 1.0:
        raise ValueError(f"restitution must be between 0 and 1, not {e}")
    lg = -math.log(e)
    return lg / math.sqrt(math.pi * math.pi + lg * lg)


def head_on_restitution(timestep: float, timeconst: float, dampratio: float, edge: float, mass: float,
                        wall: bool, speed: float = 1.0, impedance: float = 0.95) -> float:
    """The restitution MuJoCo's soft contact gives a head-on hit in free space: a die at ``speed`` m/s against
    a resting die (or a fixed wall), measured as separation speed over approach speed."""
    h = edge / 2 * MM
    sol = (f'solref="{_f(timeconst, dampratio)}" solimp="{_f(impedance, impedance)} 0.001" '
           'friction="0 0 0" condim="1"')
    box = f'type="box" size="{_f(h, h, h)}"'
    target = (f'<geom {box} pos="{_f(3 * h)} 0 0" {sol}/>' if wall else
              f'<body pos="{_f(3 * h)} 0 0"><freejoint/><geom {box} mass="{_f(mass)}" {sol}/></body>')
    xml = (f'<mujoco><option timestep="{_f(timestep)}" gravity="0 0 0"/><worldbody>{target}'
           f'<body pos="{_f(h * 0.5)} 0 0"><freejoint/><geom type="box" size="{_f(h, h, h)}" mass="{_f(mass)}" {sol}/>'
           '</body></worldbody></mujoco>')
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    striker = m.nv - 6  # the striker is the last body
    d.qvel[striker] = speed
    touched = False
    for _ in range(int(1.0 / timestep)):
        mujoco.mj_step(m, d)
        touched = touched or d.ncon > 0
        if touched and d.ncon == 0:
            break
    other = 0.0 if wall else float(d.qvel[0])
    return (other - float(d.qvel[striker])) / speed


_DAMPRATIOS: dict[tuple[float, ...], float] = {}


def contact_dampratio(timestep: float, timeconst: float, e: float, edge: float, mass: float, wall: bool,
                      impedance: float = 0.95) -> float:
    """The damping ratio whose head-on hit bounces back with restitution ``e`` in this model (by bisection).

    A damped oscillator's ratio, -ln e / sqrt(pi^2 + ln^2 e), is the first guess; MuJoCo's constraint
    impedance and the discrete step make the bounce livelier than that, so the ratio is solved for.
    """
    key = (timestep, timeconst, e, edge, mass, float(wall), impedance)
    if key in _DAMPRATIOS:
        return _DAMPRATIOS[key]
    lo, hi = 0.01, 1.0
    guess = restitution_dampratio(e)
    lo, hi = guess / 3, min(1.0, guess * 3)
    for _ in range(30):
        mid = (lo + hi) / 2
        if head_on_restitution(timestep, timeconst, mid, edge, mass, wall, impedance=impedance) > e:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-4:
            break
    _DAMPRATIOS[key] = (lo + hi) / 2
    return _DAMPRATIOS[key]


@dataclass(frozen=True)
class Params3D:
    """The numbers of the 3-D model, from ``constants.toml`` (overridable, e.g. in calibration)."""

    size: float
    rail_width: float
    rail_height: float
    hole_radius: float
    holes: tuple[tuple[str, float, float], ...]
    hole_inset: float
    hole_segments: int
    rim_zone: float
    rim_extent: float
    rim_check_every: int
    floor_depth: float
    edge: float
    mass: float
    gravity: float
    mu_floor: float
    mu_die_die: float
    mu_die_rail: float
    e_die_die: float
    e_die_rail: float
    contact_timeconst: float
    contact_impedance: float
    floor_timeconst: float
    floor_dampratio: float
    timestep: float
    sleep_tolerance: float
    tumble_settle: float
    max_time: float
    frame_rate: float
    launch_gap: float
    strike_low: float
    strike_high: float
    strike: float
    strike_jitter: float
    free_spot_step: float
    free_spot_reach: float
    dot_radius: float
    max_speed: float  # mm/s, the fastest flick

    @classmethod
    def from_constants(cls, **overrides: Any) -> Params3D:
        c = constants()
        a = arena()
        p = c["physics3d"]
        values = dict(
            size=a.size, rail_width=a.rail_width, rail_height=p["rail_height"], hole_radius=a.hole_radius,
            holes=tuple((name, x, y) for name, (x, y) in a.holes.items()), hole_inset=a.hole_inset,
            hole_segments=p["hole_segments"], rim_zone=p["rim_zone"], rim_extent=p["rim_extent"],
            rim_check_every=p["rim_check_every"], floor_depth=p["floor_depth"],
            edge=c["die"]["edge"], mass=c["die"]["mass"], gravity=c["friction"]["gravity"],
            mu_floor=c["friction"]["floor"], mu_die_die=c["friction"]["die_die"], mu_die_rail=c["friction"]["die_rail"],
            e_die_die=c["restitution"]["die_die"], e_die_rail=c["restitution"]["die_rail"],
            contact_timeconst=p["contact_timeconst"], contact_impedance=p["contact_impedance"],
            floor_timeconst=p["floor_timeconst"],
            floor_dampratio=p["floor_dampratio"], timestep=p["timestep"], sleep_tolerance=p["sleep_tolerance"],
            tumble_settle=p["tumble_settle"], max_time=p["max_time"], frame_rate=p["frame_rate"],
            launch_gap=c["flick"]["launch_gap"], strike_low=p["strike_low"], strike_high=p["strike_high"],
            strike=p["strike"], strike_jitter=p["strike_jitter"], free_spot_step=p["free_spot_step"],
            free_spot_reach=p["free_spot_reach"], dot_radius=p["dot_radius"],
            max_speed=c["flick"]["max_speed_m_s"] * 1000.0,
        )
        values.update(overrides)
        out = cls(**values)
        out.check()
        return out

    def check(self) -> None:
        """Refuse geometry the model cannot be built from, with the reason."""
        if self.hole_segments < 8:
            raise ValueError(f"hole_segments must be at least 8, not {self.hole_segments}")
        # Between two checks a die at the top speed moves this far; it must still be over the plane or the rim.
        travel = self.max_speed * self.timestep * self.rim_check_every
        reach = self.edge * math.sqrt(2) / 2
        if self.rim_zone < self.hole_radius + reach + travel:
            raise ValueError(f"rim_zone must be at least hole radius + half a die's diagonal + {travel:g} mm")
        if self.rim_extent < self.rim_zone + travel + reach:
            raise ValueError("rim_extent must cover a die in rim mode: at least rim_zone + its reach")
        if not self.hole_radius < self.hole_inset:
            raise ValueError("a hole must lie inside its corner square (hole radius < hole inset)")
        if not 0.0 <= self.strike_low <= self.strike_high <= 1.0:
            raise ValueError("strike heights must satisfy 0 <= strike_low <= strike_high <= 1")
        if self.timestep <= 0 or self.contact_timeconst < 2 * self.timestep:
            raise ValueError("contact_timeconst must be at least two timesteps")

    def dampratio(self, wall: bool) -> float:
        """The damping ratio of die-rail (``wall``) or die-die contacts that gives the design restitution."""
        e = self.e_die_rail if wall else self.e_die_die
        return contact_dampratio(self.timestep, self.contact_timeconst, e, self.edge, self.mass / 1000, wall,
                                 self.contact_impedance)

    def strike_height(self, strike: float | None) -> float:
        """The strike height as a fraction of the edge above the die's base, for a strike control in [0, 1]."""
        s = self.strike if strike is None else strike
        if not 0.0 <= s <= 1.0:
            raise ValueError(f"strike must be between 0 (low) and 1 (high), not {s}")
        return self.strike_low + s * (self.strike_high - self.strike_low)


_DEFAULT: Params3D | None = None


def default_params() -> Params3D:
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = Params3D.from_constants()
    return _DEFAULT


# --- the model -------------------------------------------------------------------------------------------

def _f(*xs: float) -> str:
    return " ".join(f"{x:.9g}" for x in xs)


def rim_square(p: Params3D, hx: float, hy: float) -> tuple[float, float, float, float]:
    """The square (x0, x1, y0, y1, mm) the rim pieces of the hole at (hx, hy) cover: from the walls to
    ``rim_extent`` beyond the hole's centre towards the middle of the arena."""
    s, e = p.size, p.rim_extent
    x0, x1 = (0.0, hx + e) if hx < s / 2 else (hx - e, s)
    y0, y1 = (0.0, hy + e) if hy < s / 2 else (hy - e, s)
    return x0, x1, y0, y1


def _wedges(p: Params3D, hx: float, hy: float) -> list[list[tuple[float, float]]]:
    """Convex pieces (mm, counter-clockwise) tiling the rim square of a hole minus the hole's polygon.

    Piece k lies between the rays from the hole's centre through polygon vertices k and k+1: the wedge of the
    square beyond the polygon's side is convex (an intersection of the square, the wedge and a half-plane),
    with the square's corner as a fifth vertex when a corner lies inside the wedge.
    """
    n, r = p.hole_segments, p.hole_radius
    x0, x1, y0, y1 = rim_square(p, hx, hy)

    def to_edge(c: float, s: float) -> tuple[float, float]:
        tx = ((x1 if c > 0 else x0) - hx) / c if abs(c) > 1e-12 else math.inf
        ty = ((y1 if s > 0 else y0) - hy) / s if abs(s) > 1e-12 else math.inf
        t = min(tx, ty)
        return hx + t * c, hy + t * s

    corners = [(x1, y1), (x0, y1), (x0, y0), (x1, y0)]
    pieces = []
    for k in range(n):
        t0, t1 = 2 * math.pi * k / n, 2 * math.pi * (k + 1) / n
        inner0 = (hx + r * math.cos(t0), hy + r * math.sin(t0))
        inner1 = (hx + r * math.cos(t1), hy + r * math.sin(t1))
        outer = [to_edge(math.cos(t0), math.sin(t0))]
        for cx, cy in corners:
            ang = math.atan2(cy - hy, cx - hx) % (2 * math.pi)
            if t0 + 1e-9 < ang < t1 - 1e-9:
                outer.append((cx, cy))
        outer.append(to_edge(math.cos(t1), math.sin(t1)))
        pieces.append([inner0, *outer, inner1])
    return pieces


# Collision bits: dice always meet dice, rails and the table (1); the floor plane (2) while a die is away
# from the holes, the rim pieces around the holes (4) while it is near one (its "rim mode").
_ALWAYS, _PLANE, _RIM = 1, 2, 4


def model_xml(p: Params3D, n_dice: int) -> str:
    """The MJCF of the arena with ``n_dice`` free dice (bodies ``die0``...; ``die0`` is the flicked one).

    The floor is a plane at z = 0 (no seams for a sliding die to catch on); around each hole a die collides
    instead with the hole's rim pieces, coplanar with the plane, which leave the hole open down to the table
    ``floor_depth`` below. ``simulate`` switches a die between the two as its centre comes within
    ``rim_zone`` of a hole's centre or leaves it.
    """
    s, w, hr, depth = p.size, p.rail_width, p.rail_height, p.floor_depth
    mu_f, mu_r, mu_d = p.mu_floor, p.mu_die_rail, p.mu_die_die
    tc = p.contact_timeconst
    assets: list[str] = []
    geoms: list[str] = []
    floor = (f'priority="2" friction="{_f(mu_f)} 0 0" solref="{_f(p.floor_timeconst, p.floor_dampratio)}" '
             'condim="3" conaffinity="0"')
    geoms.append(f'<geom name="table" type="plane" pos="0 0 {_f(-depth * MM)}" size="2 2 0.1" {floor} '
                 f'contype="{_ALWAYS}" rgba="0.3 0.25 0.2 1"/>')
    geoms.append(f'<geom name="floor" type="plane" pos="0 0 0" size="2 2 0.1" {floor} contype="{_PLANE}" '
                 'rgba="0.2 0.5 0.3 1"/>')
    for hole, hx, hy in p.holes:
        for k, piece in enumerate(_wedges(p, hx, hy)):
            cx = sum(q[0] for q in piece) / len(piece)
            cy = sum(q[1] for q in piece) / len(piece)
            verts = []
            for z in (0.0, -depth):
                for qx, qy in piece:
                    verts.append(_f((qx - cx) * MM, (qy - cy) * MM, (z + depth / 2) * MM))
            mesh = f"rim_{hole}_{k}"
            assets.append(f'<mesh name="{mesh}" vertex="{" ".join(verts)}"/>')
            geoms.append(f'<geom name="{mesh}" type="mesh" mesh="{mesh}" pos="{_f(cx * MM, cy * MM, -depth / 2 * MM)}" '
                         f'{floor} contype="{_RIM}" rgba="0.2 0.5 0.3 1"/>')
    rail = (f'priority="1" friction="{_f(mu_r)} 0 0" solref="{_f(tc, p.dampratio(wall=True))}" '
            f'solimp="{_f(p.contact_impedance, p.contact_impedance)} 0.001" condim="3" contype="{_ALWAYS}" '
            'conaffinity="0" rgba="0.55 0.35 0.2 1"')
    boxes = {"S": (-w, s + w, -w, 0.0), "N": (-w, s + w, s, s + w), "W": (-w, 0.0, 0.0, s), "E": (s, s + w, 0.0, s)}
    z0, z1 = -depth, hr
    for name in RAILS:
        x0, x1, y0, y1 = boxes[name]
        geoms.append(f'<geom name="rail_{name}" type="box" '
                     f'pos="{_f((x0 + x1) / 2 * MM, (y0 + y1) / 2 * MM, (z0 + z1) / 2 * MM)}" '
                     f'size="{_f((x1 - x0) / 2 * MM, (y1 - y0) / 2 * MM, (z1 - z0) / 2 * MM)}" {rail}/>')
        x, y, _ = launch_point(name, s / 2, p, gap=-p.edge / 2)
        geoms.append(f'<site name="dot_{name}" type="cylinder" pos="{_f(x * MM, y * MM, hr * MM)}" '
                     f'size="{_f(p.dot_radius * MM, 0.2 * MM)}" rgba="1 1 1 1"/>')
    half = p.edge / 2 * MM
    die = (f'priority="0" friction="{_f(mu_d)} 0 0" solref="{_f(tc, p.dampratio(wall=False))}" '
           f'solimp="{_f(p.contact_impedance, p.contact_impedance)} 0.001" condim="3" '
           f'mass="{_f(p.mass / 1000)}" contype="{_ALWAYS}" conaffinity="{_ALWAYS | _PLANE}"')
    bodies = []
    for k in range(n_dice):
        park = _parking(p, k)
        bodies.append(f'<body name="die{k}" pos="{_f(*park)}"><freejoint name="die{k}"/>'
                      f'<geom name="die{k}" type="box" size="{_f(half, half, half)}" {die} rgba="0.9 0.9 0.8 1"/>'
                      '</body>')
    # Contact sensors of the flicked die: against each rail, then against each other die (one value each).
    sensors = "".join(f'<contact geom1="die0" geom2="rail_{r}" data="found" num="1"/>' for r in RAILS)
    sensors += "".join(f'<contact geom1="die0" geom2="die{k}" data="found" num="1"/>' for k in range(1, n_dice))
    return (
        '<mujoco model="kung-fu-zoo">'
        f'<option timestep="{_f(p.timestep)}" gravity="0 0 {_f(-p.gravity * MM)}" cone="elliptic" '
        f'sleep_tolerance="{_f(p.sleep_tolerance)}"><flag sleep="enable"/></option>'
        f'<asset>{"".join(assets)}</asset>'
        f'<worldbody>{"".join(geoms)}{"".join(bodies)}</worldbody>'
        f'<sensor>{sensors}</sensor>'
        '</mujoco>'
    )


def _parking(p: Params3D, k: int) -> tuple[float, float, float]:
    """Where die slot ``k`` waits in the model's reference pose (metres): on the table, away from the arena."""
    return ((p.size + 200.0 + 30.0 * k) * MM, -200.0 * MM, p.edge / 2 * MM)


class _Kit:
    """One compiled model and its data for a number of dice, reused by every run (reset between runs)."""

    def __init__(self, p: Params3D, n_dice: int) -> None:
        self.p = p
        self.n = n_dice
        self.model = mujoco.MjModel.from_xml_string(model_xml(p, n_dice))
        self.data = mujoco.MjData(self.model)
        m = self.model
        self.die_geom = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, f"die{k}") for k in range(n_dice)]
        self.die_body = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, f"die{k}") for k in range(n_dice)]
        self.rail_geom = {mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, f"rail_{r}"): r for r in RAILS}
        self.qadr = [int(m.jnt_qposadr[m.body_jntadr[b]]) for b in self.die_body]
        self.vadr = [int(m.jnt_dofadr[m.body_jntadr[b]]) for b in self.die_body]
        self.qx = np.array(self.qadr)
        self.solid = set(self.die_geom) | set(self.rail_geom)  # geoms whose touches are hits worth a frame
        self.geoms = np.array(self.die_geom)
        self.hole_offset = (p.size / 2 - p.hole_inset) * MM  # holes sit at (+-offset, +-offset) from the middle
        self.middle = p.size / 2 * MM
        self.zone2 = (p.rim_zone * MM) ** 2
        self.rim = np.zeros(n_dice, dtype=bool)
        self.rest_z = self._rest_height()

    def _rest_height(self) -> float:
        """The height (mm) of a die's centre at rest on the floor: a little under half an edge, the soft
        contact's sag. Dice set down there are at rest at once and fall asleep within MuJoCo's ten steps."""
        m, d = self.model, self.data
        mujoco.mj_resetData(m, d)
        self.set_rim_modes(d, force=True)
        qa = self.qadr[0]
        d.qpos[qa:qa + 3] = (self.p.size / 2 * MM, self.p.size / 2 * MM, self.p.edge / 2 * MM)
        for _ in range(int(0.5 / self.p.timestep)):
            mujoco.mj_step(m, d)
        z = float(d.qpos[qa + 2]) / MM
        mujoco.mj_resetData(m, d)
        return z

    def set_rim_modes(self, data: mujoco.MjData, force: bool = False) -> None:
        """Put each die in rim mode (it collides with the rim pieces, not the floor plane) while its centre
        is within ``rim_zone`` of a hole's centre, and back."""
        dx = np.abs(data.qpos[self.qx] - self.middle) - self.hole_offset
        dy = np.abs(data.qpos[self.qx + 1] - self.middle) - self.hole_offset
        near = dx * dx + dy * dy < self.zone2
        changed = near != self.rim if not force else np.ones(self.n, dtype=bool)
        if changed.any():
            self.model.geom_conaffinity[self.geoms[changed]] = np.where(near[changed], _ALWAYS | _RIM,
                                                                        _ALWAYS | _PLANE)
            self.rim = near


_KITS: dict[tuple[Params3D, int], _Kit] = {}
_LOCK = threading.Lock()


def _after_fork_in_child() -> None:
    """A forked process (the odds' workers) starts with its own lock and its own models."""
    global _KITS, _LOCK
    _KITS = {}
    _LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _kit(p: Params3D, n: int) -> _Kit:
    kit = _KITS.get((p, n))
    if kit is None:
        kit = _KITS[(p, n)] = _Kit(p, n)
    return kit


# --- orientations ----------------------------------------------------------------------------------------

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


def _mat_quat(r: np.ndarray) -> np.ndarray:
    q = np.zeros(4)
    mujoco.mju_mat2Quat(q, np.ascontiguousarray(r, dtype=float).reshape(9))
    return q


def _quat_mat(q: np.ndarray) -> np.ndarray:
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


# --- launching -------------------------------------------------------------------------------------------

def launch_point(rail: str, along: float, params: Params3D | None = None, gap: float | None = None) -> tuple[
        float, float, float]:
    """Where a die set on ``rail`` at ``along`` mm (from the rail's west/south end) sits, and the inward
    normal's angle (radians): on the rail top, square to it, its inner face ``gap`` mm short of the inner edge."""
    p = params or default_params()
    g = p.launch_gap if gap is None else gap
    inset = p.edge / 2 + g
    s = p.size
    if rail == "S":
        return along, -inset, math.pi / 2
    if rail == "N":
        return along, s + inset, -math.pi / 2
    if rail == "W":
        return -inset, along, 0.0
    if rail == "E":
        return s + inset, along, math.pi
    raise ValueError(f"no rail {rail!r}; rails are {', '.join(RAILS)}")


def rail_under(p: Params3D, x: float, y: float) -> str | None:
    """The rail whose side (x, y) is on, outside the playfield, or None inside it."""
    s = p.size
    over = {"W": -x, "E": x - s, "S": -y, "N": y - s}
    rail, depth = max(over.items(), key=lambda kv: kv[1])
    return rail if depth > 0 else None


def strike_velocity(p: Params3D, launch: Launch, offset: float) -> tuple[np.ndarray, np.ndarray]:
    """Linear (m/s) and angular (rad/s, world) velocity a strike gives: the impulse m v along the heading at
    height h on the back face, ``offset`` mm sideways; w = r x (m v) / I with I = m edge^2 / 6."""
    a = p.edge * MM
    v = launch.speed * MM
    u = np.array([math.cos(launch.heading), math.sin(launch.heading), 0.0])
    side = np.array([-u[1], u[0], 0.0])
    h = p.strike_height(launch.strike)
    r = -a / 2 * u + offset * MM * side + (h - 0.5) * a * np.array([0.0, 0.0, 1.0])
    w = 6.0 * v / (a * a) * np.cross(r, u)
    return v * u, w


# --- running ---------------------------------------------------------------------------------------------

def simulate(
    dice: list[DieBody],
    launch: Launch | None,
    rng: np.random.Generator,
    record: bool = False,
    params: Params3D | None = None,
    must_tumble: bool = True,
) -> SimResult:
    """Run the arena until every die sleeps (or ``max_time``) and report the outcome.

    ``dice`` lie at rest where they are; ``launch`` (if any) strikes one more die. A flicked die that did
    not tumble ends feet-up (the FAQ) when ``must_tumble``. ``record`` collects frames at ``frame_rate``:
    ``{"t": s, "dice": {id: [x, y, yaw, face, z, qw, qx, qy, qz]}}`` (mm, radians).
    """
    p = params or default_params()
    ids = ([launch.die] if launch is not None else []) + [d.id for d in dice]
    if len(set(ids)) != len(ids):
        raise ValueError(f"each die may be in the arena once: {', '.join(sorted(ids))}")
    if not ids:
        return SimResult(dice={})
    offset = float(rng.normal(0.0, p.strike_jitter)) if launch is not None and p.strike_jitter > 0 else 0.0
    with _LOCK:
        kit = _kit(p, len(ids))
        return _Run(kit, ids, dice, launch, offset, record, must_tumble).run()


def prepared(dice: list[DieBody], launch: Launch | None, params: Params3D | None = None, offset: float = 0.0
             ) -> tuple[mujoco.MjModel, mujoco.MjData, list[int]]:
    """The model and data set up for a run, not stepped, and the dof address of each die (the launched die
    first): for calibration that needs every step's velocities. Shares the cached model, so not thread-safe."""
    p = params or default_params()
    ids = ([launch.die] if launch is not None else []) + [d.id for d in dice]
    kit = _kit(p, len(ids))
    _Run(kit, ids, dice, launch, offset, False, True).place()
    return kit.model, kit.data, list(kit.vadr)


class _Run:
    def __init__(self, kit: _Kit, ids: list[str], dice: list[DieBody], launch: Launch | None, offset: float,
                 record: bool, must_tumble: bool) -> None:
        self.kit, self.p, self.ids = kit, kit.p, ids
        self.dice, self.launch, self.offset = dice, launch, offset
        self.record, self.must_tumble = record, must_tumble
        self.events: list[str] = []

    def place(self) -> None:
        m, d, p, kit = self.kit.model, self.kit.data, self.p, self.kit
        mujoco.mj_resetData(m, d)
        half = kit.rest_z
        bodies = ([] if self.launch is None else [None]) + list(self.dice)
        for k, b in enumerate(bodies):
            qa = kit.qadr[k]
            if b is None:
                continue
            if b.quat is not None:
                q = np.asarray(b.quat, dtype=float)
                z = half if b.z is None else b.z
            else:
                q = _mat_quat(pose_matrix(b.angle, b.orientation))
                z = half if b.z is None else b.z
            d.qpos[qa:qa + 3] = (b.x * MM, b.y * MM, z * MM)
            d.qpos[qa + 3:qa + 7] = q
        if self.launch is not None:
            L = self.launch
            rail = rail_under(p, L.x, L.y)
            if rail is not None:
                yaw = launch_point(rail, 0.0, p)[2] if L.angle is None else L.angle
                z = p.rail_height + half
            else:
                yaw = L.heading if L.angle is None else L.angle
                z = half
            self.start_rail = rail
            r = pose_matrix(yaw, L.orientation)
            qa, va = kit.qadr[0], kit.vadr[0]
            d.qpos[qa:qa + 3] = (L.x * MM, L.y * MM, z * MM)
            d.qpos[qa + 3:qa + 7] = _mat_quat(r)
            v, w = strike_velocity(p, L, self.offset)
            d.qvel[va:va + 3] = v
            d.qvel[va + 3:va + 6] = r.T @ w  # a free joint's angular velocity is in the body's frame
            axis = int(np.argmax(np.abs(r[2])))
            self.start_face = (axis, bool(r[2, axis] > 0))
        self.kit.set_rim_modes(d, force=True)
        mujoco.mj_forward(m, d)
        if self.launch is not None and self.start_rail is not None:
            self._free_spot()

    def _free_spot(self) -> None:
        """The ruling for a spot already taken: a die set on the rail where it would overlap another die (one
        leaning over the rail's edge) is set down at the nearest free point along the rail, 2 mm at a time."""
        m, d, kit = self.kit.model, self.kit.data, self.kit
        n_rails = len(RAILS)
        if not d.sensordata[n_rails:].any():
            return
        qa = kit.qadr[0]
        along = 0 if self.start_rail in ("S", "N") else 1
        home = float(d.qpos[qa + along])
        step, reach = self.p.free_spot_step, self.p.free_spot_reach
        for k in range(1, 2 * int(reach / step) + 1):
            off = step * ((k + 1) // 2) * (1 if k % 2 else -1)
            d.qpos[qa + along] = home + off * MM
            mujoco.mj_forward(m, d)
            if not d.sensordata[n_rails:].any():
                self.events.append(f"{self.ids[0]} is set down {off:+g} mm along the {self.start_rail} rail: "
                                   "its spot was taken")
                return
        raise ValueError(f"no free spot on the {self.start_rail} rail within {reach:g} mm of where {self.ids[0]} "
                         "is set")

    def frame(self, t: float) -> dict[str, Any]:
        d, kit = self.kit.data, self.kit
        out: dict[str, list[Any]] = {}
        for k, die_id in enumerate(self.ids):
            qa = kit.qadr[k]
            x, y, z = (float(v) / MM for v in d.qpos[qa:qa + 3])
            q = [float(v) for v in d.qpos[qa + 3:qa + 7]]
            r = _quat_mat(np.array(q))
            yaw, _ = snap(r)
            out[die_id] = [round(x, 2), round(y, 2), round(yaw, 4), face_up(r), round(z, 2),
                           *(round(v, 5) for v in q)]
        return {"t": round(t, 4), "dice": out}

    def run(self) -> SimResult:
        kit, p = self.kit, self.p
        m, d = kit.model, kit.data
        self.place()
        launched = self.launch is not None
        frames = [self.frame(0.0)] if self.record else []
        frame_dt = 1.0 / p.frame_rate
        next_frame = frame_dt
        max_steps = math.ceil(p.max_time / p.timestep)
        # The flicked die's contact sensors: index -> what it touched (rails first, then the other dice).
        names = [f"rail:{r}" for r in RAILS] + self.ids[1:]
        sensors = d.sensordata
        start_rail = getattr(self, "start_rail", None)
        start_sensor = RAILS.index(start_rail) if start_rail is not None else -1
        on_start = start_rail is not None  # still at its start: touches of the start rail do not count
        reach = p.edge * math.sqrt(3) / 2 * MM  # half the space diagonal
        inner = {"S": (1, 1.0, 0.0), "N": (1, -1.0, p.size * MM), "W": (0, 1.0, 0.0), "E": (0, -1.0, p.size * MM)}
        coord, sign, wall = inner.get(start_rail or "S", (1, 1.0, 0.0))
        qpos = d.qpos
        qa0 = kit.qadr[0]
        touching: tuple[int, ...] = ()
        contacts: list[str] = []
        tumbles = 0
        last_face = getattr(self, "start_face", None)
        z0 = d.xmat[kit.die_body[0], 6:9]  # the world z components of the flicked die's three axes (a view)
        settle = p.tumble_settle
        rim_every = p.rim_check_every
        last_hits: set[tuple[int, int]] = set()
        step = 0
        while step < max_steps:
            mujoco.mj_step(m, d)
            step += 1
            if launched:
                if on_start and sign * (qpos[qa0 + coord] - wall) > reach:
                    on_start = False
                if touching or sensors.any():
                    now = tuple(int(i) for i in np.flatnonzero(sensors) if not (on_start and i == start_sensor))
                    contacts += [names[i] for i in now if i not in touching]
                    touching = now
                if step & 1:  # a roll over an edge takes tens of steps: every other step is enough
                    a, b, c = abs(z0[0]), abs(z0[1]), abs(z0[2])
                    axis = 0 if a >= b and a >= c else (1 if b >= c else 2)
                    if (a, b, c)[axis] > settle:
                        fc = (axis, bool(z0[axis] > 0))
                        if fc != last_face:
                            tumbles += 1
                            last_face = fc
            if step % rim_every == 0:
                kit.set_rim_modes(d)
            if self.record:
                hits = self._hits()
                if step * p.timestep >= next_frame - 1e-12:
                    frames.append(self.frame(step * p.timestep))
                    next_frame += frame_dt
                elif hits - last_hits:  # a hit begins: show the dice touching, between the regular frames
                    frames.append(self.frame(step * p.timestep))
                last_hits = hits
            if d.ntree_awake == 0:
                break
        t = step * p.timestep
        if step >= max_steps:
            self.events.append(f"stopped after {p.max_time:g} s with dice still moving")
        return self._result(frames, t, step, contacts, tumbles)

    def _hits(self) -> set[tuple[int, int]]:
        """The pairs (die geom, die or rail geom) in contact now (recording only: it reads every contact)."""
        d, kit = self.kit.data, self.kit
        if not d.ncon:
            return set()
        solid = kit.solid
        return {(int(a), int(b)) for a, b in d.contact.geom[:d.ncon] if a in solid and b in solid}

    def _result(self, frames: list[dict[str, Any]], t: float, steps: int, contacts: list[str],
                tumbles: int) -> SimResult:
        kit, p, d = self.kit, self.p, self.kit.data
        out: dict[str, DieBody] = {}
        caged: dict[str, str] = {}
        left: dict[str, str] = {}
        launched = self.launch.die if self.launch is not None else None
        tumbled = launched is None or tumbles > 0
        for k, die_id in enumerate(self.ids):
            qa = kit.qadr[k]
            x, y, z = (float(v) / MM for v in d.qpos[qa:qa + 3])
            q = np.array(d.qpos[qa + 3:qa + 7], dtype=float)
            rail = rail_under(p, x, y)
            if z < 0 and rail is None:  # below the floor inside the arena: only a well holds it
                hole = min(p.holes, key=lambda h: math.hypot(x - h[1], y - h[2]))[0]
                caged[die_id] = hole
                self.events.append(f"{die_id} fell into the {hole} cage")
                continue
            if rail is not None:
                left[die_id] = rail
                self.events.append(f"{die_id} left the arena over the {rail} rail")
                continue
            r = _quat_mat(q)
            if die_id == launched and not tumbled and self.must_tumble:
                r = feet_up_matrix(r)
                q = _mat_quat(r)
                z = kit.rest_z
                self.events.append(f"{die_id} did not tumble and is turned feet-up")
            yaw, orientation = snap(r)
            if face_up(r) != up_face(orientation):  # pragma: no cover - snap keeps the up face
                raise AssertionError("snapping changed the face")
            quat = (float(q[0]), float(q[1]), float(q[2]), float(q[3]))
            out[die_id] = DieBody(die_id, x, y, yaw, orientation, z, quat)
        if self.record:
            last = self.frame(t)
            for die_id, body in out.items():  # the last frame shows the ruling (feet-up) as well
                last["dice"][die_id] = [round(body.x, 2), round(body.y, 2), round(body.angle, 4), body.face,
                                        round(body.z or 0.0, 2), *(round(v, 5) for v in body.quat or ())]
            frames.append(last)
        dice_touch = next((i for i, c in enumerate(contacts) if not c.startswith("rail:")), None)
        rail_first = None if dice_touch is None else any(c.startswith("rail:") for c in contacts[:dice_touch])
        return SimResult(dice=out, caged=caged, left=left, tumbled=tumbled, rail_before_strike=rail_first,
                         contacts=contacts, events=self.events, frames=frames, time=t, steps=steps)
