"""Kung Fu 2100 combat: forming the combats, picking chits, the chained exchange, hits and losses.
"""

from __future__ import annotations

from engine.core.protocol import Action
from engine.kf2100.actions import (
    Attack,
)
from engine.kf2100.data import CHIT_TECHNIQUES, TECHNIQUES
from engine.kf2100.figures import (
    CLONE_MASTER,
    HEART,
    MELEE_CHITS,
    TERMINATORS,
    Combat,
    Figure,
    chit_multisets,
)
from engine.kf2100.state_movement import MovementRules


class CombatRules(MovementRules):
    """Combats: who is in which, the chit exchange, hits."""

    __slots__ = ()

    # --- combat formation ----------------------------------------------------------------------------------
    def _weapon(self, f: Figure):
        return self.game.book.units.weapons.get(f.weapon) if f.weapon else None

    def can_strike(self, f: Figure, sq: int) -> bool:
        """Whether ``f`` could strike something on ``sq`` this combat phase (hand to hand or missile)."""
        if not f.conscious or (f.side == CLONE_MASTER and not f.face_up) or f.pos < 0:
            return False
        if self.board.adjacent(f.pos, sq):
            return True
        w = self._weapon(f)
        if w is not None and w.kind == "missile":
            return self.board.in_missile_range(f.pos, sq, w.range_orthogonal, w.range_diagonal,
                                               self.utype(f).unlimited_range)
        return False

    def in_reach(self, f: Figure, chit: str, sq: int) -> bool:
        if chit in MELEE_CHITS:
            return self.board.adjacent(f.pos, sq)
        w = self._weapon(f)
        assert w is not None
        return self.board.in_missile_range(f.pos, sq, w.range_orthogonal, w.range_diagonal,
                                           self.utype(f).unlimited_range)

    def form_combats(self) -> list[list[str]]:
        """The seed's rule: Terminators who can strike, or be struck by, the same foe fight together."""
        terms = [f for f in self.terminators() if f.on_board]
        foes = [f for f in self.figs.values() if f.side == CLONE_MASTER and f.on_board and f.face_up]
        edges: dict[str, set[str]] = {}

        def link(a: str, b: str) -> None:
            edges.setdefault(a, set()).add(b)
            edges.setdefault(b, set()).add(a)

        for t in terms:
            for e in foes:
                if self.can_strike(t, e.pos) or self.can_strike(e, t.pos):
                    link(t.id, e.id)
            if t.conscious:
                for eid, alive in self.equipment.items():
                    if alive and self.board.adjacent(t.pos, self.board.lair.equipment[eid][0]):
                        link(t.id, eid)
        seen: set[str] = set()
        combats = []
        for t in terms:
            if t.id in seen or t.id not in edges:
                continue
            group, stack = set(), [t.id]
            while stack:
                x = stack.pop()
                if x in group:
                    continue
                group.add(x)
                stack.extend(edges.get(x, ()))
            seen |= group
            combats.append(sorted(group, key=self._member_key))
        return combats

    def _member_key(self, x: str) -> tuple[int, str]:
        if x.startswith("E"):
            return (2, x)
        return (self.figs[x].side, f"{len(x):02d}{x}")

    def chit_options(self, f: Figure) -> tuple[dict[str, int], int]:
        """Chits ``f`` may pick (at most its level of each technique) and how many it picks."""
        options = {t: f.levels[i] for i, t in enumerate(CHIT_TECHNIQUES) if f.levels[i] > 0}
        w = self._weapon(f)
        if w is not None:
            options[w.key] = w.max_chits
        spent = self.door_chits.get(f.id, [])
        for c in spent:  # chits spent on the armored door this phase are not picked again
            options[c] -= 1
        options = {c: k for c, k in options.items() if k > 0}
        n = self.utype(f).chits - len(spent)
        return options, max(0, min(n, sum(options.values())))

    def chit_choices(self, f: Figure) -> list[tuple[str, ...]]:
        options, n = self.chit_options(f)
        return chit_multisets(options, n)

    def _start_combat(self) -> None:
        members = [x for x in self.combats.pop(0)
                   if (self.equipment[x] if x.startswith("E") else self.figs[x].on_board)]
        sides = {self.figs[x].side if not x.startswith("E") else CLONE_MASTER for x in members}
        if sides != {TERMINATORS, CLONE_MASTER}:
            return  # someone fell in an earlier combat of the phase
        c = Combat(members)
        for fid in members:
            if fid.startswith("E"):
                continue
            f = self.figs[fid]
            if f.conscious and self.chit_options(f)[1] > 0:
                c.to_pick.append(fid)
        self.combat = c
        if not c.to_pick:
            self._end_exchange()

    def targets(self, c: Combat, f: Figure, chit: str) -> list[str]:
        """Enemies in this combat that ``f``'s chit can reach."""
        if not f.conscious:
            return []
        out = []
        for x in c.members:
            if x.startswith("E"):
                sq = self.board.lair.equipment[x][0]
                if f.side == TERMINATORS and self.equipment[x] and self.in_reach(f, chit, sq):
                    out.append(x)
                continue
            g = self.figs[x]
            if g.side != f.side and g.on_board and self.in_reach(f, chit, g.pos):
                out.append(x)
        return out

    def _attacks(self, c: Combat, side: int) -> list[Action]:
        out: list[Action] = []
        for fid in c.members:
            if fid in c.chits and self.figs[fid].side == side:
                f = self.figs[fid]
                for chit in sorted(set(c.chits[fid])):
                    out.extend(Attack(fid, chit, t) for t in self.targets(c, f, chit))
        return out

    def _has_chits(self, c: Combat, side: int) -> bool:
        return any(c.chits.get(fid) for fid in c.members if not fid.startswith("E") and self.figs[fid].side == side)

    def _next_attack(self, c: Combat, side: int) -> None:
        """Hand the next fresh attack to ``side`` if it can play one, else to the other, else stop."""
        for s in (side, 1 - side):
            if self._attacks(c, s):
                c.turn, c.step, c.attack, c.answer = s, "attack", None, None
                return
        self._end_exchange()

    def _end_exchange(self) -> None:
        c = self.combat
        assert c is not None
        c.chits = {}
        c.attack = c.answer = None
        c.untrained = []
        for x in c.members:
            if x.startswith("E"):
                continue
            target = self.figs[x]
            if not target.on_board:
                continue
            n = sum(1 for g in self.figs.values() if g.side != target.side and self._untrained(g)
                    and self.board.adjacent(g.pos, target.pos))
            if n:
                c.untrained.append((x, n))
        c.step = "untrained"
        self._settle()

    def _untrained(self, g: Figure) -> bool:
        if not g.conscious or g.pos < 0 or (g.side == CLONE_MASTER and not g.face_up):
            return False
        return bool(self.utype(g).untrained) or (g.kind in ("terminator", "jelly") and g.combat_levels() == 0)

    def _hit(self, target: str) -> None:
        c = self.combat
        assert c is not None
        if target.startswith("E"):
            self.equipment[target] = False
            self._event(f"{target} destroyed")
            return
        f = self.figs[target]
        if f.status == "unconscious" or f.kind not in ("terminator", "jelly"):
            self._kill(f)
            return
        options = [i for i in range(len(TECHNIQUES)) if f.levels[i] > 0]
        if len(options) == 1:
            self._lose(f, options[0])
        else:
            c.pending_loss = f.id

    def _lose(self, f: Figure, i: int) -> None:
        f.levels[i] -= 1
        self._event(f"{f.id} loses a level of {TECHNIQUES[i]}")
        c = self.combat
        if sum(f.levels) == 0:
            if f.kind == "terminator" or f.start[HEART] > 0:
                f.status = "unconscious"
                self._event(f"{f.id} is unconscious")
            else:
                self._kill(f)
        if c is not None and f.id in c.chits:
            if not f.conscious:
                c.chits.pop(f.id)
            else:
                kept: list[str] = []
                counts: dict[str, int] = {}
                for chit in c.chits[f.id]:
                    counts[chit] = counts.get(chit, 0) + 1
                    if chit not in CHIT_TECHNIQUES or counts[chit] <= f.levels[TECHNIQUES.index(chit)]:
                        kept.append(chit)
                c.chits[f.id] = kept

    def _kill(self, f: Figure) -> None:
        f.status = "dead"
        f.pos = -1
        self._event(f"{f.id} {'killed' if f.kind in ('terminator', 'jelly', 'clone_master') else 'removed'}")
        if self.combat is not None:
            self.combat.chits.pop(f.id, None)

    @staticmethod
    def answer_column(chit: str) -> str:
        """The CRT column an answering chit is read on: its technique, or Weapon for any weapon chit. The seed
        reads "attack vs. response (regardless of who responded or to whom)": whichever figure of the other
        side answered, the attack is read against the answering chit (None only when nobody answers)."""
        return chit if chit in CHIT_TECHNIQUES else "weapon"

    def _do_attack(self, a: Attack) -> None:
        c = self.combat
        assert c is not None
        if c.step != "aim":
            c.chits[a.figure].remove(a.chit)
        c.turn = self.figs[a.figure].side
        c.attack = (a.figure, a.chit, a.target)
        c.answer = None
        defender = 1 - self.figs[a.figure].side
        if self._has_chits(c, defender):
            c.step = "answer"
        else:
            c.need = self.game.book.crt[a.chit]["none"]
            c.step = "roll"

    def _after_hit(self) -> None:
        """After a roll (and any level lost): the answer chit becomes the next attack, or play moves on."""
        c = self.combat
        assert c is not None
        if c.attack is None:  # a loss from an untrained attack
            c.step = "untrained"
            return
        if c.answer is not None:
            fid, chit = c.answer
            f = self.figs[fid]
            if self.targets(c, f, chit):
                c.step = "aim"
                return
            self._next_attack(c, 1 - c.turn)
        else:
            self._next_attack(c, c.turn)
