"""Kung Fu 2100 turn flow: phase after phase, the door step, the d6 rolls, the end and its grade.
"""

from __future__ import annotations

from engine.kf2100.actions import (
    Deal,
    Roll,
)
from engine.kf2100.data import TECHNIQUES
from engine.kf2100.figures import (
    CLONE_MASTER,
    HEART,
    TERMINATORS,
    Figure,
)
from engine.kf2100.state_combat import CombatRules


class FlowRules(CombatRules):
    """The turn's phases one after another, the rolls, and the result."""

    __slots__ = ()

    def _apply_chance(self, action: Roll | Deal) -> None:
        if isinstance(action, Deal):
            self._deal(action.counter, action.square)
            return
        value = action.value
        if self.door_step:
            _, fid, chit = self.queue.pop(0).split(":")
            need = self.rules()["door_breaks_at_most"]
            self._roll_log(f"{fid} {chit}s the armored door", value, need, "door broken")
            if value <= need:
                self.door_broken = True
            return
        if self.phase == "recovery":
            fid = self.queue.pop(0)
            f = self.figs[fid]
            need = self.rules()["recovery_at_most"]
            self._roll_log(f"{fid} Mountain Heart recovery", value, need, "recovers a level")
            if value <= need:
                f.levels[HEART] += 1
                if f.status == "unconscious":
                    f.status = "active"
                    self._event(f"{fid} regains consciousness")
            return
        c = self.combat
        assert c is not None
        if c.step == "untrained":
            target, n = c.untrained.pop(0)
            self._roll_log(f"untrained attack by {n} on {target}", value, n, "hit", target)
            if value <= n and self.figs[target].on_board:
                self._hit(target)
                if c.pending_loss:
                    c.step = "loss"
            return
        assert c.attack is not None
        fid, chit, target = c.attack
        answer = f"{c.answer[0]} {c.answer[1]}" if c.answer else "none"
        self._roll_log(f"{fid} {chit} on {target} (answer {answer})", value, c.need, "hit", target)
        if value <= c.need:
            still_there = (target.startswith("E") and self.equipment[target]) or \
                (not target.startswith("E") and self.figs[target].on_board)
            if still_there:
                self._hit(target)
        if c.pending_loss:
            c.step = "loss"
        else:
            self._after_hit()

    # --- phase flow -----------------------------------------------------------------------------------------
    def _settle(self) -> None:
        """Advance through steps that need nobody's decision."""
        while True:
            if self.phase == "over" or self.bonus_mp > 0 or self.cm_window:
                return
            if self.phase in ("combat1", "combat2"):
                if not self.opened:
                    self._open_combat()
                    continue
                if self.door_step:
                    if not self.queue and not self.door_attackers():
                        self._end_step()
                        continue
                    return
                c = self.combat
                if c is None:
                    if self.combats:
                        self._start_combat()
                        continue
                    self._next_phase()
                    continue
                if c.step == "untrained" and not c.untrained:
                    self.combat = None
                    if self._check_end():
                        return
                    continue
                return
            if self.phase == "recovery" and not self.queue:
                self._next_phase()
                continue
            return

    def _end_step(self) -> None:
        if self.door_step:
            self.door_step = False
            self.combats = self.form_combats()
            self.combat = None
            return
        self._next_phase()

    def _next_phase(self) -> None:
        order = ("move1", "combat1", "move2", "cm_move", "combat2", "recovery")
        if self.phase == "recovery":
            self.turn += 1
            if self.turn > self.scenario().turns:
                self._finish()
                return
            self._begin_phase("move1")
            return
        self._begin_phase(order[order.index(self.phase) + 1])

    def _begin_entry(self) -> None:
        self.phase = "entry"
        self.queue = [f.id for f in self.terminators()]

    def _begin_phase(self, phase: str) -> None:
        self.phase = phase
        self.entered = {}
        self.combat = None
        self.combats = []
        self.queue = []
        if self._check_end():
            return
        if phase in ("move1", "move2"):
            for f in self.terminators():
                f.mp = self.utype(f).move if f.status in ("active", "waiting") else 0
        elif phase == "cm_move":
            self.activated = []
            sc = self.scenario()
            if sc.constabulary_per_turn and self.turn >= sc.constabulary_from_turn:
                reserve = [f for f in self.figs.values() if f.kind == "constabulary" and f.status == "unplaced"]
                for f in reserve[: sc.constabulary_per_turn]:
                    f.status, f.entry, f.face_up = "waiting", "door", True
                    self.constabulary_in += 1
                    self._event(f"{f.id} arrives at the front door")
            for f in self.figs.values():
                if f.side == CLONE_MASTER:
                    f.mp = self.utype(f).move if (f.status in ("active", "waiting") and f.face_up) else 0
            if self.game.solo:
                self._solo_activation()
        elif phase in ("combat1", "combat2"):
            self.door_chits = {}
            self.opened = False  # the door step and the combats start once the Clone Master's window closes
        elif phase == "recovery":
            self.queue = [f.id for f in self.figs.values() if f.on_board and f.start[HEART] > 0
                          and f.levels[HEART] < f.start[HEART]]
        cm = self.figs["CM"]
        if phase in ("move1", "move2", "combat1", "combat2") and cm.status == "active" and not cm.face_up:
            self.cm_window = True  # the Clone Master may reveal himself at any time: here, before each phase
        if phase in ("move1", "move2", "cm_move"):
            for f in self.figs.values():
                if f.side != (CLONE_MASTER if phase == "cm_move" else TERMINATORS):
                    f.mp = 0

    def _open_combat(self) -> None:
        self.opened = True
        if not self.door_broken and self.door_attackers():
            self.door_step = True
        else:
            self.combats = self.form_combats()

    def door_attackers(self) -> list[Figure]:
        """Terminators at the unbroken front door (waiting outside, or inside next to it) with chits to spare."""
        if self.door_broken:
            return []
        door = self.board.front_door
        out = []
        for f in self.terminators():
            at_door = (f.status == "waiting" and f.entry == "door") or \
                (f.status == "active" and self.board.adjacent(f.pos, door))
            if (at_door and f.conscious) or (at_door and f.status == "waiting"):
                if self.door_chit_options(f):
                    out.append(f)
        return out

    def door_chit_options(self, f: Figure) -> list[str]:
        """The attack chits ``f`` may still spend on the door this phase: the door attack spends one of his own
        attack chits (seed), so no more Fist (Kick) chits than his Fist (Kick) level, no more than his chits."""
        spent = self.door_chits.get(f.id, [])
        if len(spent) >= self.utype(f).chits:
            return []
        return [c for c in ("fist", "kick") if spent.count(c) < f.levels[TECHNIQUES.index(c)]]

    def _check_end(self) -> bool:
        terms = self.terminators()
        if terms and all(f.status in ("dead", "escaped") for f in terms):
            self._finish()
            return True
        return False

    def _finish(self) -> None:
        self.phase = "over"
        self.bonus_mp = 0
        self.combat = None
        self.combats = []
        self.queue = []
        self.door_step = False
        self.cm_window = False
        self.result = self.grade()
        self._event(f"game over: {self.result.replace('_', ' ')}")

    # --- outcome -----------------------------------------------------------------------------------------
    def grade(self) -> str:
        """The graded result by the scenario's victory conditions (solo: by points)."""
        if self.game.solo:
            t, cm = self.solo_points()
            return "terminator_victory" if t > cm else "clone_master_victory" if cm > t else "draw"
        terms = self.terminators()
        cm_dead = self.figs["CM"].status == "dead"
        smashed = not any(self.equipment.values())
        all_killed = all(f.status == "dead" for f in terms)
        if cm_dead and smashed:
            return "terminator_total_victory" if any(f.status == "escaped" for f in terms) else "terminator_victory"
        if all_killed and not cm_dead:
            return "clone_master_total_victory"
        if all_killed and cm_dead and not smashed:
            return "clone_master_victory"
        return "draw"

    def solo_points(self) -> tuple[int, int]:
        """(Terminator points, Clone Master points) by the solo scenario's scoring."""
        lines = self.solo_score()
        return (sum(p for side, _, _, p in lines if side == TERMINATORS),
                sum(p for side, _, _, p in lines if side == CLONE_MASTER))

    def solo_score(self) -> list[tuple[int, str, int, int]]:
        """The solo scoring line by line: (side, what, how many, points), every line the scenario scores, so a
        victory screen shows how the points were made."""
        pts = self.game.book.scenarios.solo_points
        cm_dead = self.figs["CM"].status == "dead"
        smashed = sum(1 for alive in self.equipment.values() if not alive)
        jellies = sum(1 for f in self.figs.values() if f.kind == "jelly" and f.status == "dead")
        everything = int(cm_dead and smashed == len(self.equipment))
        killed = sum(1 for f in self.terminators() if f.status == "dead")
        recaptured = sum(1 for f in self.terminators() if f.status not in ("dead", "escaped") and self.phase == "over")
        return [(TERMINATORS, "the Clone Master killed", int(cm_dead), pts["clone_master"] * cm_dead),
                (TERMINATORS, "vital equipment destroyed", smashed, pts["equipment"] * smashed),
                (TERMINATORS, "Jellies killed", jellies, pts["jelly"] * jellies),
                (TERMINATORS, "everything destroyed (bonus)", everything, pts["everything_bonus"] * everything),
                (CLONE_MASTER, "Terminators killed", killed, pts["terminator_killed"] * killed),
                (CLONE_MASTER, "Terminators recaptured (still in the lair at the end)", recaptured,
                 pts["terminator_recaptured"] * recaptured)]

    def returns(self) -> list[float]:
        if self.phase != "over":
            return [0.0, 0.0]
        if self.game.solo:
            v = {"terminator_victory": 1.0, "clone_master_victory": -1.0}.get(self.result, 0.0)
        else:
            v = self.game.book.scenarios.grades[self.result]
        return [v, -v]
