"""Paired games against the advisor: the advisor's results on a seeded list of game keys, kept in a CSV.

The advisor is slow (a full advice per decision, through the plain engine), the expert fast, so the
advisor's games are played once, per key, and written as they finish (``key,won,turn`` rows); a run
that stops resumes where it stopped. Any kernel policy is then played on the same keys (the same
deals and battle luck, :mod:`engine.kzin.expert`) and compared game by game with
:func:`engine.kzin.expert.paired`.
"""

from __future__ import annotations

import csv
import time
from pathlib import Path

import numpy as np

from engine.kzin.advisor import AdvisorPolicy
from engine.kzin.expert import game_keys, play_plain
from engine.kzin.rules import KzinRules, make_rules

COMPARE_SEED = 2026
ADVISOR_ROLLOUTS = 500  # AdvisorPolicy's own default: what the advisor plays in a simulation


def compare_keys(games: int, seed: int = COMPARE_SEED) -> np.ndarray:
    """The keys of the paired games: the first ``games`` of the seed's list (a longer run extends a shorter)."""
    return game_keys(np.random.default_rng(seed), games)


def read_results(path: Path) -> dict[int, tuple[bool, int]]:
    """key -> (Humans won, last turn) of the games already in ``path`` (none if it does not exist)."""
    if not path.exists():
        return {}
    with path.open(newline="") as f:
        return {int(r["key"]): (r["won"] == "1", int(r["turn"])) for r in csv.DictReader(f)}


def advisor_results(keys: np.ndarray, path: Path, rules: KzinRules | None = None, rollouts: int = ADVISOR_ROLLOUTS,
                    seconds: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(won, turns) of the advisor on ``keys``, playing only the keys not yet in ``path`` and appending each one.

    ``seconds`` bounds the time spent playing new games; the arrays then cover the keys played so far,
    in order (the first keys of the list that are done).
    """
    rules = rules if rules is not None else make_rules()
    done = read_results(path)
    new = not path.exists()
    start = time.perf_counter()
    with path.open("a", newline="") as f:
        w = csv.writer(f)
        if new:
            w.writerow(["key", "won", "turn"])
        for key in (int(k) for k in keys):
            if key in done:
                continue
            if seconds is not None and time.perf_counter() - start > seconds:
                break
            won, turn = play_plain(key, AdvisorPolicy(rollouts=rollouts), rules)
            done[key] = (won, turn)
            w.writerow([key, int(won), turn])
            f.flush()
    played = []
    for key in (int(k) for k in keys):
        if key not in done:
            break
        played.append(done[key])
    return (np.array([p[0] for p in played], dtype=np.bool_), np.array([p[1] for p in played], dtype=np.int32))
