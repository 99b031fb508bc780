"""The arena in pymunk 7 (Chipmunk2D): rails, four corner cages, dice sliding with top-down Coulomb friction.

Seen from above, a die on the floor is a rounded square held back by friction. As in pymunk's tank example,
each die is tied to the static body by a pivot joint and a gear joint with ``max_bias = 0`` (no position
correction) and ``max_force`` equal to the sliding friction force and torque, so it decelerates at mu*g
and stops. Collisions are handled with ``Space.on_collision``:

* die-rail ``begin``: a hit faster than the hop speed (normal component) sends the die out of the arena;
  otherwise a hard hit tumbles the die along its motion;
* die-die ``begin``: a hard hit rolls the struck die along the impulse and the striking die along its motion;
* die centre - hole (sensors) ``begin``: the die's centre is over a cage, and it falls in.

Units are millimetres, grams and seconds, so the default collision slop (0.1) is small. The timestep
adapts to the fastest die so that no die moves more than ``max_step_mm`` (under half a die's width) in a
step: nothing tunnels, and slow endings take long steps. The run stops when every die is at rest.

Speed: building pymunk objects costs more than simulating a short flick, so the arena and a pool of dice
are built once and put into a fresh ``Space`` for every run; a die at rest gets its friction joints only
when something touches it. Everything random (tumbles) comes from the generator passed in, and nothing
carries over between runs, so a run is deterministic for a generator state.
"""

from __future__ import annotations

import math
import os
import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pymunk

from engine.zoo.constants import arena, constants
from engine.zoo.faces import feet_up, hit_tumble, launch_tumble, up_face

RAILS = ("S", "E", "N", "W")
"""The four rails, named by compass side of the square arena (x east, y north)."""

_DIE, _RAIL, _CENTRE, _HOLE = 1, 2, 3, 4
_F_DIE, _F_RAIL, _F_CENTRE, _F_HOLE = 0b0001, 0b0010, 0b0100, 0b1000


@dataclass
class DieBody:
    """A die lying in the arena: centre (mm), yaw (radians) and 3D orientation (0-23)."""

    id: str
    x: float
    y: float
    angle: float
    orientation: int

    @property
    def face(self) -> str:
        return up_face(self.orientation)


@dataclass(frozen=True)
class Launch:
    """A die set down at (x, y) and sent off along ``heading`` (radians, world) at ``speed`` (mm/s)."""

    die: str
    x: float
    y: float
    heading: float
    speed: float
    orientation: int


@dataclass
class SimResult:
    """What a flick did. ``dice`` holds the dice still in the arena, at rest."""

    dice: dict[str, DieBody]
    caged: dict[str, str] = field(default_factory=dict)  # die -> hole (SW, SE, NE, NW)
    left: dict[str, str] = field(default_factory=dict)  # die -> rail it hopped over
    tumbled: bool = True
    rail_before_strike: bool | None = None  # the launched die touched a rail before its first strike (None: no strike)
    events: list[str] = field(default_factory=list)
    frames: list[dict[str, Any]] = field(default_factory=list)
    time: float = 0.0
    steps: int = 0


@dataclass(frozen=True)
class PhysicsParams:
    """The numbers the simulation uses, taken from ``constants.toml`` (overridable in tests)."""

    size: float
    rail_width: float
    hole_radius: float
    holes: tuple[tuple[str, float, float], ...]
    edge: float
    mass: float
    corner_radius: float
    spin_arm: float
    gravity: float
    mu_floor: float
    mu_die_die: float
    mu_die_rail: float
    e_die_die: float
    e_die_rail: float
    hop_speed: float  # mm/s
    max_step: float  # mm a die may move in one step
    max_timestep: float
    iterations: int
    rest_speed: float
    rest_spin: float
    rest_check_every: int
    max_time: float
    frame_rate: float

    @classmethod
    def from_constants(cls, **overrides: Any) -> PhysicsParams:
        c = constants()
        a = arena()
        values = dict(
            size=a.size, rail_width=a.rail_width, hole_radius=a.hole_radius,
            holes=tuple((name, x, y) for name, (x, y) in a.holes.items()),
            edge=c["die"]["edge"], mass=c["die"]["mass"], corner_radius=c["die"]["corner_radius"],
            spin_arm=c["die"]["spin_friction_arm"], gravity=c["friction"]["gravity"], mu_floor=c["friction"]["floor"],
            mu_die_die=c["friction"]["die_die"], mu_die_rail=c["friction"]["die_rail"],
            e_die_die=c["restitution"]["die_die"], e_die_rail=c["restitution"]["die_rail"],
            hop_speed=c["flick"]["hop_speed_m_s"] * 1000.0, max_step=c["simulation"]["max_step_mm"],
            max_timestep=c["simulation"]["max_timestep"],
            iterations=c["simulation"]["iterations"], rest_speed=c["simulation"]["rest_speed"],
            rest_spin=c["simulation"]["rest_spin"], rest_check_every=c["simulation"]["rest_check_every"],
            max_time=c["simulation"]["max_time"], frame_rate=c["simulation"]["frame_rate"],
        )
        values.update(overrides)
        return cls(**values)


