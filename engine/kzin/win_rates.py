"""Win rates of every policy under every ruling, on the same deals and dice: ``dojo kzin win-rates``.

All games are played on the counter-based keys of :mod:`engine.kzin.expert` from one seed (the first
``n`` keys of the seed's list), so every policy meets the same deals and battle luck. The fixed
policies and the expert table run on the expert's numba kernel, the expert with its lookahead and the
clairvoyant more slowly (fewer games), and the advisor's games come from the CSV that
:mod:`engine.kzin.compare` keeps (the advisor plays through the plain engine, about a game a second on a
loaded machine). Each row: ruling, policy, games, wins, rate, the 95% Wilson interval, and a note.
"""

from __future__ import annotations

import csv
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

from engine.core import wilson_interval
from engine.kzin.compare import COMPARE_SEED, compare_keys, read_results
from engine.kzin.expert import RULINGS, game_keys, play_keys
from engine.kzin.rules import make_rules

COLUMNS = ("ruling", "policy", "games", "wins", "rate", "low", "high", "note")
DEFAULT_GAMES = {"all-in": 1_000_000, "threshold": 1_000_000, "expert-table": 1_000_000, "expert": 5_000,
                 "clairvoyant": 1_000}
NOTES = {
    "all-in": "every battle with everything that counts",
    "threshold": "fights at exact battle odds of 50% or more",
    "expert-table": "the learned table alone (approximate policy iteration)",
    "expert": "the table, one card deeper on close calls (the expert on the page)",
    "clairvoyant": "knows the deck order, searches 3 turns: an estimate from below of clairvoyant play",
    "advisor": "rollouts of the threshold policy, 500 a state",
}


def data_path() -> Path:
    return Path(__file__).with_name("data") / "win_rates.csv"


def row(ruling: str, policy: str, won: np.ndarray, note: str) -> dict[str, object]:
    """One CSV row: the wins of ``won`` with their 95% Wilson interval."""
    n, w = len(won), int(np.sum(won))
    low, high = wilson_interval(w, n)
    return {"ruling": ruling, "policy": policy, "games": n, "wins": w, "rate": round(w / n, 6),
            "low": round(low, 6), "high": round(high, 6), "note": note}


def measure(games: dict[str, int], seed: int = 2027, rulings: Iterable[str] = tuple(RULINGS),
            advisor_csv: Path | None = None, on_row: Callable[[dict[str, object]], None] | None = None
            ) -> list[dict[str, object]]:
    """Every (ruling, policy) row: ``games`` per policy (as ``DEFAULT_GAMES``); the advisor's from ``advisor_csv``
    (the default ruling's paired games, keys of :data:`COMPARE_SEED`) when given."""
    from engine.kzin.clairvoyant import play_clairvoyant

    unknown = set(games) - set(DEFAULT_GAMES)
    if unknown:
        raise ValueError(f"win-rates plays {', '.join(DEFAULT_GAMES)}; not {', '.join(sorted(unknown))}")
    rows = []
    most = max(games.values())
    keys = game_keys(np.random.default_rng(seed), most)
    for ruling in rulings:
        rules = make_rules(**RULINGS[ruling])
        for policy, n in games.items():
            t0 = time.perf_counter()
            if policy == "clairvoyant":
                won, _ = play_clairvoyant(keys[:n], rules)
            else:
                won, _ = play_keys(keys[:n], policy, rules)
            r = row(ruling, policy, won, f"{NOTES[policy]}; {time.perf_counter() - t0:.0f} s")
            rows.append(r)
            if on_row is not None:
                on_row(r)
    if "default" in rulings and advisor_csv is not None and advisor_csv.exists():  # last: the most games done
        done = read_results(advisor_csv)
        adv = []
        for k in compare_keys(len(done), COMPARE_SEED):
            if int(k) not in done:
                break
            adv.append(done[int(k)][0])
        if adv:
            r = row("default", "advisor", np.array(adv, dtype=bool), f"{NOTES['advisor']}; plain engine, "
                    f"keys of seed {COMPARE_SEED}")
            rows.append(r)
            if on_row is not None:
                on_row(r)
    return rows


def write(rows: list[dict[str, object]], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(rows)
    return path
