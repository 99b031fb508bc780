"""Seeded randomness. Every random draw in the engine goes through an injected Generator."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from engine.core.protocol import Action


def make_rng(seed: int | np.random.SeedSequence | None = None) -> np.random.Generator:
    """A PCG64 Generator; the same seed gives the same game."""
    return np.random.default_rng(seed)


def child_seeds(seed: int | None, n: int) -> list[np.random.SeedSequence]:
    """``n`` independent seed sequences derived from one seed (for chunks of simulated games)."""
    return np.random.SeedSequence(seed).spawn(n)


def sample_outcome(outcomes: Sequence[tuple[Action, Fraction]], rng: np.random.Generator) -> Action:
    """Draw one chance outcome with its exact probability (to float precision)."""
    if len(outcomes) == 1:
        return outcomes[0][0]
    u = rng.random()
    acc = 0.0
    for action, p in outcomes:
        acc += p.numerator / p.denominator
        if u < acc:
            return action
    return outcomes[-1][0]


def rng_state(rng: np.random.Generator) -> dict[str, Any]:
    """The generator's full state as JSON-able data (PCG64's 128-bit words are Python ints)."""
    return dict(rng.bit_generator.state)


def rng_from_state(state: dict[str, Any]) -> np.random.Generator:
    if not isinstance(state, dict) or state.get("bit_generator") != "PCG64":
        raise ValueError("random generator state must be a PCG64 state")
    bg: np.random.BitGenerator = np.random.PCG64()  # its state setter takes any mapping and checks it
    bg.state = state
    return np.random.Generator(bg)


def clone_rng(rng: np.random.Generator) -> np.random.Generator:
    """An independent generator that will draw exactly what ``rng`` would draw next."""
    return rng_from_state(rng_state(rng))