_DEFAULT: PhysicsParams | None = None


def default_params() -> PhysicsParams:
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = PhysicsParams.from_constants()
    return _DEFAULT


try:  # the C step without pymunk's per-call Python bookkeeping, which our callbacks do not need
    from pymunk._chipmunk import lib as _chipmunk
except ImportError:  # pragma: no cover
    _chipmunk = None


def _stepper(space: pymunk.Space) -> Any:
    """A function stepping ``space`` by dt. The first call goes through ``Space.step`` (it validates the
    bodies); later calls go straight to Chipmunk: the callbacks here never add or remove objects."""
    if _chipmunk is None or space.threaded:
        return space.step
    handle = space._space
    cp_step = _chipmunk.cpSpaceStep
    first = True

    def step(dt: float) -> None:
        nonlocal first
        if first:
            first = False
            space.step(dt)
        else:
            cp_step(handle, dt)

    return step


class _Kit:
    """The pymunk objects of one set of physics parameters, built once and reused by every run.

    Creating bodies and shapes costs more than simulating a short flick, so the static arena and a pool of
    dice (body, box, centre sensor) are kept and put into a fresh ``Space`` for each run, then taken out
    again. Joints carry warm-start impulses from step to step, so they are made new for every run; a fresh
    space and fresh joints make each run independent of the ones before it.
    """

    def __init__(self, p: PhysicsParams) -> None:
        self.p = p
        # Chipmunk multiplies the two shapes' elasticity (and friction): split die-die evenly, rails take the rest.
        self.e_die = math.sqrt(p.e_die_die)
        self.e_rail = p.e_die_rail / self.e_die
        self.f_die = math.sqrt(p.mu_die_die)
        self.f_rail = p.mu_die_rail / self.f_die
        self.friction = p.mu_floor * p.mass * p.gravity
        self.spin_friction = self.friction * p.spin_arm * p.edge
        self.static = pymunk.Body(body_type=pymunk.Body.STATIC)
        self.static_shapes: list[pymunk.Shape] = []
        self.rail_names: dict[pymunk.Shape, str] = {}
        self.hole_names: dict[pymunk.Shape, str] = {}
        s, w = p.size, p.rail_width
        boxes = {
            "S": [(-w, -w), (s + w, -w), (s + w, 0), (-w, 0)],
            "N": [(-w, s), (s + w, s), (s + w, s + w), (-w, s + w)],
            "W": [(-w, 0), (0, 0), (0, s), (-w, s)],
            "E": [(s, 0), (s + w, 0), (s + w, s), (s, s)],
        }
        for name in RAILS:
            shape = pymunk.Poly(self.static, boxes[name])
            shape.collision_type = _RAIL
            shape.filter = pymunk.ShapeFilter(categories=_F_RAIL, mask=_F_DIE)
            shape.elasticity = self.e_rail
            shape.friction = self.f_rail
            self.rail_names[shape] = name
            self.static_shapes.append(shape)
        for name, hx, hy in p.holes:
            hole = pymunk.Circle(self.static, p.hole_radius, (hx, hy))
            hole.sensor = True
            hole.collision_type = _HOLE
            hole.filter = pymunk.ShapeFilter(categories=_F_HOLE, mask=_F_CENTRE)
            self.hole_names[hole] = name
            self.static_shapes.append(hole)
        self.dice: list[tuple[pymunk.Body, pymunk.Shape, pymunk.Shape]] = []

    def die(self, k: int) -> tuple[pymunk.Body, pymunk.Shape, pymunk.Shape]:
        p = self.p
        while len(self.dice) <= k:
            body = pymunk.Body(p.mass, pymunk.moment_for_box(p.mass, (p.edge, p.edge)))
            inner = p.edge - 2 * p.corner_radius
            box = pymunk.Poly.create_box(body, (inner, inner), radius=p.corner_radius)
            box.collision_type = _DIE
            box.filter = pymunk.ShapeFilter(categories=_F_DIE, mask=_F_DIE | _F_RAIL)
            box.elasticity = self.e_die
            box.friction = self.f_die
            centre = pymunk.Circle(body, 0.25)
            centre.sensor = True
            centre.collision_type = _CENTRE
            centre.filter = pymunk.ShapeFilter(categories=_F_CENTRE, mask=_F_HOLE)
            self.dice.append((body, box, centre))
        return self.dice[k]


