"""``dojo kzin``: simulate a policy, the exact odds of one battle, and balance sweeps, from the shell.

``dojo kzin simulate --policy all-in --games 1000000 --seed 1``
``dojo kzin odds --phase invasion --fleet "ARM Defense Force" --tactic Marines --kzin-fleet "Kzinti Pride"``
``dojo kzin sweep --parameter kzin_base_force --values 6,8,10,12``
``dojo kzin sweep --vary kzin_base_force=6,10 --vary reshuffle=true,false --policies all-in,threshold
--defend 0.3,0.5 --games 1000000 --out grid.csv`` (a grid: every combination, on Dask)

Every command prints figures a person can read, or JSON with ``--json``. Bad input is a message on
stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

import param

from engine.core.distributed import add_run_options
from engine.kzin.cards import INVASION, LIBERATION
from engine.kzin.policies import POLICY_NAMES
from engine.kzin.rules import RULE_OPTIONS, KzinRules

_TRUE, _FALSE = {"true", "yes", "on", "1"}, {"false", "no", "off", "0"}


def _is_bool(name: str) -> bool:
    return isinstance(KzinRules.param[name], param.Boolean)


def _add_rule_options(parser: argparse.ArgumentParser, skip: str | None = None) -> None:
    """One flag per rule option (``--no-reshuffle``, ``--kzin-base-force N``...), unset unless given."""
    group = parser.add_argument_group("rule options (default: the project's rulings)")
    for name in RULE_OPTIONS:
        if name == skip:
            continue
        flag = "--" + name.replace("_", "-")
        doc = KzinRules.param[name].doc
        if _is_bool(name):
            group.add_argument(flag, dest=name, action=argparse.BooleanOptionalAction, default=None, help=doc)
        else:
            group.add_argument(flag, dest=name, type=int, default=None, metavar="N",
                               help=f"{doc} (default {KzinRules.param[name].default})")


def _rule_options(args: argparse.Namespace) -> dict[str, Any]:
    return {n: getattr(args, n) for n in RULE_OPTIONS if getattr(args, n, None) is not None}


def _add_policy_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--policy", default="all-in", choices=POLICY_NAMES, help="the policy to play (default all-in)")
    parser.add_argument("--defend", type=float, default=None, metavar="P",
                        help="threshold policy: defend when the exact odds reach P")
    parser.add_argument("--attack", type=float, default=None, metavar="P",
                        help="threshold policy: attack when the exact odds reach P")
    parser.add_argument("--games", type=int, default=100_000, help="games to play (default 100,000)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--workers", type=int, default=1,
                        help="threads of the fast kernel, or Dask worker processes for a large run (default 1)")
    parser.add_argument("--scheduler", default=None, metavar="ADDRESS",
                        help="a running Dask scheduler for a large run, e.g. tcp://10.0.0.5:8786")
    parser.add_argument("--plain", action="store_true", help="use the plain engine, not the numba fast path")
    parser.add_argument("--json", action="store_true", help="print JSON for a program")


def _policy_params(args: argparse.Namespace) -> dict[str, float]:
    return {k: v for k, v in (("defend", args.defend), ("attack", args.attack)) if v is not None}


def _pct(x: float) -> str:
    return f"{x:.4%}" if x < 0.01 else f"{x:.2%}"


# --- commands -----------------------------------------------------------------------------------

def _simulate(args: argparse.Namespace) -> int:
    from engine.kzin.simulate import simulate

    r = simulate(args.policy, args.games, seed=args.seed, workers=args.workers, fast=False if args.plain else None,
                 policy_params=_policy_params(args), scheduler=args.scheduler, progress=None, **_rule_options(args))
    if args.json:
        print(json.dumps(r.to_dict(), indent=2))
        return 0
    params = "".join(f" {k}>={v:g}" for k, v in r.policy_params.items())
    pcts = r.length_percentiles()
    print(f"Man-Kzin Wars: policy {r.policy}{params}, {r.games:,} games, seed {r.seed}, "
          f"{r.engine} engine, {r.workers} worker(s)")
    print("Rules: " + ", ".join(f"{k}={v}" for k, v in r.rule_options.items()))
    print(f"Humans win:  {r.wins:,} games = {_pct(r.win_rate)}  (95% CI {_pct(r.low)} to {_pct(r.high)})")
    print(f"Game length: mean {r.mean_turns:.2f} turns; "
          + ", ".join(f"{'median' if q == 0.5 else f'{q:.0%}'} {v}" for q, v in pcts.items())
          + f"; longest {int(r.length_distribution.index.max())}")
    print(f"Time:        {r.seconds:.2f} s = {r.games_per_second:,.0f} games/s")
    return 0


def _odds(args: argparse.Namespace) -> int:
    from engine.kzin.odds import Battle

    b = Battle(args.phase, fleets=args.fleet, tactics=args.tactic, technology=args.technology,
               conquest=args.conquest, kzin_fleet=args.kzin_fleet, kem=args.kem, **_rule_options(args))
    p = b.win_probability()
    table = b.force_table()
    if args.json:
        exact = [c for c in table.columns if c.endswith("_exact")]
        rows = table.assign(**{c: table[c].astype(str) for c in exact}).to_dict(orient="records")
        print(json.dumps({
            "phase": b.phase, "win_probability": str(p), "numerator": p.numerator, "denominator": p.denominator,
            "percent": float(p) * 100, "human": {"dice": b.human_dice(), "const": b.human_const()},
            "kzin": {"dice": b.kzin_dice(), "const": b.kzin_const()}, "force_table": rows}, indent=2))
        return 0
    print(f"{b.phase.capitalize()} battle: Humans {b.human_dice()}d10{b.human_const():+d} "
          f"against Kzinti {b.kzin_dice()}d10{b.kzin_const():+d} (Humans win ties)")
    print(f"P(Humans win) = {p.numerator}/{p.denominator} = {float(p):.4%}")
    print()
    shown = table[["side", "force", "p", "at_least", "at_most"]]
    print(shown.to_string(index=False, float_format=lambda x: f"{x:.4f}"))
    return 0


def _parse_values(parameter: str, text: str) -> list[Any]:
    if parameter not in RULE_OPTIONS:
        raise ValueError(f"unknown rule parameter {parameter!r}; choose from {', '.join(RULE_OPTIONS)}")
    values: list[Any] = []
    for word in (w.strip() for w in text.split(",")):
        if _is_bool(parameter):
            if word.casefold() not in _TRUE | _FALSE:
                raise ValueError(f"{parameter} takes true or false, not {word!r}")
            values.append(word.casefold() in _TRUE)
        else:
            try:
                values.append(int(word))
            except ValueError:
                raise ValueError(f"{parameter} takes whole numbers, not {word!r}") from None
    return values


def _parse_numbers(flag: str, text: str | None) -> list[float]:
    if text is None:
        return []
    try:
        return [float(w) for w in text.split(",")]
    except ValueError:
        raise ValueError(f"{flag} takes comma-separated numbers, not {text!r}") from None


def _sweep_axes(args: argparse.Namespace) -> tuple[dict[str, list[Any]], list[str], dict[str, list[float]]]:
    """(rule option -> values, policies, policy parameter -> values) from the sweep's flags."""
    options: dict[str, list[Any]] = {}
    pairs = ([(args.parameter, args.values)] if args.parameter or args.values else []) + [
        tuple(v.split("=", 1)) if "=" in v else (v, "") for v in args.vary]
    for name, text in pairs:
        if not name or not text:
            raise ValueError("give each swept rule option with its values: --parameter NAME --values A,B "
                             "or --vary NAME=A,B")
        name = name.replace("-", "_")
        if name in options:
            raise ValueError(f"{name} is swept twice")
        options[name] = _parse_values(name, text)
    policies = [w.strip() for w in args.policies.split(",")] if args.policies else [args.policy]
    for name in policies:
        if name not in POLICY_NAMES:
            raise ValueError(f"unknown policy {name!r}; choose from {', '.join(POLICY_NAMES)}")
    params = {k: v for k, v in (("defend", _parse_numbers("--defend", args.defend)),
                                ("attack", _parse_numbers("--attack", args.attack))) if v}
    if params and "threshold" not in policies:
        raise ValueError("--defend and --attack go with the threshold policy")
    if not options and len(policies) == 1 and all(len(v) == 1 for v in params.values()):
        raise ValueError("nothing to sweep: give --parameter/--values, --vary, several --policies or parameter lists")
    return options, policies, params


