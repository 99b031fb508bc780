"""``dojo kf2100 simulate`` and ``tournament``: bot-versus-bot games of a scenario, for balance.

``dojo kf2100 tournament --scenarios basic,advanced --terminators heuristic,random --games 200 --out t.csv``
plays every pairing on a local Dask cluster (``--scheduler ADDRESS`` for a running one) and prints, per
scenario and side, the win, draw and loss rates with 95% Wilson intervals (``--json`` for a program).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from typing import Any

from engine.core import StateFormatError, make_rng, play_game, wilson_interval
from engine.core.distributed import add_run_options, check_out, dashboard_printer, write_table
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


def _names(text: str) -> list[str]:
    return [w.strip() for w in text.split(",") if w.strip()]


def _tournament(args: argparse.Namespace) -> int:
    from engine.kf2100.tournament import tournament

    try:
        check_out(args.out)
        frame = tournament(_names(args.scenarios), _names(args.terminators), _names(args.clone_masters),
                           games=args.games, seed=args.seed, workers=args.workers, scheduler=args.scheduler,
                           progress=args.progress, dashboard=dashboard_printer(args))
        if args.out:
            write_table(frame, args.out)
    except (ValueError, StateFormatError, OSError) as exc:
        print(f"dojo kf2100 tournament: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("dojo kf2100 tournament: stopped", file=sys.stderr)
        return 130
    if args.json:
        print(frame.to_json(orient="records", indent=1, double_precision=15))
        return 0
    print(f"Kung Fu 2100 tournament: {args.games} games a pairing, seed {args.seed}, "
          f"{frame.attrs['seconds']:.1f} s ({frame.attrs['seconds'] / frame.attrs['games']:.2f} s a game)")
    shown = frame.assign(**{k: [f"{r:.3f} ({lo:.3f}-{hi:.3f})" for r, lo, hi in
                                zip(frame[f"{k}_rate"], frame[f"{k}_low"], frame[f"{k}_high"], strict=True)]
                            for k in ("win", "draw", "loss")})
    print(shown[["scenario", "side", "bot", "opponent", "games", "win", "draw", "loss", "mean_turns"]]
          .to_string(index=False, float_format=lambda v: f"{v:.1f}"))
    if args.out:
        print(f"wrote {args.out}")
    return 0


def _solo_points(args: argparse.Namespace) -> int:
    from engine.kf2100.tournament import points_summary, solo_points

    try:
        points = solo_points(args.games, args.seed, args.terminators, args.clone_master)
    except ValueError as exc:
        print(f"dojo kf2100 solo-points: {exc}", file=sys.stderr)
        return 2
    summary = points_summary(points)
    if args.json:
        print(json.dumps({"games": args.games, "seed": args.seed, "terminators": args.terminators,
                          "clone_master": args.clone_master, "results": points.result.value_counts().to_dict(),
                          "summary": summary.to_dict(orient="records")}, indent=1))
        return 0
    print(f"Kung Fu 2100 Solo points: {args.terminators} Terminator against {args.clone_master} Clone Master, "
          f"{args.games} games (the tournament's games of seed {args.seed})")
    for row in summary.itertuples():
        print(f"  {row.points:13s} mean {row.mean:6.2f} (95% CI {row.low:.2f}-{row.high:.2f}), sd {row.sd:.1f}, "
              f"quartiles {row.q1:g} / {row.median:g} / {row.q3:g}, range {row.min:g}-{row.max:g}")
    for result, n in points.result.value_counts().items():
        print(f"  {str(result).replace('_', ' '):28s} {n:5d}")
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

    from engine.kf2100.tournament import BOTS

    tour = sub.add_parser("tournament", help="every pairing of bots in every scenario, on Dask",
                          description="Bot against bot, per scenario and side: win, draw and loss rates with "
                                      "95% Wilson intervals. Bots: " + ", ".join(BOTS) + ".")
    tour.add_argument("--scenarios", default="basic", metavar="A,B", help="comma-separated: basic, advanced, solo")
    tour.add_argument("--terminators", default="heuristic", metavar="BOTS", help="the Terminators' bots (A,B)")
    tour.add_argument("--clone-masters", default="heuristic", metavar="BOTS", help="the Clone Master's bots (A,B)")
    tour.add_argument("--games", type=int, default=100, help="games a pairing (default 100)")
    tour.add_argument("--seed", type=int, default=0, help="random seed, the same for every pairing (default 0)")
    add_run_options(tour)
    tour.set_defaults(func=_tournament)

    pts = sub.add_parser("solo-points", help="the Solo points of bot games, with 95%% intervals",
                         description="The Solo scenario's points (the Terminator's, the Clone Master's and their "
                                     "difference) over the tournament's games of a seed, in this process.")
    pts.add_argument("--games", type=int, default=1000, help="games (default 1000)")
    pts.add_argument("--seed", type=int, default=0, help="the tournament's seed (default 0)")
    pts.add_argument("--terminators", default="heuristic", metavar="BOT", help="the Terminator's bot")
    pts.add_argument("--clone-master", default="heuristic", metavar="BOT", help="the Clone Master's bot")
    pts.add_argument("--json", action="store_true", help="print the report as JSON")
    pts.set_defaults(func=_solo_points)
