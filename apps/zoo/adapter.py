"""The one place the Kung-Fu Zoo page reads the engine's dice: positions, faces and a flick's frames.

Everything the arena draws comes out of here as plain columns in the engine's millimetres (the playfield is
[0, 300]^2, x east, y north; the rails lie outside it; a bench below the arena shows every die not in the
arena, one group of four per player). Each die is drawn as its cube seen from straight above (an orthographic
top view): the faces whose outward normals point up, as polygons, shaded by how steeply they face the sky, and
the letter of the face most nearly up on that face, so a die leaning on a rail or tumbling over an edge shows
its tilt. ``cube_faces`` projects a die at rest here; the browser projects the animation's frames the same way
(``apps.zoo.arena``, from each frame's quaternion).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from engine.zoo.arena3d import launch_point
from engine.zoo.arena3d.pose import pose_matrix, quat_mat
from engine.zoo.constants import FACE_NAMES, STUNNED, arena, constants, faces
from engine.zoo.faces import orientation_with_up
from engine.zoo.session import DRAG_MM_PER_M_S, ZooSession

TEAM_COLOURS = {"crocodile": "#15803d", "elephant": "#2563eb", "gorilla": "#b45309", "zebra": "#334155"}
FACE_LETTERS = {"head": "H", "tail": "T", "left": "L", "right": "R", "back": "B", "feet": "F"}
BENCH_Y = -48.0
BENCH_LABEL_Y = -88.0
X_RANGE = (-25.0, 325.0)
Y_RANGE = (-96.0, 325.0)
STATUS_WORDS = {"hand": "", "reserve": "reserve", "caged": "caged", "out": "out", "unused": "unused", "arena": ""}
DICE_COLUMNS = ("id", "x", "y", "angle", "fill", "face", "line", "width", "hatch", "alpha", "halpha", "label", "ly",
                "note", "ny", "status", "tx", "ty")
FACE_COLUMNS = ("id", "xs", "ys", "fill", "line", "width", "hatch", "alpha", "halpha")
FRAME_COLUMNS = ("t", "x", "y", "z", "qw", "qx", "qy", "qz", "fill", "shown", "hatch", "seq", "rate")
ANIM_COLUMNS = ("id", "xs", "ys", "fill", "alpha", "halpha")
ANIM_TEXT_COLUMNS = ("id", "x", "y", "face", "alpha")
SLOTS = 3
"""A cube seen from above shows at most three faces: the animation draws three polygons a die."""
MIN_UP = 0.02
"""A face is drawn when its outward normal's upward component exceeds this (one seen edge-on is a line)."""


def face_table() -> list[list[Any]]:
    """Each face as the browser needs it to project a cube: [body axis (0-2), sign, letter]."""
    return [[f.axis, f.sign, FACE_LETTERS[f.name]] for f in faces()]


def shade(colour: str, up: float) -> str:
    """The team colour lit from above: a face's brightness falls from 100% (facing up) to 55% (on its side)."""
    k = 0.55 + 0.45 * max(0.0, min(1.0, up))
    r, g, b = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return f"#{round(r * k):02x}{round(g * k):02x}{round(b * k):02x}"


def cube_faces(x: float, y: float, z: float, rot: np.ndarray) -> list[dict[str, Any]]:
    """The faces of a die at (x, y, z) mm turned by ``rot`` (world axes of the die's body axes, columns) that a
    view from straight above sees, most nearly up first: each its name, upward component ``up``, corners
    ``xs``/``ys`` (c+u+v, c-u+v, c-u-v, c+u-v around the face's centre c) and centre ``cx``/``cy``."""
    h = edge() / 2
    p = np.array([x, y, z], dtype=float)
    out = []
    for f in faces():
        n = f.sign * rot[:, f.axis]
        if n[2] <= MIN_UP:
            continue
        u, v = rot[:, (f.axis + 1) % 3] * h, rot[:, (f.axis + 2) % 3] * h
        c = p + n * h
        corners = [c + u + v, c - u + v, c - u - v, c + u - v]
        out.append({"face": f.name, "up": float(n[2]), "xs": [float(k[0]) for k in corners],
                    "ys": [float(k[1]) for k in corners], "cx": float(c[0]), "cy": float(c[1])})
    out.sort(key=lambda e: -e["up"])
    return out


