"""``dojo kf2100 simulate``: bot-versus-bot games of a scenario, for balance."""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from typing import Any

from engine.core import make_rng, play_game, wilson_interval
from engine.kf2100.bots import bots_for
from engine.kf2100.data import GRADES
from engine.kf2100.state import KungFuGame


def simulate(scenario: str, games: int, seed: int = 0) -> dict[str, Any]:
    """Play ``games`` seeded bot-versus-bot games; results with 95% Wilson intervals."""
    if games < 1:
        raise ValueError("games must be at least 1")
    game = KungFuGame(scenario)
    policies = bots_for(game)
    rng = make_rng(seed)
    results: Counter[str] = Counter()
    turns = points_t = points_cm = 0
    start = time.perf_counter()
    for _ in range(games):
        end = play_game(game.new_initial_state(), policies, rng)
        results[end.result] += 1
        turns += min(end.turn, game.scenario.turns)
        if game.solo:
            t, cm = end.solo_points()
            points_t, points_cm = points_t + t, points_cm + cm
    seconds = time.perf_counter() - start
    out: dict[str, Any] = {
        "scenario": scenario, "games": games, "seed": seed,
        "results": {g: results[g] for g in GRADES if results[g]},
        "intervals": {g: list(wilson_interval(results[g], games)) for g in GRADES if results[g]},
        "terminator_return": sum(game.book.scenarios.grades[g] * n for g, n in results.items()) / games
        if not game.solo else None,
        "mean_turns": turns / games, "seconds_per_game": seconds / games,
    }
    if game.solo:
        out["mean_points"] = {"terminator": points_t / games, "clone_master": points_cm / games}
    return out


def _run(args: argparse.Namespace) -> int:
    try:
        report = simulate(args.scenario, args.games, args.seed)
    except ValueError as exc:
        print(f"kf2100 simulate: {exc}")
        return 2
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    print(f"Kung Fu 2100, {report['scenario']}: {report['games']} bot-versus-bot games (seed {report['seed']})")
    for grade, n in report["results"].items():
        low, high = report["intervals"][grade]
        print(f"  {grade.replace('_', ' '):28s} {n:5d}  {n / report['games']:.3f} (95% CI {low:.3f}-{high:.3f})")
    if report.get("mean_points"):
        mp = report["mean_points"]
        print(f"  mean points: Terminator {mp['terminator']:.1f}, Clone Master {mp['clone_master']:.1f}")
    print(f"  mean turns {report['mean_turns']:.1f}; {report['seconds_per_game']:.2f} s a game")
    return 0


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("kf2100", help="Kung Fu 2100 tools")
    sub = parser.add_subparsers(dest="kf2100_command", metavar="COMMAND", required=True)
    sim = sub.add_parser("simulate", help="bot-versus-bot games of a scenario, for balance")
    sim.add_argument("--scenario", default="basic", choices=["basic", "advanced", "solo"])
    sim.add_argument("--games", type=int, default=20)
    sim.add_argument("--seed", type=int, default=0)
    sim.add_argument("--json", action="store_true", help="print the report as JSON")
    sim.set_defaults(func=_run)
