"""``dojo zoo``: bot-versus-bot battles and flick-odds grids from the shell.

``dojo zoo simulate --mode cage --players 2 --games 4 --seed 1``
``dojo zoo odds --flick "flick E1 from S-dot face=head dir=0.0 speed=1.2" --samples 500``
``dojo zoo odds --directions=-30:30:10 --speeds 0.6:1.8:0.4 --samples 40`` (a grid over direction x speed;
write ``--directions=`` with ``=`` when the range starts with a minus sign)
``dojo zoo calibrate [--quick] [--json]`` (the 3-D arena's physics against theory, ``engine.zoo.calibration``)

The odds are for a position: a saved game (``--state FILE``) or, by default, a seeded mid-game Cage Battle.
Every command prints figures a person can read, or JSON with ``--json``. Bad input is a message on stderr
and exit code 2.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from engine.core import IllegalActionError, StateFormatError, load_state, make_rng
from engine.zoo.actions import Flick
from engine.zoo.bench import aimed_flick, mid_game_state
from engine.zoo.bot import OddsBot
from engine.zoo.constants import TEAMS
from engine.zoo.game import MODES, ZooGame, ZooState
from engine.zoo.odds import AimNoise, flick_odds, odds_grid

MAX_GRID_VALUES = 1000
"""Values one grid axis may have: a tiny step would otherwise build a huge grid and hang the command."""


def _range(text: str) -> list[float]:
    """``a:b:step`` (inclusive) or a comma-separated list; the engine refuses values that are not finite."""
    try:
        if ":" in text:
            lo, hi, step = (float(x) for x in text.split(":"))
            if not step > 0 or not hi >= lo:
                raise ValueError
            if (hi - lo) / step + 1 > MAX_GRID_VALUES:
                raise argparse.ArgumentTypeError(
                    f"{text!r} makes more than {MAX_GRID_VALUES} values; use a larger step")
            return [round(v, 6) for v in np.arange(lo, hi + step / 2, step)]
        return [float(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a:b:step or a comma list of numbers, not {text!r}") from None


def _guarded(fn: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        try:
            return fn(args)
        except (ValueError, IllegalActionError, StateFormatError, OSError) as exc:
            print(f"dojo zoo: {exc}", file=sys.stderr)
            return 2

    return run


def _game(args: argparse.Namespace) -> ZooGame:
    teams = tuple(args.teams.split(",")) if args.teams else None
    return ZooGame(mode=args.mode, players=args.players, teams=teams, all_valley=args.all_valley)


def play_battle(game: ZooGame, seed: int, bot: OddsBot, max_moves: int = 2000) -> dict[str, Any]:
    """One bot-versus-bot battle: who won, in how many moves and flicks."""
    state = game.new_initial_state(make_rng(seed))
    rng = make_rng(seed + 1)
    moves = flicks = 0
    while not state.is_terminal():
        if moves >= max_moves:
            raise RuntimeError(f"battle {seed} did not end within {max_moves} moves")
        action = bot.choose(state, rng)
        flicks += isinstance(action, Flick)
        state.apply_action(action)
        moves += 1
    return {"seed": seed, "winners": state.winners(), "moves": moves, "flicks": flicks,
            "rounds": state.round_no, "wins": state.wins, "points": state.points}


def _simulate(args: argparse.Namespace) -> int:
    if args.games < 1:
        raise ValueError("--games must be at least 1")
    game = _game(args)
    bot = OddsBot(candidates=args.candidates, samples=args.samples, refine=2, refine_samples=args.samples * 3)
    start = time.perf_counter()
    battles = [play_battle(game, args.seed + k, bot) for k in range(args.games)]
    seconds = time.perf_counter() - start
    wins = [sum(q in b["winners"] for b in battles) for q in range(game.players)]
    out = {"game": game.title(), "teams": list(game.teams), "games": args.games, "wins": wins,
           "mean_flicks": sum(b["flicks"] for b in battles) / len(battles), "seconds": seconds, "battles": battles}
    if args.json:
        print(json.dumps(out, indent=1))
        return 0
    print(f"{game.title()}, {args.games} bot-versus-bot battle(s), seed {args.seed}:")
    for q, team in enumerate(game.teams):
        print(f"  P{q + 1} {team:<10} won {wins[q]}")
    print(f"  {out['mean_flicks']:.1f} flicks a battle on average, {seconds:.1f} s")
    return 0


def _state(args: argparse.Namespace) -> ZooState:
    if args.state:
        state = load_state(Path(args.state).read_text(), ZooGame)
        assert isinstance(state, ZooState)
        return state
    return mid_game_state(args.seed)


def _odds(args: argparse.Namespace) -> int:
    state = _state(args)
    if state.is_terminal():
        raise ValueError("the battle in that position is over")
    flick = state.parse_action(args.flick) if args.flick else aimed_flick(state)
    if not isinstance(flick, Flick):
        raise ValueError(f"{flick} is not a flick")
    noise = AimNoise(args.angle_sd, args.speed_sd)
    if args.directions or args.speeds:
        directions = args.directions or [flick.direction]
        speeds = args.speeds or [flick.speed]
        grid = odds_grid(state, flick, directions, speeds, noise=noise, samples=args.samples, seed=args.seed,
                         workers=args.workers)
        if args.json:
            print(grid.to_json(orient="records", indent=1))
            return 0
        print(f"odds of {flick} re-aimed, aim noise {noise.angle_sd} deg / {noise.speed_sd:.0%} speed, "
              f"{args.samples} samples a cell:")
        cols = ["direction", "speed", "p_cage_opponent", "p_lose_own", "p_foul", "p_head", "p_feet", "points_mean"]
        print(grid[cols].to_string(index=False, float_format=lambda v: f"{v:.3f}"))
        return 0
    start = time.perf_counter()
    odds = flick_odds(state, flick, noise=noise, samples=args.samples, seed=args.seed, workers=args.workers)
    seconds = time.perf_counter() - start
    if args.json:
        print(json.dumps({**odds.to_dict(), "seconds": seconds}, indent=1))
        return 0
    print(f"{flick} by {state.describe_player()}, aim noise {noise.angle_sd} deg / {noise.speed_sd:.0%} speed, "
          f"{odds.samples} samples in {seconds:.2f} s (95% intervals):")
    print(f"  cage an opponent      {odds.cage_opponent}")
    print(f"  cage or lose your own {odds.lose_own}")
    print(f"  foul                  {odds.foul}")
    print(f"  extra flick           {odds.extra_flick}")
    for name, prop in odds.outcomes.items():
        print(f"  ends {name:<16} {prop}")
    print(f"  change in points      {odds.points_mean:+.2f} ({odds.points_low:+.2f} to {odds.points_high:+.2f})")
    return 0


def _calibrate(args: argparse.Namespace) -> int:
    from engine.zoo.calibration import calibrate  # imports MuJoCo only for this command

    start = time.perf_counter()
    out = calibrate(quick=args.quick)
    out["seconds"] = time.perf_counter() - start
    if args.json:
        print(json.dumps(out, indent=1))
        return 0
    print(f"Kung-Fu Zoo 3-D arena (MuJoCo, {out['timestep_s'] * 1000:g} ms step), calibration against theory:")
    print("  slide of a push through the centre (no spin) against v^2 / (2 mu g):")
    for row in out["slide"]:
        print(f"    {row['speed_m_s']:.1f} m/s: {row['slid_mm']:7.2f} mm, theory {row['theory_mm']:7.2f} mm "
              f"(ratio {row['ratio']:.4f}), ends {row['face']}")
    for key, label in (("die_die", "die on die"), ("die_rail", "die on rail")):
        r = out["restitution"][key]
        es = ", ".join(f"{h['speed_m_s']:.1f} m/s: {h['e']:.3f}" for h in r["hits"] if h["e"] is not None)
        print(f"  restitution of a head-on hit, {label} (design {r['design']}): {es}")
    g = out["grazes"]
    print(f"  grazes (overlap 0.5-4 mm, 1.5-2.5 m/s): {g['struck']} of {g['passes']} passes struck the die")
    d = out["die_on_dot"]
    print(f"  a die lying at the dot: struck by {d['struck']} of {d['flicks']} flicks from it "
          f"({d['struck_first']} touched it first)")
    u = out["untouched"]
    print(f"  dice at rest that nothing hits: {u['changed_face']} of {u['dice']} changed face, {u['moved']} moved")
    for key in ("soft_flicks", "softest_flicks"):
        s = out[key]
        lo, hi = s["speeds_m_s"]
        print(f"  flicks at {lo}-{hi} m/s set head-up, any strike: {s['kept']} of {s['landed']} kept the face "
              f"({s['p_kept']:.2f}, 95% {s['low']:.2f}-{s['high']:.2f}; a fair die 0.17); "
              f"commonest {s['commonest']} {s['p_commonest']:.2f}")
    h = out["hard_flicks"]
    lo, hi = h["speeds_m_s"]
    counts = ", ".join(f"{f} {c}" for f, c in h["counts"].items())
    print(f"  hard flicks {lo}-{hi} m/s (strike {h['strike']}), a lone die: {h['landed']} of {h['flicks']} stayed in "
          f"the arena ({h['caged']} caged, {h['out']} out); faces {counts}")
    print(f"    chi-square against a fair die {h['chi_square']:.1f} on {h['dof']} degrees of freedom, "
          f"p = {h['p_value']:.3g}")
    print(f"  ({out['seconds']:.1f} s)")
    return 0


def register(subparsers: Any) -> None:
    """Add ``zoo`` with its ``simulate`` and ``odds`` commands to the ``dojo`` parser."""
    zoo = subparsers.add_parser("zoo", help="Kung-Fu Zoo: bot battles and flick odds",
                                description="Kung-Fu Zoo from the shell.")
    sub = zoo.add_subparsers(dest="zoo_command", metavar="COMMAND", required=True)
    from engine.zoo.odds_grid import add_command

    add_command(sub)  # dojo zoo odds-grid, a map over direction x speed on Dask

    sim = sub.add_parser("simulate", help="bot-versus-bot battles")
    sim.add_argument("--mode", choices=MODES, default="cage")
    sim.add_argument("--players", type=int, default=2, choices=(2, 3, 4))
    sim.add_argument("--teams", default=None, help=f"comma-separated teams from {', '.join(TEAMS)}")
    sim.add_argument("--all-valley", action="store_true", help='two-player "All Valley" Cage Battle rules')
    sim.add_argument("--games", type=int, default=2, help="battles to play (default 2)")
    sim.add_argument("--seed", type=int, default=0)
    sim.add_argument("--candidates", type=int, default=12, help="flicks the bot considers a move (default 12)")
    sim.add_argument("--samples", type=int, default=4, help="noisy samples per candidate (default 4)")
    sim.add_argument("--json", action="store_true", help="print JSON for a program")
    sim.set_defaults(func=_guarded(_simulate))

    odds = sub.add_parser("odds", help="the odds of one aimed flick, or a grid over direction x speed")
    odds.add_argument("--state", default=None, metavar="FILE", help="a saved game (default: a seeded mid-game)")
    odds.add_argument("--flick", default=None, help='e.g. "flick E1 from S-dot face=head dir=0.0 speed=1.2"')
    odds.add_argument("--directions", type=_range, default=None, metavar="A:B:STEP", help="grid of directions")
    odds.add_argument("--speeds", type=_range, default=None, metavar="A:B:STEP", help="grid of speeds (m/s)")
    odds.add_argument("--samples", type=int, default=500, help="samples per flick (default 500)")
    odds.add_argument("--angle-sd", type=float, default=AimNoise().angle_sd, help="aim noise, degrees")
    odds.add_argument("--speed-sd", type=float, default=AimNoise().speed_sd, help="speed noise, fraction")
    odds.add_argument("--workers", type=int, default=None,
                      help="processes (default: two when two cores are idle, else one)")
    odds.add_argument("--seed", type=int, default=0)
    odds.add_argument("--json", action="store_true", help="print JSON for a program")
    odds.set_defaults(func=_guarded(_odds))

    cal = sub.add_parser("calibrate", help="the 3-D arena's physics measured against theory")
    cal.add_argument("--quick", action="store_true", help="small samples (a few seconds)")
    cal.add_argument("--json", action="store_true", help="print JSON for a program")
    cal.set_defaults(func=_guarded(_calibrate))