def _sweep(args: argparse.Namespace) -> int:
    from engine.core.distributed import check_out, dashboard_printer, write_table
    from engine.kzin.sweep import GRID_COLUMNS, grid

    options, policies, params = _sweep_axes(args)
    check_out(args.out)
    frame = grid(options, policies, params, games=args.games, seed=args.seed, workers=args.workers,
                 fast=False if args.plain else None, scheduler=args.scheduler, progress=args.progress,
                 dashboard=dashboard_printer(args), **_rule_options(args))
    swept = [*options, *(["policy"] if len(policies) > 1 else []), *(k for k, v in params.items() if len(v) > 1)]
    table = frame[GRID_COLUMNS]
    if args.parameter:
        table = table.assign(value=table[args.parameter.replace("-", "_")])
    if args.out:
        write_table(table, args.out)
    if args.json:
        print(table.to_json(orient="records", indent=2, double_precision=15))
        return 0
    print(f"Man-Kzin Wars: win rate by {', '.join(swept) or 'policy'}, {args.games:,} games a cell, seed {args.seed}, "
          f"{frame.attrs['games_per_second']:,.0f} games/s")
    shown = table.assign(win_rate=table.win_rate.map(_pct), low=table.low.map(_pct), high=table.high.map(_pct),
                         mean_turns=table.mean_turns.map("{:.2f}".format))
    print(shown[[*swept, *([] if "policy" in swept else ["policy"]), "win_rate", "low", "high", "mean_turns",
                 "wins", "games"]].to_string(index=False))
    if args.out:
        print(f"wrote {args.out}")
    return 0


