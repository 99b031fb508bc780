"""``simulate``: win rate, its interval and the game lengths of a policy over many games.

The fixed policies (``all-in``, ``defend-only``, ``never-fight``, ``threshold``) run on the numba
kernel of :mod:`engine.kzin.fast`; any other policy (the advisor, a custom ``Policy``) or
``fast=False`` runs the plain engine through :func:`engine.core.monte_carlo`. Either way the games
are split into fixed chunks, each with its own child seed, so a seed gives the same figures on any
number of workers.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import pandas as pd

from engine.core import Policy, State, monte_carlo, wilson_interval
from engine.core.rng import child_seeds
from engine.kzin import fast as fastsim
from engine.kzin.policies import AllIn, DefendOnly, NeverFight, Threshold, make_policy
from engine.kzin.rules import KzinGame, KzinState, make_rules

FAST_CHUNK = 50_000
"""Games per chunk on the fast path (fixed, so the figures do not depend on the number of workers)."""

_FAST_CLASSES: dict[type, str] = {AllIn: "all-in", DefendOnly: "defend-only", NeverFight: "never-fight",
                                  Threshold: "threshold"}


@dataclass(frozen=True)
class SimulationResult:
    """What ``simulate`` measured. ``length_distribution``: games per final turn number, by turn."""

    policy: str
    games: int
    wins: int
    win_rate: float
    low: float
    high: float
    mean_turns: float
    length_distribution: pd.Series
    seconds: float
    engine: str
    policy_params: dict[str, float] = field(default_factory=dict)
    rule_options: dict[str, Any] = field(default_factory=dict)
    seed: int | None = 0
    workers: int = 1

    @property
    def games_per_second(self) -> float:
        return self.games / self.seconds if self.seconds > 0 else float("inf")

    def length_percentiles(self, qs: tuple[float, ...] = (0.05, 0.25, 0.5, 0.75, 0.95)) -> dict[float, int]:
        """The game length (turns) at each quantile, read from the distribution."""
        cum = self.length_distribution.cumsum() / self.games
        return {q: int(cum.index[int(np.searchsorted(cum.to_numpy(), q - 1e-12))]) for q in qs}

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able figures (lengths as {turn: games})."""
        return {
            "policy": self.policy, "policy_params": dict(self.policy_params), "rule_options": dict(self.rule_options),
            "games": self.games, "wins": self.wins, "win_rate": self.win_rate, "low": self.low, "high": self.high,
            "mean_turns": self.mean_turns,
            "length_percentiles": {str(q): v for q, v in self.length_percentiles().items()},
            # pandas-stubs types index labels as Hashable; these are turn numbers.
            "length_distribution": {str(int(t)): int(n)  # type: ignore[call-overload]
                                    for t, n in self.length_distribution.items()},
            "seconds": self.seconds, "games_per_second": self.games_per_second, "engine": self.engine,
            "seed": self.seed, "workers": self.workers,
        }

    def __str__(self) -> str:
        return (f"{self.policy}: won {self.wins:,} of {self.games:,} = {self.win_rate:.4%} "
                f"(95% CI {self.low:.4%} to {self.high:.4%}), mean length {self.mean_turns:.2f} turns")


def _resolve(policy: str | Policy, policy_params: Mapping[str, float] | None) -> tuple[str, Policy, dict]:
    """(name, the Policy object, its parameters); a bad name or parameter is a ``ValueError``."""
    params = dict(policy_params or {})
    if isinstance(policy, Policy):
        if params:
            raise ValueError("policy_params go with a policy name, not a Policy object")
        name = _FAST_CLASSES.get(type(policy))
        if name == "threshold" and isinstance(policy, Threshold):
            return name, policy, {"defend": policy.defend, "attack": policy.attack}
        return (name, policy, {}) if name else (getattr(policy, "name", type(policy).__name__), policy, {})
    if not isinstance(policy, str):
        raise ValueError(f"policy must be a name or a Policy, not {policy!r}")
    if policy in fastsim.FAST_POLICIES:
        fastsim.check_policy_params(policy, params)  # unknown parameters are a ValueError naming them
    try:
        obj = make_policy(policy, **params)  # refuses unknown names with a clear message
    except TypeError as exc:
        raise ValueError(f"bad parameters for the {policy} policy: {exc}") from None
    if policy == "threshold" and isinstance(obj, Threshold):
        params = {"defend": obj.defend, "attack": obj.attack}
    return policy, obj, params


