"""The Kung Fu 2100 lair as pure data: map squares, room labels, counters, highlights (no Panel here).

Plot coordinates: square (col, row) covers x in [col, col + 1] and y in [H - 1 - row, H - row], so
north is at the top. Terminators (and Constabulary) waiting outside the lair are drawn in slots
beside their entry: west of the map for the disposal and the loo, north of it for the front door.
:func:`frames` is what the board's moving layers draw, from the screen's view of the game.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from apps.kf2100.sides import Sides
from engine.kf2100.actions import Attack, Place
from engine.kf2100.data import TECHNIQUES
from engine.kf2100.session import KungFuSession
from engine.kf2100.steps import Step

KIND_COLOURS = {
    "terminator": "#dc2626", "jelly": "#111827", "clone_master": "#7c3aed", "armed_technician": "#1d4ed8",
    "unarmed_technician": "#0e7490", "servant": "#a16207", "constabulary": "#15803d",
}
KIND_NAMES = {
    "terminator": "Terminator", "jelly": "Jelly", "clone_master": "Clone Master",
    "armed_technician": "Technician (armed)", "unarmed_technician": "Technician (unarmed)", "servant": "Servant",
    "constabulary": "Local Constabulary",
}
FACE_DOWN = "#94a3b8"
WALL, DOOR, ARMORED = "#334155", "#fef3c7", "#7c2d12"
EQUIPMENT_COLOURS = {"clone_bank": "#0ea5e9", "computer": "#6366f1"}
ROOM_COLOURS = {
    "kitchen": "#fde2e4", "work_area": "#fff1c1", "servants_quarters": "#fae1c8", "foyer": "#e2e8f0",
    "guard_room": "#fecaca", "technicians": "#d9f99d", "loo": "#e0f2fe", "hall": "#ede9fe",
    "workshop": "#dcfce7", "records": "#fef9c3", "clone_lab_1": "#cffafe", "clone_lab_2": "#ccfbf1",
    "computer_room": "#e0e7ff", "growth_lab": "#d1fae5", "masters_quarters": "#f5d0fe",
    "north_corridor": "#f1f5f9", "south_corridor": "#e7e5e4",
}
TECHNIQUE_WORDS = {"fist": "Fist", "kick": "Kick", "mist": "Mist", "monkey": "Soul", "heart": "Heart"}
SHORT = {"fist": "F", "kick": "K", "mist": "M", "monkey": "Y", "heart": "H"}
NAMES = {"fist": "Iron Fist", "kick": "Lightning Kick", "mist": "Body of Mist", "monkey": "Monkey Soul",
         "heart": "Mountain Heart", "weapon": "Weapon", "spikes": "Spikes", "gun": "Gun", "none": "None"}


def levels_text(f: dict[str, Any]) -> str:
    """Levels left of each technique, e.g. ``Fist 2/2 · Kick 1/2`` (only techniques it started with)."""
    return " · ".join(f"{TECHNIQUE_WORDS[t]} {f['levels'][i]}/{f['start'][i]}"
                      for i, t in enumerate(TECHNIQUES) if f["start"][i])


def counter_levels(f: dict[str, Any]) -> str:
    """The damage line on a counter: levels left per technique as digits (Fist Kick Mist Monkey Heart)."""
    return "".join(str(v) for v in f["levels"]) if any(f["start"]) else ""


class BoardModel:
    """Geometry of the lair for drawing and for turning clicks into squares."""

    def __init__(self, layout: dict[str, Any], board: Any) -> None:
        self.width, self.height = layout["width"], layout["height"]
        self.squares = layout["squares"]
        self.board = board
        self.by_name = {q["square"]: q for q in self.squares}
        self.entry_square = {e: board.names[sq] for e, sq in board.entry_squares.items()}
        self.equipment_square = {eid: board.names[sq] for eid, (sq, _) in board.lair.equipment.items()}
        self.equipment_at = {v: k for k, v in self.equipment_square.items()}

    # --- coordinates ---------------------------------------------------------------------------
    def rect(self, col: float, row: float, inset: float = 0.0) -> tuple[float, float, float, float]:
        y1 = self.height - row
        return (col + inset, y1 - 1 + inset, col + 1 - inset, y1 - inset)

    def centre(self, col: float, row: float) -> tuple[float, float]:
        return col + 0.5, self.height - row - 0.5

    def cell_of(self, x: float, y: float) -> tuple[int, int]:
        return math.floor(x), self.height - 1 - math.floor(y)

    def square_at(self, x: float, y: float) -> str | None:
        col, row = self.cell_of(x, y)
        if 0 <= col < self.width and 0 <= row < self.height:
            return self.board.names[row * self.width + col]
        return None

    def col_row(self, square: str) -> tuple[int, int]:
        q = self.by_name[square]
        return q["col"], q["row"]

    def slot(self, entry: str, k: int) -> tuple[int, int]:
        """The k-th waiting slot outside an entry (col, row in board terms, off the map)."""
        col, row = self.col_row(self.entry_square[entry])
        if entry == "door":
            return col - 2 + k, -1
        return -2 - k, row

    # --- static layers -----------------------------------------------------------------------------
    def base(self) -> dict[str, list]:
        """Every square: its colour, name and what it is (for hover)."""
        out: dict[str, list] = {k: [] for k in ("x0", "y0", "x1", "y1", "colour", "square", "what")}
        for q in self.squares:
            kind = q["kind"]
            if kind == "wall":
                colour, what = WALL, "wall"
            elif kind == "armored_door":
                colour, what = ARMORED, "the armored front door (breaks on 1-2)"
            elif kind == "door":
                colour, what = DOOR, "door"
            elif kind == "equipment":
                colour = EQUIPMENT_COLOURS[q["equipment_type"]]
                what = f"{q['equipment']}: {q['equipment_type'].replace('_', ' ')} ({q['room']})"
            else:
                colour = ROOM_COLOURS.get(self._room_key(q), "#f8fafc")
                what = q["room"] + (f", the {q['entry']} entry" if q["entry"] in ("disposal", "loo") else "")
            if q["level"] and kind != "wall":
                what += " · upper level"
            x0, y0, x1, y1 = self.rect(q["col"], q["row"])
            for k, v in zip(("x0", "y0", "x1", "y1", "colour", "square", "what"),
                            (x0, y0, x1, y1, colour, q["square"], what), strict=True):
                out[k].append(v)
        return out

    def _room_key(self, q: dict[str, Any]) -> str | None:
        cell = self.board.cells[q["row"] * self.width + q["col"]]
        return cell.room

    def room_labels(self) -> dict[str, list]:
        """Room names on the top edge of each room (turned, in the middle, for narrow rooms), on a pale ground.
        The board draws them under the counters, so a name never covers a counter (a counter may cover a
        name's middle; the name is on its room's hover text too)."""
        out: dict[str, list] = {"x": [], "y": [], "text": [], "angle": []}
        for key, squares in self.board.rooms.items():
            cols = [sq % self.width for sq in squares]
            rows = [sq // self.width for sq in squares]
            name = self.board.lair.rooms[key].name
            narrow = max(cols) - min(cols) < 2
            if narrow:
                x, y = min(cols) + 0.5, self.height - (min(rows) + max(rows) + 1) / 2
            else:
                x, y = (min(cols) + max(cols) + 1) / 2, self.height - min(rows)
            out["x"].append(x)
            out["y"].append(y)
            out["text"].append(name)
            out["angle"].append(90.0 if narrow else 0.0)
        return out

    def fixed_labels(self) -> dict[str, list]:
        """Equipment ids, entry names, the door, column letters and row numbers."""
        out: dict[str, list] = {"x": [], "y": [], "text": [], "colour": []}

        def add(x: float, y: float, text: str, colour: str = "#111827") -> None:
            out["x"].append(x)
            out["y"].append(y)
            out["text"].append(text)
            out["colour"].append(colour)

        for eid, sq in self.equipment_square.items():
            add(*self.centre(*self.col_row(sq)), eid, "#ffffff")
        for entry, label in (("disposal", "disposal ▾"), ("loo", "loo ▾")):
            col, row = self.slot(entry, 1)
            add(col + 0.5, self.height - row + 0.45, label, "#475569")
        col, row = self.col_row(self.entry_square["door"])
        add(col + 0.5, self.height - row - 0.5, "▼", "#fef3c7")
        add(col + 4.5, self.height + 0.5, "◂ front door", "#475569")
        for c in range(self.width):
            add(c + 0.5, -0.5, chr(ord("a") + c), "#64748b")
        for r in range(self.height):
            add(-0.5, self.height - r - 0.5, str(r + 1), "#64748b")
        return out

    def elevation_edges(self) -> dict[str, list]:
        """Segments between neighbouring open squares on different levels (the change of elevation)."""
        out: dict[str, list] = {"x0": [], "y0": [], "x1": [], "y1": []}
        cells = self.board.cells
        for i, cell in enumerate(cells):
            if cell.kind == "wall":
                continue
            col, row = i % self.width, i // self.width
            for dc, dr in ((1, 0), (0, 1)):
                c, r = col + dc, row + dr
                if c >= self.width or r >= self.height:
                    continue
                other = cells[r * self.width + c]
                if other.kind != "wall" and other.level != cell.level:
                    if dc:  # vertical edge on x = col + 1
                        seg = (col + 1, self.height - row - 1, col + 1, self.height - row)
                    else:   # horizontal edge on y = H - row - 1
                        seg = (col, self.height - row - 1, col + 1, self.height - row - 1)
                    for k, v in zip(("x0", "y0", "x1", "y1"), seg, strict=True):
                        out[k].append(v)
        return out

    # --- counters ------------------------------------------------------------------------------------
    def counters(self, view: dict[str, Any], selected: str) -> tuple[dict[str, list], dict[str, list], dict]:
        """Counter squares, their labels, and where each figure sits (id -> (col, row)), from a view."""
        rects: dict[str, list] = {k: [] for k in ("x0", "y0", "x1", "y1", "fill", "line", "lw", "name", "detail")}
        labels: dict[str, list] = {"x": [], "y": [], "text": [], "levels": [], "tcolour": []}
        where: dict[str, tuple[int, int]] = {}
        slots: dict[str, int] = {}

        def put(col: float, row: float, fill: str, line: str, lw: float, name: str, detail: str, text: str,
                levels: str = "", tcolour: str = "#ffffff") -> None:
            for k, v in zip(("x0", "y0", "x1", "y1"), self.rect(col, row, 0.07), strict=True):
                rects[k].append(v)
            rects["fill"].append(fill)
            rects["line"].append(line)
            rects["lw"].append(lw)
            rects["name"].append(name)
            rects["detail"].append(detail)
            x, y = self.centre(col, row)
            labels["x"].append(x)
            labels["y"].append(y)
            labels["text"].append(text)
            labels["levels"].append(levels)
            labels["tcolour"].append(tcolour)

        for sq in view["face_down"]:
            col, row = self.col_row(sq)
            put(col, row, FACE_DOWN, "#475569", 1.0, "face-down counter", f"a face-down counter on {sq}", "?")
        for f in view["figures"]:
            if f["status"] not in ("active", "unconscious", "waiting"):
                continue
            if f["status"] == "waiting":
                k = slots.get(f["entry"], 0)
                slots[f["entry"]] = k + 1
                col, row = self.slot(f["entry"], k)
            else:
                col, row = self.col_row(f["square"])
            where[f["id"]] = (col, row)
            face_up = f["face_up"] or f["kind"] == "terminator"
            fill = KIND_COLOURS[f["kind"]] if face_up else FACE_DOWN
            levels = counter_levels(f)
            if f["status"] == "unconscious":
                fill, levels = "#fca5a5" if f["kind"] == "terminator" else "#6b7280", "KO"
            detail = f"{f['id']}: {KIND_NAMES[f['kind']]}" + (f" on {f['square']}" if f["square"] else "") \
                + ("" if face_up else " (face down: yours only)")
            if any(f["start"]):
                detail += " · " + levels_text(f)
            if f["weapon"]:
                detail += f" · {f['weapon']}"
            if f["status"] != "active":
                detail += f" · {f['status']}" + (f" at the {f['entry']}" if f["status"] == "waiting" else "")
            is_sel = f["id"] == selected
            line, lw = ("#0f172a", 1.0) if face_up else (KIND_COLOURS[f["kind"]], 2.5)  # own face-down: kind border
            if is_sel:
                line, lw = "#facc15", 4.0
            put(col, row, fill, line, lw, f["id"], detail, f["id"], levels)
        return rects, labels, where



PIECE_FRAMES = frozenset({"marks", "costs", "counters", "labels"})
"""The frames drawn as the pieces' two layers (squares and texts)."""
LAYERS: dict[str, frozenset[str]] = {"rects": PIECE_FRAMES, "texts": PIECE_FRAMES, "trail": frozenset({"trail"}),
                                     "way": frozenset({"way"})}
