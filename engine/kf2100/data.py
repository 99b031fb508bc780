"""Kung Fu 2100's data files: the lair map, unit values and Jelly sheet, the CRT and the scenarios.

Every DESIGN value of the reconstruction lives in these files so that anyone owning the original
rules can swap them in. The loader validates everything and names the file and line of any error.
"""

from __future__ import annotations

import csv
import io
import re
import tomllib
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

TECHNIQUES = ("fist", "kick", "mist", "monkey", "heart")
CHIT_TECHNIQUES = ("fist", "kick", "mist", "monkey")
WEAPON_CHITS = ("weapon", "spikes", "gun")
ANSWER_COLUMNS = ("fist", "kick", "mist", "monkey", "weapon", "none")
KINDS = ("wall", "floor", "door", "armored_door", "equipment")
ENTRIES = ("disposal", "loo")
INITIALS = {"S": "servant", "T": "technician", "J": "jelly"}


class DataError(ValueError):
    """A data file that breaks the format; the message names the file and line."""

    def __init__(self, source: str, line: int | None, message: str) -> None:
        where = f"{source}, line {line}" if line else source
        super().__init__(f"{where}: {message}")
        self.source, self.line = source, line


def square_name(col: int, row: int) -> str:
    """Board notation: column letter from the west, row number from the north (a1 is the top-left)."""
    return f"{chr(ord('a') + col)}{row + 1}"


def parse_square(text: str) -> tuple[int, int]:
    text = text.strip().lower()
    if len(text) < 2 or not text[0].isalpha() or not text[1:].isdigit():
        raise ValueError(f"{text!r} is not a square (a letter and a number, like g2)")
    return ord(text[0]) - ord("a"), int(text[1:]) - 1


# --- map ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Cell:
    kind: str
    room: str | None
    level: int
    entry: str | None = None
    equipment: str | None = None  # clone_bank / computer


@dataclass(frozen=True)
class Room:
    key: str
    name: str
    initials: frozenset[str]


@dataclass
class LairMap:
    width: int
    height: int
    cells: list[Cell]  # row-major
    rooms: dict[str, Room]
    equipment: dict[str, tuple[int, str]] = field(default_factory=dict)  # "E1" -> (square index, type)
    front_door: int = -1
    entries: dict[str, int] = field(default_factory=dict)  # "disposal"/"loo" -> square index


def _line_number(text: str, needle: str, default: int | None = None) -> int | None:
    for i, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return i
    return default


