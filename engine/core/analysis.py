"""Analysis on the state protocol: exact policy values and Monte Carlo with confidence intervals.

``policy_value`` walks the whole game tree (chance nodes weighted by their exact probabilities,
decisions weighted by the policies), so it returns ``Fraction``s for small trees. ``monte_carlo``
plays many seeded games and reports a 95% Wilson interval: a small estimate in this process, a large one
on Dask (a local cluster of worker processes, or a running scheduler; see ``engine.core.distributed``).
The estimate does not depend on the number of workers: games are split into fixed-size chunks,
each with its own child seed.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, TypeVar

import numpy as np

from engine.core.distributed import chunk_seeds, chunk_sizes, run_chunks
from engine.core.policy import Policy
from engine.core.protocol import CHANCE, Game, State
from engine.core.rng import make_rng

StateFactory = Callable[[np.random.Generator], State]


def as_factory(game_or_factory: Game | StateFactory) -> StateFactory:
    if isinstance(game_or_factory, Game):
        return game_or_factory.new_initial_state
    return game_or_factory


# --- exact ------------------------------------------------------------------------------------

def policy_value(
    state: State,
    policies: Sequence[Policy],
    key: Callable[[State], Any] | None = None,
) -> list[Fraction]:
    """Expected returns of every player when each plays its policy, computed exactly.

    ``key`` (state -> hashable) turns on memoisation for trees whose positions repeat.
    """
    memo: dict[Any, list[Fraction]] = {}

    def value(s: State) -> list[Fraction]:
        if s.is_terminal():
            return [Fraction(r) for r in s.returns()]
        k = key(s) if key is not None else None
        if k is not None and k in memo:
            return memo[k]
        player = s.current_player()
        branches = s.chance_outcomes() if player == CHANCE else policies[player].action_probabilities(s)
        total = [Fraction(0)] * s.game.info.num_players
        for action, p in branches:
            child = s.clone()
            child.apply_action(action)
            for i, v in enumerate(value(child)):
                total[i] += p * v
        if k is not None:
            memo[k] = total
        return total

    return value(state)


def best_value(state: State, player: int = 0, key: Callable[[State], Any] | None = None) -> Fraction:
    """Expectimax: ``player``'s expected return when every decision maximises it (one-player games)."""
    memo: dict[Any, Fraction] = {}

    def value(s: State) -> Fraction:
        if s.is_terminal():
            return Fraction(s.returns()[player])
        k = key(s) if key is not None else None
        if k is not None and k in memo:
            return memo[k]
        if s.current_player() == CHANCE:
            out = Fraction(0)
            for action, p in s.chance_outcomes():
                child = s.clone()
                child.apply_action(action)
                out += p * value(child)
        else:
            best: Fraction | None = None
            for action in s.legal_actions():
                child = s.clone()
                child.apply_action(action)
                v = value(child)
                best = v if best is None or v > best else best
            if best is None:
                raise ValueError(f"a state that is not terminal has no legal action: {s!r}")
            out = best
        if k is not None:
            memo[k] = out
        return out

    return value(state)


# --- sampling ---------------------------------------------------------------------------------

S = TypeVar("S", bound=State)


def play_game(state: S, policies: Sequence[Policy], rng: np.random.Generator, max_steps: int = 1_000_000) -> S:
    """Play ``state`` to the end in place (chance sampled from ``rng``) and return it."""
    for _ in range(max_steps):
        player = state.current_player()
        if player < 0:
            if player == CHANCE:
                state._apply(state.sample_chance(rng))
                continue
            return state
        state.apply_action(policies[player].choose(state, rng))
    raise RuntimeError(f"game did not end within {max_steps} steps")


