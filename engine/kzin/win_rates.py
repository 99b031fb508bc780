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
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from engine.core import wilson_interval
from engine.kzin.compare import COMPARE_SEED, compare_keys, done_prefix, read_results, ruling_file
from engine.kzin.expert import KERNEL_POLICIES, RULINGS, game_keys, play_keys
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
    """Every (ruling, policy) row: ``games`` per policy (as ``DEFAULT_GAMES``); the advisor's, when ``advisor_csv``
    is given, from it (the default rulings' paired games, keys of :data:`COMPARE_SEED`) and its siblings
    (:func:`advisor_rows`)."""
    from engine.kzin.clairvoyant import play_clairvoyant

    unknown = set(games) - set(DEFAULT_GAMES)
    if unknown:
        raise ValueError(f"win-rates plays {', '.join(DEFAULT_GAMES)}; not {', '.join(sorted(unknown))}")
    rows: list[dict[str, object]] = []

    def add(r: dict[str, object]) -> None:
        rows.append(r)
        if on_row is not None:
            on_row(r)

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
            add(row(ruling, policy, won, f"{NOTES[policy]}; {time.perf_counter() - t0:.0f} s"))
    if advisor_csv is not None:  # last: the most games done
        for r in advisor_rows(advisor_csv, rulings):
            add(r)
    return rows


def advisor_rows(advisor_csv: Path, rulings: Iterable[str] = tuple(RULINGS)) -> list[dict[str, object]]:
    """The advisor's row of each ruling whose games file exists: the first keys of :data:`COMPARE_SEED`'s list that
    are done, in order."""
    rows = []
    for ruling in rulings:
        done = read_results(ruling_file(advisor_csv, ruling))
        adv = [won for won, _ in done_prefix(compare_keys(len(done), COMPARE_SEED), done)]
        if len(adv) >= 2:
            rows.append(row(ruling, "advisor", np.array(adv, dtype=bool), f"{NOTES['advisor']}; plain engine, "
                            f"keys of seed {COMPARE_SEED}"))
    return rows


def measure_in_rounds(policy: str, games: int, seed: int = 2027, rulings: Iterable[str] = tuple(RULINGS),
                      chunk: int = 5_000, seconds: float | None = None,
                      on_row: Callable[[dict[str, object]], None] | None = None) -> list[dict[str, object]]:
    """A kernel policy under every ruling, ``chunk`` games of each in turn, toward ``games`` each: the rows of the
    games played when ``games`` is reached or a round ends after ``seconds`` (every ruling then has the same count).

    The keys are the first of ``seed``'s list, as :func:`measure` plays them (a longer list extends a shorter), so
    the rows are those :func:`measure` gives for the same count. ``on_row`` sees each ruling's row after every round.
    """
    if policy not in KERNEL_POLICIES:
        raise ValueError(f"rounds play a kernel policy ({', '.join(KERNEL_POLICIES)}), not {policy!r}")
    if chunk < 1 or games < 2:
        raise ValueError("rounds need a chunk of at least 1 game and at least 2 games")
    rulings = list(rulings)
    keys = game_keys(np.random.default_rng(seed), games)
    rules = {r: make_rules(**RULINGS[r]) for r in rulings}
    won: dict[str, list[np.ndarray]] = {r: [] for r in rulings}
    cpu = dict.fromkeys(rulings, 0.0)
    start = time.perf_counter()
    rows: list[dict[str, object]] = []
    for a in range(0, games, chunk):
        if seconds is not None and a > 0 and time.perf_counter() - start > seconds:
            break
        rows = []
        for ruling in rulings:
            t0 = time.process_time()
            won[ruling].append(play_keys(keys[a:a + chunk], policy, rules[ruling])[0])
            cpu[ruling] += time.process_time() - t0
            r = row(ruling, policy, np.concatenate(won[ruling]), f"{NOTES[policy]}; {cpu[ruling]:.0f} s of CPU")
            rows.append(r)
            if on_row is not None:
                on_row(r)
    return rows


POLICY_ORDER = ("all-in", "threshold", "advisor", "expert-table", "expert", "clairvoyant")


def merged(old: list[dict[str, object]], new: list[dict[str, object]]) -> list[dict[str, object]]:
    """``old`` rows with those of ``new`` in place of the same (ruling, policy), ordered by ruling and policy."""
    by = {(str(r["ruling"]), str(r["policy"])): r for r in old}
    by.update({(str(r["ruling"]), str(r["policy"])): r for r in new})
    rank = {name: i for i, name in enumerate(RULINGS)}
    return sorted(by.values(), key=lambda r: (rank.get(str(r["ruling"]), len(rank)), POLICY_ORDER.index(r["policy"])))


def read(path: Path | None = None) -> list[dict[str, object]]:
    """The rows of a win-rates CSV (the shipped one by default), as written."""
    with (path or data_path()).open(newline="") as f:
        return list(csv.DictReader(f))


def _cell(r: Mapping[str, Any] | None) -> str:
    if r is None:
        return "not run"
    return (f"{100 * float(r['rate']):.2f}% ({100 * float(r['low']):.2f}-{100 * float(r['high']):.2f}), "
            f"{int(r['games']):,}")


def readme_table(rows: list[dict[str, object]]) -> str:
    """The README's table of the rows: a policy a line, a ruling a column, each cell rate (95% interval), games."""
    rulings = [r for r in RULINGS if any(x["ruling"] == r for x in rows)]
    by = {(x["ruling"], x["policy"]): x for x in rows}
    policies = [p for p in POLICY_ORDER if any(x["policy"] == p for x in rows)]
    lines = ["| policy | " + " | ".join(rulings) + " |", "|---|" + "---|" * len(rulings)]
    lines += [f"| {p} | " + " | ".join(_cell(by.get((r, p))) for r in rulings) + " |" for p in policies]
    return "\n".join(lines)


def write(rows: list[dict[str, object]], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(rows)
    return path


def update_readme(readme: Path, rows: list[dict[str, object]] | None = None) -> bool:
    """Put :func:`readme_table` of ``rows`` (the shipped CSV by default) in place of the README's table (the lines
    from its ``| policy | default`` header to the first line that is not a table row); True if the text changed."""
    text = readme.read_text()
    lines = text.split("\n")
    starts = [i for i, line in enumerate(lines) if line.startswith("| policy | default |")]
    if len(starts) != 1:
        raise ValueError(f"{readme} has {len(starts)} win-rate tables (a line starting '| policy | default |')")
    end = starts[0]
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    new = "\n".join([*lines[:starts[0]], readme_table(rows if rows is not None else read()), *lines[end:]])
    readme.write_text(new)
    return new != text


if __name__ == "__main__":
    import sys

    print("README table updated" if update_readme(Path(sys.argv[1])) else "README table already current")