_KITS: dict[PhysicsParams, _Kit] = {}
_LOCK = threading.Lock()


def _after_fork_in_child() -> None:
    """A forked process (the odds' workers) may have been forked while another thread was inside a run:
    it starts with its own lock and its own objects."""
    global _KITS, _LOCK
    _KITS = {}
    _LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


class _Run:
    """One simulation: a fresh space holding the kit's objects, and the callbacks' bookkeeping.

    A die at rest has no friction joints until something touches it (it cannot move before that), so the
    solver and the at-rest check work only on the dice in motion ("awake").
    """

    def __init__(self, kit: _Kit, rng: np.random.Generator, launched: str | None) -> None:
        self.kit = kit
        self.p = kit.p
        self.rng = rng
        self.launched = launched
        self.space = pymunk.Space()
        self.space.iterations = self.p.iterations
        self.space.add(kit.static, *kit.static_shapes)
        self.bodies: dict[str, pymunk.Body] = {}
        self.ids: dict[pymunk.Body, str] = {}
        self.orient: dict[str, int] = {}
        self.parts: dict[str, list[Any]] = {}
        self.awake: dict[str, pymunk.Body] = {}
        self.used: list[pymunk.Body] = []
        self.to_wake: list[str] = []
        self.caged: dict[str, str] = {}
        self.left: dict[str, str] = {}
        self.remove: list[str] = []
        self.rolled: set[str] = set()
        self.touched_rail = False
        self.rail_before_strike: bool | None = None
        self.events: list[str] = []
        self.space.on_collision(_DIE, _RAIL, begin=self._rail_hit)
        self.space.on_collision(_DIE, _DIE, begin=self._die_hit)
        self.space.on_collision(_CENTRE, _HOLE, begin=self._over_hole)

    def add_die(self, die_id: str, x: float, y: float, angle: float, orientation: int) -> pymunk.Body:
        body, box, centre = self.kit.die(len(self.parts))
        body.position = (x, y)
        body.angle = angle
        body.velocity = (0.0, 0.0)
        body.angular_velocity = 0.0
        self.space.add(body, box, centre)
        self.bodies[die_id] = body
        self.ids[body] = die_id
        self.orient[die_id] = orientation
        self.parts[die_id] = [body, box, centre]
        self.used.append(body)
        return body

    def wake(self, die_id: str) -> None:
        """Give a die its floor friction: a pivot and a gear joint to the static body (pymunk's tank example)."""
        if die_id in self.awake or die_id not in self.bodies:
            return
        body = self.bodies[die_id]
        pivot = pymunk.PivotJoint(self.kit.static, body, (0, 0), (0, 0))
        pivot.max_bias = 0
        pivot.max_force = self.kit.friction
        gear = pymunk.GearJoint(self.kit.static, body, 0.0, 1.0)
        gear.max_bias = 0
        gear.max_force = self.kit.spin_friction
        self.space.add(pivot, gear)
        self.parts[die_id] += [pivot, gear]
        self.awake[die_id] = body

    # --- callbacks -------------------------------------------------------------------------------
    def _roll(self, die_id: str, dx: float, dy: float, closing: float) -> None:
        if dx == 0 and dy == 0:
            return
        body = self.bodies[die_id]
        new, done = hit_tumble(self.orient[die_id], body.angle, dx, dy, closing / 1000.0, self.rng)
        if done:
            self.orient[die_id] = new
            self.rolled.add(die_id)

    def _rail_hit(self, arbiter: pymunk.Arbiter, space: pymunk.Space, data: Any) -> None:
        die_shape, rail_shape = arbiter.shapes
        body = die_shape.body  # pymunk types it optional; a shape in the space always has one
        die_id = self.ids.get(body) if body is not None else None
        if body is None or die_id is None or die_id in self.left or die_id in self.caged:
            arbiter.process_collision = False
            return
        n = arbiter.normal
        v = body.velocity
        closing = v.x * n.x + v.y * n.y
        if closing > self.p.hop_speed:
            rail = self.kit.rail_names[rail_shape]
            self.left[die_id] = rail
            self.remove.append(die_id)
            self.events.append(f"{die_id} hopped out over the {rail} rail at {closing / 1000:.2f} m/s")
            arbiter.process_collision = False
            return
        if die_id == self.launched and self.rail_before_strike is None:
            self.touched_rail = True
        if closing > 0:
            self._roll(die_id, v.x, v.y, closing)

    def _die_hit(self, arbiter: pymunk.Arbiter, space: pymunk.Space, data: Any) -> None:
        sa, sb = arbiter.shapes
        a, b = sa.body, sb.body
        if a is None or b is None:  # pymunk types them optional; a shape in the space always has one
            return
        ida, idb = self.ids.get(a), self.ids.get(b)
        if ida is None or idb is None:
            return
        if ida not in self.awake:
            self.to_wake.append(ida)
        if idb not in self.awake:
            self.to_wake.append(idb)
        if self.launched in (ida, idb) and self.rail_before_strike is None:
            self.rail_before_strike = self.touched_rail
        n = arbiter.normal  # from a to b
        va, vb = a.velocity, b.velocity
        along_a = va.x * n.x + va.y * n.y
        along_b = -(vb.x * n.x + vb.y * n.y)
        closing = along_a + along_b
        if closing <= 0:
            return
        if along_a >= along_b:  # a strikes b: b rolls along the impulse it receives (+n), a along its motion
            self._roll(idb, n.x, n.y, closing)
            self._roll(ida, va.x, va.y, closing)
        else:
            self._roll(ida, -n.x, -n.y, closing)
            self._roll(idb, vb.x, vb.y, closing)

    def _over_hole(self, arbiter: pymunk.Arbiter, space: pymunk.Space, data: Any) -> None:
        centre, hole = arbiter.shapes
        die_id = self.ids.get(centre.body) if centre.body is not None else None
        if die_id is None or die_id in self.caged or die_id in self.left:
            return
        hole_name = self.kit.hole_names[hole]
        self.caged[die_id] = hole_name
        self.remove.append(die_id)
        self.events.append(f"{die_id} fell into the {hole_name} cage")

    # --- running ---------------------------------------------------------------------------------
    def after_step(self) -> bool:
        """Wake dice that were touched and take out dice that left; True when something was taken out."""
        for die_id in self.to_wake:
            if die_id not in self.remove:
                self.wake(die_id)
        self.to_wake.clear()
        if not self.remove:
            return False
        for die_id in self.remove:
            self.space.remove(*self.parts.pop(die_id))
            body = self.bodies.pop(die_id)
            self.awake.pop(die_id, None)
            del self.ids[body]
        self.remove.clear()
        return True

    def close(self) -> None:
        """Take every object out of the space so the kit can use it again.

        Chipmunk keeps each body's bias velocity (the solver's push out of overlaps) until the next step's
        position update. One more step, with the shapes and joints already out, clears it, so no run
        inherits anything from the one before.
        """
        for parts in self.parts.values():
            self.space.remove(*parts[1:])
        self.space.remove(*self.kit.static_shapes)
        gone = [b for b in self.used if b not in self.ids]  # caged or out during the run
        self.space.add(*gone)
        self.space.step(1e-6)
        self.space.remove(self.kit.static, *self.used)
        self.parts.clear()

    def frame(self, t: float) -> dict[str, Any]:
        return {
            "t": round(t, 4),
            "dice": {
                i: [round(b.position.x, 2), round(b.position.y, 2), round(b.angle, 4), up_face(self.orient[i])]
                for i, b in self.bodies.items()
            },
        }

    def top_speed(self) -> float:
        """The fastest awake die's speed (mm/s), or -1 when every die is at rest (speed and spin)."""
        v2 = self.p.rest_speed * self.p.rest_speed
        spin = self.p.rest_spin
        top = 0.0
        moving = False
        for b in self.awake.values():
            s2 = b.velocity.length_squared
            if s2 > v2 or abs(b.angular_velocity) > spin:
                moving = True
            if s2 > top:
                top = s2
        return math.sqrt(top) if moving else -1.0


