"""Kung Fu 2100 movement: paths and their costs, entries and exits, rooms that wake, activation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.core.protocol import Action
from engine.kf2100.actions import (
    Move,
)
from engine.kf2100.board import Board
from engine.kf2100.figures import (
    CLONE_MASTER,
    TERMINATORS,
    Figure,
)
from engine.kf2100.state_setup import SetupRules

BLOCKED = {"wall": "a wall", "equipment": "vital equipment"}
"""What a square no one may walk onto is, in words (else the closed armored door)."""


@dataclass(frozen=True, slots=True)
class Way:
    """A way a figure would walk now: its squares (where it stands, or the entry square it steps onto, first),
    what they cost, the points it has, and the rooms whose face-down counters it would turn up. A page shows it
    while the player picks the way; :meth:`move` is the action that walks it."""

    figure: str
    squares: tuple[str, ...]
    cost: int
    points: int
    wakes: tuple[str, ...]

    def move(self) -> Move:
        """The move along this way (its inner squares as ``via``; a single step needs none)."""
        return Move(self.figure, self.squares[-1], self.squares[1:-1])


class MovementRules(SetupRules):
    """Movement, the ways in and out, and activation."""

    __slots__ = ()

    # --- movement ----------------------------------------------------------------------------------------
    def move_tree(self, f: Figure, points: int) -> dict[int, tuple[int, int]]:
        """Cheapest paths for ``f`` with ``points`` to spend (from outside when waiting at an entry)."""
        board = self.board
        if points <= 0:
            return {}
        door_open = self.door_broken or f.kind == "constabulary"
        if f.status == "waiting":
            if not self._entry_open(f):
                return {}
            start = board.entry_squares[f.entry]
            tree = board.reachable(start, points, self.can_monkey(f), door_open, start_cost=1)
        elif f.status == "active" and (f.side == TERMINATORS or f.face_up):
            tree = board.reachable(f.pos, points, self.can_monkey(f), door_open)
        else:
            return {}
        return tree

    def reachable(self, fid: str) -> dict[str, int]:
        """Squares the figure may end its move on now, with their movement cost."""
        f = self.figs[fid]
        bonus = bool(self.bonus_mp) and fid == "CM"
        points = self.bonus_mp if bonus else f.mp
        tree = self.move_tree(f, points)
        return {self.name(sq): tree[sq][0] for sq in self._ends(f, tree, bonus)}

    def _moves(self, f: Figure, points: int, bonus: bool = False) -> list[Action]:
        if points <= 0 or f.status not in ("active", "waiting"):
            return []
        if f.side == CLONE_MASTER and not f.face_up:
            return []
        return [Move(f.id, self.name(sq)) for sq in self._ends(f, self.move_tree(f, points), bonus)]

    # --- stacking: "only one counter may occupy a square at the end of the phase" (seed) -----------------
    def stacks(self) -> list[int]:
        """Squares holding more than one counter (possible only during a move phase)."""
        seen: set[int] = set()
        out = []
        for g in self.figs.values():
            if g.on_board:
                if g.pos in seen:
                    out.append(g.pos)
                seen.add(g.pos)
        return sorted(set(out))

    def _ends(self, f: Figure, tree: dict[int, tuple[int, int]], bonus: bool) -> list[int]:
        """The squares of ``tree`` that ``f`` may end this move on. Counters pass through each other and may
        even stop on one another during the phase, as long as it ends with one counter a square (seed). So a
        move may end on a square holding one other counter, when no other square is shared (one stack at a
        time) and a figure of the moving side on it can still step off to an empty square (or leave the lair)
        with the points it has left: the phase can always end unstacked. The Clone Master's bonus move is one
        move made at once and ends on an empty square (our ruling)."""
        taken = self.occupied()
        stacked = bool(self.stacks())
        out = []
        for sq in sorted(tree):
            if sq == f.pos or not self.board.is_floor(sq):
                continue
            if sq in taken and bonus:
                continue
            if (sq in taken or stacked) and not self._unstackable_after(f, sq, tree[sq][0]):
                continue
            out.append(sq)
        return out

    def _unstackable_after(self, f: Figure, sq: int, cost: int) -> bool:
        """Whether, after ``f`` moves to ``sq`` for ``cost``, at most one square is shared and a figure of the
        moving side on it can still get off it with its points left."""
        pos = {g.id: g.pos for g in self.figs.values() if g.on_board}
        pos[f.id] = sq
        counts: dict[int, int] = {}
        for q in pos.values():
            counts[q] = counts.get(q, 0) + 1
        shared = [q for q, n in counts.items() if n > 1]
        if not shared:
            return True
        if len(shared) > 1 or counts[shared[0]] > 2:
            return False
        q = shared[0]
        side = CLONE_MASTER if self.phase == "cm_move" else TERMINATORS
        for gid, where in pos.items():
            g = self.figs[gid]
            if where != q or g.side != side or not g.conscious or (g.side == CLONE_MASTER and not g.face_up):
                continue
            points = g.mp - cost if g is f else g.mp
            if points <= 0:
                continue
            if g.kind == "terminator" and self._exit_entry_at(q) is not None:
                return True
            door_open = self.door_broken or g.kind == "constabulary"
            tree = self.board.reachable(q, points, self.can_monkey(g), door_open)
            if any(counts.get(x, 0) == 0 and self.board.is_floor(x) for x in tree):
                return True
        return False

    def _entry_open(self, f: Figure) -> bool:
        rules = self.rules()
        if f.kind == "constabulary":
            return True
        if f.entry == "door":
            return self.door_broken
        limit = rules["disposal_per_phase"] if f.entry == "disposal" else rules["loo_per_phase"]
        return self.entered.get(f.entry, 0) < limit

    def _exit_entry(self, f: Figure) -> str | None:
        """The way out from where ``f`` stands: the disposal or loo square, or next to the broken door."""
        return self._exit_entry_at(f.pos)

    def _exit_entry_at(self, pos: int) -> str | None:
        for entry, sq in self.board.entries.items():
            if pos == sq:
                return entry
        if self.door_broken and pos >= 0 and self.board.adjacent(pos, self.board.front_door):
            return "door"
        return None

    def _may_exit(self, f: Figure) -> bool:
        if f.kind != "terminator" or f.status != "active" or f.mp < 1:
            return False
        entry = self._exit_entry(f)
        if entry is None:
            return False
        if entry != "door":
            limit = self.rules()["disposal_per_phase"] if entry == "disposal" else self.rules()["loo_per_phase"]
            if self.entered.get(entry, 0) >= limit:
                return False
        if self.game.solo:
            return self.solo_may_escape(f)
        return True

    def solo_may_escape(self, f: Figure) -> bool:
        solo = self.scenario().solo
        total = sum(f.levels)
        return (0 < total <= solo["escape_levels_at_most"] or self.turn >= solo["escape_from_turn"]
                or (self.figs["CM"].status == "dead" and not any(self.equipment.values())))

    # --- activation -------------------------------------------------------------------------------------
    def activatable(self) -> list[str]:
        """Face-down counters the Clone Master may turn up now (one Jelly, Servant, Technician a move)."""
        used = set(self.activated)
        out = []
        for f in self.figs.values():
            if f.status != "active" or f.face_up or f.side != CLONE_MASTER:
                continue
            cls = self.utype(f).activation
            if cls == "clone_master" or (cls and cls not in used):
                out.append(f.id)
        return out

    def _activate(self, f: Figure, why: str) -> None:
        f.face_up = True
        self.log.append({"turn": self.turn, "phase": self.phase, "event": f"{f.id} activated ({why})"})
        if f.kind == "clone_master":
            self.bonus_mp = self.utype(f).bonus_move

    def _woken(self, f: Figure, path: Sequence[int]) -> list[Figure]:
        """The face-down counters a walk of ``f`` over ``path`` turns up: those in the rooms a Terminator enters
        ("Terminators entering a room automatically activate ... all face down Clone Master units in that room")."""
        if f.kind != "terminator":
            return []
        rooms = {self.board.room(sq) for sq in path} - {None}
        return [g for g in self.figs.values()
                if g.side == CLONE_MASTER and g.status == "active" and not g.face_up and g.pos >= 0
                and self.board.room(g.pos) in rooms]

    def _enter_rooms(self, f: Figure, path: list[int]) -> None:
        for g in self._woken(f, path):
            room = self.board.room(g.pos)
            assert room is not None
            self._activate(g, f"{f.id} entered the {self.board.lair.rooms[room].name}")

    def _solo_activation(self) -> None:
        """Solo: the two face-down counters nearest the Terminator are activated."""
        t = next((f for f in self.terminators() if f.on_board), None)
        if t is None:
            return
        dist = self.board.walking_distance(t.pos)
        hidden = [f for f in self.figs.values() if f.side == CLONE_MASTER and f.status == "active" and not f.face_up]
        hidden.sort(key=lambda f: (dist.get(f.pos, 999), f.pos))
        for f in hidden[:2]:
            self._activate(f, "nearest the Terminator")

    # --- routes: a move may name the squares of its way -------------------------------------------------
    def route(self, f: Figure, action: Move) -> tuple[list[int], int] | str:
        """The squares ``action`` takes ``f`` over (its start first) and their cost, or why the way is not one.
        Without ``via`` it is the cheapest path; with it, the way goes square by square through ``via`` to the
        move's square: each step orthogonal, onto floor, a door gap or the broken armored door, paying the
        elevation cost where it climbs (waived for an undamaged Monkey Soul)."""
        board = self.board
        try:
            end = board.square(action.square)
            via = [board.square(x) for x in action.via]
        except ValueError as exc:
            return str(exc)
        if not action.via:
            tree = self.move_tree(f, 99)
            if end not in tree:
                return f"{f.id} cannot get to {action.square} (walls, equipment or the closed door are in the way)"
            return Board.path(tree, end), tree[end][0]
        door_open = self.door_broken or f.kind == "constabulary"
        if f.status == "waiting":
            start, cost = board.entry_squares[f.entry], 1
            if not board.open_to(start, door_open):
                return f"the way in by the {f.entry} is shut"
        else:
            start, cost = f.pos, 0
        path = [start]
        monkey = self.can_monkey(f)
        for sq in [*via, end]:
            here = path[-1]
            if not board.adjacent(here, sq):
                return (f"{board.names[sq]} is not next to {board.names[here]}:"
                        " a move goes square by square, orthogonally")
            if not board.open_to(sq, door_open):
                what = {"wall": "a wall", "equipment": "vital equipment"}.get(board.cells[sq].kind, "the armored door")
                return f"the way crosses {board.names[sq]}, {what}"
            cost += board.step_cost(here, sq, monkey)
            path.append(sq)
        return path, cost

    def way_through(self, fid: str, waypoints: Sequence[str], square: str | None = None) -> Way | str:
        """The way ``fid`` would walk now through ``waypoints`` in order (the cheapest path between each two, as a
        player picks a way by clicking squares on it), on to ``square`` when given, or why there is none: not a
        figure that moves now, a square off the map or not walkable, or a way longer than its points. Changes
        nothing; the move it gives (:meth:`Way.move`) is checked again when played."""
        f = self.figs.get(str(fid).upper())
        if f is None:
            return f"there is no figure {str(fid)[:20]}"
        bonus = self.bonus_mp > 0 and f.id == "CM"
        points = self.bonus_mp if bonus else f.mp
        if not self.move_tree(f, points) or not any(
                isinstance(a, Move) and a.figure == f.id for a in self.legal_actions()):
            return f"{f.id} cannot move now"
        board = self.board
        try:
            stops = [board.square(x) for x in [*waypoints, *([square] if square is not None else [])]]
        except ValueError as exc:
            return str(exc)
        door_open = self.door_broken or f.kind == "constabulary"
        monkey = self.can_monkey(f)
        if f.status == "waiting":
            path, cost = [board.entry_squares[f.entry]], 1
        else:
            path, cost = [f.pos], 0
        for stop in stops:
            if not board.open_to(stop, door_open):
                what = BLOCKED.get(board.cells[stop].kind, "the armored door")
                return f"{board.names[stop]} is {what}: no figure may stand there"
            tree = board.reachable(path[-1], points - cost, monkey, door_open)
            if stop not in tree:
                so_far = f" and the way to {board.names[path[-1]]} costs {cost}" if len(path) > 1 else ""
                return f"{board.names[stop]} is out of {f.id}'s reach: it has {points} movement points{so_far}"
            cost += tree[stop][0]
            path += Board.path(tree, stop)[1:]
        return Way(f.id, tuple(board.names[sq] for sq in path), cost, points,
                   tuple(dict.fromkeys(board.lair.rooms[r].name for g in self._woken(f, path)
                                       if (r := board.room(g.pos)) is not None)))

    def reachable_by(self, fid: str, waypoints: Sequence[str]) -> dict[str, int]:
        """The squares ``fid`` may end its move on now by a way through ``waypoints`` (then the cheapest path on),
        with the whole way's cost: :meth:`reachable` once the player has picked squares on the way."""
        way = self.way_through(fid, waypoints)
        if isinstance(way, str):
            return {}
        f = self.figs[way.figure]
        door_open = self.door_broken or f.kind == "constabulary"
        tree = self.board.reachable(self.board.square(way.squares[-1]), way.points - way.cost, self.can_monkey(f),
                                    door_open)
        out = {}
        for sq in tree:
            end = self.way_through(fid, waypoints, self.name(sq))
            if not isinstance(end, str) and self.illegal_reason(end.move()) is None:
                out[end.squares[-1]] = end.cost
        return out

    def _do_move(self, f: Figure, action: Move, bonus: bool = False) -> None:
        sq = self.board.square(action.square)
        way = self.route(f, action)
        assert not isinstance(way, str), way
        path, cost = way
        if f.status == "waiting":
            if f.kind == "terminator":
                self.entered[f.entry] = self.entered.get(f.entry, 0) + 1
            f.status = "active"
            f.face_up = f.face_up or f.kind == "constabulary"
            self._event(f"{f.id} enters by the {f.entry}")
        f.pos = sq
        if not bonus:
            f.mp -= cost
        if f.kind == "terminator":
            self._enter_rooms(f, path)
