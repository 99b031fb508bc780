"""The 3-D arena's numbers (``Params3D`` from ``constants.toml``), its rails and the soft-contact restitution.

Units: the interface is in millimetres; the MuJoCo model is built in metres (``MM``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import mujoco

from engine.zoo.constants import arena, constants

RAILS = ("S", "E", "N", "W")
"""The four rails, named by compass side of the square arena (x east, y north)."""

MM = 0.001
"""Metres per millimetre: the model is in SI units."""


def fmt(*xs: float) -> str:
    """Numbers for an MJCF attribute."""
    return " ".join(f"{x:.9g}" for x in xs)


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
    sol = (f'solref="{fmt(timeconst, dampratio)}" solimp="{fmt(impedance, impedance)} 0.001" '
           'friction="0 0 0" condim="1"')
    box = f'type="box" size="{fmt(h, h, h)}"'
    target = (f'<geom {box} pos="{fmt(3 * h)} 0 0" {sol}/>' if wall else
              f'<body pos="{fmt(3 * h)} 0 0"><freejoint/><geom {box} mass="{fmt(mass)}" {sol}/></body>')
    xml = (f'<mujoco><option timestep="{fmt(timestep)}" gravity="0 0 0"/><worldbody>{target}'
           f'<body pos="{fmt(h * 0.5)} 0 0"><freejoint/><geom {box} mass="{fmt(mass)}" {sol}/>'
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
        p = c["arena3d"]
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
