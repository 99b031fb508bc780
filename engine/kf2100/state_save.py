"""Kung Fu 2100 positions as JSON: copies, the saved position written and checked (nothing the rules could
not have reached loads), and what each side may see.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Any, Self

import msgspec

from engine.core import (
    CHANCE,
)
from engine.core.serialize import check_schema
from engine.kf2100.data import TECHNIQUES
from engine.kf2100.figures import (
    CLONE_MASTER,
    TERMINATORS,
    Combat,
)
from engine.kf2100.state_flow import FlowRules
from engine.kf2100.state_schema import (
    _EventEntry,
    _log_patterns,
    _RollEntry,
    _StateFile,
)
from engine.kf2100.steps import Step

if TYPE_CHECKING:
    from engine.kf2100.state import KungFuGame


class SaveRules(FlowRules):
    """Copies, saved positions (written and checked), and each side's view."""

    __slots__ = ()

    # --- copies and views -------------------------------------------------------------------------------------
    def clone(self) -> Self:
        s = type(self).__new__(type(self))
        s.game = self.game
        s.turn, s.phase, s.door_broken, s.bonus_mp = self.turn, self.phase, self.door_broken, self.bonus_mp
        s.figs = {k: f.copy() for k, f in self.figs.items()}
        s.equipment = dict(self.equipment)
        s.entered, s.activated, s.door_step = dict(self.entered), list(self.activated), self.door_step
        s.door_chits = {k: list(v) for k, v in self.door_chits.items()}
        s.cm_window, s.opened = self.cm_window, self.opened
        s.combats = [list(c) for c in self.combats]
        s.combat = self.combat.copy() if self.combat else None
        s.queue, s.deal_rooms = list(self.queue), list(self.deal_rooms)
        s.constabulary_in, s.result = self.constabulary_in, self.result
        s.log = list(self.log)
        s._legal = self._legal
        return s

    def to_dict(self) -> dict[str, Any]:
        return {
            "turn": self.turn, "phase": self.phase, "door_broken": self.door_broken, "bonus_mp": self.bonus_mp,
            "figures": [f.to_dict() for f in self.figs.values()], "equipment": dict(self.equipment),
            "entered": dict(self.entered), "activated": list(self.activated), "door_step": self.door_step,
            "door_chits": {k: list(v) for k, v in self.door_chits.items()}, "combats": [list(c) for c in self.combats],
            "cm_window": self.cm_window, "opened": self.opened,
            "combat": self.combat.to_dict() if self.combat else None, "queue": list(self.queue),
            "deal_rooms": list(self.deal_rooms), "constabulary_in": self.constabulary_in,
            "result": self.result, "log": [dict(e) for e in self.log],
        }

    # --- checks of a saved position (state_from_dict) ------------------------------------------------------
    def _check_combat(self, c: Combat) -> None:
        """Every figure a saved combat names is one of its members, and each one's chits are ones it could pick."""
        members = set(c.members)
        figures = [x for x in c.members if not x.startswith("E")]
        if {self.figs[x].side for x in figures} | ({CLONE_MASTER} if len(figures) < len(members) else set()) \
                != {TERMINATORS, CLONE_MASTER}:
            raise ValueError("a combat needs figures of both sides")
        named = [*c.to_pick, *c.chits, *(c.attack[::2] if c.attack else ()), *(c.answer[:1] if c.answer else ()),
                 *(t for t, _ in c.untrained), *([c.pending_loss] if c.pending_loss else [])]
        for x in named:
            if x not in members:
                raise ValueError(f"the combat names {x}, who is not in it")
        if len(set(c.to_pick)) != len(c.to_pick) or set(c.to_pick) & set(c.chits):
            raise ValueError("a figure picks its chits twice")
        for fid in [*c.to_pick, *c.chits]:
            if fid.startswith("E") or not self.figs[fid].conscious:
                raise ValueError(f"{fid} cannot hold chits")
        for fid, chits in c.chits.items():
            options, n = self.chit_options(self.figs[fid])
            if len(chits) > n or any(chits.count(x) > options.get(x, 0) for x in set(chits)):
                raise ValueError(f"{fid} holds chits it could not have picked")
        if c.attack is not None:
            fid, _, target = c.attack
            if fid.startswith("E") or (not target.startswith("E") and self.figs[target].side == self.figs[fid].side):
                raise ValueError("an attack that is not on an enemy")
        if c.answer is not None and (c.answer[0].startswith("E") or c.attack is None):
            raise ValueError("an answer to no attack")
        if c.step in ("answer", "roll", "aim") and c.attack is None:
            raise ValueError(f"a combat at its {c.step} step with no attack")
        if c.step == "untrained" and c.attack is not None:
            raise ValueError("untrained attacks while a chit attack is pending")

    def _checked_log(self, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The saved log, each entry of one of the two shapes the rules write and its text one they write."""
        events, rolls = _log_patterns(self.board)
        out = []
        for i, e in enumerate(entries):
            what = f"log entry {i + 1}"
            if "roll" in e:
                r = check_schema(e, _RollEntry, f"{what} is damaged")
                if not rolls.fullmatch(r.what):
                    raise ValueError(f"{what} is not a roll the rules write")
                if r.p != str(Fraction(max(0, min(r.need, 6)), 6)) or (r.result == "miss") != (r.roll > r.need):
                    raise ValueError(f"{what}: its chance or result does not match its roll")
                if r.target is not msgspec.UNSET:
                    side = CLONE_MASTER if r.target.startswith("E") else (
                        self.figs[r.target].side if r.target in self.figs else None)
                    if (r.target not in self.figs and r.target not in self.equipment) or r.target_side != side:
                        raise ValueError(f"{what} names a target that is not in the game")
                elif r.target_side is not msgspec.UNSET:
                    raise ValueError(f"{what} has a target side but no target")
            else:
                ev = check_schema(e, _EventEntry, f"{what} is damaged")
                if not events.fullmatch(ev.event):
                    raise ValueError(f"{what} is not an event the rules write")
            if e["turn"] > self.turn:
                raise ValueError(f"{what} is from turn {e['turn']}, after this one")
            out.append(dict(e))
        return out

    def player_view(self, player: int) -> dict[str, Any]:
        """What one side may know: face-down counters are anonymous to the Terminators, and each side's
        unplayed chits are hidden from the other (only their number shows)."""
        figures = []
        hidden = []
        for f in self.figs.values():
            d = f.to_dict()
            if f.side != player and f.side == CLONE_MASTER and not f.face_up:
                if f.pos >= 0 and f.status in ("active", "unconscious"):
                    hidden.append(self.name(f.pos))
                continue
            d["square"] = self.name(f.pos) if f.pos >= 0 else None
            figures.append(d)
        combat = None
        if self.combat is not None:
            combat = self.combat.to_dict()
            combat["chits"] = {k: (list(v) if self.figs[k].side == player else len(v))
                               for k, v in self.combat.chits.items()}
        view = {
            "player": player, "scenario": self.game.scenario.key, "turn": self.turn, "phase": self.phase,
            "step": str(self.step),
            "to_move": self.current_player(), "door_broken": self.door_broken, "bonus_mp": self.bonus_mp,
            "figures": figures, "face_down": sorted(hidden), "equipment": dict(self.equipment),
            "combat": combat, "combats_waiting": len(self.combats), "door_step": self.door_step,
            "result": self.result, "log": [dict(e) for e in self.log],  # rolls and public events only
            "placing": self.queue[0] if (self.step is Step.SETUP and player == CLONE_MASTER) else None,
        }
        return view

    @classmethod
    def from_data(cls, game: KungFuGame, data: dict[str, Any]) -> Self:
        """A saved position, refused unless the rules could have reached it: the schema checks every field's type
        and range, then every figure, square, chit, combat and log line is checked against the scenario."""
        check_schema(data, _StateFile, "the saved position is damaged")
        s = cls(game)
        roster = {f.id: f for f in game.roster()}
        board = game.board
        figures = data["figures"]
        if [d["id"] for d in figures] != list(roster):
            raise ValueError("the figures do not match the scenario's counter mix")
        seen_pos: set[int] = set()
        shared: list[int] = []
        for d in figures:
            f = roster[d["id"]]
            if d["kind"] != f.kind or tuple(d["start"]) != f.start or d["weapon"] != f.weapon:
                raise ValueError(f"{f.id} is not the counter of the unit sheet")
            levels = list(d["levels"])
            if len(levels) != len(TECHNIQUES) or any(not 0 <= v <= s0 for v, s0 in zip(levels, f.start, strict=True)):
                raise ValueError(f"{f.id} has impossible levels {levels}")
            status, pos = d["status"], d["pos"]
            if pos >= 0:
                if pos >= len(board.cells):
                    raise ValueError(f"{f.id} stands off the map")
                if pos == board.front_door:
                    raise ValueError(f"{f.id} stands on the armored door (no figure ever ends a move there)")
                if not board.is_floor(pos):
                    raise ValueError(f"{f.id} stands on {board.names[pos]}, a square no figure may occupy")
                if pos in seen_pos:
                    shared.append(pos)
                seen_pos.add(pos)
            if (status in ("active", "unconscious")) != (pos >= 0):
                raise ValueError(f"{f.id} is {status} but its square is {pos}")
            if status == "unconscious" and sum(levels) != 0:
                raise ValueError(f"{f.id} is unconscious with levels left")
            if status == "waiting" and not d["entry"]:
                raise ValueError(f"{f.id} is waiting at no entry")
            if d["entry"] and f.kind not in ("terminator", "constabulary"):
                raise ValueError(f"{f.id} is not a figure that comes in from outside")
            if status == "escaped" and f.kind != "terminator":
                raise ValueError(f"{f.id} cannot escape: only Terminators leave the lair")
            f.levels, f.status, f.pos, f.face_up, f.entry = levels, status, pos, d["face_up"], d["entry"]
            f.mp = d["mp"]
        s.figs = roster
        s.phase = data["phase"]
        # counters may share a square only during a move phase, one square at a time (they must get apart)
        if shared and (s.phase not in ("move1", "move2", "cm_move") or len(shared) > 1):
            raise ValueError(f"two figures stand on {board.names[shared[0]]}")
        s.turn = data["turn"]
        if not 1 <= s.turn <= game.scenario.turns + 1:
            raise ValueError(f"turn {s.turn} is outside the scenario's {game.scenario.turns} turns")
        s.door_broken, s.bonus_mp, s.door_step = data["door_broken"], data["bonus_mp"], data["door_step"]
        if set(data["equipment"]) != set(s.equipment):
            raise ValueError("the equipment list is not the lair's seven pieces")
        s.equipment = {k: data["equipment"][k] for k in s.equipment}
        s.entered = dict(data["entered"])
        terminators = {f.id for f in s.terminators()}
        if sum(n for e, n in s.entered.items() if e != "door") > len(terminators):
            raise ValueError("more Terminators entered than there are")
        classes = {t.activation for t in game.book.units.types.values()} - {""}
        s.activated = list(data["activated"])
        if any(x not in classes for x in s.activated) or len(set(s.activated)) != len(s.activated):
            raise ValueError("an activation class that is not on the unit sheet, or used twice")
        s.door_chits = {k: list(v) for k, v in data["door_chits"].items()}
        for fid, spent in s.door_chits.items():
            t = roster.get(fid)
            if fid not in terminators or t is None or len(spent) > s.utype(t).chits or any(
                    spent.count(c) > t.start[TECHNIQUES.index(c)] for c in spent):
                raise ValueError(f"{fid} cannot have spent {'+'.join(spent) or 'no chits'} on the door")
        s.cm_window, s.opened = data["cm_window"], data["opened"]
        if s.cm_window and (s.figs["CM"].face_up or s.figs["CM"].status != "active"):
            raise ValueError("only a face-down Clone Master can have a window to reveal himself")
        s.combats = [list(c) for c in data["combats"]]
        s.combat = Combat.from_dict(data["combat"]) if data["combat"] else None
        for c in [*s.combats, *([s.combat.members] if s.combat else [])]:
            for x in c:
                if x not in roster and x not in s.equipment:
                    raise ValueError(f"combat member {x!r} is not in the game")
            if len(set(c)) != len(c):
                raise ValueError("a combat names a figure twice")
        if s.combat is not None:
            s._check_combat(s.combat)
        s.queue = list(data["queue"])
        for item in s.queue:
            fid = item.split(":")[1] if item.startswith("door:") else item
            if fid not in roster or (item.startswith("door:") and fid not in terminators):
                raise ValueError(f"the queue names {fid!r}, who cannot be there")
        if len(set(s.queue)) != len(s.queue):
            raise ValueError("the queue names a figure twice")
        s.deal_rooms = list(data["deal_rooms"])
        rooms = [r for r, room in game.board.lair.rooms.items() if room.initials]
        if any(r not in rooms for r in s.deal_rooms) or (s.deal_rooms and (s.phase != "setup" or not game.solo)):
            raise ValueError("a Solo deal to a room that is not one of the lair's, or outside the Solo set-up")
        s.constabulary_in = data["constabulary_in"]
        if s.constabulary_in > game.scenario.constabulary_total:
            raise ValueError(f"{s.constabulary_in} Constabulary came in; the scenario has "
                             f"{game.scenario.constabulary_total}")
        s.result = data["result"]
        if (s.phase == "over") != bool(s.result):
            raise ValueError("a finished game needs a result, an unfinished one none")
        s.log = s._checked_log(data["log"])
        if s.phase in ("combat1", "combat2") and s.opened and not (s.door_step or s.cm_window or s.bonus_mp) \
                and s.combat is None:
            raise ValueError("a combat phase with no combat being fought")
        if s.combat is not None and s.combat.step == "pick" and not s.combat.to_pick:
            raise ValueError("a combat waiting for chits nobody has to pick")
        if s.combat is not None and s.combat.step == "loss" and s.combat.pending_loss not in s.figs:
            raise ValueError("a hit waiting for a figure that is not in the game")
        try:
            if s.phase != "over" and s.current_player() != CHANCE and not s.legal_actions():
                raise ValueError("the saved position has no legal move")
            if s.current_player() == CHANCE:
                s.chance_outcomes()
        except (AssertionError, KeyError, IndexError, TypeError) as exc:
            raise ValueError(f"the saved position is not one the rules can reach ({type(exc).__name__})") from None
        return s