def parse_map(text: str, source: str = "map.txt") -> LairMap:
    """Read the map's [grid], [legend] and [rooms] sections, checking every character and room."""
    sections: dict[str, list[tuple[int, str]]] = {}
    current = None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip("\n")
        if current is None and (not line.strip() or line.startswith("#")):
            continue  # the header comment; inside sections '#' is the wall character
        if current in ("legend", "rooms") and not line.strip():
            continue
        stripped = line.strip()
        if stripped.startswith("[") and stripped.endswith("]"):
            current = stripped[1:-1]
            if current not in ("grid", "legend", "rooms"):
                raise DataError(source, number, f"unknown section [{current}]")
            if current in sections:
                raise DataError(source, number, f"section [{current}] appears twice")
            sections[current] = []
            continue
        if current is None:
            raise DataError(source, number, "text before the first section")
        if current == "grid" and not line.strip():
            continue
        sections[current].append((number, line))
    for name in ("grid", "legend", "rooms"):
        if name not in sections:
            raise DataError(source, None, f"missing section [{name}]")

    rooms: dict[str, Room] = {}
    for number, line in sections["rooms"]:
        parts = line.split(None, 2)
        if len(parts) < 3:
            raise DataError(source, number, "a room line is: key initials name")
        key, initials, name = parts
        letters = frozenset() if initials == "-" else frozenset(initials)
        bad = letters - INITIALS.keys()
        if bad:
            raise DataError(source, number, f"unknown set-up initial {''.join(sorted(bad))!r} (use S, T, J or -)")
        if key in rooms:
            raise DataError(source, number, f"room {key!r} is listed twice")
        rooms[key] = Room(key, name.strip(), letters)

    legend: dict[str, Cell] = {}
    for number, line in sections["legend"]:
        char, rest = line[0], line[1:].split()
        if len(rest) < 3:
            raise DataError(source, number, "a legend line is: char kind room level [extra]")
        kind, room, level_text, *extra = rest
        if kind not in KINDS:
            raise DataError(source, number, f"unknown kind {kind!r} (one of {', '.join(KINDS)})")
        if room != "-" and room not in rooms:
            raise DataError(source, number, f"room {room!r} is not in [rooms]")
        if level_text not in ("0", "1"):
            raise DataError(source, number, f"level must be 0 or 1, not {level_text!r}")
        entry = equipment = None
        for item in extra:
            if item.startswith("entry="):
                entry = item[6:]
                if entry not in ENTRIES or kind != "floor":
                    raise DataError(source, number, f"entry must be disposal or loo on a floor square: {item!r}")
            elif kind == "equipment" and item in ("clone_bank", "computer"):
                equipment = item
            else:
                raise DataError(source, number, f"unknown extra {item!r}")
        if kind == "equipment" and equipment is None:
            raise DataError(source, number, "equipment needs a type: clone_bank or computer")
        if char in legend:
            raise DataError(source, number, f"character {char!r} is defined twice")
        legend[char] = Cell(kind, None if room == "-" else room, int(level_text), entry, equipment)

    grid = sections["grid"]
    width = len(grid[0][1])
    cells: list[Cell] = []
    lair = LairMap(width, len(grid), cells, rooms)
    for row, (number, line) in enumerate(grid):
        if len(line) != width:
            raise DataError(source, number, f"grid row has {len(line)} squares, the first row has {width}")
        for col, char in enumerate(line):
            if char not in legend:
                raise DataError(source, number, f"character {char!r} at {square_name(col, row)} is not in [legend]")
            cell = legend[char]
            index = row * width + col
            if cell.kind == "equipment":
                if not char.isdigit():
                    raise DataError(source, number, f"equipment must be marked by a digit, not {char!r}")
                lair.equipment[f"E{char}"] = (index, cell.equipment or "")
            elif cell.kind == "armored_door":
                if lair.front_door >= 0:
                    raise DataError(source, number, "more than one armored door")
                if not (row in (0, len(grid) - 1) or col in (0, width - 1)):
                    raise DataError(source, number, "the armored door must be in the outer wall")
                lair.front_door = index
            if cell.entry:
                if cell.entry in lair.entries:
                    raise DataError(source, number, f"more than one {cell.entry} entry")
                lair.entries[cell.entry] = index
            cells.append(cell)
    if width > 26:
        raise DataError(source, grid[0][0], "at most 26 columns (they are lettered a-z)")
    for row in (0, len(grid) - 1):
        for col in range(width):
            if cells[row * width + col].kind in ("floor", "door"):
                raise DataError(source, grid[row][0], f"{square_name(col, row)} is open but on the map's edge")
    if lair.front_door < 0:
        raise DataError(source, None, "the map has no armored front door")
    for entry in ENTRIES:
        if entry not in lair.entries:
            raise DataError(source, None, f"the map has no {entry} entry")
    if sorted(lair.equipment) != [f"E{i}" for i in range(1, 8)]:
        raise DataError(source, None,
                        f"the lair needs the seven pieces of equipment 1-7, found {sorted(lair.equipment)}")
    lair.equipment = dict(sorted(lair.equipment.items()))
    return lair


# --- CRT ---------------------------------------------------------------------------------------

def parse_crt(text: str, source: str = "crt.csv") -> dict[str, dict[str, int]]:
    """attack -> answer column -> hit when the d6 is at or below this (0..6)."""
    reader = csv.reader(io.StringIO(text))
    rows = [(i, r) for i, r in enumerate(reader, 1) if r and not r[0].startswith("#")]
    if not rows:
        raise DataError(source, None, "empty table")
    header_line, header = rows[0]
    if tuple(h.strip() for h in header) != ("attack", *ANSWER_COLUMNS):
        raise DataError(source, header_line, f"header must be attack,{','.join(ANSWER_COLUMNS)}")
    table: dict[str, dict[str, int]] = {}
    for number, row in rows[1:]:
        if len(row) != len(header):
            raise DataError(source, number, f"expected {len(header)} fields, found {len(row)}")
        attack = row[0].strip()
        if attack not in (*CHIT_TECHNIQUES, *WEAPON_CHITS):
            raise DataError(source, number, f"unknown attack {attack!r}")
        if attack in table:
            raise DataError(source, number, f"attack {attack!r} appears twice")
        values = {}
        for column, cell in zip(ANSWER_COLUMNS, row[1:], strict=True):
            try:
                value = int(cell)
            except ValueError:
                raise DataError(source, number, f"{attack}/{column}: {cell!r} is not a whole number") from None
            if not 0 <= value <= 6:
                raise DataError(source, number, f"{attack}/{column}: {value} is not a d6 target 0-6")
            values[column] = value
        table[attack] = values
    missing = (set(CHIT_TECHNIQUES) | set(WEAPON_CHITS)) - table.keys()
    if missing:
        raise DataError(source, None, f"missing attack rows: {', '.join(sorted(missing))}")
    return table


