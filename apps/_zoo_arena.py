"""The Kung-Fu Zoo arena as pure data for Bokeh: rails, dots, cages, dice, bench, aim and animation frames.

No Panel here. Plot coordinates are the engine's millimetres: the playfield is [0, 300]^2 with x east and
y north, the rails lie outside it, and a bench below the arena shows every die not in the arena (in hand,
reinforcements, caged, out), one group of four per player.
"""

from __future__ import annotations

import math
from typing import Any

from engine.zoo.arena3d import launch_point
from engine.zoo.constants import arena, constants
from engine.zoo.session import DRAG_MM_PER_M_S, ZooSession

TEAM_COLOURS = {"crocodile": "#15803d", "elephant": "#2563eb", "gorilla": "#b45309", "zebra": "#334155"}
FACE_LETTERS = {"head": "H", "tail": "T", "left": "L", "right": "R", "back": "B", "feet": "F"}
BENCH_Y = -48.0
BENCH_LABEL_Y = -88.0
X_RANGE = (-25.0, 325.0)
Y_RANGE = (-96.0, 325.0)
STATUS_WORDS = {"hand": "", "reserve": "reserve", "caged": "caged", "out": "out", "unused": "unused",
                "arena": ""}


def bench_xy(player: int, k: int) -> tuple[float, float]:
    """Where die number ``k`` (0-3) of ``player`` sits on the bench below the arena."""
    return -10.0 + 87.0 * player + 20.0 * k, BENCH_Y


def dice_data(session: ZooSession) -> dict[str, list[Any]]:
    """One row per die: the arena's dice where they lie, turned to their yaw; the others on the bench."""
    view = session.arena_view()
    edge = view["edge"]
    cols: dict[str, list[Any]] = {k: [] for k in ("id", "x", "y", "angle", "fill", "face", "line", "width", "hatch",
                                                  "alpha", "label", "ly", "note", "ny", "status")}
    flickable = set(session.state.flickable()) if session.state.phase in ("flick", "extra") else set()
    for row in view["dice"]:
        d = row["id"]
        if row["status"] == "arena":
            x, y, angle = row["x"], row["y"], row["angle"]
            face = FACE_LETTERS[row["face"]]
        else:
            x, y = bench_xy(row["owner"], int(d[1]) - 1)
            angle, face = 0.0, ""
        stunned = row["face"] == "feet"
        gone = row["status"] in ("caged", "out", "unused")
        cols["id"].append(d)
        cols["x"].append(x)
        cols["y"].append(y)
        cols["angle"].append(angle)
        cols["fill"].append(TEAM_COLOURS[row["team"]])
        cols["face"].append(face)
        cols["line"].append("#dc2626" if stunned else ("#facc15" if d in flickable else "#111827"))
        cols["width"].append(3.0 if stunned or d in flickable else 1.0)
        cols["hatch"].append("x" if stunned else " ")
        cols["alpha"].append(0.25 if gone else 1.0)
        cols["label"].append(d)
        cols["ly"].append(y + edge / 2 + 9.0 if row["status"] == "arena" else y - edge / 2 - 6.0)
        cols["note"].append(STATUS_WORDS.get(row["status"], ""))
        cols["ny"].append(y - edge / 2 - 15.0)
        cols["status"].append(row["status"])
    return cols


def bench_labels(session: ZooSession) -> dict[str, list[Any]]:
    g = session.state.game
    xs = [bench_xy(q, 0)[0] + 30.0 for q in range(g.players)]
    who = [f"{g.player_name(q)} · {session.seats[q]}" for q in range(g.players)]
    return {"x": xs, "y": [BENCH_LABEL_Y] * g.players, "text": who,
            "colour": [TEAM_COLOURS[t] for t in g.teams]}


def selection_data(session: ZooSession) -> dict[str, list[Any]]:
    """The chosen die (a yellow frame) wherever it is."""
    data = dice_data(session)
    if session.die in data["id"]:
        i = data["id"].index(session.die)
        return {"x": [data["x"][i]], "y": [data["y"][i]], "angle": [data["angle"][i]]}
    return {"x": [], "y": [], "angle": []}


def spots_data(session: ZooSession) -> dict[str, dict[str, list[Any]]]:
    """Where the chosen die may be flicked from: the dots, and rail bands when anywhere on a rail is allowed."""
    a = arena()
    opts = session.spot_options()
    w, s = a.rail_width, a.size
    dots = {"S": (s / 2, -w / 2), "N": (s / 2, s + w / 2), "W": (-w / 2, s / 2), "E": (s + w / 2, s / 2)}
    dot = {"x": [dots[d[0]][0] for d in opts["dots"]], "y": [dots[d[0]][1] for d in opts["dots"]]}
    lo, hi = opts["along"]
    bands: dict[str, list[float]] = {"left": [], "right": [], "bottom": [], "top": []}
    if opts["anywhere"] and (not opts["anywhere_needs_ability"] or session.use_ability_flag):
        for left, right, bottom, top in ((lo, hi, -w, 0), (lo, hi, s, s + w), (-w, 0, lo, hi), (s, s + w, lo, hi)):
            bands["left"].append(left)
            bands["right"].append(right)
            bands["bottom"].append(bottom)
            bands["top"].append(top)
    return {"dots": dot, "bands": bands}


