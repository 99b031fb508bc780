"""``simulate``: win rate, its interval and the game lengths of a policy over many games.

The fixed policies (``all-in``, ``defend-only``, ``never-fight``, ``threshold``) run on the numba
kernel of :mod:`engine.kzin.fast`; any other policy (the advisor, a custom ``Policy``) or
``fast=False`` runs the plain engine (the chunks of :func:`engine.core.monte_carlo`). Either way the games
are split into fixed chunks, each with its own child seed, so a seed gives the same figures on any
number of workers, in this process or on Dask (:mod:`engine.core.distributed`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from engine.core import Policy, make_rng, play_game, wilson_interval
from engine.core.analysis import CHUNK
from engine.core.distributed import Progress, chunk_seeds, chunk_sizes, default_workers, run_chunks
from engine.kzin import fast as fastsim
from engine.kzin.policies import AllIn, DefendOnly, NeverFight, Threshold, make_policy
from engine.kzin.rules import KzinGame, make_rules

EXPERT_POLICIES = ("expert", "expert-table")
"""Policies the expert's numba kernel plays (:mod:`engine.kzin.expert`): the fast path for them."""
FAST_CHUNK = 50_000
"""Games per chunk on the fast path (fixed, so the figures do not depend on the number of workers)."""
SMALL_FAST_GAMES = 1_000_000
"""Fast-kernel games a job may have and still run in this process (about a second on one core)."""
SMALL_PLAIN_GAMES = 20_000
"""Plain-engine games a job may have and still run in this process."""

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


@dataclass(frozen=True)
class Cell:
    """One configuration to simulate: a policy (by name, or an object for the plain engine), its parameters,
    the rule options and the engine (``fast`` or ``plain``). Checked when made (``prepare``)."""

    name: str
    policy: str | Policy
    params: dict[str, Any]
    options: dict[str, Any]
    engine: str

    def chunks(self, games: int, seed: int | None) -> list[tuple[Any, ...]]:
        """The chunks of ``games`` games: fixed sizes and child seeds, whatever runs them."""
        sizes = chunk_sizes(games, FAST_CHUNK if self.engine == "fast" else CHUNK)
        return [(self.engine, self.policy, self.params, self.options, s, n)
                for s, n in zip(chunk_seeds(seed, len(sizes)), sizes, strict=True)]


def prepare(policy: str | Policy = "all-in", policy_params: Mapping[str, float] | None = None,
            fast: bool | None = None, **rule_options: Any) -> Cell:
    """A checked ``Cell``; a bad policy, parameter or rule option is a ``ValueError`` (see ``simulate``)."""
    rules = make_rules(**rule_options)
    name, obj, params = _resolve(policy, policy_params)
    kernel = (*fastsim.FAST_POLICIES, *EXPERT_POLICIES)
    use_fast = name in kernel if fast is None else bool(fast)
    if use_fast and name not in kernel:
        raise ValueError(f"the fast simulator plays {', '.join(kernel)}; not {name!r}")
    if use_fast:
        return Cell(name, name, params, rules.options(), "fast")
    return Cell(name, obj if not isinstance(policy, str) else name, params, rules.options(), "plain")


def play_chunk(engine: str, policy: str | Policy, params: dict[str, Any], options: dict[str, Any],
               seed: np.random.SeedSequence, games: int) -> tuple[int, np.ndarray, float]:
    """Play one chunk from its seed: (Humans' wins, games by final turn as a bincount, seconds spent)."""
    start = time.perf_counter()
    rules = make_rules(**options)
    if engine == "fast" and policy in EXPERT_POLICIES:
        # The expert's kernel: one counter-based key per game, drawn from the chunk's seed.
        from engine.kzin.expert import game_keys, play_keys

        won, turns = play_keys(game_keys(np.random.default_rng(seed), games), str(policy), rules)
        return int(won.sum()), np.bincount(turns), time.perf_counter() - start
    if engine == "fast":
        assert isinstance(policy, str)
        won, turns = fastsim.play(games, np.random.default_rng(seed), policy, rules=rules, **params)
        return int(won.sum()), np.bincount(turns), time.perf_counter() - start
    game = KzinGame(rules)
    player = make_policy(policy, **params) if isinstance(policy, str) else policy
    rng = make_rng(seed)
    wins, ends = 0, []
    for _ in range(games):
        state = play_game(game.new_initial_state(rng), [player], rng)
        wins += state.returns()[0] > 0
        ends.append(state.turn)
    return wins, np.bincount(np.asarray(ends, dtype=np.int64)), time.perf_counter() - start


def is_small(cells: list[Cell], games: int) -> bool:
    """A job that runs in this process whatever ``workers`` says: a cluster's start costs more than it does."""
    fast = sum(games for c in cells if c.engine == "fast")
    plain = sum(games for c in cells if c.engine == "plain")
    return fast <= SMALL_FAST_GAMES and plain <= SMALL_PLAIN_GAMES