# --- units -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class UnitType:
    key: str
    name: str
    side: str
    move: int
    chits: int
    weapon: str
    activation: str
    untrained: bool = False
    unlimited_range: bool = False
    bonus_move: int = 0


@dataclass(frozen=True)
class Weapon:
    key: str
    kind: str
    max_chits: int
    range_orthogonal: int = 1
    range_diagonal: int = 0


@dataclass
class Units:
    rules: dict[str, Any]
    weapons: dict[str, Weapon]
    types: dict[str, UnitType]
    terminators: dict[str, tuple[int, ...]]
    jellies: dict[str, tuple[tuple[int, ...], str]]


def _toml(text: str, source: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"at line (\d+)", str(exc))
        raise DataError(source, int(found.group(1)) if found else None, f"not valid TOML: {exc}") from None


def _need(table: dict, key: str, kind: type | tuple, text: str, source: str, where: str) -> Any:
    if key not in table:
        raise DataError(source, _line_number(text, where), f"{where}: missing {key!r}")
    value = table[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        line = _line_number(text, f"{key} =") or _line_number(text, where)
        raise DataError(source, line, f"{where}: {key} has the wrong type")
    return value


def _levels(value: Any, text: str, source: str, where: str, needle: str) -> tuple[int, ...]:
    if (
        not isinstance(value, list)
        or len(value) != len(TECHNIQUES)
        or not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 9 for v in value)
    ):
        message = f"{where}: levels must be {len(TECHNIQUES)} whole numbers 0-9"
        raise DataError(source, _line_number(text, needle), message)
    return tuple(value)


def parse_units(text: str, source: str = "units.toml") -> Units:
    data = _toml(text, source)
    if tuple(data.get("techniques", ())) != TECHNIQUES:
        raise DataError(source, _line_number(text, "techniques"), f"techniques must be {list(TECHNIQUES)}")
    rules = data.get("rules", {})
    for key in ("door_breaks_at_most", "disposal_per_phase", "loo_per_phase",
                "elevation_cost", "recovery_at_most"):
        value = _need(rules, key, int, text, source, "[rules]")
        if not 0 <= value <= 6:
            raise DataError(source, _line_number(text, f"{key} ="), f"{key} = {value} is out of range 0-6")
    weapons: dict[str, Weapon] = {}
    for key, w in data.get("weapons", {}).items():
        where = f"[weapons.{key}]"
        if key not in WEAPON_CHITS:
            raise DataError(source, _line_number(text, where), f"unknown weapon {key!r}")
        kind = _need(w, "kind", str, text, source, where)
        if kind not in ("melee", "missile"):
            raise DataError(source, _line_number(text, where), f"{where}: kind must be melee or missile")
        weapons[key] = Weapon(key, kind, _need(w, "max_chits", int, text, source, where),
                              w.get("range_orthogonal", 1), w.get("range_diagonal", 0))
    types: dict[str, UnitType] = {}
    for key, t in data.get("types", {}).items():
        where = f"[types.{key}]"
        weapon = _need(t, "weapon", str, text, source, where)
        if weapon and weapon not in weapons:
            raise DataError(source, _line_number(text, where), f"{where}: unknown weapon {weapon!r}")
        side = _need(t, "side", str, text, source, where)
        if side not in ("terminators", "clone_master"):
            raise DataError(source, _line_number(text, where), f"{where}: side must be terminators or clone_master")
        types[key] = UnitType(
            key, _need(t, "name", str, text, source, where), side, _need(t, "move", int, text, source, where),
            _need(t, "chits", int, text, source, where), weapon, _need(t, "activation", str, text, source, where),
            bool(t.get("untrained", False)), bool(t.get("unlimited_range", False)), int(t.get("bonus_move", 0)),
        )
    for key in ("terminator", "jelly", "clone_master", "armed_technician", "unarmed_technician", "servant",
                "constabulary"):
        if key not in types:
            raise DataError(source, None, f"missing unit type [types.{key}]")
    terminators = {k: _levels(v, text, source, f"Terminator {k}", f"{k} =")
                   for k, v in data.get("terminators", {}).items()}
    jellies = {}
    for k, j in data.get("jellies", {}).items():
        where = f"[jellies.{k}]"
        weapon = j.get("weapon", "")
        if weapon and weapon not in weapons:
            raise DataError(source, _line_number(text, where), f"{where}: unknown weapon {weapon!r}")
        jellies[k] = (_levels(j.get("levels"), text, source, where, where), weapon)
    return Units(rules, weapons, types, terminators, jellies)


