"""Policies: how a player picks an action. Exact analysis reads their probabilities; simulation samples."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

import numpy as np

from engine.core.protocol import Action, State


class Policy:
    """A player's strategy.

    ``action_probabilities`` gives the full distribution (used by exact ``policy_value``);
    ``choose`` picks one action (used by simulation). A deterministic policy only needs ``choose``
    as ``FunctionPolicy`` shows.
    """

    name = "policy"

    def action_probabilities(self, state: State) -> list[tuple[Action, Fraction]]:
        raise NotImplementedError

    def choose(self, state: State, rng: np.random.Generator) -> Action:
        from engine.core.rng import sample_outcome

        return sample_outcome(self.action_probabilities(state), rng)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


class FunctionPolicy(Policy):
    """A deterministic policy from a function ``state -> action``."""

    def __init__(self, fn: Callable[[State], Action], name: str | None = None) -> None:
        self.fn = fn
        self.name = name or str(getattr(fn, "__name__", "function"))

    def action_probabilities(self, state: State) -> list[tuple[Action, Fraction]]:
        return [(self.fn(state), Fraction(1))]

    def choose(self, state: State, rng: np.random.Generator) -> Action:
        return self.fn(state)


class UniformRandomPolicy(Policy):
    """Every legal action equally likely."""

    name = "random"

    def action_probabilities(self, state: State) -> list[tuple[Action, Fraction]]:
        actions = state.legal_actions()
        return [(a, Fraction(1, len(actions))) for a in actions]

    def choose(self, state: State, rng: np.random.Generator) -> Action:
        actions = state.legal_actions()
        return actions[int(rng.integers(len(actions)))]