"""The board's moving layers, each with the frames it draws."""


def pieces(f: dict[str, Any]) -> dict[str, dict[str, list]]:
    """The board's moving squares (highlights under counters) and texts (costs, figure names, levels left) as
    two layers."""
    marks, counters, costs, labels = f["marks"], f["counters"], f["costs"], f["labels"]
    rects = {k: marks[k] + counters[k] for k in ("x0", "y0", "x1", "y1", "fill", "line", "lw")}
    rects["alpha"] = marks["alpha"] + [1.0] * len(counters["x0"])
    rects["name"] = [""] * len(marks["x0"]) + counters["name"]
    rects["detail"] = [""] * len(marks["x0"]) + counters["detail"]
    n = len(labels["x"])
    texts = {"x": costs["x"] + labels["x"] + labels["x"],
             "y": costs["y"] + [y + 0.13 for y in labels["y"]] + [y - 0.22 for y in labels["y"]],
             "text": costs["text"] + labels["text"] + labels["levels"],
             "tcolour": ["#14532d"] * len(costs["x"]) + labels["tcolour"] * 2}
    assert len(texts["tcolour"]) == len(costs["x"]) + 2 * n
    return {"rects": rects, "texts": texts}


def layer_columns(f: dict[str, Any], names: Iterable[str]) -> dict[str, dict[str, list]]:
    """The columns of the board's moving layers ``names`` (of :data:`LAYERS`) from :func:`frames`: the one place
    the frames become a figure's data (the way, a list of points, becomes one line)."""
    names = set(names)
    out = pieces(f) if names & {"rects", "texts"} else {}
    if "trail" in names:
        out["trail"] = dict(f["trail"])
    if "way" in names:
        way = f["way"]
        out["way"] = {"xs": [[x for x, _ in way]], "ys": [[y for _, y in way]]} if way else {"xs": [], "ys": []}
    return {k: v for k, v in out.items() if k in names}


