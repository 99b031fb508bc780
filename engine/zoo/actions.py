"""Kung-Fu Zoo moves as value objects that print to text and parse back.

Notation (player numbers are 1-based in text):

* ``flick E2 from S-dot face=head dir=12.5 speed=1.4``: flick Elephant 2 from the midpoint of the south
  rail, set head-up, 12.5 degrees anticlockwise from the inward normal, at 1.4 m/s;
* ``flick C1 from W@95.0 face=back dir=-20.0 speed=0.8 ability``: from 95 mm along the west rail (from its
  south end; the south and north rails run from their west end), using Crocodile's Ambush;
* ``flick E3 from here dir=270.0 speed=1.0 ability``: Elephant's Trunk Shot, from where it lies, ``dir``
  being an absolute heading (0 = east, anticlockwise);
* ``flick E2 from S-dot face=head dir=0.0 speed=1.4 strike=0.8``: struck high on its back face (the strike
  height control, 0 = low, a push that slides, to 1 = high, topspin that tumbles; without it the constants'
  default strike);
* ``place Z2 at 120.0,80.5 face=head``: set an animal down in the arena;
* ``ability chest-pound G2`` / ``ability dust-kick P2``: a team ability that does not flick;
* ``first P2``: who starts the round; ``pass``: decline an extra flick.

Directions and speeds are continuous: any in-range value is a legal flick. ``legal_actions`` lists a
discretised, representative subset only (see ``ZooState.legal_actions``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from engine.core import Action


def _num(x: float) -> str:
    """Shortest text that reads back to the same float (a malformed value, which the rules refuse, as itself)."""
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return repr(float(x))
    return repr(x)[:20]


@dataclass(frozen=True, slots=True)
class Flick(Action):
    die: str
    rail: str  # "N", "E", "S", "W" or "here"
    along: float | None  # mm along the rail; None for the dot (midpoint) or "here"
    face: str | None  # the face set up before flicking; None when flicking from where it lies
    direction: float  # degrees
    speed: float  # m/s
    ability: bool = False
    strike: float | None = None  # the strike height control in [0, 1]; None: the constants' default

    @property
    def spot(self) -> str:
        if self.rail == "here":
            return "here"
        return f"{self.rail}-dot" if self.along is None else f"{self.rail}@{_num(self.along)}"

    @property
    def on_dot(self) -> bool:
        return self.rail != "here" and self.along is None

    def __str__(self) -> str:
        text = f"flick {self.die} from {self.spot}"
        if self.face is not None:
            text += f" face={self.face}"
        text += f" dir={_num(self.direction)} speed={_num(self.speed)}"
        if self.strike is not None:
            text += f" strike={_num(self.strike)}"
        return text + (" ability" if self.ability else "")

    def with_aim(self, direction: float, speed: float) -> Flick:
        return Flick(self.die, self.rail, self.along, self.face, float(direction), float(speed), self.ability,
                     self.strike)

    def with_strike(self, strike: float | None) -> Flick:
        return Flick(self.die, self.rail, self.along, self.face, self.direction, self.speed, self.ability, strike)


@dataclass(frozen=True, slots=True)
class Place(Action):
    die: str
    x: float
    y: float
    face: str

    def __str__(self) -> str:
        return f"place {self.die} at {_num(self.x)},{_num(self.y)} face={self.face}"


@dataclass(frozen=True, slots=True)
class UseAbility(Action):
    key: str  # "chest-pound" or "dust-kick"
    target: str  # a die (G2) or a player (P2)

    def __str__(self) -> str:
        return f"ability {self.key} {self.target}"


@dataclass(frozen=True, slots=True)
class ChooseFirst(Action):
    player: int  # 0-based

    def __str__(self) -> str:  # a malformed player prints as itself (the rules refuse it), never a TypeError
        return f"first P{self.player + 1}" if type(self.player) is int else f"first {repr(self.player)[:20]}"


@dataclass(frozen=True, slots=True)
class Pass(Action):
    def __str__(self) -> str:
        return "pass"


_DIE = r"[A-Z][1-4]"
_FLOAT = r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)"
_FLICK = re.compile(
    rf"flick (?P<die>{_DIE}) from (?:(?P<here>here)|(?P<rail>[NESW])(?:-(?P<dot>dot)|@(?P<along>{_FLOAT})))"
    rf"(?: face=(?P<face>[a-z]+))? dir=(?P<dir>{_FLOAT}) speed=(?P<speed>{_FLOAT})"
    rf"(?: strike=(?P<strike>{_FLOAT}))?(?P<ability> ability)?"
)
_PLACE = re.compile(rf"place (?P<die>{_DIE}) at (?P<x>{_FLOAT}),(?P<y>{_FLOAT}) face=(?P<face>[a-z]+)")
_ABILITY = re.compile(r"ability (?P<key>[a-z-]+) (?P<target>[A-Z][1-4])")
_FIRST = re.compile(r"first P(?P<p>[1-4])")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is not a finite number")
    return value


def parse(text: str) -> Action:
    """Read a move in the notation above; ``ValueError`` says what could not be read."""
    t = " ".join(str(text).split())
    if t == "pass":
        return Pass()
    if m := _FLICK.fullmatch(t):
        here = m["here"] is not None
        return Flick(
            die=m["die"],
            rail="here" if here else m["rail"],
            along=None if here or m["dot"] else _finite(m["along"]),
            face=m["face"],
            direction=_finite(m["dir"]),
            speed=_finite(m["speed"]),
            ability=m["ability"] is not None,
            strike=None if m["strike"] is None else _finite(m["strike"]),
        )
    if m := _PLACE.fullmatch(t):
        return Place(m["die"], _finite(m["x"]), _finite(m["y"]), m["face"])
    if m := _ABILITY.fullmatch(t):
        return UseAbility(m["key"], m["target"])
    if m := _FIRST.fullmatch(t):
        return ChooseFirst(int(m["p"]) - 1)
    raise ValueError(
        "expected 'flick <die> from <rail>-dot|<rail>@<mm>|here [face=<face>] dir=<deg> speed=<m/s> [strike=<0-1>] "
        "[ability]', "
        "'place <die> at <x>,<y> face=<face>', 'ability <name> <target>', 'first P<n>' or 'pass'"
    )


class ZooAction(Action):
    """The game's action type: ``ZooAction.parse(text)`` reads any Kung-Fu Zoo move."""

    parse = staticmethod(parse)
