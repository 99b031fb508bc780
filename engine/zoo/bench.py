"""Kung-Fu Zoo throughput: flicks simulated per second in the 3-D arena and the latency of one flick's odds.

``python -m engine.zoo.bench`` prints the rows; ``engine.bench`` collects them with every game's. The
position is a mid-game two-player Cage Battle (eight animals in the arena) reached by a seeded random game.
Wall-clock figures depend on the machine and on what else runs on it, so the CPU time per flick is printed
as well.
"""

from __future__ import annotations

import math
import time

from engine.core import make_rng
from engine.zoo.actions import Flick
from engine.zoo.faces import orientation_with_up
from engine.zoo.game import ZooState, new_game
from engine.zoo.odds import FIRST_SAMPLES, AimNoise, flick_odds_progressive, noisy_jobs, run_samples


def mid_game_state(seed: int = 3) -> ZooState:
    """A two-player Cage Battle after the entry flicks, with most animals in the arena."""
    state = new_game("cage", 2, seed=seed)
    rng = make_rng(seed)
    while sum(d.status == "hand" for d in state.dice.values()) > 0 and not state.is_terminal():
        hand = [a for a in state.legal_actions() if isinstance(a, Flick) and a.speed <= 1.2]
        state.apply_action(hand[int(rng.integers(len(hand)))] if hand else state.legal_actions()[0])
    return state


def aimed_flick(state: ZooState) -> Flick:
    return next(a for a in state.legal_actions() if isinstance(a, Flick) and a.speed == 1.2 and a.direction == 0)


def flicks_3d(state: ZooState, flick: Flick, n: int, seed: int = 1) -> tuple[float, float, int]:
    """Wall and CPU seconds of ``n`` noisy copies of ``flick`` in the 3-D arena (MuJoCo), one process, and
    the number of dice in the arena (the flicked one included)."""
    from engine.zoo import arena3d

    noise = AimNoise()
    rng = make_rng(seed)
    others = [die.body(d) for d, die in state.dice.items() if die.status == "arena" and d != flick.die]
    x, y, normal = arena3d.launch_point(flick.rail, 150.0 if flick.along is None else flick.along)
    face = orientation_with_up(flick.face or "head")
    launches = []
    for _ in range(n):
        heading = normal + math.radians(flick.direction + rng.normal(0, noise.angle_sd))
        speed = flick.speed * 1000.0 * (1 + rng.normal(0, noise.speed_sd))
        launches.append(arena3d.Launch(flick.die, x, y, heading, speed, face))
    arena3d.simulate(others, launches[0], rng)  # builds and caches the model
    wall, cpu = time.perf_counter(), time.process_time()
    for launch in launches:
        arena3d.simulate(others, launch, rng)
    return time.perf_counter() - wall, time.process_time() - cpu, len(others) + 1


def run(quick: bool = False) -> list[tuple[str, float, str]]:
    """(label, value, unit) rows; a few seconds in all (well under one with ``quick``)."""
    state = mid_game_state()
    flick = aimed_flick(state)
    n3 = 20 if quick else 300
    wall3, cpu3, k = flicks_3d(state, flick, n3)
    rows = [
        (f"zoo arena flicks simulated ({k} dice), 1 process", n3 / wall3, "flicks/s"),
        ("zoo arena CPU time per simulated flick", 1000 * cpu3 / n3, "ms"),
    ]
    n = 40 if quick else 300
    jobs = noisy_jobs(flick, AimNoise(), n, make_rng(1))
    wall, cpu = time.perf_counter(), time.process_time()
    run_samples(state, jobs, workers=1)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    rows += [
        ("zoo flicks played through the rules, 1 process", n / wall, "flicks/s"),
        ("zoo CPU time per played flick", 1000 * cpu / n, "ms"),
    ]
    samples = 100 if quick else 500
    for workers in (1, 2):
        t = time.perf_counter()
        first, done = None, 0
        for estimate in flick_odds_progressive(state, flick, samples=samples, seed=2, workers=workers):
            first = time.perf_counter() - t if first is None else first
            done = estimate.samples
        total = time.perf_counter() - t
        label = f"{workers} thread{'s' if workers > 1 else ''}"
        rows.append((f"zoo odds first estimate ({FIRST_SAMPLES} samples), {label}", 1000 * (first or total), "ms"))
        rows.append((f"zoo odds latency, {done} samples, {label}", 1000 * total, "ms"))
    return rows


def main() -> None:
    for name, value, unit in run():
        print(f"{name:<48} {value:>10.1f} {unit}")


if __name__ == "__main__":
    main()