def rotation(row: dict[str, Any]) -> np.ndarray:
    """A die's rotation as drawn: its exact 3-D pose when the physics left it, else lying flat (its face up,
    turned by its yaw); a die off the arena lies flat."""
    if row.get("quat") is not None:
        return quat_mat(np.array(row["quat"], dtype=float))
    return pose_matrix(float(row["angle"]), orientation_with_up(row["face"] or FACE_NAMES[0]))


def edge() -> float:
    """A die's edge, mm."""
    return float(constants()["die"]["edge"])


def bench_xy(player: int, k: int) -> tuple[float, float]:
    """Where die number ``k`` (0-3) of ``player`` sits on the bench below the arena."""
    return -10.0 + 87.0 * player + 20.0 * k, BENCH_Y


def dice(session: ZooSession) -> list[dict[str, Any]]:
    """Every die as the page shows it: where it lies (the round's final board while its result is shown),
    its owner, team, status and face (None off the arena)."""
    s = session.state
    result = session.round_result
    kept = {a.die: a for a in result.animals} if result is not None else None
    rows = []
    for d, die in s.dice.items():
        row: dict[str, Any] = {"id": d, "owner": die.owner, "team": s.team(die.owner)}
        if kept is None:
            on = die.status == "arena"
            row |= {"status": die.status, "x": die.x, "y": die.y, "angle": die.angle, "face": die.face if on else None,
                    "z": die.z if on else None, "quat": die.quat if on else None}
        elif d in kept:
            a = kept[d]
            row |= {"status": "arena", "x": a.x, "y": a.y, "angle": a.angle, "face": a.face}
        else:
            row |= {"status": die.status if die.status != "arena" else "hand", "x": 0.0, "y": 0.0, "angle": 0.0,
                    "face": None}
        rows.append(row)
    return rows


def layers(session: ZooSession, flickable: set[str] | None = None
           ) -> tuple[dict[str, list[Any]], dict[str, list[Any]]]:
    """The dice layer (one row a die: where it lies, its face letter on its most-up face, label and note) and
    the faces layer (one row a face seen from above, lower dice first): the arena's dice in their 3-D pose, the
    others flat on the bench. A stunned die is hatched red (its hatch has the die's own alpha, so it is hidden
    with it while the die moves)."""
    e = edge()
    st = session.state
    if flickable is None:
        flickable = set(st.flickable()) if st.phase in ("flick", "extra") and session.round_result is None else set()
    cols: dict[str, list[Any]] = {k: [] for k in DICE_COLUMNS}
    drawn: list[tuple[float, dict[str, Any]]] = []
    for row in dice(session):
        d = row["id"]
        on = row["status"] == "arena"
        if on:
            x, y, angle, face = row["x"], row["y"], row["angle"], FACE_LETTERS[row["face"]]
            z = e / 2 if row.get("z") is None else float(row["z"])
        else:
            (x, y), angle, face, z = bench_xy(row["owner"], int(d[1]) - 1), 0.0, "", e / 2
        seen = cube_faces(x, y, z, rotation(row if on else {"angle": 0.0, "face": None}))
        stunned = row["face"] == STUNNED
        alpha = 0.25 if row["status"] in ("caged", "out", "unused") else 1.0
        fill = TEAM_COLOURS[row["team"]]
        style = {"line": "#dc2626" if stunned else ("#facc15" if d in flickable else "#111827"),
                 "width": 3.0 if stunned or d in flickable else 1.0, "hatch": "x" if stunned else " ",
                 "alpha": alpha, "halpha": 0.8 * alpha if stunned else 0.0}
        for k, v in (("id", d), ("x", x), ("y", y), ("angle", angle), ("fill", fill), ("face", face),
                     *style.items(), ("label", d), ("ly", y + e / 2 + 9.0 if on else y - e / 2 - 6.0),
                     ("note", STATUS_WORDS.get(row["status"], "")), ("ny", y - e / 2 - 15.0),
                     ("status", row["status"]), ("tx", seen[0]["cx"]), ("ty", seen[0]["cy"])):
            cols[k].append(v)
        for f in seen:
            drawn.append((z, {"id": d, "xs": f["xs"], "ys": f["ys"], "fill": shade(fill, f["up"]), **style}))
    drawn.sort(key=lambda zf: zf[0])  # a die resting on another is drawn over it
    return cols, {k: [f[k] for _z, f in drawn] for k in FACE_COLUMNS}


