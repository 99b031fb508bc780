"""Bot tournaments: every pairing of Terminators' and Clone Master's bots in every scenario, on Dask.

A game takes about half a second, so a tournament of a few hundred games is a job for several processes:
each pairing's games are split into fixed chunks of ``CHUNK`` games with a ``SeedSequence`` each
(:mod:`engine.core.distributed`), so a seed gives the same table on any number of workers. Every pairing is
played from the same seed (common random numbers). The table is tidy: one row per scenario, pairing and
side, with that side's win, draw and loss rates and their 95% Wilson intervals.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import pandas as pd

from engine.core import Policy, UniformRandomPolicy, make_rng, play_game, wilson_interval
from engine.core.distributed import Progress, chunk_seeds, chunk_sizes, run_chunks
from engine.kf2100.bots import CLONE_MASTER, TERMINATORS, HeuristicBot
from engine.kf2100.data import GRADES
from engine.kf2100.state import KungFuGame

CHUNK = 5
"""Games per chunk: small enough that two workers share a 200-game tournament evenly."""
SMALL_GAMES = 4
"""Tournaments of at most this many games in all run in the calling process."""
BOTS = ("heuristic", "search", "random")
"""``heuristic``: the rule-of-thumb player of ``bots.py`` (the solo rules for the solo Clone Master);
``search``: the determinized search of ``search.py`` at its stated budget (``search:N`` for N playouts a
decision); ``random``: a uniformly random legal action, a floor to measure the others against."""
SIDES = {TERMINATORS: "terminators", CLONE_MASTER: "clone_master"}
WINS = {TERMINATORS: ("terminator_total_victory", "terminator_victory"),
        CLONE_MASTER: ("clone_master_total_victory", "clone_master_victory")}
COLUMNS = ["scenario", "side", "bot", "opponent", "games", "wins", "draws", "losses", "total_wins",
           "win_rate", "win_low", "win_high", "draw_rate", "draw_low", "draw_high", "loss_rate", "loss_low",
           "loss_high", "mean_return", "mean_turns", "seed"]


def make_bot(name: str, player: int, game: KungFuGame) -> Policy:
    """The bot ``name`` for ``player``; an unknown name is a ``ValueError``."""
    if name == "heuristic":
        return HeuristicBot(player, solo=bool(game.solo) and player == CLONE_MASTER)
    if name == "search" or name.startswith("search:"):
        from engine.kf2100.search import SearchBot, search_budget

        return SearchBot(player, solo=bool(game.solo), playouts=search_budget(name))
    if name == "random":
        return UniformRandomPolicy()
    raise ValueError(f"unknown bot {name!r}; choose from {', '.join(BOTS)}")


def play_chunk(scenario: str, terminators: str, clone_master: str, seed: np.random.SeedSequence, games: int
               ) -> tuple[dict[str, int], int]:
    """Play one chunk from its seed: (games by grade, turns summed)."""
    game = KungFuGame(scenario)
    policies = [make_bot(terminators, TERMINATORS, game), make_bot(clone_master, CLONE_MASTER, game)]
    rng = make_rng(seed)
    grades: Counter[str] = Counter()
    turns = 0
    for _ in range(games):
        end = play_game(game.new_initial_state(), policies, rng)
        grades[end.result] += 1
        turns += min(end.turn, game.scenario.turns)
    return dict(grades), turns


def side_rows(scenario: str, bots: tuple[str, str], grades: Counter[str], turns: int, games: int,
              seed: int | None, returns: dict[str, float]) -> list[dict[str, Any]]:
    """The two rows of one pairing: the Terminators' and the Clone Master's view of the same games."""
    rows = []
    draws = grades["draw"]
    for player, side in SIDES.items():
        wins = sum(grades[g] for g in WINS[player])
        losses = games - wins - draws
        sign = 1.0 if player == TERMINATORS else -1.0  # the grades' values are the Terminators' returns
        row: dict[str, Any] = {"scenario": scenario, "side": side, "bot": bots[player], "opponent": bots[1 - player],
                               "games": games, "wins": wins, "draws": draws, "losses": losses,
                               "total_wins": grades[WINS[player][0]]}
        for key, n in (("win", wins), ("draw", draws), ("loss", losses)):
            low, high = wilson_interval(n, games)
            row[f"{key}_rate"], row[f"{key}_low"], row[f"{key}_high"] = n / games, low, high
        row["mean_return"] = sign * sum(returns[g] * grades[g] for g in GRADES) / games + 0.0  # no -0.0
        row["mean_turns"] = turns / games
        row["seed"] = seed
        rows.append(row)
    return rows


def solo_points(games: int = 1000, seed: int | None = 0, terminators: str = "heuristic",
                clone_master: str = "heuristic") -> pd.DataFrame:
    """The Solo points of each of ``games`` games of one pairing, one row a game (its result, the Terminator's and
    the Clone Master's points, their difference, the turn it ended): the tournament's own games (its chunks and
    their seeds, so ``tournament(["solo"], ...)`` with the same seed counts the same results), played here in
    this process (a Solo game takes a few hundredths of a second). The points are what the seed's Solo scoring
    gives (``KungFuState.solo_points``); :func:`points_summary` gives their means with 95% intervals."""
    if type(games) is not int or games < 1:
        raise ValueError(f"games must be a whole number of at least 1, not {games!r}")
    game = KungFuGame("solo")
    sizes = chunk_sizes(games, CHUNK)
    rows = []
    for chunk_seed, n in zip(chunk_seeds(seed, len(sizes)), sizes, strict=True):
        policies = [make_bot(terminators, TERMINATORS, game), make_bot(clone_master, CLONE_MASTER, game)]
        rng = make_rng(chunk_seed)
        for _ in range(n):
            end = play_game(game.new_initial_state(), policies, rng)
            t, cm = end.solo_points()
            rows.append({"result": end.result, "terminator": t, "clone_master": cm, "margin": t - cm,
                         "turn": min(end.turn, game.scenario.turns)})
    return pd.DataFrame(rows, columns=["result", "terminator", "clone_master", "margin", "turn"])


def points_summary(points: pd.DataFrame) -> pd.DataFrame:
    """Mean, standard deviation, 95% interval of the mean (Student's t) and quartiles of each points column of
    :func:`solo_points`."""
    from scipy import stats

    out = []
    for column in ("terminator", "clone_master", "margin"):
        x = points[column].to_numpy(dtype=float)
        mean, sd = float(x.mean()), float(x.std(ddof=1)) if len(x) > 1 else 0.0
        half = float(stats.t.ppf(0.975, len(x) - 1)) * sd / np.sqrt(len(x)) if len(x) > 1 else float("nan")
        q1, median, q3 = np.percentile(x, [25, 50, 75])
        out.append({"points": column, "games": len(x), "mean": mean, "sd": sd, "low": mean - half,
                    "high": mean + half, "min": float(x.min()), "q1": q1, "median": median, "q3": q3,
                    "max": float(x.max())})
    return pd.DataFrame(out)


def tournament(
    scenarios: Iterable[str] = ("basic",),
    terminators: Iterable[str] = ("heuristic",),
    clone_masters: Iterable[str] = ("heuristic",),
    games: int = 100,
    seed: int | None = 0,
    workers: int | None = None,
    scheduler: str | None = None,
    progress: Progress = False,
    stop: threading.Event | None = None,
    on_rows: Callable[[list[dict[str, Any]]], None] | None = None,
    dashboard: Callable[[str], None] | None = None,
) -> pd.DataFrame:
    """``games`` games of every pairing of ``terminators`` x ``clone_masters`` bots in every scenario.

    ``workers`` None uses a local cluster of one process a core (``scheduler``: a running one); a
    tournament of a handful of games stays in this process. ``on_rows`` sees a pairing's two rows as soon as
    its games are in; ``dashboard`` the address of a local cluster's Dask dashboard. A bad scenario, bot or
    count is a ``ValueError`` before any game is played.
    """
    scenarios, terminators, clone_masters = list(scenarios), list(terminators), list(clone_masters)
    if type(games) is not int or games < 1:
        raise ValueError(f"games must be a whole number of at least 1, not {games!r}")
    if seed is not None and (type(seed) is not int or seed < 0):
        raise ValueError(f"seed must be a non-negative whole number, not {seed!r}")
    if not (scenarios and terminators and clone_masters):
        raise ValueError("give at least one scenario and one bot for each side")
    books = {s: KungFuGame(s) for s in scenarios}  # an unknown scenario is a ValueError naming the choices
    for name in (*terminators, *clone_masters):
        make_bot(name, TERMINATORS, books[scenarios[0]])
    cells = list(itertools.product(scenarios, terminators, clone_masters))
    sizes = chunk_sizes(games, CHUNK)
    seeds = chunk_seeds(seed, len(sizes))
    chunks = [(*cell, s, n) for cell in cells for s, n in zip(seeds, sizes, strict=True)]
    owner = [k for k in range(len(cells)) for _ in sizes]
    grades: list[Counter[str]] = [Counter() for _ in cells]
    turns = [0] * len(cells)
    left = [len(sizes)] * len(cells)
    rows: list[list[dict[str, Any]]] = [[] for _ in cells]

    def arrived(i: int, part: tuple[dict[str, int], int]) -> None:
        k = owner[i]
        grades[k].update(part[0])
        turns[k] += part[1]
        left[k] -= 1
        if left[k] == 0:
            scenario, t, cm = cells[k]
            rows[k] = side_rows(scenario, (t, cm), grades[k], turns[k], games, seed,
                                books[scenario].book.scenarios.grades)
            if on_rows is not None:
                on_rows(rows[k])

    start = time.perf_counter()
    run_chunks(play_chunk, chunks, weights=[c[-1] for c in chunks], workers=workers, scheduler=scheduler,
               small=games * len(cells) <= SMALL_GAMES, progress=progress, description="Kung Fu 2100", stop=stop,
               on_result=arrived, dashboard=dashboard)
    frame = pd.DataFrame([r for pair in rows for r in pair], columns=COLUMNS)
    frame.attrs.update(seconds=time.perf_counter() - start, games=games * len(cells))
    return frame