def _train_expert(args: argparse.Namespace) -> int:
    from engine.kzin.expert import train_all

    given = {k: getattr(args, k) for k in ("games", "iterations", "vi_iterations", "rate", "seed", "explore", "start")
             if getattr(args, k) is not None}
    path, logs = train_all(args.out, **given)
    for log in logs:
        print(f"{log.ruling}: win rate by iteration " + ", ".join(_pct(r) for r in log.win_rates)
              + f" ({sum(log.seconds):.0f} s)")
    print(f"wrote {path}")
    return 0


def _listed(option: str, what: str, text: str, allowed: Collection[str]) -> list[str]:
    """The comma-separated names of ``text``, each one of ``allowed`` (else a ``ValueError`` naming ``option``)."""
    names = [w.strip() for w in text.split(",")]
    if not set(names) <= set(allowed):
        raise ValueError(f"{option} takes {what} of {', '.join(allowed)}, not {text!r}")
    return names


def _win_rates(args: argparse.Namespace) -> int:
    from engine.kzin.win_rates import (
        COLUMNS,
        DEFAULT_GAMES,
        POLICY_ORDER,
        RULINGS,
        advisor_rows,
        data_path,
        measure,
        measure_in_rounds,
        merged,
        read,
        write,
    )

    games = dict(DEFAULT_GAMES)
    for item in args.games:
        name, _, n = item.partition("=")
        if name not in DEFAULT_GAMES or not n.isdigit() or int(n) < 2:
            raise ValueError(f"--games takes POLICY=N with a policy of {', '.join(DEFAULT_GAMES)} and N >= 2, "
                             f"not {item!r}")
        games[name] = int(n)
    only = _listed("--only", "policies", args.only, POLICY_ORDER) if args.only else None
    if only is not None and "advisor" in only and args.advisor_csv is None:
        raise ValueError("--only advisor reads the advisor's games: give --advisor-csv FILE")
    if args.seconds is not None and only is None:
        raise ValueError("--seconds bounds the rounds of --only: give the policies to play")
    if args.chunk < 1:
        raise ValueError(f"--chunk takes a count of at least 1, not {args.chunk}")
    rulings = _listed("--rulings", "rulings", args.rulings, RULINGS) if args.rulings else list(RULINGS)
    if args.rulings and only is None:
        raise ValueError("--rulings picks the rulings of --only's rounds: give the policies to play")
    out = args.out or data_path()
    kept = read(out) if only is not None and out.exists() else []  # --only: the other rows stay as they were
    rows: list[dict[str, Any]] = []

    def shown(r: dict[str, Any]) -> None:
        rows[:] = [x for x in rows if (x["ruling"], x["policy"]) != (r["ruling"], r["policy"])] + [r]
        write(merged(kept, rows), out)  # a stopped run keeps the rows so far
        print(",".join(str(r[c]) for c in COLUMNS), flush=True)

    if only is None:
        measure(games, seed=args.seed, advisor_csv=args.advisor_csv, on_row=shown)
    for policy in only or []:
        if policy == "advisor":
            for r in advisor_rows(args.advisor_csv):
                shown(r)
        elif policy == "clairvoyant":
            measure({policy: games[policy]}, seed=args.seed, on_row=shown)
        else:
            measure_in_rounds(policy, games[policy], seed=args.seed, rulings=rulings, chunk=args.chunk,
                              seconds=args.seconds, on_row=shown)
    print(f"wrote {out}")
    return 0


