"""Kung Fu 2100's pieces: the sides, phases and statuses, a ``Figure`` (one counter) and a ``Combat`` (one
chit exchange and where it stands).
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Any

from engine.kf2100.actions import (
    Roll,
)
from engine.kf2100.data import CHIT_TECHNIQUES, TECHNIQUES

TERMINATORS, CLONE_MASTER = 0, 1
PLAYER_NAMES = ("Terminators", "Clone Master")
HEART = TECHNIQUES.index("heart")
MONKEY = TECHNIQUES.index("monkey")
MELEE_CHITS = (*CHIT_TECHNIQUES, "weapon")
PHASES = ("setup", "entry", "move1", "combat1", "move2", "cm_move", "combat2", "recovery", "over")
PHASE_TITLES = {
    "setup": "Clone Master set-up", "entry": "Terminator set-up", "move1": "Terminator move I",
    "combat1": "Combat I", "move2": "Terminator move II", "cm_move": "Clone Master move",
    "combat2": "Combat II", "recovery": "Recovery", "over": "Game over",
}
STATUSES = ("unplaced", "waiting", "active", "unconscious", "dead", "escaped")
D6 = [(Roll(v), Fraction(1, 6)) for v in range(1, 7)]


class Figure:
    """One counter. Levels are current ability levels in TECHNIQUES order."""

    __slots__ = ("entry", "face_up", "id", "kind", "levels", "mp", "pos", "start", "status", "weapon")

    def __init__(self, fid: str, kind: str, levels: tuple[int, ...] = (0, 0, 0, 0, 0), weapon: str = "") -> None:
        self.id, self.kind, self.weapon = fid, kind, weapon
        self.start = tuple(levels)
        self.levels = list(levels)
        self.pos = -1
        self.status = "unplaced"
        self.face_up = False
        self.entry = ""
        self.mp = 0

    def copy(self) -> Figure:
        f = Figure.__new__(Figure)
        f.id, f.kind, f.weapon, f.start = self.id, self.kind, self.weapon, self.start
        f.levels, f.pos, f.status, f.face_up, f.entry, f.mp = list(self.levels), self.pos, self.status, \
            self.face_up, self.entry, self.mp
        return f

    @property
    def side(self) -> int:
        return TERMINATORS if self.kind == "terminator" else CLONE_MASTER

    @property
    def on_board(self) -> bool:
        return self.status in ("active", "unconscious")

    @property
    def conscious(self) -> bool:
        return self.status == "active"

    def combat_levels(self) -> int:
        return sum(self.levels[:HEART])

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "weapon": self.weapon, "start": list(self.start),
                "levels": list(self.levels), "pos": self.pos, "status": self.status, "face_up": self.face_up,
                "entry": self.entry, "mp": self.mp}


class Combat:
    """One combat of a combat phase and where its chit exchange stands."""

    __slots__ = ("answer", "attack", "chits", "members", "need", "pending_loss", "step", "to_pick", "turn",
                 "untrained")

    def __init__(self, members: list[str]) -> None:
        self.members = members            # figure ids of both sides and equipment ids, sorted
        self.to_pick: list[str] = []      # figures still to choose chits, Terminators first
        self.chits: dict[str, list[str]] = {}
        self.step = "pick"                # pick, lead, attack, answer, roll, loss, aim, untrained, done
        self.turn = TERMINATORS           # the side to play a fresh attack chit
        self.attack: tuple[str, str, str] | None = None   # figure, chit, target
        self.answer: tuple[str, str] | None = None        # figure, chit (None: answered on None)
        self.need = 0
        self.pending_loss = ""            # the figure that must choose a level to lose
        self.untrained: list[tuple[str, int]] = []        # (target, number of untrained attackers)

    def copy(self) -> Combat:
        c = Combat.__new__(Combat)
        c.members, c.to_pick = list(self.members), list(self.to_pick)
        c.chits = {k: list(v) for k, v in self.chits.items()}
        c.step, c.turn, c.attack, c.answer, c.need = self.step, self.turn, self.attack, self.answer, self.need
        c.pending_loss, c.untrained = self.pending_loss, list(self.untrained)
        return c

    def to_dict(self) -> dict[str, Any]:
        return {"members": list(self.members), "to_pick": list(self.to_pick),
                "chits": {k: list(v) for k, v in self.chits.items()}, "step": self.step, "turn": self.turn,
                "attack": list(self.attack) if self.attack else None,
                "answer": list(self.answer) if self.answer else None, "need": self.need,
                "pending_loss": self.pending_loss, "untrained": [list(u) for u in self.untrained]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Combat:
        c = cls([str(m) for m in d["members"]])
        c.to_pick = [str(x) for x in d["to_pick"]]
        c.chits = {str(k): [str(x) for x in v] for k, v in d["chits"].items()}
        c.step, c.turn, c.need, c.pending_loss = str(d["step"]), int(d["turn"]), int(d["need"]), str(d["pending_loss"])
        c.attack = tuple(str(x) for x in d["attack"]) if d["attack"] else None  # type: ignore[assignment]
        c.answer = tuple(str(x) for x in d["answer"]) if d["answer"] else None  # type: ignore[assignment]
        c.untrained = [(str(t), int(n)) for t, n in d["untrained"]]
        if c.step not in ("pick", "lead", "attack", "answer", "roll", "loss", "aim", "untrained", "done"):
            raise ValueError(f"unknown combat step {c.step!r}")
        return c


def chit_multisets(options: dict[str, int], n: int) -> list[tuple[str, ...]]:
    """Every way to pick ``n`` chits (order ignored) with at most ``options[c]`` of chit ``c``."""
    pool = [c for c, k in options.items() for _ in range(k)]
    return sorted(set(itertools.combinations(pool, n)))