def play_cells(cells: list[Cell], games: int, seed: int | None, workers: int | None = 1,
               scheduler: str | None = None, progress: Progress = False, stop: threading.Event | None = None,
               on_cell: Callable[[int, CellResult], None] | None = None,
               dashboard: Callable[[str], None] | None = None) -> list[CellResult]:
    """Every cell's figures from ``games`` games each, all chunks of all cells in one run.

    Every cell is played with the same seed (common random numbers). ``on_cell(index, figures)`` sees a cell
    as soon as its last chunk is in (partial results for a view that fills in); ``dashboard`` receives the
    address of a local cluster's Dask dashboard.
    """
    if type(games) is not int or games < 1:
        raise ValueError(f"games must be a whole number of at least 1, not {games!r}")
    if workers is not None and (type(workers) is not int or workers < 1):
        raise ValueError(f"workers must be a whole number of at least 1, not {workers!r}")
    if seed is not None and (type(seed) is not int or seed < 0):
        raise ValueError(f"seed must be a non-negative whole number, not {seed!r}")
    owner: list[int] = []
    chunks: list[tuple[Any, ...]] = []
    for k, cell in enumerate(cells):
        mine = cell.chunks(games, seed)
        chunks += mine
        owner += [k] * len(mine)
    remaining = [owner.count(k) for k in range(len(cells))]
    parts: list[list[tuple[int, np.ndarray, float]]] = [[] for _ in cells]
    done: dict[int, CellResult] = {}

    def arrived(i: int, part: tuple[int, np.ndarray, float]) -> None:
        k = owner[i]
        parts[k].append(part)
        remaining[k] -= 1
        if remaining[k] == 0:
            done[k] = CellResult.of(parts[k], games)
            if on_cell is not None:
                on_cell(k, done[k])

    run_chunks(play_chunk, chunks, weights=[c[-1] for c in chunks], workers=workers, scheduler=scheduler,
               small=is_small(cells, games), progress=progress, description="Man-Kzin Wars", stop=stop,
               on_result=arrived, threads=workers or default_workers(), dashboard=dashboard)
    return [done[k] for k in range(len(cells))]


@dataclass(frozen=True)
class CellResult:
    """A cell's figures summed over its chunks."""

    wins: int
    games: int
    lengths: pd.Series
    mean_turns: float
    seconds: float

    @classmethod
    def of(cls, parts: list[tuple[int, np.ndarray, float]], games: int) -> CellResult:
        width = max(len(p[1]) for p in parts)
        counts = np.zeros(width, dtype=np.int64)
        for p in parts:
            counts[:len(p[1])] += p[1]
        idx = np.nonzero(counts)[0]
        lengths = pd.Series(counts[idx], index=pd.Index(idx, name="turns"), name="games")
        mean = float((idx * counts[idx]).sum() / games)
        return cls(sum(p[0] for p in parts), games, lengths, mean, sum(p[2] for p in parts))


def simulate(
    policy: str | Policy = "all-in",
    games: int = 10_000,
    seed: int | None = 0,
    workers: int = 1,
    fast: bool | None = None,
    policy_params: Mapping[str, float] | None = None,
    scheduler: str | None = None,
    progress: Progress = False,
    stop: threading.Event | None = None,
    **rule_options: Any,
) -> SimulationResult:
    """Play ``games`` games of ``policy`` and report the win rate (95% Wilson interval) and the game lengths.

    ``policy`` is a name (``all-in``, ``defend-only``, ``never-fight``, ``threshold``, ``advisor``)
    with ``policy_params`` (``{"defend": 0.4, "attack": 0.6}`` for threshold), or a ``Policy``.
    ``fast``: None uses the numba kernel whenever the policy is a fixed one, True insists on it,
    False forces the plain engine. ``rule_options`` are ``KzinRules`` parameters.
    A large run with ``workers`` > 1 plays on a local Dask cluster of that many processes, or on ``scheduler``;
    a small one (up to a million fast or 20,000 plain games) stays in this process, on ``workers`` threads
    for the fast kernel (it releases the GIL).
    """
    if type(games) is not int or games < 1:
        raise ValueError(f"games must be a whole number of at least 1, not {games!r}")
    if type(workers) is not int or workers < 1:
        raise ValueError(f"workers must be a whole number of at least 1, not {workers!r}")
    if seed is not None and (type(seed) is not int or seed < 0):
        raise ValueError(f"seed must be a non-negative whole number, not {seed!r}")
    cell = prepare(policy, policy_params, fast, **rule_options)
    if cell.engine == "fast" and cell.name in EXPERT_POLICIES:
        play_chunk("fast", cell.name, {}, cell.options, np.random.SeedSequence(0), 1)  # compile outside the timing
    elif cell.engine == "fast":  # load the kernel outside the timing
        fastsim.play(1, np.random.default_rng(0), cell.name, rules=make_rules(**cell.options), **cell.params)
    start = time.perf_counter()
    [r] = play_cells([cell], games, seed, workers, scheduler, progress, stop)
    seconds = time.perf_counter() - start
    low, high = wilson_interval(r.wins, games)
    return SimulationResult(cell.name, games, r.wins, r.wins / games, low, high, r.mean_turns, r.lengths, seconds,
                            cell.engine, cell.params, cell.options, seed, workers)