def launch_point(rail: str, along: float, params: PhysicsParams | None = None, gap: float | None = None) -> tuple[
        float, float, float]:
    """Where a die set on ``rail`` at distance ``along`` (mm from the rail's west/south end) starts, and the
    inward normal's angle (radians)."""
    p = params or default_params()
    g = constants()["flick"]["launch_gap"] if gap is None else gap
    inset = p.edge / 2 + g
    s = p.size
    if rail == "S":
        return along, inset, math.pi / 2
    if rail == "N":
        return along, s - inset, -math.pi / 2
    if rail == "W":
        return inset, along, 0.0
    if rail == "E":
        return s - inset, along, math.pi
    raise ValueError(f"no rail {rail!r}; rails are {', '.join(RAILS)}")


def simulate(
    dice: list[DieBody],
    launch: Launch | None,
    rng: np.random.Generator,
    record: bool = False,
    params: PhysicsParams | None = None,
    launch_tumbles: bool = True,
) -> SimResult:
    """Run the arena until everything is at rest and report the outcome.

    ``dice`` are at rest where they lie; ``launch`` (if any) adds a die moving at its speed. The launched
    die tumbles at launch (``launch_tumbles``) and, if neither the launch nor a hit tumbled it, ends
    feet-up where it lands (the FAQ). ``record`` collects trajectory frames at ``frame_rate`` per second.
    """
    p = params or default_params()
    ids = [d.id for d in dice] + ([launch.die] if launch is not None else [])
    if len(set(ids)) != len(ids):
        raise ValueError(f"each die may be in the arena once: {', '.join(sorted(ids))}")
    with _LOCK:
        kit = _KITS.get(p)
        if kit is None:
            kit = _KITS[p] = _Kit(p)
        run = _Run(kit, rng, launch.die if launch else None)
        try:
            return _run(run, dice, launch, record, launch_tumbles)
        finally:
            run.close()


