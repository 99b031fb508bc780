"""The DESIGN tables of Kung-Fu Zoo, read from the package's data files (never literals in the logic).

``constants.toml`` holds arena, dice, friction, restitution, flick limits, the 3-D arena ([arena3d]) and aim noise;
``faces.csv`` the faces with their points; ``abilities.csv`` the four teams' once-per-round abilities.
"""

from __future__ import annotations

import csv
import io
import math
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any


def _text(name: str) -> str:
    return resources.files("engine.zoo").joinpath(name).read_text(encoding="utf-8")


@cache
def constants() -> dict[str, Any]:
    """The whole constants table as nested dicts (cached; treat as read-only)."""
    return tomllib.loads(_text("constants.toml"))


@dataclass(frozen=True)
class Face:
    name: str
    axis: int  # 0, 1, 2 for the die's x (head/tail), y (sides), z (back/feet)
    sign: int
    points: int
    description: str


@cache
def faces() -> tuple[Face, ...]:
    rows = csv.DictReader(io.StringIO(_text("faces.csv")))
    return tuple(
        Face(r["face"], "xyz".index(r["axis"]), int(r["sign"]), int(r["points"]), r["description"]) for r in rows
    )


FACE_NAMES: tuple[str, ...] = tuple(f.name for f in faces())
"""head, tail, left, right, back, feet."""
FACE_UP = "head"
"""The face shown by a face-up animal (flickable from anywhere on a rail, 5 points)."""
STUNNED = "feet"
"""Feet-up: the animal is stunned."""


def face_points(face: str) -> int:
    for f in faces():
        if f.name == face:
            return f.points
    raise ValueError(f"no face {face!r}; faces are {', '.join(FACE_NAMES)}")


@dataclass(frozen=True)
class Ability:
    team: str
    letter: str
    name: str
    key: str
    timing: str
    text: str


@cache
def abilities() -> dict[str, Ability]:
    """Team name -> its ability."""
    rows = csv.DictReader(io.StringIO(_text("abilities.csv")))
    return {r["team"]: Ability(r["team"], r["letter"], r["ability"], r["key"], r["timing"], r["text"]) for r in rows}


TEAMS: tuple[str, ...] = tuple(abilities())
"""crocodile, elephant, gorilla, zebra."""


def team_of_letter(letter: str) -> str:
    for a in abilities().values():
        if a.letter == letter:
            return a.team
    raise ValueError(f"no team with letter {letter!r}")


@dataclass(frozen=True)
class Arena:
    """Geometry derived from the constants: the playfield is [0, size]^2, rails outside it."""

    size: float
    rail_width: float
    hole_radius: float
    hole_inset: float
    corner_keepout: float

    @property
    def holes(self) -> dict[str, tuple[float, float]]:
        s, d = self.size, self.hole_inset
        return {"SW": (d, d), "SE": (s - d, d), "NE": (s - d, s - d), "NW": (d, s - d)}

    def over_hole(self, x: float, y: float) -> str | None:
        for name, (hx, hy) in self.holes.items():
            if math.hypot(x - hx, y - hy) < self.hole_radius:
                return name
        return None


@cache
def arena() -> Arena:
    a = constants()["arena"]
    return Arena(a["size"], a["rail_width"], a["hole_diameter"] / 2, a["hole_inset"], a["corner_keepout"])