# --- scenarios ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Scenario:
    key: str
    title: str
    turns: int
    setup: str
    terminators: tuple[str, ...]
    jellies: tuple[str, ...]
    armed_technicians: int
    unarmed_technicians: int
    servants: int
    constabulary_from_turn: int
    constabulary_per_turn: int
    constabulary_total: int
    solo: dict[str, Any] = field(default_factory=dict)


@dataclass
class Scenarios:
    grades: dict[str, float]
    scenarios: dict[str, Scenario]
    solo_points: dict[str, int]


GRADES = ("terminator_total_victory", "terminator_victory", "draw", "clone_master_victory",
          "clone_master_total_victory")


def parse_scenarios(text: str, units: Units, lair: LairMap, source: str = "scenarios.toml") -> Scenarios:
    data = _toml(text, source)
    grades = data.get("grades", {})
    for g in GRADES:
        value = _need(grades, g, (int, float), text, source, "[grades]")
        if not -1 <= value <= 1:
            raise DataError(source, _line_number(text, f"{g} ="), f"grade {g} must lie in -1..1")
    scenarios = {}
    for key, s in data.get("scenarios", {}).items():
        where = f"[scenarios.{key}]"
        ints = {k: _need(s, k, int, text, source, where) for k in (
            "turns", "armed_technicians", "unarmed_technicians", "servants", "constabulary_from_turn",
            "constabulary_per_turn", "constabulary_total")}
        setup = _need(s, "setup", str, text, source, where)
        if setup not in ("hidden", "solo"):
            raise DataError(source, _line_number(text, where), f"{where}: setup must be hidden or solo")
        terms = tuple(_need(s, "terminators", list, text, source, where))
        jellies = tuple(_need(s, "jellies", list, text, source, where))
        for t in terms:
            if t not in units.terminators:
                raise DataError(source, _line_number(text, where), f"{where}: no Terminator {t!r} on the unit sheet")
        for j in jellies:
            if j not in units.jellies:
                raise DataError(source, _line_number(text, where), f"{where}: no Jelly {j!r} on the Jelly sheet")
        if not 1 <= ints["turns"] <= 50:
            raise DataError(source, _line_number(text, "turns ="), f"{where}: turns must be 1-50")
        solo: dict[str, Any] = {}
        if setup == "solo":
            for k in ("terminator_square", "clone_master_square", "jelly_square", "face_up_jelly"):
                solo[k] = _need(s, k, str, text, source, where)
            for k in ("per_room", "escape_levels_at_most", "escape_from_turn"):
                solo[k] = _need(s, k, int, text, source, where)
            for k in ("terminator_square", "clone_master_square", "jelly_square"):
                try:
                    col, row = parse_square(solo[k])
                except ValueError as exc:
                    raise DataError(source, _line_number(text, f"{k} ="), str(exc)) from None
                if not (0 <= col < lair.width and 0 <= row < lair.height) or \
                        lair.cells[row * lair.width + col].kind != "floor":
                    raise DataError(source, _line_number(text, f"{k} ="), f"{k} {solo[k]} is not a floor square")
            if solo["face_up_jelly"] not in jellies:
                raise DataError(source, _line_number(text, "face_up_jelly"), "the face-up Jelly must be in the mix")
        scenarios[key] = Scenario(key, _need(s, "title", str, text, source, where), ints["turns"], setup, terms,
                                  jellies, ints["armed_technicians"], ints["unarmed_technicians"], ints["servants"],
                                  ints["constabulary_from_turn"], ints["constabulary_per_turn"],
                                  ints["constabulary_total"], solo)
    points = data.get("solo_points", {})
    for k in ("clone_master", "equipment", "everything_bonus", "jelly", "terminator_killed", "terminator_recaptured"):
        _need(points, k, int, text, source, "[solo_points]")
    return Scenarios({g: float(grades[g]) for g in GRADES}, scenarios, dict(points))


# --- everything ----------------------------------------------------------------------------------

@dataclass
class RuleBook:
    lair: LairMap
    crt: dict[str, dict[str, int]]
    units: Units
    scenarios: Scenarios


def _read(name: str) -> str:
    return resources.files("engine.kf2100").joinpath("data", name).read_text(encoding="utf-8")


def load_rulebook(texts: dict[str, str] | None = None) -> RuleBook:
    """Parse the four data files (or replacements given as texts by file name)."""
    texts = texts or {}
    get = lambda name: texts[name] if name in texts else _read(name)  # noqa: E731
    lair = parse_map(get("map.txt"))
    crt = parse_crt(get("crt.csv"))
    units = parse_units(get("units.toml"))
    scenarios = parse_scenarios(get("scenarios.toml"), units, lair)
    return RuleBook(lair, crt, units, scenarios)


@cache
def rulebook() -> RuleBook:
    """The packaged rules, parsed once."""
    return load_rulebook()