def _run(run: _Run, dice: list[DieBody], launch: Launch | None, record: bool, launch_tumbles: bool) -> SimResult:
    p = run.p
    for d in dice:
        run.add_die(d.id, d.x, d.y, d.angle, d.orientation)
    tumbled = True
    if launch is not None:
        orientation = launch.orientation
        if launch_tumbles:
            orientation, tumbled = launch_tumble(orientation, launch.speed / 1000.0, run.rng)
        body = run.add_die(launch.die, launch.x, launch.y, launch.heading, orientation)
        body.velocity = (launch.speed * math.cos(launch.heading), launch.speed * math.sin(launch.heading))
        run.wake(launch.die)
    frames: list[dict[str, Any]] = [run.frame(0.0)] if record else []
    frame_dt = 1.0 / p.frame_rate
    next_frame = frame_dt
    space = run.space
    step_once = _stepper(space)
    check = p.rest_check_every
    top = launch.speed if launch is not None else 0.0
    t = 0.0
    step = 0
    while t < p.max_time:
        # Adaptive step: the fastest die moves at most max_step mm. Between checks speeds only fall (friction,
        # collisions share the striker's momentum), so the bound holds until the next check.
        dt = min(p.max_timestep, p.max_step / top) if top > 0 else p.max_timestep
        step_once(dt)
        step += 1
        t += dt
        if (run.to_wake or run.remove) and run.after_step() and record:
            frames.append(run.frame(t))
            next_frame = t + frame_dt
        elif record and t >= next_frame:
            frames.append(run.frame(t))
            while next_frame <= t:
                next_frame += frame_dt
        if step % check == 0:
            top = run.top_speed()
            if top < 0:
                break
    if launch is not None and not tumbled and launch.die not in run.rolled and launch.die in run.bodies:
        run.orient[launch.die] = feet_up(run.orient[launch.die])
        run.events.append(f"{launch.die} did not tumble and is turned feet-up")
    out = {
        i: DieBody(i, b.position.x, b.position.y, b.angle, run.orient[i]) for i, b in run.bodies.items()
    }
    if record:
        frames.append(run.frame(t))
    return SimResult(
        dice=out, caged=dict(run.caged), left=dict(run.left),
        tumbled=tumbled or (launch is not None and launch.die in run.rolled),
        rail_before_strike=run.rail_before_strike, events=run.events, frames=frames, time=t, steps=step,
    )
