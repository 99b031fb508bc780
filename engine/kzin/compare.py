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
from collections.abc import Iterable, Mapping
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
    played = done_prefix(keys, done)
    return (np.array([p[0] for p in played], dtype=np.bool_), np.array([p[1] for p in played], dtype=np.int32))


def done_prefix(keys: Iterable[int], done: Mapping[int, tuple[bool, int]]) -> list[tuple[bool, int]]:
    """The results of the first keys of ``keys`` that are in ``done``, in order, up to the first key not played: a
    resumable run's games so far (a run stopped by time leaves the rest of the list unplayed)."""
    played = []
    for key in (int(k) for k in keys):
        if key not in done:
            break
        played.append(done[key])
    return played


def advisor_path(ruling: str = "default", data: Path | None = None) -> Path:
    """The advisor's games under ``ruling``: ``advisor_games.csv`` for the default rulings, else
    ``advisor_games_<ruling>.csv`` (the same keys, each ruling's own file)."""
    from engine.kzin.expert import RULINGS

    if ruling not in RULINGS:
        raise ValueError(f"unknown ruling {ruling!r}; choose from {', '.join(RULINGS)}")
    data = data if data is not None else Path(__file__).with_name("data")
    return ruling_file(data / "advisor_games.csv", ruling)


def ruling_file(default_csv: Path, ruling: str) -> Path:
    """The games file of ``ruling`` beside ``default_csv``, the default rulings' own: ``default_csv`` itself for the
    default rulings, else its sibling ``<stem>_<ruling>.csv``."""
    return default_csv if ruling == "default" else default_csv.with_name(f"{default_csv.stem}_{ruling}.csv")


def advisor_rulings(games: int, rulings: list[str], seconds: float | None = None, data: Path | None = None,
                    rollouts: int = ADVISOR_ROLLOUTS) -> dict[str, int]:
    """The advisor on the first ``games`` keys of :data:`COMPARE_SEED` under each ruling, key by key in turn
    (so every ruling has the same keys done, give or take one, when ``seconds`` runs out): ruling -> games done.

    The same code path as the default ruling's run (:func:`advisor_results`), resumable from each ruling's file.
    """
    from engine.kzin.expert import RULINGS

    keys = compare_keys(games)
    paths = {r: advisor_path(r, data) for r in rulings}
    rules = {r: make_rules(**RULINGS[r]) for r in rulings}
    start = time.perf_counter()
    done = dict.fromkeys(rulings, 0)
    for i in range(1, len(keys) + 1):
        for r in rulings:
            if seconds is not None and time.perf_counter() - start > seconds:
                return done
            done[r] = len(advisor_results(keys[:i], paths[r], rules[r], rollouts)[0])
    return done


def main(argv: list[str] | None = None) -> int:
    """``python -m engine.kzin.compare --games N --seconds S RULING...``: the advisor's games, in the background."""
    import argparse

    p = argparse.ArgumentParser(description=advisor_rulings.__doc__)
    p.add_argument("rulings", nargs="+")
    p.add_argument("--games", type=int, default=10_000)
    p.add_argument("--seconds", type=float, default=None)
    a = p.parse_args(argv)
    print(advisor_rulings(a.games, a.rulings, a.seconds), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
