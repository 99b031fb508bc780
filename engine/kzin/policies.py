"""The named policies: ``all-in``, ``defend-only``, ``never-fight``, ``threshold``, ``advisor`` and ``expert``.

A policy decides a whole commitment at once (``commitment(state)``: the card kinds to commit, or
None to fall back / pass); ``choose`` then plays it out one action at a time through the
protocol (``commit <card>`` ... then ``defend`` / ``attack``). The fast simulator
(:mod:`engine.kzin.fast`) implements the fixed policies again in numba and is tested against these.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from typing import Any

import numpy as np

from engine.core import Action, Policy
from engine.kzin.cards import INVASION
from engine.kzin.odds import Battle
from engine.kzin.rules import Attack, Commit, Defend, FallBack, KzinState, Pass


def everything(state: KzinState) -> list[int]:
    """Every Fleet and every Tactics card in play that counts in this battle's phase, one entry per copy."""
    phase = state.battle_phase
    return [c.index for c in state.cards_in_play() if c.committable and c.counts_in(phase)]


class CommitmentPolicy(Policy):
    """A policy that picks a set of cards per battle decision and plays it out card by card."""

    name = "commitment"

    def commitment(self, state: KzinState) -> list[int] | None:
        """Card kinds to commit in this battle (with at least one Fleet), or None to decline."""
        raise NotImplementedError

    # A Kzin policy takes Kzin states only, narrower than Policy's State: mypy reports that as an override.
    def choose(self, state: KzinState, rng: np.random.Generator | None = None) -> Action:  # type: ignore[override]
        want = self.commitment(state) if state.fleets_in_play() else None
        if want is None:
            return FallBack() if state.battle_phase == INVASION else Pass()
        still = Counter(want) - Counter(state.committed)
        for kind in sorted(still):
            return Commit(kind)
        return Defend() if state.battle_phase == INVASION else Attack()

    def action_probabilities(self, state: KzinState) -> list[tuple[Action, Fraction]]:  # type: ignore[override]
        return [(self.choose(state), Fraction(1))]


class AllIn(CommitmentPolicy):
    """Defend every invasion and attack at every chance, with everything that counts."""

    name = "all-in"

    def commitment(self, state: KzinState) -> list[int] | None:
        return everything(state)


class DefendOnly(AllIn):
    """As all-in, but never attack."""

    name = "defend-only"

    def commitment(self, state: KzinState) -> list[int] | None:
        return everything(state) if state.battle_phase == INVASION else None


class NeverFight(CommitmentPolicy):
    """Always fall back and never attack."""

    name = "never-fight"

    def commitment(self, state: KzinState) -> list[int] | None:
        return None


class Threshold(CommitmentPolicy):
    """Fight (with everything) only when the exact odds with everything reach a threshold."""

    name = "threshold"

    def __init__(self, defend: float = 0.5, attack: float = 0.5) -> None:
        for label, value in (("defend", defend), ("attack", attack)):
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"the {label} threshold is a probability from 0 to 1, not {value}")
        self.defend, self.attack = defend, attack

    def commitment(self, state: KzinState) -> list[int] | None:
        cards = everything(state)
        p = Battle.from_state(state, cards).win_probability()
        limit = self.defend if state.battle_phase == INVASION else self.attack
        return cards if p >= Fraction(limit).limit_denominator(10**6) else None

    def __repr__(self) -> str:
        return f"<Threshold defend>={self.defend} attack>={self.attack}>"


def make_policy(name: str, **params: Any) -> CommitmentPolicy:
    """A policy by its name; ``threshold`` takes ``defend`` and ``attack``; ``advisor`` takes advisor options."""
    if name == "advisor":
        from engine.kzin.advisor import AdvisorPolicy

        return AdvisorPolicy(**params)
    if name in ("expert", "expert-table"):
        from engine.kzin.expert import ExpertPolicy

        if params:
            raise ValueError(f"the {name} policy takes no parameters (its values are learned: dojo kzin train-expert)")
        return ExpertPolicy(lookahead=name == "expert")
    classes = {"all-in": AllIn, "defend-only": DefendOnly, "never-fight": NeverFight, "threshold": Threshold}
    if name not in classes:
        known = [*classes, "advisor", "expert", "expert-table"]
        raise ValueError(f"unknown policy {name!r}; choose from {', '.join(known)}")
    if params and name != "threshold":
        raise ValueError(f"the {name} policy takes no parameters")
    unknown = set(params) - {"defend", "attack"}
    if unknown:
        raise ValueError(f"the threshold policy takes defend and attack, not {', '.join(sorted(unknown))}")
    return classes[name](**params)


POLICY_NAMES = ("all-in", "defend-only", "never-fight", "threshold", "advisor", "expert", "expert-table")