def wilson_interval(successes: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval for a binomial proportion (95% by default).

    With no successes the lower end is exactly 0 (and with all successes the upper end exactly 1): in
    floating point ``centre - half`` comes out a hair above 0, an interval that would exclude the estimate.
    """
    if n <= 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    low = 0.0 if successes <= 0 else max(0.0, min(p, centre - half))
    high = 1.0 if successes >= n else min(1.0, max(p, centre + half))
    return (low, high)


@dataclass(frozen=True)
class Estimate:
    """A proportion estimated by simulation, with its 95% Wilson interval and per-game extras."""

    successes: int
    games: int
    low: float
    high: float
    mean_returns: tuple[float, ...] = ()
    measures: dict[str, float] = field(default_factory=dict)

    @property
    def value(self) -> float:
        return self.successes / self.games if self.games else float("nan")

    def contains(self, p: float) -> bool:
        return self.low <= p <= self.high

    def __str__(self) -> str:
        return f"{self.value:.4f} (95% CI {self.low:.4f}-{self.high:.4f}, n={self.games})"


def _default_success(state: State) -> bool:
    return state.returns()[0] > 0


Job = tuple[StateFactory, list[Policy], Callable[[State], bool], Callable[[State], dict[str, float]] | None]
ChunkResult = tuple[int, list[float], dict[str, float]]


def _run_chunk(job: Job, seed: np.random.SeedSequence, games: int) -> ChunkResult:
    """Play one chunk of games from its own seed: (successes, summed returns, summed measures)."""
    factory, policies, success, measure = job
    rng = make_rng(seed)
    wins = 0
    returns_sum: list[float] = []
    measure_sum: dict[str, float] = {}
    for _ in range(games):
        state = play_game(factory(rng), policies, rng)
        wins += bool(success(state))
        r = state.returns()
        returns_sum = [a + b for a, b in zip(returns_sum, r, strict=True)] if returns_sum else list(r)
        if measure is not None:
            for k, v in measure(state).items():
                measure_sum[k] = measure_sum.get(k, 0.0) + v
    return wins, returns_sum, measure_sum


CHUNK = 500
"""Games per chunk (fixed, so an estimate does not depend on the number of workers)."""
SMALL_GAMES = 20_000
"""Estimates of at most this many games run in the calling process whatever ``workers`` says: starting a
cluster costs more than they do, and the chunks (so the figures) are the same either way."""


def monte_carlo(
    game_or_factory: Game | StateFactory,
    policies: Sequence[Policy],
    games: int,
    seed: int | None = 0,
    workers: int = 1,
    success: Callable[[State], bool] = _default_success,
    measure: Callable[[State], dict[str, float]] | None = None,
    *,
    scheduler: str | None = None,
    progress: bool | None = False,
    stop: threading.Event | None = None,
) -> Estimate:
    """Estimate P(success) over ``games`` seeded games; ``measure`` adds per-game means (e.g. length).

    ``workers`` > 1 plays a large estimate on a local Dask cluster of that many processes; ``scheduler``
    (or ``$DOJO_SCHEDULER`` for a large one) on a running cluster. Factories, policies and callbacks may be
    closures or lambdas: Dask sends them with cloudpickle.
    """
    if type(games) is not int or games < 1:
        raise ValueError("games must be at least 1")
    if type(workers) is not int or workers < 1:
        raise ValueError("workers must be at least 1")
    sizes = chunk_sizes(games, CHUNK)
    chunks = list(zip(chunk_seeds(seed, len(sizes)), sizes, strict=True))
    job: Job = (as_factory(game_or_factory), list(policies), success, measure)
    results = run_chunks(_run_chunk, chunks, shared=(job,), weights=sizes, workers=workers, scheduler=scheduler,
                         small=games <= SMALL_GAMES, progress=progress, description="monte_carlo", stop=stop)
    return combine(results, games)


def combine(results: Sequence[ChunkResult], games: int) -> Estimate:
    """One estimate from the chunks' sums."""
    wins = sum(r[0] for r in results)
    n_players = len(results[0][1])
    returns = tuple(sum(r[1][i] for r in results) / games for i in range(n_players))
    keys: set[str] = set().union(*(r[2] for r in results))
    measures = {k: sum(r[2].get(k, 0.0) for r in results) / games for k in sorted(keys)}
    low, high = wilson_interval(wins, games)
    return Estimate(wins, games, low, high, returns, measures)
