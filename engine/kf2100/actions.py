"""Kung Fu 2100's moves as value objects that print in the game's words and parse back.

>>> str(Attack("T1", "kick", "J3"))
'attack T1 kick J3'
>>> KFAction.parse("chits T1 fist+fist+kick") == Chits("T1", ("fist", "fist", "kick"))
True
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.core import Action
from engine.kf2100.data import CHIT_TECHNIQUES, TECHNIQUES, WEAPON_CHITS

SIDES = ("terminators", "clone master")
ENTRY_NAMES = ("door", "disposal", "loo")


def _fig(text: str) -> str:
    if not text or not text.isalnum() or not text[0].isalpha():
        raise ValueError(f"{text!r} is not a figure (like T1, J3, CM)")
    return text.upper()


def _square(text: str) -> str:
    text = text.lower()
    if len(text) < 2 or not text[0].isalpha() or not text[1:].isdigit():
        raise ValueError(f"{text!r} is not a square (like g2)")
    return text


def _chit(text: str) -> str:
    if text not in CHIT_TECHNIQUES and text not in WEAPON_CHITS:
        raise ValueError(f"{text!r} is not a chit ({', '.join(CHIT_TECHNIQUES + WEAPON_CHITS)})")
    return text


class KFAction(Action):
    """Base of every Kung Fu 2100 action; ``parse`` reads any of them."""

    __slots__ = ()

    @classmethod
    def parse(cls, text: str) -> KFAction:
        words = text.strip().split()
        if not words:
            raise ValueError("empty move")
        head, rest = words[0].lower(), words[1:]
        if head == "place" and len(rest) == 2:
            return Place(_fig(rest[0]), _square(rest[1]))
        if head == "move" and len(rest) == 2:
            return Move(_fig(rest[0]), _square(rest[1]))
        if head == "move" and len(rest) > 3 and rest[2] == "via":
            return Move(_fig(rest[0]), _square(rest[1]), tuple(_square(x) for x in rest[3:]))
        if head == "exit" and len(rest) == 1:
            return Exit(_fig(rest[0]))
        if head == "activate" and len(rest) == 1:
            return Activate(_fig(rest[0]))
        if head == "end" and not rest:
            return End()
        if head == "door" and len(rest) == 2 and rest[1] in ("fist", "kick"):
            return DoorAttack(_fig(rest[0]), rest[1])
        if head == "chits" and len(rest) == 2:
            return Chits(_fig(rest[0]), tuple(_chit(c) for c in rest[1].split("+")))
        if head == "lead" and " ".join(rest) in SIDES:
            return Lead(SIDES.index(" ".join(rest)))
        if head == "attack" and len(rest) == 3:
            return Attack(_fig(rest[0]), _chit(rest[1]), _fig(rest[2]))
        if head == "answer" and len(rest) == 2:
            return Answer(_fig(rest[0]), _chit(rest[1]))
        if head == "lose" and len(rest) == 2 and rest[1] in TECHNIQUES:
            return Lose(_fig(rest[0]), rest[1])
        if head == "d6" and len(rest) == 1 and rest[0].isdigit() and 1 <= int(rest[0]) <= 6:
            return Roll(int(rest[0]))
        if head == "deal" and len(rest) == 2:
            return Deal(rest[0], _square(rest[1]))
        if len(words) == 4 and words[1:3] == ["waits", "at"] and words[3] in ENTRY_NAMES:
            return Wait(_fig(words[0]), words[3])
        raise ValueError(f"cannot read {text!r}")


@dataclass(frozen=True, slots=True)
class Place(KFAction):
    """Clone Master set-up: put a counter face down on a square."""

    figure: str
    square: str

    def __str__(self) -> str:
        return f"place {self.figure} {self.square}"


@dataclass(frozen=True, slots=True)
class Wait(KFAction):
    """Terminator set-up: the way in this Terminator will use."""

    figure: str
    entry: str

    def __str__(self) -> str:
        return f"{self.figure} waits at {self.entry}"


@dataclass(frozen=True, slots=True)
class Move(KFAction):
    """Move one figure to one square, by the squares of ``via`` in order (``move T1 g6 via g3 g4``) or, without
    them, by its cheapest path. Counters pass through each other; the path decides which rooms wake."""

    figure: str
    square: str
    via: tuple[str, ...] = ()

    def __str__(self) -> str:
        if not self.via:
            return f"move {self.figure} {self.square}"
        via = " ".join(map(str, self.via)) if isinstance(self.via, (tuple, list)) else str(self.via)  # even malformed
        return f"move {self.figure} {self.square} via {via}"


@dataclass(frozen=True, slots=True)
class Exit(KFAction):
    """A Terminator leaves the lair through the entry square he stands on."""

    figure: str

    def __str__(self) -> str:
        return f"exit {self.figure}"


@dataclass(frozen=True, slots=True)
class Activate(KFAction):
    """The Clone Master turns a face-down counter face up."""

    figure: str

    def __str__(self) -> str:
        return f"activate {self.figure}"


@dataclass(frozen=True, slots=True)
class End(KFAction):
    """Finish the current phase, step or bonus move."""

    def __str__(self) -> str:
        return "end"


@dataclass(frozen=True, slots=True)
class DoorAttack(KFAction):
    """Spend a Fist or Kick chit on the armored front door (it breaks on 1-2)."""

    figure: str
    chit: str

    def __str__(self) -> str:
        return f"door {self.figure} {self.chit}"


@dataclass(frozen=True, slots=True)
class Chits(KFAction):
    """The chits one figure picks, secretly, for a combat (in canonical order)."""

    figure: str
    chits: tuple[str, ...]

    def __str__(self) -> str:
        chits = self.chits if isinstance(self.chits, (tuple, list)) else [self.chits]  # malformed: still prints
        return f"chits {self.figure} {'+'.join(map(str, chits))}"


@dataclass(frozen=True, slots=True)
class Lead(KFAction):
    """The Terminator player chooses which side plays the first chit (0 Terminators, 1 Clone Master)."""

    side: int

    def __str__(self) -> str:  # a malformed side prints as itself (the rules refuse it), never an IndexError
        return f"lead {SIDES[self.side] if self.side in (0, 1) and type(self.side) is int else repr(self.side)[:20]}"


@dataclass(frozen=True, slots=True)
class Attack(KFAction):
    """Play a chit of ``figure`` as an attack on ``target`` (a figure or a piece of equipment E1-E7)."""

    figure: str
    chit: str
    target: str

    def __str__(self) -> str:
        return f"attack {self.figure} {self.chit} {self.target}"


@dataclass(frozen=True, slots=True)
class Answer(KFAction):
    """Answer the attack with an unplayed chit of any own figure in the combat."""

    figure: str
    chit: str

    def __str__(self) -> str:
        return f"answer {self.figure} {self.chit}"


@dataclass(frozen=True, slots=True)
class Lose(KFAction):
    """The owner takes a hit as the loss of one level of this technique."""

    figure: str
    technique: str

    def __str__(self) -> str:
        return f"lose {self.figure} {self.technique}"


@dataclass(frozen=True, slots=True)
class Roll(KFAction):
    """A d6 (chance)."""

    value: int

    def __str__(self) -> str:
        return f"d6 {self.value}"


@dataclass(frozen=True, slots=True)
class Deal(KFAction):
    """Solo set-up (chance): which counter goes face down where, in the next room to get one."""

    counter: str
    square: str

    def __str__(self) -> str:
        return f"deal {self.counter} {self.square}"