def _empty(*keys: str) -> dict[str, list]:
    return {k: [] for k in keys}


def frames(session: KungFuSession, model: BoardModel, armed: tuple[str, str] | None,
           sides: Sides | None = None) -> dict[str, Any]:
    """Everything the board's moving layers draw, from the view of the sides the page holds (``sides``; None: the
    screen's view) with no secret of another side, and where each figure sits (for clicks). The highlights of
    legal moves are drawn only for the side the page acts for: another side's would tell its counters and chits."""
    s = session
    st = s.state
    step = st.step
    sides = sides or Sides()
    view = sides.view(s)
    acting = sides.acting(s)
    selected = s.selected if s.handover is None and acting is not None else ""
    rects, labels, where = model.counters(view, selected)
    marks = _empty("x0", "y0", "x1", "y1", "fill", "line", "alpha", "lw")
    costs = _empty("x", "y", "text")

    def mark(sq: str, fill: str, line: str, alpha: float, lw: float) -> None:
        for k, v in zip(("x0", "y0", "x1", "y1"), model.rect(*model.col_row(sq)), strict=True):
            marks[k].append(v)
        marks["fill"].append(fill)
        marks["line"].append(line)
        marks["alpha"].append(alpha)
        marks["lw"].append(lw)

    legal = s.legal() if acting is not None else []
    reach: dict[str, int] = {}
    if step is Step.BONUS_MOVE and legal:
        reach = s.reachable("CM")
    elif step is Step.MOVE and selected and legal:
        reach = s.reachable(selected)
    for sq, cost in reach.items():
        mark(sq, "#22c55e", "#15803d", 0.45, 1.0)
        x, y = model.centre(*model.col_row(sq))
        costs["x"].append(x)
        costs["y"].append(y - 0.3)
        costs["text"].append(str(cost))
    if legal and step is Step.SETUP:
        for a in legal:
            if isinstance(a, Place):
                mark(a.square, "#a855f7", "#a855f7", 0.18, 0.5)
    elif legal and step is Step.ENTRY:
        for sq in model.entry_square.values():
            mark(sq, "#22c55e", "#15803d", 0.5, 2.0)
    elif legal and step is Step.MOVE and acting == 1:
        for fid in st.activatable():
            if st.figs[fid].pos >= 0:
                mark(st.name(st.figs[fid].pos), "#f97316", "#ea580c", 0.35, 2.0)
    elif legal and armed is not None and step in (Step.ATTACK, Step.AIM):
        for a in legal:
            if isinstance(a, Attack) and (a.figure, a.chit) == armed:
                mark(model.equipment_square.get(a.target) or st.name(st.figs[a.target].pos),
                     "#ef4444", "#b91c1c", 0.35, 3.0)
    if st.combat is not None:  # the figures in the combat, outlined for everyone
        for m in st.combat.members:
            sq = model.equipment_square.get(m)
            if sq is None and m in where and st.figs[m].pos >= 0:
                sq = st.name(st.figs[m].pos)
            if sq is not None:
                mark(sq, "#fde047", "#ca8a04", 0.0, 2.5)
    trail = _empty("x0", "y0", "x1", "y1")
    for fid, start, end in s.moves:
        if fid not in where or end not in model.by_name:
            continue
        if start in model.by_name:
            c0 = model.col_row(start)
        elif start in model.entry_square:
            c0 = model.slot(start, 0)
        else:
            continue
        (x0, y0), (x1, y1) = model.centre(*c0), model.centre(*model.col_row(end))
        for k, v in zip(("x0", "y0", "x1", "y1"), (x0, y0, x1, y1), strict=True):
            trail[k].append(v)
    way: list[tuple[float, float]] = []
    shown = s.way_shown() if selected and step is Step.MOVE and legal else None
    if shown is not None:  # the way picked: its squares as a dotted line, the squares picked outlined
        way = [model.centre(*model.col_row(sq)) for sq in shown.squares]
        for sq in s.way:
            mark(sq, "#c4b5fd", "#7c3aed", 0.5, 2.5)
    for eid, sq in model.equipment_square.items():
        if not st.equipment[eid]:
            mark(sq, "#111827", "#111827", 0.85, 1.0)
    return {"counters": rects, "labels": labels, "where": where, "marks": marks, "costs": costs, "trail": trail,
            "way": way, "view": view}


def armed_after(s: KungFuSession, armed: tuple[str, str] | None,
                sides: Sides | None = None) -> tuple[str, str] | None:
    """The chit about to be played once the game has moved: an aimed answer's own, the only one there is, or
    the one chosen while it is still playable; none outside an attack, or on a page that does not act now."""
    step = s.state.step
    c = s.state.combat
    legal = s.legal() if (sides or Sides()).acting(s) is not None else []
    if step is Step.AIM and c is not None and c.answer and legal:
        return c.answer[0], c.answer[1]
    if step is Step.ATTACK and legal:
        options = {(a.figure, a.chit) for a in legal if isinstance(a, Attack)}
        if armed in options:
            return armed
        return next(iter(options)) if len(options) == 1 else None
    return None
