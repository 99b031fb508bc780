"""Balance sweeps: the Humans' win rate over any product of rule options, policies and policy parameters.

``grid`` plays every combination (one cell each) in one run, so a large grid fills a Dask cluster; ``sweep``
is its one-parameter form with the table it always had. Every cell is played with the same seed (common
random numbers), so neighbouring cells differ by the rules, not by luck in the seed.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pandas as pd

from engine.core import Policy, wilson_interval
from engine.core.distributed import Progress
from engine.kzin.rules import RULE_OPTIONS
from engine.kzin.simulate import Cell, CellResult, play_cells, prepare

COLUMNS = ["value", "win_rate", "low", "high", "mean_turns", "wins", "games", "seconds"]
POLICY_PARAMS = ("defend", "attack")
"""The parameters a policy may take (the threshold policy's exact-odds limits)."""
GRID_COLUMNS = ["policy", *POLICY_PARAMS, *RULE_OPTIONS, "games", "wins", "win_rate", "low", "high", "mean_turns",
                "engine", "seed"]
"""The tidy table of ``grid``: one row a cell, every rule option and parameter spelled out."""


def grid(
    options: Mapping[str, Iterable[Any]] | None = None,
    policies: Iterable[str | Policy] = ("all-in",),
    policy_params: Mapping[str, Iterable[float]] | None = None,
    games: int = 100_000,
    seed: int | None = 0,
    workers: int | None = 1,
    fast: bool | None = None,
    scheduler: str | None = None,
    progress: Progress = False,
    stop: threading.Event | None = None,
    on_row: Callable[[dict[str, Any]], None] | None = None,
    dashboard: Callable[[str], None] | None = None,
    **fixed_options: Any,
) -> pd.DataFrame:
    """One row per combination of ``options`` (rule option -> values), ``policies`` and ``policy_params``
    (``{"defend": [0.3, 0.5]}``; they apply to the policies that take them), with the win rate, its 95% Wilson
    interval and the mean game length. ``fixed_options`` hold other rule options for every cell.

    ``on_row(row)`` sees each row as soon as its cell is done (partial results for a view that fills in);
    ``dashboard`` receives the address of a local cluster's Dask dashboard (which is then turned on).
    """
    options = {k: list(v) for k, v in (options or {}).items()}
    params = {k: list(v) for k, v in (policy_params or {}).items()}
    policies = list(policies)
    unknown = [k for k in options if k not in RULE_OPTIONS]
    if unknown:
        raise ValueError(f"unknown rule parameter {unknown[0]!r}; choose from {', '.join(RULE_OPTIONS)}")
    both = sorted(set(options) & set(fixed_options))
    if both:
        raise ValueError(f"{both[0]} is a parameter being swept; do not also fix it")
    bad = [k for k in params if k not in POLICY_PARAMS]
    if bad:
        raise ValueError(f"policies take {' and '.join(POLICY_PARAMS)}, not {bad[0]!r}")
    if not policies or any(not v for v in (*options.values(), *params.values())):
        raise ValueError("give at least one value to sweep")
    cells: list[Cell] = []
    for policy in policies:
        for combo in itertools.product(*options.values()):
            rules = dict(zip(options, combo, strict=True))
            for values in _param_sets(policy, params):
                cells.append(prepare(policy, values, fast, **rules, **fixed_options))
    rows: list[dict[str, Any] | None] = [None] * len(cells)

    def done(k: int, r: CellResult) -> None:
        row = rows[k] = _row(cells[k], r, seed)
        if on_row is not None:
            on_row(row)

    start = time.perf_counter()
    play_cells(cells, games, seed, workers, scheduler, progress, stop, on_cell=done, dashboard=dashboard)
    frame = pd.DataFrame(rows, columns=GRID_COLUMNS)
    frame.attrs.update(swept=[*options, *params], seconds=time.perf_counter() - start,
                       games_per_second=games * len(cells) / max(time.perf_counter() - start, 1e-9))
    return frame


def _param_sets(policy: str | Policy, params: Mapping[str, list[float]]) -> list[dict[str, float]]:
    """The parameter combinations for one policy: the product for the threshold policy, none for the others."""
    if not params or policy != "threshold":
        return [{}]
    return [dict(zip(params, combo, strict=True)) for combo in itertools.product(*params.values())]


def _row(cell: Cell, r: CellResult, seed: int | None) -> dict[str, Any]:
    low, high = wilson_interval(r.wins, r.games)
    return {"policy": cell.name, **{k: cell.params.get(k) for k in POLICY_PARAMS}, **cell.options,
            "games": r.games, "wins": r.wins, "win_rate": r.wins / r.games, "low": low, "high": high,
            "mean_turns": r.mean_turns, "engine": cell.engine, "seed": seed, "seconds": r.seconds}


def sweep(
    parameter: str,
    values: Iterable[Any],
    policy: str | Policy = "all-in",
    games: int = 100_000,
    seed: int | None = 0,
    workers: int = 1,
    fast: bool | None = None,
    policy_params: Mapping[str, float] | None = None,
    scheduler: str | None = None,
    progress: Progress = False,
    **other_options: Any,
) -> pd.DataFrame:
    """One row per value of rule ``parameter``: win rate with its 95% interval and mean length.

    The other rule options stay as given. All the values play in one run (see ``grid``).
    """
    if parameter not in RULE_OPTIONS:
        raise ValueError(f"unknown rule parameter {parameter!r}; choose from {', '.join(RULE_OPTIONS)}")
    if parameter in other_options:
        raise ValueError(f"{parameter} is the parameter being swept; do not also fix it")
    values = list(values)
    if not values:
        raise ValueError("give at least one value to sweep")
    cells = [prepare(policy, policy_params, fast, **{parameter: v}, **other_options) for v in values]
    results = play_cells(cells, games, seed, workers, scheduler, progress)
    rows = [{**_row(c, r, seed), "value": v} for c, r, v in zip(cells, results, values, strict=True)]
    frame = pd.DataFrame(rows, columns=COLUMNS)
    frame.attrs.update(parameter=parameter, policy=_name(policy), other_options=dict(other_options))
    return frame


def _name(policy: str | Policy) -> str:
    return policy if isinstance(policy, str) else getattr(policy, "name", type(policy).__name__)