def dice_data(session: ZooSession, flickable: set[str] | None = None) -> dict[str, list[Any]]:
    """The dice layer of :func:`layers` (one row a die)."""
    return layers(session, flickable)[0]


def hide(data: dict[str, list[Any]], ids: set[str]) -> dict[str, list[Any]]:
    """A dice or faces layer with ``ids`` hidden, hatch and all (the animation draws them meanwhile)."""
    out = {k: list(v) for k, v in data.items()}
    for i, d in enumerate(out["id"]):
        if d in ids:
            out["alpha"][i] = out["halpha"][i] = 0.0
    return out


def at(session: ZooSession, x: float, y: float) -> str | None:
    """The die drawn under (x, y), if any (the nearest when two are close)."""
    data = dice_data(session, set())
    reach = edge() * 0.75
    near = [(abs(x - dx) + abs(y - dy), d) for d, dx, dy in zip(data["id"], data["x"], data["y"], strict=True)
            if abs(x - dx) <= reach and abs(y - dy) <= reach]
    return min(near)[1] if near else None


def bench_labels(session: ZooSession) -> dict[str, list[Any]]:
    g = session.state.game
    return {"x": [bench_xy(q, 0)[0] + 30.0 for q in range(g.players)], "y": [BENCH_LABEL_Y] * g.players,
            "text": [f"{g.player_name(q)} · {session.seats[q].kind}" for q in range(g.players)],
            "colour": [TEAM_COLOURS[t] for t in g.teams]}


def selection_data(session: ZooSession) -> dict[str, list[Any]]:
    """The chosen die (an amber frame) wherever it is."""
    data = dice_data(session, set())
    if session.die in data["id"] and session.round_result is None:
        i = data["id"].index(session.die)
        return {"x": [data["x"][i]], "y": [data["y"][i]], "angle": [data["angle"][i]]}
    return {"x": [], "y": [], "angle": []}


def stunned(session: ZooSession, player: int) -> list[str]:
    """``player``'s dice in the arena showing their feet (what Chest Pound stands up)."""
    st = session.state
    return [d for d in st.dice_of(player, "arena") if st.dice[d].face == STUNNED]


def spots_data(session: ZooSession) -> dict[str, dict[str, list[Any]]]:
    """Where the chosen die may be flicked from: the dots, and rail bands when anywhere on a rail is allowed
    (for the Crocodile, only once the Ambush is armed)."""
    a = arena()
    empty: dict[str, dict[str, list[Any]]] = {"dots": {"x": [], "y": []},
                                              "bands": {"left": [], "right": [], "bottom": [], "top": []}}
    if session.round_result is not None:
        return empty
    opts = session.spot_options()
    w, s = a.rail_width, a.size
    where = {"S": (s / 2, -w / 2), "N": (s / 2, s + w / 2), "W": (-w / 2, s / 2), "E": (s + w / 2, s / 2)}
    empty["dots"] = {"x": [where[d[0]][0] for d in opts["dots"]], "y": [where[d[0]][1] for d in opts["dots"]]}
    lo, hi = opts["along"]
    if opts["anywhere"] and (not opts["anywhere_needs_ability"] or session.use_ability_flag):
        bands = empty["bands"]
        for left, right, bottom, top in ((lo, hi, -w, 0), (lo, hi, s, s + w), (-w, 0, lo, hi), (s, s + w, lo, hi)):
            bands["left"].append(left)
            bands["right"].append(right)
            bands["bottom"].append(bottom)
            bands["top"].append(top)
    return empty


def launch_data(session: ZooSession) -> dict[str, list[Any]]:
    """The chosen die set on its spot (a dashed ghost die with the face it is set on)."""
    flick = session.proposed_flick()
    empty: dict[str, list[Any]] = {"x": [], "y": [], "angle": [], "face": [], "preview": []}
    if flick is None or session.round_result is not None or session.proposal_problem(ignore_aim=True) is not None:
        return empty
    preview = [1.0 if session.aim_preview() else 0.0]  # eyes closed (Dust Kick): no arrow, not even while dragging
    if flick.rail == "here":
        die = session.state.dice[flick.die]
        return {"x": [die.x], "y": [die.y], "angle": [die.angle], "face": [FACE_LETTERS[die.face]],
                "preview": preview}
    along = arena().size / 2 if flick.along is None else flick.along
    x, y, normal = launch_point(flick.rail, along)
    return {"x": [x], "y": [y], "angle": [normal], "face": [FACE_LETTERS[flick.face or "head"]], "preview": preview}


