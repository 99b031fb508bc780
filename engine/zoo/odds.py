"""Flick odds by simulation: what an aimed flick does when the hand that makes it is imprecise.

A human flick misses its aim: the odds model draws each sample's direction from a normal around the aim
(standard deviation ``angle_sd`` degrees) and its speed from a normal around the intended speed (standard
deviation ``speed_sd`` times that speed), then plays the flick on a clone of the state with its own seeded
generator (tumbles included). From the samples it estimates, with 95% Wilson intervals: caging an opponent,
caging or losing one of your own, a foul, each final face of the flicked animal (or caged / out), an extra
flick, and the expected change in points (your round score minus the best opponent's) with a normal
interval. One flick's samples run in the calling process, a large batch on Dask; the result does not depend
on the number of workers (the noise and per-sample seeds are drawn up front).
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from engine.core import wilson_interval
from engine.core.rng import make_rng
from engine.zoo.actions import Flick
from engine.zoo.constants import FACE_NAMES, constants
from engine.zoo.game import ZooState

OUTCOMES = (*FACE_NAMES, "caged", "out")
"""Where the flicked animal ends: a face up in the arena, in a cage, or out of the arena."""


@dataclass(frozen=True)
class AimNoise:
    """How imprecise a flick is: standard deviations of its angle (degrees) and speed (fraction of it)."""

    angle_sd: float = float(constants()["aim"]["angle_sd_deg"])
    speed_sd: float = float(constants()["aim"]["speed_sd_fraction"])

    def __post_init__(self) -> None:
        if not (math.isfinite(self.angle_sd) and 0 <= self.angle_sd <= 90):
            raise ValueError(f"angle noise must be 0-90 degrees, not {self.angle_sd}")
        if not (math.isfinite(self.speed_sd) and 0 <= self.speed_sd <= 1):
            raise ValueError(f"speed noise must be a fraction 0-1, not {self.speed_sd}")


@dataclass(frozen=True)
class Proportion:
    """A proportion from ``n`` samples with its 95% Wilson interval."""

    successes: int
    n: int
    low: float
    high: float

    @classmethod
    def of(cls, successes: int, n: int) -> Proportion:
        low, high = wilson_interval(successes, n)
        return cls(successes, n, low, high)

    @property
    def value(self) -> float:
        return self.successes / self.n if self.n else float("nan")

    def __str__(self) -> str:
        return f"{self.value:.3f} ({self.low:.3f}-{self.high:.3f})"


@dataclass
class FlickOdds:
    """The estimated consequences of one aimed flick."""

    flick: str
    samples: int
    noise: AimNoise
    cage_opponent: Proportion
    lose_own: Proportion
    foul: Proportion
    extra_flick: Proportion
    outcomes: dict[str, Proportion] = field(default_factory=dict)
    points_mean: float = 0.0
    points_low: float = 0.0
    points_high: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for key in ("cage_opponent", "lose_own", "foul", "extra_flick"):
            d[key]["value"] = getattr(self, key).value
        for key, prop in self.outcomes.items():
            d["outcomes"][key]["value"] = prop.value
        return d

    def summary(self) -> str:
        return (f"{self.flick}: cage an opponent {self.cage_opponent}, lose your own {self.lose_own}, "
                f"foul {self.foul}, points {self.points_mean:+.2f} ({self.points_low:+.2f} to {self.points_high:+.2f})"
                f", n={self.samples}")


# One sample: (cage opponent, lose own, foul, final outcome index, change of margin, extra flick)
Sample = tuple[bool, bool, bool, int, float, bool]


def clamp_flick(state: ZooState, flick: Flick, direction: float, speed: float) -> Flick:
    """The flick with a new aim, held inside the legal ranges (a noisy hand still flicks within them)."""
    c = constants()["flick"]
    speed = min(max(speed, c["min_speed_m_s"]), c["max_speed_m_s"])
    if flick.rail == "here":
        direction %= 360.0
    else:
        direction = min(max(direction, -c["max_angle_deg"]), c["max_angle_deg"])
    return flick.with_aim(direction, speed)


def sample_flick(state: ZooState, flick: Flick, direction: float, speed: float, seed: int) -> Sample:
    """Play one noisy version of ``flick`` on a clone with its own generator and classify what happened."""
    s = state.clone(rng=np.random.Generator(np.random.PCG64(seed)))
    p = s.to_move
    before = s.margin(p)
    owner = {d: die.owner for d, die in s.dice.items()}
    result = s.play_flick(clamp_flick(s, flick, direction, speed))
    last = s.last or {}
    foul = bool(last.get("foul"))
    caged = last.get("caged", {})
    left = last.get("left", {})
    cage_opp = any(owner[d] != p for d in caged)
    lose_own = foul or any(owner[d] == p for d in (*caged, *left))
    if flick.die in caged:
        final = "caged"
    elif flick.die in left or foul:
        final = "out"
    else:
        final = result.dice[flick.die].face
    if "round_scores" in last:
        scores = last["round_scores"]
        after = scores[p] - max(scores[q] for q in range(len(scores)) if q != p)
    else:
        after = s.margin(p)
    extra = s.phase == "extra" and s.to_move == p
    return cage_opp, lose_own, foul, OUTCOMES.index(final), float(after - before), extra


SAMPLE_CHUNK = 100
"""Noisy flicks per chunk of a large batch (fixed, so the figures do not depend on the number of workers)."""
SMALL_SAMPLES = 5_000
"""Batches of at most this many flicks (one flick's odds, a dashboard's grid) run in the calling process: a
cluster's start costs more than they do."""
STOP_SAMPLES = 4
"""Flicks per chunk of a batch given a ``stop`` event: it takes effect within this many (~4 ms each)."""


