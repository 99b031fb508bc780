"""The MuJoCo model of the arena, built from ``Params3D``, and the compiled models kept for reuse (``Kit``)."""

from __future__ import annotations

import math
import os
import threading

import mujoco
import numpy as np

from engine.zoo.arena3d.params import MM, RAILS, Params3D, fmt, launch_point


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
ALWAYS, PLANE, RIM = 1, 2, 4


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
    floor = (f'priority="2" friction="{fmt(mu_f)} 0 0" solref="{fmt(p.floor_timeconst, p.floor_dampratio)}" '
             'condim="3" conaffinity="0"')
    geoms.append(f'<geom name="table" type="plane" pos="0 0 {fmt(-depth * MM)}" size="2 2 0.1" {floor} '
                 f'contype="{ALWAYS}" rgba="0.3 0.25 0.2 1"/>')
    geoms.append(f'<geom name="floor" type="plane" pos="0 0 0" size="2 2 0.1" {floor} contype="{PLANE}" '
                 'rgba="0.2 0.5 0.3 1"/>')
    for hole, hx, hy in p.holes:
        for k, piece in enumerate(_wedges(p, hx, hy)):
            cx = sum(q[0] for q in piece) / len(piece)
            cy = sum(q[1] for q in piece) / len(piece)
            verts = []
            for z in (0.0, -depth):
                for qx, qy in piece:
                    verts.append(fmt((qx - cx) * MM, (qy - cy) * MM, (z + depth / 2) * MM))
            mesh = f"rim_{hole}_{k}"
            assets.append(f'<mesh name="{mesh}" vertex="{" ".join(verts)}"/>')
            centre = fmt(cx * MM, cy * MM, -depth / 2 * MM)
            geoms.append(f'<geom name="{mesh}" type="mesh" mesh="{mesh}" pos="{centre}" '
                         f'{floor} contype="{RIM}" rgba="0.2 0.5 0.3 1"/>')
    rail = (f'priority="1" friction="{fmt(mu_r)} 0 0" solref="{fmt(tc, p.dampratio(wall=True))}" '
            f'solimp="{fmt(p.contact_impedance, p.contact_impedance)} 0.001" condim="3" contype="{ALWAYS}" '
            'conaffinity="0" rgba="0.55 0.35 0.2 1"')
    boxes = {"S": (-w, s + w, -w, 0.0), "N": (-w, s + w, s, s + w), "W": (-w, 0.0, 0.0, s), "E": (s, s + w, 0.0, s)}
    z0, z1 = -depth, hr
    for name in RAILS:
        x0, x1, y0, y1 = boxes[name]
        geoms.append(f'<geom name="rail_{name}" type="box" '
                     f'pos="{fmt((x0 + x1) / 2 * MM, (y0 + y1) / 2 * MM, (z0 + z1) / 2 * MM)}" '
                     f'size="{fmt((x1 - x0) / 2 * MM, (y1 - y0) / 2 * MM, (z1 - z0) / 2 * MM)}" {rail}/>')
        x, y, _ = launch_point(name, s / 2, p, gap=-p.edge / 2)
        geoms.append(f'<site name="dot_{name}" type="cylinder" pos="{fmt(x * MM, y * MM, hr * MM)}" '
                     f'size="{fmt(p.dot_radius * MM, 0.2 * MM)}" rgba="1 1 1 1"/>')
    half = p.edge / 2 * MM
    die = (f'priority="0" friction="{fmt(mu_d)} 0 0" solref="{fmt(tc, p.dampratio(wall=False))}" '
           f'solimp="{fmt(p.contact_impedance, p.contact_impedance)} 0.001" condim="3" '
           f'mass="{fmt(p.mass / 1000)}" contype="{ALWAYS}" conaffinity="{ALWAYS | PLANE}"')
    bodies = []
    for k in range(n_dice):
        park = _parking(p, k)
        bodies.append(f'<body name="die{k}" pos="{fmt(*park)}"><freejoint name="die{k}"/>'
                      f'<geom name="die{k}" type="box" size="{fmt(half, half, half)}" {die} rgba="0.9 0.9 0.8 1"/>'
                      '</body>')
    # Contact sensors of the flicked die: against each rail, then against each other die (one value each).
    sensors = "".join(f'<contact geom1="die0" geom2="rail_{r}" data="found" num="1"/>' for r in RAILS)
    sensors += "".join(f'<contact geom1="die0" geom2="die{k}" data="found" num="1"/>' for k in range(1, n_dice))
    return (
        '<mujoco model="kung-fu-zoo">'
        f'<option timestep="{fmt(p.timestep)}" gravity="0 0 {fmt(-p.gravity * MM)}" cone="elliptic" '
        f'sleep_tolerance="{fmt(p.sleep_tolerance)}"><flag sleep="enable"/></option>'
        f'<asset>{"".join(assets)}</asset>'
        f'<worldbody>{"".join(geoms)}{"".join(bodies)}</worldbody>'
        f'<sensor>{sensors}</sensor>'
        '</mujoco>'
    )


def _parking(p: Params3D, k: int) -> tuple[float, float, float]:
    """Where die slot ``k`` waits in the model's reference pose (metres): on the table, away from the arena."""
    return ((p.size + 200.0 + 30.0 * k) * MM, -200.0 * MM, p.edge / 2 * MM)


class Kit:
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
        self.rim = [False] * n_dice  # each die's rim mode, as set_rim_modes keeps it
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
        # Plain Python floats: for eight dice this is several times faster than numpy's small-array calls,
        # and it runs every few steps.
        qpos = data.qpos.tolist()
        mid, off, zone2, rim = self.middle, self.hole_offset, self.zone2, self.rim
        affinity = self.model.geom_conaffinity
        for k, a in enumerate(self.qadr):
            dx = abs(qpos[a] - mid) - off
            dy = abs(qpos[a + 1] - mid) - off
            near = dx * dx + dy * dy < zone2
            if force or near != rim[k]:
                affinity[self.die_geom[k]] = ALWAYS | RIM if near else ALWAYS | PLANE
                rim[k] = near


_LOCAL = threading.local()
"""Each thread's compiled models (``kits``): a run resets and steps its kit's data, so threads never share one,
and MuJoCo's step (which releases the GIL) runs on several threads at once."""


def _after_fork_in_child() -> None:
    """A forked process (the odds' workers) starts with its own models."""
    global _LOCAL
    _LOCAL = threading.local()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def kit_for(p: Params3D, n: int) -> Kit:
    """This thread's compiled model for ``n`` dice, built on first use."""
    kits: dict[tuple[Params3D, int], Kit] | None = getattr(_LOCAL, "kits", None)
    if kits is None:
        kits = _LOCAL.kits = {}
    kit = kits.get((p, n))
    if kit is None:
        kit = kits[(p, n)] = Kit(p, n)
    return kit
