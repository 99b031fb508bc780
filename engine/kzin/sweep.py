"""Balance sweeps: vary one rule parameter and watch the Humans' win rate move."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from engine.core import Policy
from engine.kzin.rules import RULE_OPTIONS
from engine.kzin.simulate import simulate

COLUMNS = ["value", "win_rate", "low", "high", "mean_turns", "wins", "games", "seconds"]


def sweep(
    parameter: str,
    values: Iterable[Any],
    policy: str | Policy = "all-in",
    games: int = 100_000,
    seed: int | None = 0,
    workers: int = 1,
    fast: bool | None = None,
    policy_params: Mapping[str, float] | None = None,
    **other_options: Any,
) -> pd.DataFrame:
    """One row per value of rule ``parameter``: win rate with its 95% interval and mean length.

    Every value is played with the same seed (common random numbers), so neighbouring rows differ
    by the rule, not by luck in the seed. The other rule options stay as given.
    """
    if parameter not in RULE_OPTIONS:
        raise ValueError(f"unknown rule parameter {parameter!r}; choose from {', '.join(RULE_OPTIONS)}")
    if parameter in other_options:
        raise ValueError(f"{parameter} is the parameter being swept; do not also fix it")
    values = list(values)
    if not values:
        raise ValueError("give at least one value to sweep")
    rows = []
    for value in values:
        r = simulate(policy, games, seed=seed, workers=workers, fast=fast, policy_params=policy_params,
                     **{parameter: value}, **other_options)
        rows.append({"value": value, "win_rate": r.win_rate, "low": r.low, "high": r.high,
                     "mean_turns": r.mean_turns, "wins": r.wins, "games": r.games, "seconds": r.seconds})
    frame = pd.DataFrame(rows, columns=COLUMNS)
    frame.attrs.update(parameter=parameter, policy=_name(policy), other_options=dict(other_options))
    return frame


def _name(policy: str | Policy) -> str:
    return policy if isinstance(policy, str) else getattr(policy, "name", type(policy).__name__)
