"""The Solo scenario's Clone Master: the seed's behaviour rules as rules, not as weights on a score.

"Jellies move directly to the Terminator and will use their attack chits before defensive ones. Servants
and unarmed Technicians will mass around vital equipment, protecting it with their bodies. Missile attacks
will be made from a "safe" distance (not adjacent)." (seed, Solo)

* A Jelly moves by the shortest way to the Terminator (conscious or not) and stops once next to him.
* Whenever a Jelly plays a chit, as an attack or as an answer (which becomes its next attack), it plays one
  of its attack chits (Fist, Kick, its weapon) while it has one left, and a defensive one (Mist, Monkey
  Soul) only after.
* A Servant or an unarmed Technician goes to the nearest free square next to a live piece of vital
  equipment (of those, the one nearest the Terminator: its body between him and the equipment) and stays.
* A shooter (the Clone Master, an armed Technician, the Local Constabulary) stands where the Terminator is
  in its missile range and never next to him; if no such square is in reach, it closes in, still never
  next to him. Of the squares that will do, the farthest from the Terminator.

Everything the seed leaves open (which chits to pick, which target, what a hit costs, where his people
stand when the Terminator is gone) is decided by the heuristic bot. Ties go to the lowest square, or by
the injected generator. The figures move one after another, Jellies first, then shooters, then the
Servants and Technicians, each once a phase.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from engine.core.protocol import Action, State
from engine.kf2100.actions import Answer, Attack, End, Move
from engine.kf2100.steps import Step

ATTACK_CHITS = ("fist", "kick", "weapon", "spikes", "gun")
DEFENSIVE_CHITS = ("mist", "monkey")
SHOOTERS = ("clone_master", "armed_technician", "constabulary")
UNTRAINED = ("servant", "unarmed_technician")
MOVE_ORDER = {"jelly": 0, "clone_master": 1, "armed_technician": 1, "constabulary": 1, "servant": 2,
              "unarmed_technician": 2}


def jelly_first_chits(state: Any, legal: list[Action]) -> list[Action]:
    """The plays the solo rules allow a Jelly: its attack chits while it has any (``legal`` unchanged for
    other figures, and whenever the rule would leave nothing)."""
    combat = state.combat
    if combat is None:
        return legal
    out = []
    for a in legal:
        if isinstance(a, (Attack, Answer)) and a.figure in state.figs and state.figs[a.figure].kind == "jelly" \
                and a.chit in DEFENSIVE_CHITS and any(c in ATTACK_CHITS for c in combat.chits.get(a.figure, [])):
            continue
        out.append(a)
    return out or legal


class SoloRules:
    """The Solo Clone Master's moves by the seed's rules (``choose_move``) and his Jellies' chit rule."""

    def choose_move(self, state: Any, legal: list[Action], rng: np.random.Generator | None) -> Action | None:
        """The move the rules make now in a move step, End when nobody has a move to make, or None when the
        rules have nothing to say (left to the heuristic bot)."""
        terminators = [f for f in state.terminators() if f.on_board]
        if not terminators:
            return None  # the Terminator is gone: where his people stand no longer matters to the seed
        target = terminators[0].pos
        taken = state.occupied()
        stacked = state.stacks()
        moves: dict[str, list[Move]] = {}
        for a in legal:
            if isinstance(a, Move) and state.board.square(a.square) not in taken:  # his people never stop on
                moves.setdefault(a.figure, []).append(a)                            # one another
        bonus = state.step is Step.BONUS_MOVE
        for fid, options in moves.items():
            if state.figs[fid].pos in stacked:  # (a square shared mid-phase: step off it first)
                return self.destination(state, state.figs[fid], target, options, rng) or options[0]
        order = sorted(moves, key=lambda fid: (MOVE_ORDER.get(state.figs[fid].kind, 3), fid))
        for fid in order:
            f = state.figs[fid]
            if not bonus and f.mp < state.utype(f).move:
                continue  # each figure moves once a phase
            choice = self.destination(state, f, target, moves[fid], rng)
            if choice is not None:
                return choice
        return End() if End() in legal else None

    def destination(self, state: Any, f: Any, target: int, moves: list[Move],
                    rng: np.random.Generator | None) -> Move | None:
        """The move ``f``'s rule asks for, or None when it should stay where it is."""
        board = state.board
        dist = board.walking_distance(target)
        here = f.pos if f.pos >= 0 else -1
        options = [(board.square(m.square), m) for m in moves]
        if f.kind == "jelly":
            if here >= 0 and board.adjacent(here, target):
                return None
            best = min(dist.get(sq, 99) for sq, _ in options)
            if here >= 0 and dist.get(here, 99) <= best:
                return None
            return self._pick([m for sq, m in options if dist.get(sq, 99) == best], rng)
        if f.kind in UNTRAINED:
            live = [sq for eid, (sq, _) in board.lair.equipment.items() if state.equipment[eid]]
            if not live:
                return None
            beside = {n for e in live for n in board.neighbours[e]}
            if here in beside:
                return None
            guard = [(sq, m) for sq, m in options if sq in beside]
            if guard:
                best = min(dist.get(sq, 99) for sq, _ in guard)
                return self._pick([m for sq, m in guard if dist.get(sq, 99) == best], rng)
            toward = {sq: min(board.walking_distance(sq).get(n, 99) for n in beside) for sq, _ in options}
            best = min(toward.values())
            if here >= 0 and min(board.walking_distance(here).get(n, 99) for n in beside) <= best:
                return None
            return self._pick([m for sq, m in options if toward[sq] == best], rng)
        if f.kind in SHOOTERS:
            unlimited = f.kind == "constabulary"
            safe = [(sq, m) for sq, m in options if not board.adjacent(sq, target)]

            def in_range(sq: int) -> bool:
                return board.in_missile_range(sq, target, 2, 1, unlimited)

            here_ok = here >= 0 and not board.adjacent(here, target)
            if here_ok and in_range(here):
                return None
            firing = [(sq, m) for sq, m in safe if in_range(sq)]
            if firing:
                best = max(dist.get(sq, 0) for sq, _ in firing)
                return self._pick([m for sq, m in firing if dist.get(sq, 0) == best], rng)
            if here >= 0 and board.adjacent(here, target):
                if not safe:
                    return None
                best = max(dist.get(sq, 0) for sq, _ in safe)  # step away from him
                return self._pick([m for sq, m in safe if dist.get(sq, 0) == best], rng)
            closer = [(sq, m) for sq, m in safe if dist.get(sq, 99) < dist.get(here, 99)]
            if not closer:
                return None
            best = min(dist.get(sq, 99) for sq, _ in closer)
            return self._pick([m for sq, m in closer if dist.get(sq, 99) == best], rng)
        return None

    @staticmethod
    def _pick(moves: list[Move], rng: np.random.Generator | None) -> Move | None:
        if not moves:
            return None
        if rng is None or len(moves) == 1:
            return moves[0]
        return moves[int(rng.integers(len(moves)))]


def solo_choice(state: State, legal: list[Action], rng: np.random.Generator | None) -> tuple[Action | None,
                                                                                              list[Action]]:
    """What the solo rules decide now: (the action, if they fix one; the legal actions they leave to choose
    among, else)."""
    step = getattr(state, "step", None)
    if step in (Step.MOVE, Step.BONUS_MOVE):
        return SoloRules().choose_move(state, legal, rng), legal
    if step in (Step.ATTACK, Step.ANSWER):
        return None, jelly_first_chits(state, legal)
    return None, legal
