"""Opponents: a heuristic player for either side and the solo Clone Master.

Bots decide from ``state.player_view(player)``, the legal actions and the public rules (map, CRT,
unit sheet), never from hidden state: the Terminators' bot cannot tell a face-down Jelly from a
Servant, and neither side sees the other's unplayed chits.

The Terminators go for the vital equipment and the Clone Master, then run for the exits; when the
equipment is gone and the Clone Master has never shown himself, they search the face-down counters.

The Clone Master plays for his victory conditions: the Terminators need him dead *and* all seven
pieces of equipment smashed. So he sets up hidden far from the ways in and the equipment, with two
face-down Technicians beside him and face-down Servant decoys in far rooms; he never reveals himself,
and when found he runs (his bonus move included) to a square his people close off, while they crowd
round him. Face-down Jellies ring the piece of equipment farthest from the ways in. Jellies gang up:
they step next to a Terminator only when their side's chits there outnumber his (the extra chits are
read on None), otherwise they wait nearby, together, beside the equipment; helpless Terminators are
finished off. Shooters keep out of reach with a target in range; Servants and unarmed Technicians
stand round the equipment and mob a Terminator they can hurt. In combat every chit is weighed on the
CRT against the Terminator's techniques, and an attacked figure answers with its best defence.
In the solo scenario the seed's solo rules bind the Clone Master's side (``engine.kf2100.solo``: Jellies
straight at the Terminator playing attack chits first, Servants and unarmed Technicians massed round the
equipment, shooters never adjacent); the heuristic decides only what those rules leave open.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from engine.core import Policy
from engine.core.protocol import Action, State
from engine.kf2100.actions import (
    Activate,
    Answer,
    Attack,
    Chits,
    DoorAttack,
    End,
    Exit,
    Lead,
    Lose,
    Move,
    Place,
    Wait,
)
from engine.kf2100.data import CHIT_TECHNIQUES
from engine.kf2100.solo import solo_choice
from engine.kf2100.state_combat import CombatRules

answer_column = CombatRules.answer_column
"""The CRT column an answering chit is read on (the rules' own, ``CombatRules.answer_column``)."""

MELEE = (*CHIT_TECHNIQUES, "weapon")

TERMINATORS, CLONE_MASTER = 0, 1
TARGET_VALUE = {"clone_master": 6.0, "jelly": 2.0, "armed_technician": 1.5, "constabulary": 1.5,
                "unarmed_technician": 1.0, "servant": 1.0, "terminator": 3.0}
EQUIPMENT_VALUE = 4.0
UNCONSCIOUS_VALUE = 4.0
GUARDS = 2                 # unarmed Technicians set up face down beside the hidden Clone Master
DECOY_ROOMS = ("servants_quarters", "records")  # servants set up there stay face down as decoys
DECOYS_PER_ROOM = 2
DECOY_DISTANCE = 8         # a face-down servant this far from equipment and Terminators is not activated


def chit_scores(crt: dict[str, dict[str, int]]) -> dict[str, float]:
    """A chit's worth: its mean hit chance as an attack plus its mean protection as an answer."""
    out = {}
    attacks = list(crt)
    for chit, row in crt.items():
        attack = sum(row.values()) / len(row) / 6
        col = answer_column(chit)
        defence = 1 - sum(crt[a][col] for a in attacks) / len(attacks) / 6
        out[chit] = attack + 0.5 * defence
    return out


class HeuristicBot(Policy):
    """A fast rule-of-thumb player for one side. ``solo`` (the Clone Master of the Solo scenario) plays by the
    seed's solo behaviour rules first (``engine.kf2100.solo``) and by the heuristic where they are silent."""

    def __init__(self, player: int, solo: bool = False, noise: float = 0.05) -> None:
        self.player, self.solo, self.noise = player, solo, noise
        self.name = "solo Clone Master" if solo else f"heuristic {'Terminators' if player == 0 else 'Clone Master'}"

    # --- Policy ---------------------------------------------------------------------------------
    def action_probabilities(self, state: State) -> list[tuple[Action, Fraction]]:
        return [(self.choose(state, None), Fraction(1))]

    def choose(self, state: State, rng: np.random.Generator | None) -> Action:
        legal = state.legal_actions()
        if len(legal) == 1:
            return legal[0]
        if self.solo and self.player == CLONE_MASTER:
            ruled, legal = solo_choice(state, legal, rng)  # the seed's solo rules first (engine/kf2100/solo.py)
            if ruled is not None:
                return ruled
            if len(legal) == 1:
                return legal[0]
        view = state.player_view(self.player)
        ctx = _Context(state, view, self.player)
        scored = [(self.score(ctx, a), i) for i, a in enumerate(legal)]
        best = max(v for v, _ in scored)
        top = [i for v, i in scored if v >= best - 1e-9]
        if rng is not None and self.noise and len(top) > 1:
            return legal[top[int(rng.integers(len(top)))]]
        return legal[top[0]]

    # --- scoring ----------------------------------------------------------------------------------
    def score(self, ctx: _Context, a: Action) -> float:
        if isinstance(a, End):
            return 0.01  # a move must gain something to be worth making
        if isinstance(a, Wait):
            # In by the disposal (two a phase) and the loo (one): all three are in on the first move. Splitting
            # the equipment by way in, the front door included, was measured worse (docs/rulings-kung-fu-2100.md).
            order: tuple[str, ...] = ("disposal", "disposal", "loo")
            index = int(a.figure[1:]) - 1 if a.figure[1:].isdigit() else 0
            return 1.0 if a.entry == order[index % 3] else 0.0
        if isinstance(a, Move):
            return ctx.move_gain(a)
        if isinstance(a, Exit):
            return 100.0 if ctx.wants_out(ctx.figs[a.figure]) else -1.0
        if isinstance(a, DoorAttack):
            return ctx.door_attack_value(a)
        if isinstance(a, Activate):
            return ctx.activation_value(a.figure)
        if isinstance(a, Chits):
            if self.player == CLONE_MASTER:
                return ctx.cm_chits_value(a)
            return sum(ctx.scores.get(c, 0.0) for c in a.chits)
        if isinstance(a, Lead):
            return 1.0 if a.side == self.player else 0.5
        if isinstance(a, Attack):
            return ctx.attack_value(a)
        if isinstance(a, Answer):
            return ctx.answer_value(a)
        if isinstance(a, Lose):
            order = ("heart", "mist", "monkey", "kick", "fist")
            return 10.0 - order.index(a.technique)
        if isinstance(a, Place):
            return ctx.place_value(a)
        return 0.0


class _Context:
    """What one side knows, digested for scoring: figures by id, distances, objectives."""

    def __init__(self, state: Any, view: dict[str, Any], player: int) -> None:
        self.state, self.view, self.player = state, view, player
        self.game = state.game
        self.board = state.game.board
        self.crt = state.game.book.crt
        self.figs = {f["id"]: f for f in view["figures"]}
        self.scores = chit_scores(self.crt)
        self._objectives: list[int] | None = None
        self._stacks: list[int] | None = None

    # --- positions ---------------------------------------------------------------------------------
    def pos(self, fid: str) -> int:
        f = self.figs[fid]
        return f["pos"]

    def enemies(self, status: tuple[str, ...] = ("active", "unconscious")) -> list[dict[str, Any]]:
        return [f for f in self.figs.values() if (f["kind"] == "terminator") != (self.player == TERMINATORS)
                and f["status"] in status and f["pos"] >= 0]

    def dist(self, a: int, b: int) -> int:
        return self.board.walking_distance(a).get(b, 99)

    def nearest(self, sq: int, targets: list[int]) -> int:
        if not targets:
            return 0
        return min(self.board.walking_distance(t).get(sq, 99) for t in targets)

    def equipment_squares(self) -> list[int]:
        return [self.board.lair.equipment[e][0] for e, alive in self.view["equipment"].items() if alive]

    def objectives(self) -> list[int]:
        """The Terminators' goals: the Clone Master and the equipment; else visible foes; else face-down counters."""
        if self._objectives is None:
            cm = [f["pos"] for f in self.enemies(("active",)) if f["kind"] == "clone_master"]
            eq = self.equipment_squares()
            foes = [f["pos"] for f in self.enemies(("active", "unconscious"))]
            hidden = [self.board.square(x) for x in self.view["face_down"]]
            if not cm and not eq and hidden and "CM" not in self.figs:
                # The Clone Master has never shown himself: he is one of the face-down counters. Go and look.
                self._objectives = hidden
            else:
                self._objectives = (cm + eq) or foes or hidden
        return self._objectives

    def unclaimed(self, fid: str) -> list[int]:
        """Objectives no other Terminator already stands next to (so the Terminators spread out)."""
        goals = self.objectives()
        others = [g["pos"] for g in self.figs.values() if g["kind"] == "terminator" and g["id"] != fid
                  and g["status"] == "active" and g["pos"] >= 0]
        free = [x for x in goals if not any(self.board.adjacent(x, o) for o in others)]
        return free or goals

    def wants_out(self, f: dict[str, Any]) -> bool:
        cm_dead = any(g["kind"] == "clone_master" and g["status"] == "dead" for g in self.figs.values())
        smashed = not any(self.view["equipment"].values())
        ineffective = sum(f["levels"][:4]) == 0
        if self.game.solo:
            solo = self.game.scenario.solo
            return (sum(f["levels"]) <= solo["escape_levels_at_most"] or self.view["turn"] >= solo["escape_from_turn"]
                    or (cm_dead and smashed))
        return (cm_dead and smashed) or ineffective

    def exits(self) -> list[int]:
        out = list(self.board.entries.values())
        if self.view["door_broken"]:
            out += list(self.board.neighbours[self.board.front_door])
        return out

    # --- moves ---------------------------------------------------------------------------------------
    def move_gain(self, a: Move) -> float:
        f = self.figs[a.figure]
        bonus = self.player == CLONE_MASTER and a.figure == "CM" and self.view["bonus_mp"] > 0
        to = self.board.square(a.square)
        if self._stacks is None:  # once a decision, not once a move scored (a quarter of a game's time was here)
            self._stacks = self.state.stacks()
        stacks = self._stacks
        if to in self.taken():
            return -20.0  # the bot never stops on another counter (the rules allow it mid-phase)
        if f["pos"] in stacks:
            return 20.0 - self.dist(f["pos"], to)  # stepping off a shared square: the phase cannot end before
        if f["mp"] < self.full_move(f) and not bonus:
            return -1.0  # each figure moves once a phase: keeps the bot's turns short
        here = f["pos"] if f["pos"] >= 0 else self.board.entry_squares.get(f["entry"], -1)
        if self.player == TERMINATORS:
            if self.wants_out(f):
                # Heading out: onto an exit square itself (the Exit follows, with a point left), nearest first.
                value, base = self.exit_square_value(to, f), self.exit_square_value(here, f) if f["pos"] >= 0 else -50.0
                return value - base
            goals = self.unclaimed(a.figure)
            value = self.terminator_square_value(to, goals)
            base = self.terminator_square_value(here, goals) if f["pos"] >= 0 else -50.0
            return value - base
        return self.clone_square_value(f, to) - self.clone_square_value(f, here)

    def exit_square_value(self, sq: int, f: dict[str, Any]) -> float:
        """Worth of ``sq`` to a Terminator on his way out: standing on an open exit with a point left to
        leave beats everything; else the nearer an exit the better."""
        if sq < 0:
            return -50.0
        exits = self.exits()
        if sq in exits:
            mp_left = f["mp"] - (self.dist(f["pos"], sq) if f["pos"] >= 0 else 1)
            return 10.0 + (2.0 if mp_left >= 1 else 0.0)
        return -float(self.nearest(sq, exits))

    def door_attack_value(self, a: DoorAttack) -> float:
        """Break the door for a Terminator waiting outside it, or for one inside on his way out when the
        disposal and the loo are farther than a move away (the broken door is a way out); else keep the chits
        for the combat."""
        f = self.figs[a.figure]
        if f["status"] == "waiting":
            return 1.0
        if self.wants_out(f) and self.nearest(f["pos"], list(self.board.entries.values())) > f["mp"] + 2:
            return 1.0
        return -0.5

    def full_move(self, f: dict[str, Any]) -> int:
        return self.game.book.units.types[f["kind"]].move

    def terminator_square_value(self, sq: int, goals: list[int]) -> float:
        if sq < 0:
            return -50.0
        d = self.nearest(sq, goals)
        adjacent_goals = sum(1 for g in goals if self.board.adjacent(sq, g))
        return -d + 3.0 * adjacent_goals

    def clone_square_value(self, f: dict[str, Any], sq: int) -> float:
        if sq < 0:
            return -50.0
        kind = f["kind"]
        if kind == "clone_master":
            return self.cm_safety(sq)
        if not self.t_active() and not self.t_down():
            return 0.0
        guard = self.bodyguard(sq)
        if kind == "jelly" and self.fig_chits(f) > 0:
            return self.jelly_value(f, sq) + 0.75 * guard
        if f["weapon"] in ("gun", "spikes"):
            return self.shooter_value(f, sq) + 0.5 * guard
        return self.untrained_value(f, sq) + guard

    # --- the Clone Master's side: what it knows, digested once a decision -----------------------------
    def t_active(self) -> list[dict[str, Any]]:
        if not hasattr(self, "_t_active"):
            self._t_active = [t for t in self.enemies(("active",))] if self.player == CLONE_MASTER else []
        return self._t_active

    def t_down(self) -> list[int]:
        if not hasattr(self, "_t_down"):
            self._t_down = [t["pos"] for t in self.enemies(("unconscious",))] if self.player == CLONE_MASTER else []
        return self._t_down

    def taken(self) -> set[int]:
        if not hasattr(self, "_taken"):
            self._taken = set(self.state.occupied())
        return self._taken

    def own(self) -> list[dict[str, Any]]:
        if not hasattr(self, "_own"):
            self._own = [g for g in self.figs.values() if g["kind"] != "terminator" and g["status"] == "active"
                         and g["pos"] >= 0]
        return self._own

    def bodyguard(self, sq: int) -> float:
        """Worth of standing on ``sq`` as the Clone Master's bodyguard: once he is found, every square
        next to him that his own people hold is one a Terminator cannot strike him from."""
        cm = self.figs.get("CM")
        if cm is None or cm["status"] != "active" or not cm["face_up"] or cm["pos"] < 0:
            return 0.0
        if not self.board.adjacent(sq, cm["pos"]):
            return 0.0
        act = [t["pos"] for t in self.t_active()]
        return 4.0 if act and self.nearest(cm["pos"], act) <= 10 else 0.0

    @staticmethod
    def t_chits(t: dict[str, Any]) -> int:
        """Chits a Terminator brings to a combat: 3, or fewer when few combat levels are left."""
        return min(3, sum(t["levels"][:4]))

    def fig_chits(self, g: dict[str, Any]) -> int:
        if g["kind"] == "terminator":
            return self.t_chits(g)
        n = self.game.book.units.types[g["kind"]].chits
        return min(n, sum(g["levels"][:4]) + (1 if g["weapon"] else 0))

    def reach(self, g: dict[str, Any]) -> dict[int, tuple[int, int]]:
        """Squares an own figure could reach with its full move (cached per decision)."""
        cache = self.__dict__.setdefault("_reach", {})
        if g["id"] not in cache:
            monkey = g["kind"] == "jelly" and g["levels"][3] > 0
            door_open = self.view["door_broken"] or g["kind"] == "constabulary"
            cache[g["id"]] = self.board.reachable(g["pos"], self.full_move(g), monkey, door_open)
        return cache[g["id"]]

    def unmoved(self, g: dict[str, Any]) -> bool:
        return g["face_up"] and g["mp"] >= self.full_move(g) and self.view["phase"] == "cm_move"

    def t_group_chits(self, sq: int, adjacent: list[dict[str, Any]]) -> float:
        """Terminator chits a figure on ``sq`` would face: the Terminators it touches, and half of any
        other Terminator close enough to be drawn into the same combat."""
        own = sum(self.t_chits(t) for t in adjacent)
        ids = {t["id"] for t in adjacent}
        near = sum(self.t_chits(t) for t in self.t_active() if t["id"] not in ids
                   and any(self.dist(t["pos"], a["pos"]) <= 2 for a in adjacent))
        return own + 0.5 * near

    def support(self, f: dict[str, Any], sq: int, t: dict[str, Any]) -> float:
        """Clone Master chits that would face Terminator ``t`` if ``f`` moved to ``sq``: ``f``, the Jellies
        and shooters already on him, and the unmoved Jellies that could still reach a free square next to him."""
        tp = t["pos"]
        taken = self.taken() - {f["pos"]}
        free = [n for n in self.board.neighbours[tp] if n != sq and n not in taken and self.board.is_floor(n)]
        total = float(self.fig_chits(f))
        potential = []
        for g in self.own():
            if g["id"] == f["id"] or not g["face_up"]:
                continue
            if g["kind"] == "jelly":
                c = self.fig_chits(g)
                if c == 0:
                    continue
                if self.board.adjacent(g["pos"], tp):
                    total += c
                elif self.unmoved(g) and free:
                    tree = self.reach(g)
                    if any(n in tree for n in free):
                        potential.append(c)
            elif g["weapon"] in ("gun", "spikes") and g["kind"] != "clone_master":
                if self.board.in_missile_range(g["pos"], tp, 2, 1, g["kind"] == "constabulary"):
                    total += 0.7
        potential.sort(reverse=True)
        return total + sum(potential[:len(free)])

    def jelly_value(self, f: dict[str, Any], sq: int) -> float:
        """Jellies gang up: next to a Terminator only when the Clone Master's chits there outnumber his;
        otherwise they wait nearby, together, to strike next time. Helpless Terminators are finished off."""
        v = 0.0
        if any(self.board.adjacent(sq, d) for d in self.t_down()):
            v += 8.0
        act = self.t_active()
        if not act:
            return v - 0.3 * self.nearest(sq, self.t_down())
        adjacent = [t for t in act if self.board.adjacent(sq, t["pos"])]
        if adjacent:
            faced = self.t_group_chits(sq, adjacent)
            if len(adjacent) == 1:
                sup = self.support(f, sq, adjacent[0])
            else:
                sup = sum(self.support(f, sq, t) for t in adjacent) - (len(adjacent) - 1) * self.fig_chits(f)
            margin = sup - faced
            hurt = sum(7 - sum(t["levels"]) for t in adjacent) / len(adjacent)
            if faced == 0:
                v += 7.0
            elif margin >= 1:
                v += 4.0 + min(margin, 3.0) + 0.3 * hurt
            else:
                v -= 2.0 - margin
            return v
        if any(self.board.adjacent(sq, e) for e in self.equipment_squares()):
            v += 1.5  # waiting beside the equipment blocks a square the Terminators need
        d = self.nearest(sq, [t["pos"] for t in act])
        mates = [g["pos"] for g in self.own() if g["kind"] == "jelly" and g["face_up"] and g["id"] != f["id"]]
        cohesion = min(self.nearest(sq, mates), 8) if mates else 0
        return v - 0.4 * abs(d - 3) - 0.15 * cohesion

    def shooter_value(self, f: dict[str, Any], sq: int) -> float:
        """Shooters keep out of reach with a target in range (range 2 orthogonal, 1 diagonal)."""
        unlimited = f["kind"] == "constabulary"
        v = 0.0
        if any(self.board.in_missile_range(sq, d, 2, 1, unlimited) for d in self.t_down()):
            v += 5.0
        act = self.t_active()
        if not act:
            return v - 0.2 * self.nearest(sq, self.t_down())
        in_range = [t for t in act if self.board.in_missile_range(sq, t["pos"], 2, 1, unlimited)]
        if in_range:
            v += 3.0
            jellies = [g["pos"] for g in self.own() if g["kind"] == "jelly" and g["face_up"]]
            if any(self.board.adjacent(j, t["pos"]) for t in in_range for j in jellies):
                v += 1.0  # a chit more in a combat the Jellies fight
        if any(self.board.adjacent(sq, t["pos"]) for t in act):
            v -= 5.0
        d = self.nearest(sq, [t["pos"] for t in act])
        if d <= 3:
            v -= 0.5 * (4 - d)  # not where a Terminator steps next to us at once
        return v - 0.15 * d

    def untrained_value(self, f: dict[str, Any], sq: int) -> float:
        """Servants and unarmed Technicians stand round the vital equipment (a Terminator must fight through
        them to reach it), mob a Terminator they can hurt (an untrained attack hits on a d6 at or below the
        number adjacent), and finish a helpless one."""
        v = 0.0
        down_adj = [d for d in self.t_down() if self.board.adjacent(sq, d)]
        if down_adj:
            v += 6.0
        eq = self.equipment_squares()
        act = self.t_active()
        tpos = [t["pos"] for t in act]
        adjacent = [t for t in act if self.board.adjacent(sq, t["pos"])]
        if adjacent:
            t = adjacent[0]
            mob = sum(1 for g in self.own() if g["id"] != f["id"] and self.board.adjacent(g["pos"], t["pos"])
                      and g["face_up"] and (self.game.book.units.types[g["kind"]].untrained
                                            or (g["kind"] == "jelly" and self.fig_chits(g) == 0)))
            jellies = sum(1 for g in self.own() if g["kind"] == "jelly" and g["face_up"] and self.fig_chits(g)
                          and self.board.adjacent(g["pos"], t["pos"]))
            v += 0.8 * (mob + 1) + (1.5 if jellies else 0.0) + (2.5 if self.t_chits(t) == 0 else 0.0) - 1.5
            if len(adjacent) > 1:
                v -= 1.0
        if eq:
            if any(self.board.adjacent(sq, e) for e in eq):
                threatened = tpos and self.nearest(sq, tpos) <= 8
                v += 2.5 + (1.0 if threatened else 0.0)
            v -= 0.3 * self.nearest(sq, eq)
        elif tpos:
            v -= 0.2 * self.nearest(sq, tpos)
        return v

    def cm_safety(self, sq: int) -> float:
        """The Clone Master never fights: as far from the Terminators as he can get, off their way to the
        equipment, in a corner his own people close off."""
        act = [t["pos"] for t in self.enemies(("active", "waiting")) if t["pos"] >= 0]
        if not act:
            return 0.0
        d = min(self.nearest(sq, act), 20)
        v = float(d)
        if d <= 1:
            v -= 10.0
        eq = self.equipment_squares()
        if eq and self.nearest(sq, eq) <= 2:
            v -= 2.0
        taken = self.taken() - {self.figs["CM"]["pos"]}
        closed = sum(1 for n in self.board.neighbours[sq] if not self.board.is_floor(n) or n in taken)
        return v + (1.5 if d <= 6 else 0.5) * closed

    def place_value(self, a: Place) -> float:
        """Set-up: the Clone Master hidden far from the ways in and from the equipment (the Terminators must
        find him to win), Jellies near the equipment to gang up on the raiders, everyone else on the
        squares round the equipment (face down, they still block them)."""
        sq = self.board.square(a.square)
        entries = list(self.board.entry_squares.values())
        kind = self.figs[a.figure]["kind"]
        eq = self.equipment_squares()
        if kind == "clone_master":
            closed = sum(1 for n in self.board.neighbours[sq] if not self.board.is_floor(n))
            return self.nearest(sq, entries) + self.nearest(sq, eq) + 0.5 * closed
        cm = self.figs["CM"]["pos"]
        taken = {f["pos"] for f in self.figs.values() if f["pos"] >= 0}
        crowd = sum(1 for nb in self.board.neighbours[sq] if nb in taken)
        room = self.board.room(sq)
        if kind == "unarmed_technician" and cm >= 0 and self.board.adjacent(sq, cm):
            guards = sum(1 for nb in self.board.neighbours[cm] if nb in taken)
            if guards < GUARDS:
                return 10.0  # face down beside him: a Terminator who finds him must cut through them first
        if kind == "servant" and room in DECOY_ROOMS:
            placed = sum(1 for f in self.figs.values() if f["pos"] >= 0 and f["kind"] == "servant"
                         and self.board.room(f["pos"]) == room)
            if placed < DECOYS_PER_ROOM:
                return 10.0 - crowd  # decoys: face-down counters far from him for the Terminators to search
        penalty = 0.0
        if cm >= 0 and room == self.board.room(cm):
            penalty = 20.0  # nobody else draws the Terminators to the Clone Master's hiding place
        if kind == "jelly":
            keep = self.keep_square()
            around = [n for n in self.board.neighbours[keep] if self.board.is_floor(n)] if keep is not None else []
            if sq in around:
                return 10.0  # face down round the last piece of equipment: a fortress to fight through
            if keep is not None and around and all(n in taken for n in around) and self.dist(sq, keep) == 2:
                backers = sum(1 for f in self.figs.values() if f["kind"] == "jelly" and f["pos"] >= 0
                              and self.dist(f["pos"], keep) == 2)
                if backers < 2:
                    return 8.0
            return -abs(self.nearest(sq, eq) - 3) - 0.3 * crowd - penalty
        block = 2.0 if any(self.board.adjacent(sq, e) for e in eq) else 0.0
        return block - self.nearest(sq, eq) - 0.5 * crowd - penalty

    def keep_square(self) -> int | None:
        """The living piece of equipment farthest from the ways in: the one the Jellies hold to the end."""
        eq = self.equipment_squares()
        if not eq:
            return None
        entries = list(self.board.entry_squares.values())
        return max(eq, key=lambda e: (self.nearest(e, entries), e))

    def activation_value(self, fid: str) -> float:
        f = self.figs[fid]
        terms = [t["pos"] for t in self.enemies(("active", "waiting")) if t["pos"] >= 0]
        if f["kind"] == "jelly" and any(self.board.adjacent(f["pos"], e) for e in self.equipment_squares()) \
                and (not terms or self.nearest(f["pos"], terms) > 6):
            return -1.0  # face down it still blocks the equipment, and it cannot be lured away
        if f["kind"] == "clone_master":
            return -1.0  # hidden he is safe: he shows himself only when a Terminator walks into his room
        if self.is_decoy(f):
            return -1.0  # a face-down counter far from the fight keeps the Terminators guessing
        return 1.0 + (1.0 / (1 + self.nearest(f["pos"], terms)) if terms else 0.0)

    def is_decoy(self, f: dict[str, Any]) -> bool:
        """A servant or technician too far from the equipment and the Terminators to be of use, or one
        guarding the hidden Clone Master: better left face down."""
        if f["kind"] not in ("servant", "unarmed_technician"):
            return False
        cm = self.figs["CM"]
        if cm["status"] == "active" and not cm["face_up"] and self.board.room(f["pos"]) == self.board.room(cm["pos"]):
            return True
        terms = [t["pos"] for t in self.enemies(("active",))]
        far_eq = self.nearest(f["pos"], self.equipment_squares()) >= DECOY_DISTANCE
        far_t = not terms or self.nearest(f["pos"], terms) > DECOY_DISTANCE
        return far_eq and far_t

    # --- combat ----------------------------------------------------------------------------------------
    def possible_answers(self, target: str) -> list[str]:
        """Columns an attack on ``target`` could be read on: the techniques (and weapons) of every conscious figure
        of the target's side in the combat (any of them may answer, and the CRT reads the answering chit), or
        None."""
        target_is_terminator = target in self.figs and self.figs[target]["kind"] == "terminator"
        members = (self.view["combat"] or {}).get("members") or [target]
        cols: set[str] = set()
        for m in members:
            g = self.figs.get(m)
            if g is None or g["status"] != "active" or (g["kind"] == "terminator") != target_is_terminator:
                continue
            levels = g.get("levels")
            if levels is None:
                continue
            cols.update(c for i, c in enumerate(CHIT_TECHNIQUES) if levels[i] > 0)
            if g.get("weapon"):
                cols.add("weapon")
        return sorted(cols) or ["none"]

    def target_value(self, target: str) -> float:
        if target.startswith("E"):
            return EQUIPMENT_VALUE
        g = self.figs.get(target)
        if g is None:
            return 1.0
        if g["status"] == "unconscious":
            return UNCONSCIOUS_VALUE
        return TARGET_VALUE.get(g["kind"], 1.0)

    def attack_value(self, a: Attack) -> float:
        if self.player == CLONE_MASTER:
            return self.cm_attack_value(a)
        combat = self.view["combat"] or {}
        enemy_chits = sum(v if isinstance(v, int) else len(v) for k, v in combat.get("chits", {}).items()
                          if k in self.figs and (self.figs[k]["kind"] == "terminator") != (self.player == 0))
        cols = self.possible_answers(a.target) if enemy_chits else ["none"]
        p = min(self.crt[a.chit][c] for c in cols) / 6
        return p * self.target_value(a.target)

    def protection(self, a: Answer, worth: Callable[[str], float]) -> float | None:
        """How much answer ``a`` lowers the chance that the attack on the table hits its target, times the
        target's ``worth``; None when no attack is on the table. The CRT reads the attack against the answering
        chit whoever answers (seed), so another figure's answer protects the target as well as its own."""
        attack = (self.view["combat"] or {}).get("attack")
        if not attack:
            return None
        _, chit, target = attack
        p = self.crt[chit][answer_column(a.chit)] / 6
        return (self.crt[chit]["none"] / 6 - p) * worth(target)

    def answer_value(self, a: Answer) -> float:
        if self.player == CLONE_MASTER:
            return self.cm_answer_value(a)
        protect = self.protection(a, self.target_value)
        if protect is None:
            return 0.0
        # The answer becomes the next attack: its worth as one.
        follow = self.scores.get(a.chit, 0.0) * 0.3
        return protect + follow

    # --- combat, the Clone Master's side: every chit weighed on the CRT ---------------------------------
    def combat_terminators(self) -> list[dict[str, Any]]:
        combat = self.view["combat"] or {}
        return [self.figs[m] for m in combat.get("members", []) if m in self.figs
                and self.figs[m]["kind"] == "terminator" and self.figs[m]["status"] == "active"]

    def t_columns(self, t: dict[str, Any]) -> list[tuple[str, int]]:
        """A Terminator's techniques with the levels he has in them (his possible chits)."""
        return [(c, t["levels"][i]) for i, c in enumerate(CHIT_TECHNIQUES) if t["levels"][i] > 0]

    def p_attack(self, chit: str, t: dict[str, Any], answered: float = 0.7) -> float:
        """Hit chance of ``chit`` on Terminator ``t``: he answers (with the chit of his that hurts it most,
        half the time, else one of his techniques as picked) or he is read on None."""
        cols = self.t_columns(t)
        if not cols:
            return self.crt[chit]["none"] / 6
        best = min(self.crt[chit][c] for c, _ in cols)
        mean = sum(self.crt[chit][c] * k for c, k in cols) / sum(k for _, k in cols)
        return (answered * (best + mean) / 2 + (1 - answered) * self.crt[chit]["none"]) / 6

    def p_defend(self, chit: str, t: dict[str, Any]) -> float:
        """How much ``chit`` as our figure's own answer cuts the hit chance of ``t``'s attacks."""
        col = answer_column(chit)
        cols = self.t_columns(t) or [("fist", 1)]
        return sum((self.crt[c]["none"] - self.crt[c][col]) * k for c, k in cols) / sum(k for _, k in cols) / 6

    def cm_chits_value(self, a: Chits) -> float:
        terms = self.combat_terminators()
        if not terms:
            return sum(self.scores.get(c, 0.0) for c in a.chits)
        f = self.figs[a.figure]
        total = 0.0
        for c in a.chits:
            reach = [t for t in terms if (self.board.adjacent(f["pos"], t["pos"]) if c in MELEE else
                                          self.board.in_missile_range(f["pos"], t["pos"], 2, 1,
                                                                      f["kind"] == "constabulary"))]
            attack = max((self.p_attack(c, t) for t in reach), default=0.0)
            defend = sum(self.p_defend(c, t) for t in terms) / len(terms)
            total += attack + 0.8 * defend
        return total + 0.05 * len(set(a.chits))

    def t_left(self, tid: str) -> int:
        combat = self.view["combat"] or {}
        v = combat.get("chits", {}).get(tid, 0)
        return v if isinstance(v, int) else len(v)

    def cm_attack_value(self, a: Attack) -> float:
        g = self.figs.get(a.target)
        if g is None:
            return 0.0
        if g["status"] == "unconscious":
            return 10.0 * self.crt[a.chit]["none"] / 6  # a hit kills him
        p = self.p_attack(a.chit, g, 0.85 if self.t_left(a.target) else 0.0)
        hurt = 7 - sum(g["levels"])
        return p * (3.0 + 0.3 * hurt + (2.0 if self.t_chits(g) <= 1 else 0.0))

    def cm_answer_value(self, a: Answer) -> float:
        protect = self.protection(a, lambda target: EQUIPMENT_VALUE if target not in self.figs else {
            "clone_master": 20.0, "jelly": 2.5}.get(self.figs[target]["kind"], 1.0))
        if protect is None:
            return 0.0
        # The answer becomes that figure's next attack: its worth as one.
        f = self.figs[a.figure]
        terms = self.combat_terminators()
        reach = [t for t in terms if (self.board.adjacent(f["pos"], t["pos"]) if a.chit in MELEE else
                                      self.board.in_missile_range(f["pos"], t["pos"], 2, 1,
                                                                  f["kind"] == "constabulary"))]
        follow = 0.5 * max((self.p_attack(a.chit, t) * 3.0 for t in reach), default=0.0)
        return protect + follow


def bots_for(game: Any) -> list[Policy]:
    """Policies for both seats: the solo scenario's Clone Master follows the solo rules."""
    return [HeuristicBot(0), HeuristicBot(1, solo=bool(game.solo))]