def aim_data(session: ZooSession) -> dict[str, list[Any]]:
    """The proposed flick as an arrow from the launch point (length: speed at the drag scale) and its free
    slide (dotted)."""
    line = session.aim_line() if session.round_result is None else None
    keys = ("x0", "y0", "x1", "y1", "x2", "y2", "angle")
    if line is None:
        return {k: [] for k in keys}
    h = math.radians(line["heading"])
    length = line["speed"] * DRAG_MM_PER_M_S
    slide = min(line["slide"], 600.0)
    return {"x0": [line["x"]], "y0": [line["y"]], "x1": [line["x"] + length * math.cos(h)],
            "y1": [line["y"] + length * math.sin(h)], "x2": [line["x"] + slide * math.cos(h)],
            "y2": [line["y"] + slide * math.sin(h)], "angle": [h - math.pi / 2]}


def animation_data(session: ZooSession, frames: list[dict[str, Any]], seq: int, rate: float = 1.0
                   ) -> tuple[dict[str, list[Any]], dict[str, list[Any]], dict[str, list[Any]]]:
    """The dice drawn during the animation (their first frame: a row a face slot, a row a die's letter) and the
    frames flattened for the browser, which projects each cube from its pose: row ``f * n + i`` is die ``i`` in
    frame ``f`` (position mm, quaternion, whether it is stunned: its hatch moves with it). A die gone into a
    cage or over a rail keeps its last pose, hidden. ``rate`` is the speed of play (1: as it happened)."""
    ids: list[str] = []
    for fr in frames:
        for d in fr["dice"]:
            if d not in ids:
                ids.append(d)
    st = session.state
    fills = {d: TEAM_COLOURS[st.game.teams[st.dice[d].owner]] for d in ids}
    last: dict[str, list[Any]] = {}
    rows: dict[str, list[Any]] = {k: [] for k in FRAME_COLUMNS}
    e = edge()
    for fr in frames:
        for d in ids:
            pose = fr["dice"].get(d)
            if pose is not None:
                last[d] = pose
            p = last.get(d, [0.0, 0.0, 0.0, "head", e / 2, 1.0, 0.0, 0.0, 0.0])
            for k, v in (("t", float(fr["t"])), ("x", float(p[0])), ("y", float(p[1])), ("z", float(p[4])),
                         ("qw", float(p[5])), ("qx", float(p[6])), ("qy", float(p[7])), ("qz", float(p[8])),
                         ("fill", fills[d]), ("shown", 1.0 if pose is not None else 0.0),
                         ("hatch", 1.0 if p[3] == STUNNED else 0.0), ("seq", seq), ("rate", float(rate))):
                rows[k].append(v)
    anim: dict[str, list[Any]] = {k: [] for k in ANIM_COLUMNS}
    text: dict[str, list[Any]] = {k: [] for k in ANIM_TEXT_COLUMNS}
    for i, d in enumerate(ids):
        rot = quat_mat(np.array([rows[k][i] for k in ("qw", "qx", "qy", "qz")]))
        seen = cube_faces(rows["x"][i], rows["y"][i], rows["z"][i], rot)
        shown = rows["shown"][i]
        for j in range(SLOTS):
            f = seen[j] if j < len(seen) else None
            for k, v in (("id", d), ("xs", f["xs"] if f else [0.0] * 4), ("ys", f["ys"] if f else [0.0] * 4),
                         ("fill", shade(fills[d], f["up"]) if f else fills[d]), ("alpha", shown if f else 0.0),
                         ("halpha", 0.8 * rows["hatch"][i] * shown if f else 0.0)):
                anim[k].append(v)
        for k, v in (("id", d), ("x", seen[0]["cx"]), ("y", seen[0]["cy"]), ("face", FACE_LETTERS[seen[0]["face"]]),
                     ("alpha", shown)):
            text[k].append(v)
    return anim, text, rows


__all__ = ["BENCH_Y", "FACE_LETTERS", "TEAM_COLOURS", "X_RANGE", "Y_RANGE", "aim_data", "animation_data", "at",
           "bench_labels", "bench_xy", "cube_faces", "dice", "dice_data", "edge", "face_table", "hide", "launch_data",
           "layers", "selection_data", "shade", "spots_data", "stunned"]
