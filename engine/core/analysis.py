"""Analysis on the state protocol: exact policy values and Monte Carlo with confidence intervals.

``policy_value`` walks the whole game tree (chance nodes weighted by their exact probabilities,
decisions weighted by the policies), so it returns ``Fraction``s for small trees. ``monte_carlo``
plays many seeded games, optionally on several processes, and reports a 95% Wilson interval.
The estimate does not depend on the number of workers: games are split into fixed-size chunks,
each with its own child seed.
"""

from __future__ import annotations

import math
import multiprocessing
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, TypeVar

import numpy as np

from engine.core.policy import Policy
from engine.core.protocol import CHANCE, Game, State
from engine.core.rng import child_seeds, make_rng

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


# Worker processes inherit the job by fork, so factories and policies may be lambdas or closures. The job is
# set only while a pool exists, under a lock, so monte_carlo may run in several threads at once.
_WORKER_JOB: tuple[Any, ...] | None = None
_FORK_LOCK = threading.Lock()


def _run_chunk(job: tuple[Any, ...], seed: np.random.SeedSequence, games: int
               ) -> tuple[int, list[float], dict[str, float]]:
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


def _run_chunk_in_worker(args: tuple[np.random.SeedSequence, int]) -> tuple[int, list[float], dict[str, float]]:
    assert _WORKER_JOB is not None
    return _run_chunk(_WORKER_JOB, *args)


CHUNK = 500


def monte_carlo(
    game_or_factory: Game | StateFactory,
    policies: Sequence[Policy],
    games: int,
    seed: int | None = 0,
    workers: int = 1,
    success: Callable[[State], bool] = _default_success,
    measure: Callable[[State], dict[str, float]] | None = None,
) -> Estimate:
    """Estimate P(success) over ``games`` seeded games; ``measure`` adds per-game means (e.g. length)."""
    global _WORKER_JOB
    if games < 1:
        raise ValueError("games must be at least 1")
    if workers < 1:
        raise ValueError("workers must be at least 1")
    sizes = [CHUNK] * (games // CHUNK) + ([games % CHUNK] if games % CHUNK else [])
    jobs = list(zip(child_seeds(seed, len(sizes)), sizes, strict=True))
    job = (as_factory(game_or_factory), list(policies), success, measure)
    if workers == 1 or len(jobs) == 1:
        results = [_run_chunk(job, *chunk) for chunk in jobs]
    else:
        with _FORK_LOCK:
            _WORKER_JOB = job
            try:
                with multiprocessing.get_context("fork").Pool(min(workers, len(jobs))) as pool:
                    results = pool.map(_run_chunk_in_worker, jobs)
            finally:
                _WORKER_JOB = None
    wins = sum(r[0] for r in results)
    n_players = len(results[0][1])
    returns = tuple(sum(r[1][i] for r in results) / games for i in range(n_players))
    keys = set().union(*(r[2] for r in results))
    measures = {k: sum(r[2].get(k, 0.0) for r in results) / games for k in sorted(keys)}
    low, high = wilson_interval(wins, games)
    return Estimate(wins, games, low, high, returns, measures)
