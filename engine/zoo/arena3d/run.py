"""Running a flick in the 3-D arena: ``simulate`` (the rulings are in the package's docstring)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import mujoco
import numpy as np

from engine.zoo.arena3d import model as _model
from engine.zoo.arena3d.params import MM, RAILS, Params3D, default_params, launch_point, rail_under
from engine.zoo.arena3d.pose import face_up, feet_up_matrix, mat_quat, pose_matrix, quat_mat, snap
from engine.zoo.faces import up_face


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
    rolls: int = 0  # the flicked die's rolls onto a new face (a quarter roll each), counted as it moves
    rail_before_strike: bool | None = None  # a rail was touched before the first die (None: no die touched)
    contacts: list[str] = field(default_factory=list)  # the flicked die's touches in order: "rail:S", die ids
    events: list[str] = field(default_factory=list)
    frames: list[dict[str, Any]] = field(default_factory=list)
    time: float = 0.0
    steps: int = 0


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
    ``{"t": s, "dice": {id: [x, y, yaw, face, z, qw, qx, qy, qz]}}`` (mm, radians; the face is the one most
    nearly up at that moment), plus a frame as each hit begins; a die caged or out moves from ``dice`` to
    ``"gone"`` (same pose list) after its last frame in play.
    """
    p = params or default_params()
    ids = ([launch.die] if launch is not None else []) + [d.id for d in dice]
    if len(set(ids)) != len(ids):
        raise ValueError(f"each die may be in the arena once: {', '.join(sorted(ids))}")
    if not ids:
        return SimResult(dice={})
    offset = float(rng.normal(0.0, p.strike_jitter)) if launch is not None and p.strike_jitter > 0 else 0.0
    kit = _model.kit_for(p, len(ids))  # this thread's own
    return _Run(kit, ids, dice, launch, offset, record, must_tumble).run()


def prepared(dice: list[DieBody], launch: Launch | None, params: Params3D | None = None, offset: float = 0.0
             ) -> tuple[mujoco.MjModel, mujoco.MjData, list[int]]:
    """The model and data set up for a run, not stepped, and the dof address of each die (the launched die
    first): for calibration that needs every step's velocities. The thread's cached model, reset by its next run."""
    p = params or default_params()
    ids = ([launch.die] if launch is not None else []) + [d.id for d in dice]
    kit = _model.kit_for(p, len(ids))
    _Run(kit, ids, dice, launch, offset, False, True).place()
    return kit.model, kit.data, list(kit.vadr)


def _in_play(p: Params3D, pose: list[Any]) -> bool:
    return pose[4] >= 0.0 and rail_under(p, pose[0], pose[1]) is None


def _settle_frames(frames: list[dict[str, Any]], gone: list[str], p: Params3D) -> None:
    """Frames as the page reads them: a die caged or out is in ``dice`` up to its last frame in play (frame 0
    at least), then in ``gone`` (its fall into the well, its flight over the rail); each die's yaw is unwrapped
    by quarter turns (a square looks the same) so that the page's interpolation between frames turns it the
    short way."""
    for die in gone:
        last = max((k for k, fr in enumerate(frames) if die in fr["dice"] and _in_play(p, fr["dice"][die])),
                   default=0)
        for fr in frames[last + 1:]:
            if die in fr["dice"]:
                fr.setdefault("gone", {})[die] = fr["dice"].pop(die)
    quarter = math.pi / 2
    previous: dict[str, float] = {}
    for fr in frames:
        for poses in (fr["dice"], fr.get("gone", {})):
            for die, pose in poses.items():
                if die in previous:
                    pose[2] = round(pose[2] + quarter * round((previous[die] - pose[2]) / quarter), 4)
                previous[die] = pose[2]


class _Run:
    def __init__(self, kit: _model.Kit, ids: list[str], dice: list[DieBody], launch: Launch | None, offset: float,
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
                q = mat_quat(pose_matrix(b.angle, b.orientation))
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
            d.qpos[qa + 3:qa + 7] = mat_quat(r)
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
            r = quat_mat(np.array(q))
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
                if touching or any(sensors):  # (the builtin is faster than numpy on eleven values)
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
            r = quat_mat(q)
            if die_id == launched and not tumbled and self.must_tumble:
                r = feet_up_matrix(r)
                q = mat_quat(r)
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
            _settle_frames(frames, [*caged, *left], p)
        dice_touch = next((i for i, c in enumerate(contacts) if not c.startswith("rail:")), None)
        rail_first = None if dice_touch is None else any(c.startswith("rail:") for c in contacts[:dice_touch])
        return SimResult(dice=out, caged=caged, left=left, tumbled=tumbled, rolls=tumbles,
                         rail_before_strike=rail_first,
                         contacts=contacts, events=self.events, frames=frames, time=t, steps=steps)
