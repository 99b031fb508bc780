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

    def deal_squares(self, room: str) -> list[int]:
        """Solo: the squares of ``room`` a counter may be dealt to: free, never next to the armored door (as in
        every set-up) and never on an entry square (our ruling: the Terminator's ways out start clear)."""
        board = self.board
        taken = self.occupied()
        barred = set(board.neighbours[board.front_door]) | set(board.entry_squares.values())
        return [sq for sq in board.rooms[room] if sq not in taken and sq not in barred]

    def _deal_outcomes(self) -> list[tuple[Action, Fraction]]:
        """Solo set-up: the other counters are "randomly placed face down, two to a room" (seed): a counter
        drawn from the pool, on a square drawn from the room's free squares, each equally likely."""
        pool = [f for f in self.figs.values() if f.status == "unplaced" and f.pos < 0 and f.kind != "constabulary"]
        counts: dict[str, int] = {}
        for f in pool:
            key = f.id if f.kind == "jelly" else f.kind
            counts[key] = counts.get(key, 0) + 1
        total = len(pool)
        squares = self.deal_squares(self.deal_rooms[0])
        return [(Deal(k, self.name(sq)), Fraction(n, total * len(squares)))
                for k, n in sorted(counts.items()) for sq in squares]

    def _deal(self, counter: str, square: str) -> None:
        self.deal_rooms.pop(0)
        pool = [f for f in self.figs.values() if f.status == "unplaced" and f.pos < 0 and f.kind != "constabulary"]
        f = next(f for f in pool if f.id == counter or (f.kind == counter and f.kind != "jelly"))
        f.pos, f.status = self.board.square(square), "active"
        if not self.deal_rooms:
            self._begin_phase("move1")