def _guarded(fn: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        try:
            return fn(args)
        except (ValueError, OSError) as exc:
            print(f"dojo kzin {args.kzin_command}: {exc}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print(f"dojo kzin {args.kzin_command}: stopped", file=sys.stderr)
            return 130

    return run


def register(subparsers: Any) -> None:
    """Add ``kzin`` with its ``simulate``, ``odds`` and ``sweep`` commands to the ``dojo`` parser."""
    kzin = subparsers.add_parser("kzin", help="Man-Kzin Wars: simulate policies, exact battle odds, balance sweeps",
                                 description="Man-Kzin Wars from the shell.")
    sub = kzin.add_subparsers(dest="kzin_command", metavar="COMMAND", required=True)

    sim = sub.add_parser("simulate", help="win rate and game lengths of a policy over many games")
    _add_policy_options(sim)
    _add_rule_options(sim)
    sim.set_defaults(func=_guarded(_simulate))

    odds = sub.add_parser("odds", help="the exact chance the Humans win one battle, and both force tables")
    odds.add_argument("--phase", choices=(INVASION, LIBERATION), default=INVASION)
    many = {"action": "append", "default": [], "metavar": "NAME"}
    odds.add_argument("--fleet", **many, help="a committed Fleet (repeat the flag for each)")
    odds.add_argument("--tactic", **many, help="a committed Tactics card (repeat)")
    odds.add_argument("--technology", type=int, default=0, help="Technology cards in play")
    odds.add_argument("--conquest", **many, help="a Conquest card in play (repeat)")
    odds.add_argument("--kzin-fleet", default=None, metavar="NAME", help="the invading Kzin Fleet (Invasion)")
    odds.add_argument("--kem", type=int, default=9, help="the marker's space, 2-11 (sets Reinforcements' X)")
    odds.add_argument("--json", action="store_true", help="print JSON for a program")
    _add_rule_options(odds)
    odds.set_defaults(func=_guarded(_odds))

    sw = sub.add_parser("sweep", help="win rate over any product of rule options, policies and parameters",
                        description="Every combination of the swept rule options, policies and threshold "
                                    "parameters, one row each, on Dask for a large grid.")
    sw.add_argument("--parameter", default=None, help=f"a rule option to sweep: one of {', '.join(RULE_OPTIONS)}")
    sw.add_argument("--values", default=None, help="its comma-separated values, e.g. 6,8,10,12 or true,false")
    sw.add_argument("--vary", action="append", default=[], metavar="NAME=A,B",
                    help="another rule option and its values (repeat the flag for each)")
    sw.add_argument("--policy", default="all-in", choices=POLICY_NAMES, help="the policy to play (default all-in)")
    sw.add_argument("--policies", default=None, metavar="A,B", help="several policies, comma-separated")
    sw.add_argument("--defend", default=None, metavar="P,Q", help="threshold policy: defend limits to sweep")
    sw.add_argument("--attack", default=None, metavar="P,Q", help="threshold policy: attack limits to sweep")
    sw.add_argument("--games", type=int, default=100_000, help="games a cell (default 100,000)")
    sw.add_argument("--seed", type=int, default=0, help="random seed, the same for every cell (default 0)")
    sw.add_argument("--plain", action="store_true", help="use the plain engine, not the numba fast path")
    add_run_options(sw)
    _add_rule_options(sw)
    sw.set_defaults(func=_guarded(_sweep))

    wr = sub.add_parser("win-rates", help="every policy's win rate under every ruling, on the same deals and dice",
                        description="Win rates with 95%% intervals of all-in, threshold, the expert (table, and with "
                        "its lookahead), the clairvoyant and (from --advisor-csv) the advisor, into a CSV.")
    wr.add_argument("--games", action="append", default=[], metavar="POLICY=N",
                    help="games for one policy (repeat); defaults: 1e6 fixed and table, 5e3 expert, 1e3 clairvoyant")
    wr.add_argument("--seed", type=int, default=2027, help="random seed of the games' keys (default 2027)")
    wr.add_argument("--advisor-csv", type=Path, default=None, metavar="FILE",
                    help="the advisor's paired games (engine.kzin.compare) under the default rulings; "
                    "FILE's siblings <stem>_<ruling>.csv under the others")
    wr.add_argument("--out", type=Path, default=None, help="where to write (default engine/kzin/data/win_rates.csv)")
    wr.add_argument("--only", default=None, metavar="A,B",
                    help="play only these policies (advisor: read its files) and keep the file's other rows")
    wr.add_argument("--seconds", type=float, default=None, metavar="S",
                    help="with --only: stop after the round (a chunk under every ruling) that passes S seconds")
    wr.add_argument("--chunk", type=int, default=5_000, metavar="N",
                    help="with --only: games of a round under each ruling (default 5,000)")
    wr.add_argument("--rulings", default=None, metavar="A,B",
                    help="with --only: play the rounds under these rulings only (default: every ruling)")
    wr.set_defaults(func=_guarded(_win_rates))
    tr = sub.add_parser("train-expert", help="learn the expert's value tables (one per ruling) into engine/kzin",
                        description="Defaults: engine.kzin.expert.TRAIN_DEFAULTS, the settings of the shipped tables.")
    tr.add_argument("--games", type=int, default=None, help="games per iteration")
    tr.add_argument("--iterations", type=int, default=None, help="Monte Carlo iterations (first)")
    tr.add_argument("--vi-iterations", type=int, default=None, help="fitted value iterations (then)")
    tr.add_argument("--rate", type=float, default=None, help="share of visits backed up in value iteration")
    tr.add_argument("--seed", type=int, default=None, help="random seed")
    tr.add_argument("--explore", type=float, default=None, help="exploration probability")
    tr.add_argument("--start", choices=("marker", "threshold"), default=None, help="who plays the first round")
    tr.add_argument("--out", type=Path, default=None, help="where to write (default: engine/kzin/expert.npz)")
    tr.set_defaults(func=_guarded(_train_expert))
