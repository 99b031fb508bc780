"""Kung Fu 2100 set-up: the Clone Master's face-down counters, and the Solo deal.
"""

from __future__ import annotations

from fractions import Fraction

from engine.core.protocol import Action
from engine.kf2100.actions import (
    Deal,
)
from engine.kf2100.figures import (
    Figure,
)
from engine.kf2100.state_core import StateCore


class SetupRules(StateCore):
    """Set-up: where a counter may start, and the Solo deal."""

    __slots__ = ()

    # --- set-up -----------------------------------------------------------------------------------------
    def setup_squares(self, f: Figure) -> list[int]:
        """Where a counter may start: its rooms' initials allow it, empty, never next to the armored door."""
        board = self.board
        taken = self.occupied()
        door_adjacent = set(board.neighbours[board.front_door])
        letter = {"servant": "S", "unarmed_technician": "T", "armed_technician": "T", "jelly": "J"}.get(f.kind)
        out = []
        for sq, cell in enumerate(board.cells):
            if cell.kind != "floor" or sq in taken or sq in door_adjacent:
                continue
            if letter is not None:
                if cell.room is None or letter not in board.lair.rooms[cell.room].initials:
                    continue
            out.append(sq)
        return out

    def _deal_outcomes(self) -> list[tuple[Action, Fraction]]:
        pool = [f for f in self.figs.values() if f.status == "unplaced" and f.pos < 0 and f.kind != "constabulary"]
        counts: dict[str, int] = {}
        for f in pool:
            key = f.id if f.kind == "jelly" else f.kind
            counts[key] = counts.get(key, 0) + 1
        total = len(pool)
        return [(Deal(k), Fraction(n, total)) for k, n in sorted(counts.items())]

    def _deal(self, counter: str) -> None:
        sq = self.deal_slots.pop(0)
        pool = [f for f in self.figs.values() if f.status == "unplaced" and f.pos < 0 and f.kind != "constabulary"]
        f = next(f for f in pool if f.id == counter or (f.kind == counter and f.kind != "jelly"))
        f.pos, f.status = sq, "active"
        if not self.deal_slots:
            self._begin_phase("move1")
