"""Opponents: a heuristic player for either side and the solo Clone Master.

Bots decide from ``state.player_view(player)``, the legal actions and the public rules (map, CRT,
unit sheet), never from hidden state: the Terminators' bot cannot tell a face-down Jelly from a
Servant, and neither side sees the other's unplayed chits.

The heuristics, in the seed's spirit: Terminators go for the vital equipment and the Clone Master,
then run for the exits; Jellies close in; shooters keep a safe distance with line of sight;
Servants and unarmed Technicians mass around the equipment. In combat every chit is scored from the
CRT (expected hit chance against the answers the foe could give).
"""

from __future__ import annotations

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

TERMINATORS, CLONE_MASTER = 0, 1
TARGET_VALUE = {"clone_master": 6.0, "jelly": 2.0, "armed_technician": 1.5, "constabulary": 1.5,
                "unarmed_technician": 1.0, "servant": 1.0, "terminator": 3.0}
EQUIPMENT_VALUE = 4.0
UNCONSCIOUS_VALUE = 4.0


def answer_column(chit: str) -> str:
    return chit if chit in CHIT_TECHNIQUES else "weapon"


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
    """A fast rule-of-thumb player for one side. ``solo`` follows the seed's solo behaviour rules
    (Jellies lead with attack chits)."""

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
            order = ("disposal", "disposal", "loo")
            index = int(a.figure[1:]) - 1 if a.figure[1:].isdigit() else 0
            return 1.0 if a.entry == order[index % 3] else 0.0
        if isinstance(a, Move):
            return ctx.move_gain(a)
        if isinstance(a, Exit):
            return 100.0 if ctx.wants_out(ctx.figs[a.figure]) else -1.0
        if isinstance(a, DoorAttack):
            return 1.0
        if isinstance(a, Activate):
            return ctx.activation_value(a.figure)
        if isinstance(a, Chits):
            pref = ctx.chit_pref(a.figure, self.solo)
            return sum(pref.get(c, 0.0) for c in a.chits)
        if isinstance(a, Lead):
            return 1.0 if a.side == self.player else 0.5
        if isinstance(a, Attack):
            bonus = 0.2 if self.solo and a.chit in ("fist", "kick", "weapon", "spikes") else 0.0
            return ctx.attack_value(a) + bonus
        if isinstance(a, Answer):
            return ctx.answer_value(a, self.solo)
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
        if f["mp"] < self.full_move(f):
            return -1.0  # each figure moves once a phase: keeps the bot's turns short
        to = self.board.square(a.square)
        here = f["pos"] if f["pos"] >= 0 else self.board.entry_squares.get(f["entry"], -1)
        if self.player == TERMINATORS:
            goals = self.exits() if self.wants_out(f) else self.unclaimed(a.figure)
            value = self.terminator_square_value(to, goals)
            base = self.terminator_square_value(here, goals) if f["pos"] >= 0 else -50.0
            return value - base
        return self.clone_square_value(f, to) - self.clone_square_value(f, here)

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
        terms = [t["pos"] for t in self.enemies(("active",))]
        kind = f["kind"]
        if not terms:
            return 0.0
        d = self.nearest(sq, terms)
        if kind == "jelly":
            down = [t["pos"] for t in self.enemies(("unconscious",))]
            finish = 2.0 if any(self.board.adjacent(sq, t) for t in down) else 0.0  # strike the helpless
            return -min(d, self.nearest(sq, down) if down else 99) + finish
        if f["weapon"] in ("gun", "spikes"):
            unlimited = kind == "constabulary"
            shot = any(self.board.in_missile_range(sq, t, 2, 1, unlimited) for t in terms)
            adjacent = any(self.board.adjacent(sq, t) for t in terms)
            if kind == "clone_master":
                return d - (4.0 if adjacent else 0.0)  # the Clone Master keeps away
            return (4.0 if shot else 0.0) - (3.0 if adjacent else 0.0) - 0.2 * d
        # Servants and unarmed Technicians mass around the vital equipment.
        eq = self.equipment_squares()
        near_eq = any(self.board.adjacent(sq, e) for e in eq)
        # ... and mob a Terminator who is at the equipment (an untrained attack needs numbers).
        raiders = [t for t in terms if any(self.board.adjacent(t, e) for e in eq)]
        mob = 2.0 * sum(1 for t in raiders if self.board.adjacent(sq, t))
        return (3.0 if near_eq else 0.0) + mob - 0.3 * self.nearest(sq, eq)

    def place_value(self, a: Place) -> float:
        """Set-up: the Clone Master far from the ways in, Jellies between them and the equipment,
        everyone else beside the equipment."""
        sq = self.board.square(a.square)
        entries = list(self.board.entry_squares.values())
        kind = self.figs[a.figure]["kind"]
        if kind == "clone_master":
            room = self.board.room(sq)
            hideout = room is not None and not self.board.lair.rooms[room].initials  # a corridor
            return self.nearest(sq, entries) + (2.0 if hideout else 0.0)
        eq = self.equipment_squares()
        taken = {f["pos"] for f in self.figs.values() if f["pos"] >= 0}
        crowd = sum(1 for nb in self.board.neighbours[sq] if nb in taken)
        if kind == "jelly":
            return -abs(self.nearest(sq, entries) - 8) - crowd
        return -self.nearest(sq, eq) - 0.5 * crowd

    def activation_value(self, fid: str) -> float:
        f = self.figs[fid]
        terms = [t["pos"] for t in self.enemies(("active", "waiting")) if t["pos"] >= 0]
        if f["kind"] == "clone_master":
            return 0.5 if terms and self.nearest(f["pos"], terms) <= 6 else -1.0
        return 1.0 + (1.0 / (1 + self.nearest(f["pos"], terms)) if terms else 0.0)

    # --- combat ----------------------------------------------------------------------------------------
    def chit_pref(self, fid: str, solo: bool) -> dict[str, float]:
        pref = dict(self.scores)
        if solo and self.figs[fid]["kind"] == "jelly":
            for c in ("fist", "kick", "weapon", "spikes"):
                pref[c] = pref.get(c, 0.0) + 0.5
        return pref

    def possible_answers(self, target: str) -> list[str]:
        """Columns the target could be read on: its own techniques (and weapon), or None."""
        if target.startswith("E") or target not in self.figs:
            return ["none"]
        g = self.figs[target]
        if g["status"] != "active":
            return ["none"]
        cols = [c for i, c in enumerate(CHIT_TECHNIQUES) if g["levels"][i] > 0]
        if g["weapon"]:
            cols.append("weapon")
        return cols or ["none"]

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
        combat = self.view["combat"] or {}
        enemy_chits = sum(v if isinstance(v, int) else len(v) for k, v in combat.get("chits", {}).items()
                          if k in self.figs and (self.figs[k]["kind"] == "terminator") != (self.player == 0))
        cols = self.possible_answers(a.target) if enemy_chits else ["none"]
        p = min(self.crt[a.chit][c] for c in cols) / 6
        return p * self.target_value(a.target)

    def answer_value(self, a: Answer, solo: bool) -> float:
        combat = self.view["combat"] or {}
        attack = combat.get("attack")
        if not attack:
            return 0.0
        _, chit, target = attack
        protect = 0.0
        if a.figure == target:
            p = self.crt[chit][answer_column(a.chit)] / 6
            protect = (self.crt[chit]["none"] / 6 - p) * self.target_value(target)
        # The answer becomes the next attack: its worth as one.
        follow = self.scores.get(a.chit, 0.0) * 0.3
        if solo and self.figs[a.figure]["kind"] == "jelly" and a.chit in ("fist", "kick", "weapon"):
            follow += 0.3
        return protect + follow


def bots_for(game: Any) -> list[Policy]:
    """Policies for both seats: the solo scenario's Clone Master follows the solo rules."""
    return [HeuristicBot(0), HeuristicBot(1, solo=bool(game.solo))]
