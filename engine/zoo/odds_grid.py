"""Odds maps: caging or expected points of one flick re-aimed over direction x speed, on Dask.

A map of a few thousand noisy flicks is a job for several processes. The noisy aims and per-sample seeds are
drawn up front exactly as :func:`engine.zoo.odds.odds_grid` draws them (one generator from the seed, cell by
cell), and each cell is one chunk, so a seed gives the same map on any number of workers, and the same
figures as ``odds_grid`` itself. The table is tidy: one row per direction, speed and measure, with the
estimate and its 95% interval (Wilson for a proportion, normal for the points).
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from engine.core import StateFormatError, load_state, make_rng
from engine.core.distributed import Progress, add_run_options, check_out, dashboard_printer, run_chunks, write_table
from engine.zoo.actions import Flick
from engine.zoo.game import ZooGame, ZooState
from engine.zoo.odds import (
    SMALL_SAMPLES,
    AimNoise,
    FlickOdds,
    Sample,
    _check,
    _check_aim,
    clamp_flick,
    noisy_jobs,
    play_samples,
    summarise,
)

MAPS = {"cage": ("cage_opponent", "lose_own"), "points": ("points",),
        "all": ("cage_opponent", "lose_own", "foul", "extra_flick", "points")}
"""The measures of each map: caging (an opponent caged, one of yours lost) or the expected change in points."""
COLUMNS = ["direction", "speed", "measure", "estimate", "low", "high", "samples", "seed"]


def cell_rows(odds: FlickOdds, aimed: Flick, measures: Sequence[str], seed: int | None) -> list[dict[str, Any]]:
    rows = []
    for m in measures:
        if m == "points":
            estimate, low, high = odds.points_mean, odds.points_low, odds.points_high
        else:
            prop = getattr(odds, m)
            estimate, low, high = prop.value, prop.low, prop.high
        rows.append({"direction": aimed.direction, "speed": aimed.speed, "measure": m, "estimate": estimate,
                     "low": low, "high": high, "samples": odds.samples, "seed": seed})
    return rows


def odds_map(
    state: ZooState,
    flick: Flick | str,
    directions: Sequence[float],
    speeds: Sequence[float],
    kind: str = "cage",
    noise: AimNoise | None = None,
    samples: int = 50,
    seed: int | None = 0,
    workers: int | None = None,
    scheduler: str | None = None,
    progress: Progress = False,
    stop: threading.Event | None = None,
    on_rows: Callable[[list[dict[str, Any]]], None] | None = None,
    dashboard: Callable[[str], None] | None = None,
) -> pd.DataFrame:
    """The ``kind`` map (``cage``, ``points`` or ``all``) of ``flick`` re-aimed over ``directions`` x ``speeds``.

    ``samples`` noisy flicks a cell. A bad flick, a value that is not a finite number or a bad count is a
    ``ValueError`` (the engine's reason) before any flick is played; an out-of-range aim is held inside the
    legal range and its rows show the aim actually estimated. ``on_rows`` sees each cell's rows as they come;
    ``dashboard`` receives the address of a local cluster's Dask dashboard.
    """
    if kind not in MAPS:
        raise ValueError(f"unknown map {kind!r}; choose from {', '.join(MAPS)}")
    if state.is_terminal():
        raise ValueError("the battle in that position is over")
    base = _check(state, flick)
    directions, speeds = list(directions), list(speeds)
    if not directions or not speeds:
        raise ValueError("give at least one direction and one speed")
    for d in directions:
        _check_aim(state, base, d, base.speed)
    for v in speeds:
        _check_aim(state, base, base.direction, v)
    if type(samples) is not int or samples < 1:
        raise ValueError(f"samples must be a whole number of at least 1, not {samples!r}")
    noise = noise or AimNoise()
    rng = make_rng(seed)
    cells: list[Flick] = []
    chunks: list[tuple[Any, ...]] = []
    for d in directions:
        for v in speeds:
            aimed = clamp_flick(state, base, float(d), float(v))
            cells.append(aimed)
            chunks.append((noisy_jobs(aimed, noise, samples, rng),))
    rows: list[list[dict[str, Any]]] = [[] for _ in cells]

    def arrived(k: int, results: list[Sample]) -> None:
        rows[k] = cell_rows(summarise(cells[k], noise, results), cells[k], MAPS[kind], seed)
        if on_rows is not None:
            on_rows(rows[k])

    start = time.perf_counter()
    run_chunks(play_samples, chunks, shared=(state,), weights=[samples] * len(chunks), workers=workers,
               scheduler=scheduler, small=samples * len(cells) <= SMALL_SAMPLES, progress=progress,
               description="Kung-Fu Zoo", unit="flicks", stop=stop, on_result=arrived,
               dashboard=dashboard)
    frame = pd.DataFrame([r for cell in rows for r in cell], columns=COLUMNS)
    frame.attrs.update(flick=str(base), kind=kind, seconds=time.perf_counter() - start,
                       noise={"angle_sd": noise.angle_sd, "speed_sd": noise.speed_sd})
    return frame


def wide(frame: pd.DataFrame, measure: str) -> pd.DataFrame:
    """One measure's estimates as a direction x speed table (for reading, or a heat map)."""
    picked = frame[frame["measure"] == measure]
    return picked.pivot(index="direction", columns="speed", values="estimate")



# --- ``dojo zoo odds-grid`` ----------------------------------------------------------------------

def _command(args: argparse.Namespace) -> int:
    from engine.zoo.bench import aimed_flick, mid_game_state

    if args.state:
        state = load_state(Path(args.state).read_text(), ZooGame)
        if not isinstance(state, ZooState):
            raise StateFormatError("that file is not a Kung-Fu Zoo position")
    else:
        state = mid_game_state(args.seed)
    if state.is_terminal():
        raise ValueError("the battle in that position is over")
    flick = state.parse_action(args.flick) if args.flick else aimed_flick(state)
    if not isinstance(flick, Flick):
        raise ValueError(f"{flick} is not a flick")
    noise = AimNoise(args.angle_sd, args.speed_sd)
    check_out(args.out)
    try:
        frame = odds_map(state, flick, args.directions, args.speeds, kind=args.map, noise=noise,
                         samples=args.samples, seed=args.seed, workers=args.workers, scheduler=args.scheduler,
                         progress=args.progress, dashboard=dashboard_printer(args))
    except KeyboardInterrupt:
        print("dojo zoo odds-grid: stopped", file=sys.stderr)
        return 130
    if args.out:
        write_table(frame, args.out)
    if args.json:
        print(frame.to_json(orient="records", indent=1, double_precision=15))
        return 0
    print(f"{frame.attrs['flick']} re-aimed over {len(args.directions)} directions x {len(args.speeds)} speeds, "
          f"aim noise {noise.angle_sd} deg / {noise.speed_sd:.0%} speed, {args.samples} flicks a cell, "
          f"{frame.attrs['seconds']:.1f} s")
    for measure in MAPS[args.map]:
        style = "{:+.2f}" if measure == "points" else "{:.3f}"
        print(f"\n{measure} (rows: direction, degrees; columns: speed, m/s):")
        print(wide(frame, measure).to_string(float_format=style.format))
    if args.out:
        print(f"\nwrote {args.out}")
    return 0


def add_command(sub: Any) -> None:
    """Add ``odds-grid`` to the ``dojo zoo`` commands (``sub``: their subparsers)."""
    from engine.zoo import cli as zoo_cli

    grid = sub.add_parser("odds-grid", help="a caging or expected-points map over direction x speed, on Dask",
                          description="The odds of one flick re-aimed over direction x speed, for a saved position "
                                      "(default: a seeded mid-game). A tidy table: one row per direction, speed "
                                      "and measure with its 95% interval.")
    grid.add_argument("--state", default=None, metavar="FILE", help="a saved game (default: a seeded mid-game)")
    grid.add_argument("--flick", default=None, help='e.g. "flick E1 from S-dot face=head dir=0.0 speed=1.2"')
    grid.add_argument("--directions", type=zoo_cli._range, required=True, metavar="A:B:STEP",
                      help="directions, degrees (write --directions=-30:30:10 when it starts with a minus)")
    grid.add_argument("--speeds", type=zoo_cli._range, required=True, metavar="A:B:STEP", help="speeds, m/s")
    grid.add_argument("--map", choices=tuple(MAPS), default="cage",
                      help="cage: caging an opponent and losing your own; points: the expected change; all")
    grid.add_argument("--samples", type=int, default=50, help="noisy flicks a cell (default 50)")
    grid.add_argument("--angle-sd", type=float, default=AimNoise().angle_sd, help="aim noise, degrees")
    grid.add_argument("--speed-sd", type=float, default=AimNoise().speed_sd, help="speed noise, fraction")
    grid.add_argument("--seed", type=int, default=0)
    add_run_options(grid)
    grid.set_defaults(func=zoo_cli._guarded(_command))
