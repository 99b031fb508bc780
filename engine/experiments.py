"""Experiments: the large runs of the three games (a Man-Kzin Wars rulings grid, a Kung Fu 2100 tournament, a
Kung-Fu Zoo odds map) described as values a view can set up, start, watch fill in and stop.

Each experiment checks its settings when it is made (a bad one is a ``ValueError`` with the reason, before any
game is played), runs through the engine's Dask path (:mod:`engine.core.distributed`: in this process for a small
job, a local cluster or a running scheduler for a large one) and hands its rows to ``on_rows`` as each cell is
done, so partial results can be plotted with their intervals. ``points`` turns a table into the one shape every
plot of an experiment reads: a label, a series, the estimate and its 95% interval.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pandas as pd

from engine.core.distributed import Progress

Rows = Callable[[list[dict[str, Any]]], None]
POINT_COLUMNS = ["label", "series", "estimate", "low", "high"]


@dataclass(frozen=True)
class Run:
    """Where and how an experiment runs, and what it tells a view while it does."""

    workers: int | None = 1
    scheduler: str | None = None
    stop: threading.Event | None = None
    on_rows: Rows | None = None
    progress: Progress = False
    dashboard: Callable[[str], None] | None = None


class Experiment(ABC):
    """One large run, set up and checked; ``run`` plays it and returns its tidy table."""

    kind: ClassVar[str]
    title: ClassVar[str]
    unit: ClassVar[str] = "games"
    measure: ClassVar[str]
    """What the estimate of ``points`` is (a plot's axis label)."""

    @property
    @abstractmethod
    def cells(self) -> int:
        """How many rows of ``points`` a finished run has (a view's count of cells done)."""

    @abstractmethod
    def run(self, how: Run) -> pd.DataFrame: ...

    @abstractmethod
    def points(self, rows: list[dict[str, Any]]) -> pd.DataFrame:
        """The rows so far as ``POINT_COLUMNS``: one point a cell, its estimate and 95% interval."""


def _need(condition: bool, reason: str) -> None:
    if not condition:
        raise ValueError(reason)


def _whole(name: str, value: Any, low: int, high: int) -> None:
    _need(type(value) is int and low <= value <= high, f"{name} must be a whole number from {low} to {high}, "
          f"not {value!r}")


# --- Man-Kzin Wars: the rulings' win rates ----------------------------------------------------------

KZIN_RULINGS = ("reshuffle", "kzin_fleet_force", "fallback_discards_conquest")
"""The rule options that are rulings (on or off): the ones users asked to compare."""


@dataclass(frozen=True)
class KzinRulings(Experiment):
    """The Humans' win rate under every combination of the chosen rulings, for each policy (common random
    numbers: every cell plays the same seeds, so cells differ by the rules, not by luck)."""

    rulings: tuple[str, ...] = ("reshuffle",)
    policies: tuple[str, ...] = ("all-in",)
    games: int = 20_000
    seed: int = 0

    kind: ClassVar[str] = "kzin-rulings"
    title: ClassVar[str] = "Man-Kzin Wars: the rulings' win rates"
    measure: ClassVar[str] = "Humans' win rate"

    def __post_init__(self) -> None:
        from engine.kzin.policies import POLICY_NAMES

        _need(bool(self.rulings), "choose at least one ruling to compare")
        for r in self.rulings:
            _need(r in KZIN_RULINGS, f"unknown ruling {r!r}; choose from {', '.join(KZIN_RULINGS)}")
        _need(len(set(self.rulings)) == len(self.rulings), "a ruling is chosen twice")
        _need(bool(self.policies), "choose at least one policy")
        for p in self.policies:
            _need(p in POLICY_NAMES, f"unknown policy {p!r}; choose from {', '.join(POLICY_NAMES)}")
        _whole("games", self.games, 100, 10_000_000)
        _whole("seed", self.seed, 0, 2**32 - 1)

    @property
    def cells(self) -> int:
        return len(self.policies) * 2 ** len(self.rulings)

    def run(self, how: Run) -> pd.DataFrame:
        from engine.kzin.sweep import grid

        def row(r: dict[str, Any]) -> None:
            if how.on_rows is not None:
                how.on_rows([r])

        return grid({r: (False, True) for r in self.rulings}, self.policies, games=self.games, seed=self.seed,
                    workers=how.workers, scheduler=how.scheduler, progress=how.progress, stop=how.stop,
                    on_row=row, dashboard=how.dashboard)

    def points(self, rows: list[dict[str, Any]]) -> pd.DataFrame:
        out = [{"label": ", ".join(f"{r.replace('_', ' ')} {'on' if row[r] else 'off'}" for r in self.rulings),
                "series": row["policy"], "estimate": row["win_rate"], "low": row["low"], "high": row["high"]}
               for row in rows]
        return pd.DataFrame(out, columns=POINT_COLUMNS)


# --- Kung Fu 2100: bot against bot ------------------------------------------------------------------

@dataclass(frozen=True)
class KF2100Tournament(Experiment):
    """Every pairing of Terminator bots and Clone Master bots in every scenario: each side's win rate."""

    scenarios: tuple[str, ...] = ("basic",)
    terminators: tuple[str, ...] = ("heuristic",)
    clone_masters: tuple[str, ...] = ("heuristic",)
    games: int = 40
    seed: int = 0

    kind: ClassVar[str] = "kf2100-tournament"
    title: ClassVar[str] = "Kung Fu 2100: bot against bot"
    measure: ClassVar[str] = "win rate"

    def __post_init__(self) -> None:
        from engine.kf2100.state import KungFuGame
        from engine.kf2100.tournament import BOTS

        _need(bool(self.scenarios), "choose at least one scenario")
        for s in self.scenarios:
            KungFuGame(s)  # an unknown scenario is a ValueError naming the choices
        _need(bool(self.terminators) and bool(self.clone_masters), "choose at least one bot for each side")
        for b in (*self.terminators, *self.clone_masters):
            _need(b in BOTS, f"unknown bot {b!r}; choose from {', '.join(BOTS)}")
        _whole("games", self.games, 1, 100_000)
        _whole("seed", self.seed, 0, 2**32 - 1)

    @property
    def cells(self) -> int:
        return 2 * len(self.scenarios) * len(self.terminators) * len(self.clone_masters)

    def run(self, how: Run) -> pd.DataFrame:
        from engine.kf2100.tournament import tournament

        return tournament(self.scenarios, self.terminators, self.clone_masters, games=self.games, seed=self.seed,
                          workers=how.workers, scheduler=how.scheduler, progress=how.progress, stop=how.stop,
                          on_rows=how.on_rows, dashboard=how.dashboard)

    def points(self, rows: list[dict[str, Any]]) -> pd.DataFrame:
        out = [{"label": f"{row['scenario']}: {row['bot']} vs {row['opponent']}", "series": row["side"],
                "estimate": row["win_rate"], "low": row["win_low"], "high": row["win_high"]} for row in rows]
        return pd.DataFrame(out, columns=POINT_COLUMNS)


# --- Kung-Fu Zoo: one flick re-aimed ------------------------------------------------------------------

ZOO_MAPS = ("cage", "points")


@dataclass(frozen=True)
class ZooOddsMap(Experiment):
    """The chance that a flick cages (or its expected points) re-aimed over directions x speeds, in a seeded
    mid-game position (the benchmark's), ``samples`` noisy flicks a cell."""

    directions: tuple[float, ...] = (-0.4, -0.2, 0.0, 0.2, 0.4)
    speeds: tuple[float, ...] = (0.8, 1.2, 1.6)
    map: str = "cage"
    samples: int = 40
    seed: int = 3
    position: Any = field(default=None, compare=False, repr=False)
    """A ``ZooState`` to map; None: the seeded mid-game of ``seed``."""

    kind: ClassVar[str] = "zoo-odds-map"
    title: ClassVar[str] = "Kung-Fu Zoo: one flick re-aimed"
    unit: ClassVar[str] = "flicks"
    measure: ClassVar[str] = "chance of caging an opponent (cage map) or expected points"

    def __post_init__(self) -> None:
        _need(self.map in ZOO_MAPS, f"unknown map {self.map!r}; choose from {', '.join(ZOO_MAPS)}")
        _need(bool(self.directions) and bool(self.speeds), "give at least one direction and one speed")
        _need(len(self.directions) * len(self.speeds) <= 400, "at most 400 cells (directions x speeds)")
        for v in (*self.directions, *self.speeds):
            _need(isinstance(v, int | float) and v == v and abs(v) != float("inf"), f"{v!r} is not a number")
        _whole("samples", self.samples, 1, 100_000)
        _whole("seed", self.seed, 0, 2**32 - 1)

    @property
    def cells(self) -> int:
        return len(self.directions) * len(self.speeds)

    def run(self, how: Run) -> pd.DataFrame:
        from engine.zoo.bench import aimed_flick, mid_game_state
        from engine.zoo.odds_grid import odds_map

        state = self.position if self.position is not None else mid_game_state(self.seed)
        return odds_map(state, aimed_flick(state), self.directions, self.speeds, kind=self.map,
                        samples=self.samples, seed=self.seed, workers=how.workers, scheduler=how.scheduler,
                        progress=how.progress, stop=how.stop, on_rows=how.on_rows, dashboard=how.dashboard)

    def points(self, rows: list[dict[str, Any]]) -> pd.DataFrame:
        measure = "cage_opponent" if self.map == "cage" else "points"
        out = [{"label": f"direction {row['direction']:+.2f}", "series": f"speed {row['speed']:.2f} m/s",
                "estimate": row["estimate"], "low": row["low"], "high": row["high"]}
               for row in rows if row["measure"] == measure]
        return pd.DataFrame(out, columns=POINT_COLUMNS)


EXPERIMENTS: dict[str, type[Experiment]] = {e.kind: e for e in (KzinRulings, KF2100Tournament, ZooOddsMap)}