def _fast_chunk(args: tuple[np.random.SeedSequence, int, str, Any, dict]) -> tuple[np.ndarray, np.ndarray]:
    seed, n, name, rules, params = args
    return fastsim.play(n, np.random.default_rng(seed), name, rules=rules, **params)


def _count_lengths(turns: np.ndarray) -> pd.Series:
    counts = np.bincount(turns)
    idx = np.nonzero(counts)[0]
    return pd.Series(counts[idx], index=pd.Index(idx, name="turns"), name="games")


def simulate(
    policy: str | Policy = "all-in",
    games: int = 10_000,
    seed: int | None = 0,
    workers: int = 1,
    fast: bool | None = None,
    policy_params: Mapping[str, float] | None = None,
    **rule_options: Any,
) -> SimulationResult:
    """Play ``games`` games of ``policy`` and report the win rate (95% Wilson interval) and the game lengths.

    ``policy`` is a name (``all-in``, ``defend-only``, ``never-fight``, ``threshold``, ``advisor``)
    with ``policy_params`` (``{"defend": 0.4, "attack": 0.6}`` for threshold), or a ``Policy``.
    ``fast``: None uses the numba kernel whenever the policy is a fixed one, True insists on it,
    False forces the plain engine. ``rule_options`` are ``KzinRules`` parameters.
    """
    if type(games) is not int or games < 1:
        raise ValueError(f"games must be a whole number of at least 1, not {games!r}")
    if type(workers) is not int or workers < 1:
        raise ValueError(f"workers must be a whole number of at least 1, not {workers!r}")
    if seed is not None and (type(seed) is not int or seed < 0):
        raise ValueError(f"seed must be a non-negative whole number, not {seed!r}")
    rules = make_rules(**rule_options)
    name, obj, params = _resolve(policy, policy_params)
    use_fast = name in fastsim.FAST_POLICIES if fast is None else bool(fast)
    if use_fast and name not in fastsim.FAST_POLICIES:
        raise ValueError(f"the fast simulator plays {', '.join(fastsim.FAST_POLICIES)}; not {name!r}")
    if use_fast:
        fastsim.play(1, np.random.default_rng(0), name, rules=rules, **params)  # load the kernel outside the timing
    start = time.perf_counter()
    if use_fast:
        sizes = [FAST_CHUNK] * (games // FAST_CHUNK) + ([games % FAST_CHUNK] if games % FAST_CHUNK else [])
        jobs = [(s, n, name, rules, params) for s, n in zip(child_seeds(seed, len(sizes)), sizes, strict=True)]
        if workers == 1 or len(jobs) == 1:
            parts = [_fast_chunk(job) for job in jobs]
        else:  # the kernel releases the GIL, so threads run it on every core
            with ThreadPoolExecutor(min(workers, len(jobs))) as pool:
                parts = list(pool.map(_fast_chunk, jobs))
        won = np.concatenate([p[0] for p in parts])
        turns = np.concatenate([p[1] for p in parts])
        wins, lengths, mean_turns = int(won.sum()), _count_lengths(turns), float(turns.mean())
        engine = "fast"
    else:
        game = KzinGame(rules)

        def measure(state: State) -> dict[str, float]:
            turn = cast(KzinState, state).turn  # monte_carlo plays this game's states
            return {"turns": float(turn), f"length={turn}": 1.0}

        est = monte_carlo(game, [obj], games, seed=seed, workers=workers, measure=measure)
        counts = {int(k.split("=")[1]): round(v * games) for k, v in est.measures.items() if k.startswith("length=")}
        lengths = pd.Series(counts, name="games").sort_index().rename_axis("turns")
        wins, mean_turns, engine = est.successes, est.measures["turns"], "plain"
    seconds = time.perf_counter() - start
    low, high = wilson_interval(wins, games)
    return SimulationResult(name, games, wins, wins / games, low, high, mean_turns, lengths, seconds, engine,
                            params, rules.options(), seed, workers)