def launch_data(session: ZooSession) -> dict[str, list[Any]]:
    """The chosen die set on its spot (a dashed ghost die with the face it is set on)."""
    flick = session.proposed_flick()
    empty: dict[str, list[Any]] = {"x": [], "y": [], "angle": [], "face": [], "preview": []}
    if flick is None or session.proposal_problem(ignore_aim=True) is not None:
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
    slide (dashed)."""
    line = session.aim_line()
    keys = ("x0", "y0", "x1", "y1", "x2", "y2", "angle")
    if line is None:
        return {k: [] for k in keys}
    h = math.radians(line["heading"])
    length = line["speed"] * DRAG_MM_PER_M_S
    x1, y1 = line["x"] + length * math.cos(h), line["y"] + length * math.sin(h)
    slide = min(line["slide"], 600.0)
    x2, y2 = line["x"] + slide * math.cos(h), line["y"] + slide * math.sin(h)
    return {"x0": [line["x"]], "y0": [line["y"]], "x1": [x1], "y1": [y1], "x2": [x2], "y2": [y2],
            "angle": [h - math.pi / 2]}


def animation_data(session: ZooSession, frames: list[dict[str, Any]], seq: int
                   ) -> tuple[dict[str, list[Any]], dict[str, list[Any]]]:
    """The dice drawn during the animation (their first frame) and the frames flattened for the browser:
    row ``f * n + i`` is die ``i`` in frame ``f`` (a die gone into a cage or over a rail keeps its last
    pose, hidden)."""
    ids: list[str] = []
    for fr in frames:
        for d in fr["dice"]:
            if d not in ids:
                ids.append(d)
    state = session.state
    last: dict[str, list[Any]] = {}
    rows: dict[str, list[Any]] = {k: [] for k in ("t", "x", "y", "angle", "face", "shown", "seq")}
    for fr in frames:
        for d in ids:
            pose = fr["dice"].get(d)
            if pose is not None:
                last[d] = pose
            p = last.get(d)
            if p is None:  # not in the arena yet (cannot happen: the launched die is in frame 0)
                p = [0.0, 0.0, 0.0, "head"]
            rows["t"].append(float(fr["t"]))
            rows["x"].append(float(p[0]))
            rows["y"].append(float(p[1]))
            rows["angle"].append(float(p[2]))
            rows["face"].append(FACE_LETTERS[p[3]])
            rows["shown"].append(1.0 if pose is not None else 0.0)
            rows["seq"].append(seq)
    first = {k: rows[k][: len(ids)] for k in ("x", "y", "angle", "face")}
    owners = [state.dice[d].owner for d in ids]
    first |= {"id": ids, "fill": [TEAM_COLOURS[state.game.teams[o]] for o in owners],
              "alpha": [1.0] * len(ids)}
    return first, rows


HEAT_COLUMNS = ("direction", "speed", "p", "w", "h", "text", "aim", "tip", "count")


def heat_data(grid: Any) -> dict[str, list[Any]]:
    """The caging-odds grid as heat-map cells (direction x speed). A cell's estimate comes from only a few
    flicks, so its hover text gives the 95% Wilson interval (``tip``) and the count (``count``): 0 of 18 is
    not "never"."""
    if grid is None or len(grid) == 0:
        return {k: [] for k in HEAT_COLUMNS}
    dirs = sorted(set(grid["direction"]))
    speeds = sorted(set(grid["speed"]))
    w = (dirs[1] - dirs[0]) if len(dirs) > 1 else 10.0
    h = (speeds[1] - speeds[0]) if len(speeds) > 1 else 0.2
    tips, counts = [], []
    for p, low, high, n in zip(grid["p_cage_opponent"], grid["p_cage_opponent_low"], grid["p_cage_opponent_high"],
                               grid["samples"], strict=True):
        tips.append(f"{100 * p:.1f}% (95% interval {100 * low:.1f}–{100 * high:.1f}%)")
        counts.append(f"{round(p * n)} of {int(n)} flicks caged an opponent")
    return {"direction": [float(v) for v in grid["direction"]], "speed": [float(v) for v in grid["speed"]],
            "p": [float(v) for v in grid["p_cage_opponent"]], "w": [w] * len(grid), "h": [h] * len(grid),
            "text": [f"{100 * v:.0f}" if v > 0 else "" for v in grid["p_cage_opponent"]],
            "aim": [f"{d:g}° at {v:g} m/s" for d, v in zip(grid["direction"], grid["speed"], strict=True)],
            "tip": tips, "count": counts}


def edge() -> float:
    return float(constants()["die"]["edge"])
