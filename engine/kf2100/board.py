"""The lair as a graph of squares: movement costs, line of sight and missile reach.

Movement is orthogonal, one point a square plus the elevation cost when a move crosses between the
two floors (waived for a Terminator or Jelly with an undamaged Monkey Soul). Figures never block
movement (counters pass through each other) and never block line of sight: only terrain does.
"""

from __future__ import annotations

import heapq
from collections import deque
from fractions import Fraction
from functools import cache

from engine.kf2100.data import LairMap, RuleBook, parse_square, rulebook, square_name


class Board:
    """Geometry of one lair map; everything here is a pure function of the map."""

    def __init__(self, lair: LairMap, elevation_cost: int) -> None:
        self.lair = lair
        self.width, self.height = lair.width, lair.height
        self.cells = lair.cells
        self.elevation_cost = elevation_cost
        self.names = [square_name(i % self.width, i // self.width) for i in range(len(self.cells))]
        self.index = {n: i for i, n in enumerate(self.names)}
        self.front_door = lair.front_door
        self.entries = dict(lair.entries)
        self.entry_squares = {**self.entries, "door": lair.front_door}
        self.equipment_at = {sq: eid for eid, (sq, _) in lair.equipment.items()}
        self.rooms: dict[str, list[int]] = {}
        for i, cell in enumerate(self.cells):
            if cell.kind == "floor" and cell.room:
                self.rooms.setdefault(cell.room, []).append(i)
        self.neighbours: list[tuple[int, ...]] = []
        for i in range(len(self.cells)):
            col, row = i % self.width, i // self.width
            out = []
            for dc, dr in ((0, -1), (1, 0), (0, 1), (-1, 0)):
                c, r = col + dc, row + dr
                if 0 <= c < self.width and 0 <= r < self.height:
                    out.append(r * self.width + c)
            self.neighbours.append(tuple(out))
        self._los: dict[tuple[int, int], bool] = {}
        self._dist: dict[int, dict[int, int]] = {}
        self._reach: dict[tuple[int, int, bool, bool, int], dict[int, tuple[int, int]]] = {}

    # --- squares -------------------------------------------------------------------------------
    def square(self, name: str) -> int:
        """The index of a square named like ``g2``; ValueError if it is off the map."""
        col, row = parse_square(name)
        if not (0 <= col < self.width and 0 <= row < self.height):
            raise ValueError(f"{name} is off the map")
        return row * self.width + col

    def room(self, i: int) -> str | None:
        c = self.cells[i]
        return c.room if c.kind == "floor" else None

    def is_floor(self, i: int) -> bool:
        """A square a figure may stand on (floor or an open door gap)."""
        return self.cells[i].kind in ("floor", "door")

    def open_to(self, i: int, door_open: bool) -> bool:
        kind = self.cells[i].kind
        return kind in ("floor", "door") or (kind == "armored_door" and door_open)

    def adjacent(self, a: int, b: int) -> bool:
        return b in self.neighbours[a]

    def level(self, i: int) -> int:
        return self.cells[i].level

    # --- movement --------------------------------------------------------------------------------
    def step_cost(self, a: int, b: int, monkey: bool) -> int:
        if monkey or self.cells[a].level == self.cells[b].level:
            return 1
        return 1 + self.elevation_cost

    def reachable(
        self, start: int, points: int, monkey: bool, door_open: bool, start_cost: int = 0
    ) -> dict[int, tuple[int, int]]:
        """Every square within ``points`` of ``start``: square -> (cost, previous square).

        ``start_cost`` is what it took to reach ``start`` (1 when stepping in from outside). The
        result is cached and shared, so callers must not change it.
        """
        key = (start, points, monkey, door_open, start_cost)
        cached = self._reach.get(key)
        if cached is not None:
            return cached  # shared: callers only read it
        if len(self._reach) > 100_000:
            self._reach.clear()
        best: dict[int, tuple[int, int]] = {start: (start_cost, -1)}
        heap = [(start_cost, start)]
        while heap:
            cost, sq = heapq.heappop(heap)
            if cost > best[sq][0]:
                continue
            for nb in self.neighbours[sq]:
                if not self.open_to(nb, door_open):
                    continue
                c = cost + self.step_cost(sq, nb, monkey)
                if c <= points and (nb not in best or c < best[nb][0]):
                    best[nb] = (c, sq)
                    heapq.heappush(heap, (c, nb))
        self._reach[key] = best
        return best

    @staticmethod
    def path(tree: dict[int, tuple[int, int]], end: int) -> list[int]:
        out = [end]
        while tree[out[-1]][1] >= 0:
            out.append(tree[out[-1]][1])
        return out[::-1]

    def walking_distance(self, a: int) -> dict[int, int]:
        """Steps from ``a`` to every square (through the front door too), ignoring elevation and figures."""
        if a not in self._dist:
            dist = {a: 0}
            queue = deque([a])
            while queue:
                sq = queue.popleft()
                for nb in self.neighbours[sq]:
                    if nb not in dist and self.open_to(nb, True):
                        dist[nb] = dist[sq] + 1
                        queue.append(nb)
            self._dist[a] = dist
        return self._dist[a]

    # --- line of sight and missiles ----------------------------------------------------------------
    def blocks_sight(self, i: int) -> bool:
        kind = self.cells[i].kind
        return kind in ("wall", "armored_door")

    def line_of_sight(self, a: int, b: int) -> bool:
        """Centre-to-centre line: blocked when it passes through the inside of a wall square, or
        squeezes through the point where two walls meet corner to corner. Grazing a wall's edge or a
        single corner does not block. Symmetric, and never blocked by figures."""
        key = (a, b) if a <= b else (b, a)
        if key not in self._los:
            self._los[key] = self._compute_los(*key)
        return self._los[key]

    def _compute_los(self, a: int, b: int) -> bool:
        w = self.width
        ax, ay, bx, by = a % w, a // w, b % w, b // w
        dx, dy = bx - ax, by - ay
        eps = 1e-9
        for y in range(min(ay, by), max(ay, by) + 1):
            for x in range(min(ax, bx), max(ax, bx) + 1):
                i = y * w + x
                if i in (a, b) or not self.blocks_sight(i):
                    continue
                lo, hi = 0.0, 1.0
                for start, delta, centre in ((ax, dx, x), (ay, dy, y)):
                    if delta == 0:
                        if abs(start - centre) >= 0.5 - eps:
                            lo, hi = 1.0, 0.0
                        continue
                    t1, t2 = (centre - 0.5 - start) / delta, (centre + 0.5 - start) / delta
                    lo, hi = max(lo, min(t1, t2)), min(hi, max(t1, t2))
                if hi - lo > eps:
                    return False
        if dx and dy:  # lattice corners the line passes exactly through
            for m in range(min(ax, bx), max(ax, bx)):
                yc = ay + Fraction(2 * m + 1 - 2 * ax, 2 * dx) * dy
                if (2 * yc).denominator != 1 or (2 * yc).numerator % 2 == 0:
                    continue
                x0, y0 = m, int(yc - Fraction(1, 2))
                # The line crosses between one diagonal pair; the other pair, both walls, closes the gap.
                pair = [(x0 + 1, y0), (x0, y0 + 1)] if dx * dy > 0 else [(x0, y0), (x0 + 1, y0 + 1)]
                if all(self.blocks_sight(yy * w + xx) for xx, yy in pair):
                    return False
        return True

    def in_missile_range(self, a: int, b: int, rng_orth: int, rng_diag: int, unlimited: bool) -> bool:
        """Orthogonal up to ``rng_orth`` or diagonal up to ``rng_diag`` squares (any distance when
        ``unlimited``), always with line of sight. Missile fire is orthogonal or diagonal whatever the range
        (seed): the Local Constabulary's unlimited range is along a row, a column or a diagonal, never at a
        knight's-move angle."""
        if a == b:
            return False
        w = self.width
        dx, dy = abs(a % w - b % w), abs(a // w - b // w)
        straight, diagonal = dx == 0 or dy == 0, dx == dy
        if not (straight or diagonal):
            return False
        if not unlimited and max(dx, dy) > (rng_orth if straight else rng_diag):
            return False
        return self.line_of_sight(a, b)


def board_of(book: RuleBook) -> Board:
    return Board(book.lair, book.units.rules["elevation_cost"])


@cache
def standard_board() -> Board:
    """The packaged map's board, built once."""
    return board_of(rulebook())