def play_samples(state: ZooState, jobs: list[tuple[Flick, float, float, int]]) -> list[Sample]:
    """Play (flick, direction, speed, seed) jobs, each on a clone of ``state``."""
    return [sample_flick(state, f, d, v, seed) for f, d, v, seed in jobs]


def default_workers() -> int:
    """Two processes when two cores are idle, else one: on a busy shared machine a second process only
    competes with the first."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    idle = cores - os.getloadavg()[0]
    return 2 if cores >= 2 and idle >= 1.5 else 1


def run_samples(state: ZooState, jobs: list[tuple[Flick, float, float, int]], workers: int | None = None,
                stop: threading.Event | None = None) -> list[Sample]:
    """Play every (flick, direction, speed, seed) job on clones of ``state``: in this process for a small batch,
    on a local Dask cluster of ``workers`` processes for a large one (``engine.core.distributed``).

    ``stop``: once set, the batch is abandoned (``RunStopped``), a small one within a few flicks: a page's odds of
    a battle that a move has just changed would only slow the move down. Each job has its own seed, so the
    chunking never changes a result."""
    from engine.core.distributed import run_chunks

    workers = default_workers() if workers is None else workers
    if workers < 1:
        raise ValueError("workers must be at least 1")
    small = len(jobs) <= SMALL_SAMPLES  # run in this process, on ``workers`` threads: MuJoCo's step releases the GIL
    if small and stop is not None:
        step = STOP_SAMPLES  # a stop is seen between chunks
    elif small and workers > 1:
        step = min(SAMPLE_CHUNK, max(1, math.ceil(len(jobs) / workers)))  # a chunk per thread
    else:
        step = SAMPLE_CHUNK
    chunks = [(jobs[i:i + step],) for i in range(0, len(jobs), step)]
    parts = run_chunks(play_samples, chunks, shared=(state,), workers=workers, small=small, threads=workers,
                       stop=stop)
    return [smp for part in parts for smp in part]


def noisy_jobs(flick: Flick, noise: AimNoise, samples: int, rng: np.random.Generator
               ) -> list[tuple[Flick, float, float, int]]:
    dirs = flick.direction + noise.angle_sd * rng.standard_normal(samples)
    speeds = flick.speed * (1.0 + noise.speed_sd * rng.standard_normal(samples))
    seeds = rng.integers(0, 2**63, size=samples)
    return [(flick, float(d), float(v), int(s)) for d, v, s in zip(dirs, speeds, seeds, strict=True)]


def summarise(flick: Flick, noise: AimNoise, samples: list[Sample]) -> FlickOdds:
    n = len(samples)
    counts = [0] * len(OUTCOMES)
    for smp in samples:
        counts[smp[3]] += 1
    deltas = np.array([smp[4] for smp in samples], dtype=float)
    mean = float(deltas.mean()) if n else float("nan")
    half = 1.959963984540054 * float(deltas.std(ddof=1)) / math.sqrt(n) if n > 1 else float("inf")
    return FlickOdds(
        flick=str(flick), samples=n, noise=noise,
        cage_opponent=Proportion.of(sum(smp[0] for smp in samples), n),
        lose_own=Proportion.of(sum(smp[1] for smp in samples), n),
        foul=Proportion.of(sum(smp[2] for smp in samples), n),
        extra_flick=Proportion.of(sum(smp[5] for smp in samples), n),
        outcomes={name: Proportion.of(counts[i], n) for i, name in enumerate(OUTCOMES)},
        points_mean=mean, points_low=mean - half, points_high=mean + half,
    )


def _check(state: ZooState, flick: Flick | str) -> Flick:
    if isinstance(flick, str):
        flick = state.parse_action(flick)  # type: ignore[assignment]
    if not isinstance(flick, Flick):
        raise ValueError(f"{flick} is not a flick")
    reason = state.illegal_reason(flick)
    if reason is not None:
        raise ValueError(f"cannot estimate the odds of {flick}: {reason}")
    return flick


def _check_aim(state: ZooState, base: Flick, direction: Any, speed: Any) -> None:
    """Refuse a grid value that is not a finite number with the engine's reason. Only that: an out-of-range value
    is held inside the legal range (``clamp_flick``) and its row shows the aim actually estimated, but clamping
    a NaN gives a NaN, which would be played and shown as made-up odds."""
    try:
        direction, speed = float(direction), float(speed)
    except (TypeError, ValueError):
        raise ValueError(f"the grid needs numbers, not {direction!r} x {speed!r}") from None
    if not (math.isfinite(direction) and math.isfinite(speed)):
        aimed = base.with_aim(direction, speed)
        raise ValueError(f"cannot estimate the odds of {aimed}: {state.illegal_reason(aimed)}")


def flick_odds(state: ZooState, flick: Flick | str, noise: AimNoise | None = None, samples: int = 500,
               seed: int | None = 0, workers: int | None = None) -> FlickOdds:
    """The odds of an aimed flick under aim noise (default: the constants' human hand), from ``samples`` plays.

    Extra jitter the flick gets in the rules (eyes closed, off hand) is added by the rules themselves.
    """
    flick = _check(state, flick)
    noise = noise or AimNoise()
    if samples < 1:
        raise ValueError("samples must be at least 1")
    jobs = noisy_jobs(flick, noise, samples, make_rng(seed))
    return summarise(flick, noise, run_samples(state, jobs, workers))


FIRST_SAMPLES = 40
"""Samples of the first estimate ``flick_odds_progressive`` gives (about a tenth of a second of physics)."""


def flick_odds_progressive(state: ZooState, flick: Flick | str, noise: AimNoise | None = None, samples: int = 500,
                           seed: int | None = 0, workers: int | None = None, first: int = FIRST_SAMPLES
                           ) -> Iterator[FlickOdds]:
    """The odds of ``flick_odds`` as they come: a first estimate from ``first`` samples, then one after each
    further ``SAMPLE_CHUNK`` samples; the last is ``flick_odds``'s result for the same arguments exactly (the
    same noisy flicks with the same seeds, drawn up front)."""
    flick = _check(state, flick)
    noise = noise or AimNoise()
    if samples < 1 or first < 1:
        raise ValueError("samples and first must be at least 1")
    jobs = noisy_jobs(flick, noise, samples, make_rng(seed))
    done: list[Sample] = []
    start, step = 0, min(first, samples)
    while start < samples:
        done += run_samples(state, jobs[start:start + step], workers)
        start += step
        step = SAMPLE_CHUNK
        yield summarise(flick, noise, done)


def odds_grid(state: ZooState, flick: Flick | str, directions: list[float] | np.ndarray,
              speeds: list[float] | np.ndarray, noise: AimNoise | None = None, samples: int = 50,
              seed: int | None = 0, workers: int | None = None, stop: threading.Event | None = None
              ) -> pd.DataFrame:
    """Odds of ``flick`` re-aimed over a grid of directions x speeds: one row per cell (``stop``: as
    :func:`run_samples`).

    Columns: direction, speed, samples (simulated flicks in the cell), p_cage_opponent (+ _low/_high),
    p_lose_own (+ _low/_high), p_foul, p_extra_flick, p_<outcome> for each final face / caged / out,
    points_mean (+ _low/_high).
    """
    base = _check(state, flick)
    for d in directions:
        _check_aim(state, base, d, base.speed)
    for v in speeds:
        _check_aim(state, base, base.direction, v)
    if samples < 1:
        raise ValueError("samples must be at least 1")
    noise = noise or AimNoise()
    rng = make_rng(seed)
    cells: list[Flick] = []
    jobs: list[tuple[Flick, float, float, int]] = []
    for d in directions:
        for v in speeds:
            aimed = clamp_flick(state, base, float(d), float(v))
            cells.append(aimed)
            jobs += noisy_jobs(aimed, noise, samples, rng)
    results = run_samples(state, jobs, workers, stop)
    rows = []
    for k, aimed in enumerate(cells):
        odds = summarise(aimed, noise, results[k * samples:(k + 1) * samples])
        row: dict[str, Any] = {"direction": aimed.direction, "speed": aimed.speed, "samples": odds.samples}
        for key in ("cage_opponent", "lose_own"):
            prop = getattr(odds, key)
            row[f"p_{key}"], row[f"p_{key}_low"], row[f"p_{key}_high"] = prop.value, prop.low, prop.high
        row["p_foul"] = odds.foul.value
        row["p_extra_flick"] = odds.extra_flick.value
        for name, prop in odds.outcomes.items():
            row[f"p_{name}"] = prop.value
        row["points_mean"], row["points_low"], row["points_high"] = odds.points_mean, odds.points_low, odds.points_high
        rows.append(row)
    return pd.DataFrame(rows)
