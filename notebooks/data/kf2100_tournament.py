"""Play the heuristic-against-heuristic Kung Fu 2100 tournament behind notebook 02's balance figures, chunk by
chunk, and write one row per chunk to ``kf2100_tournament.csv`` (next to this file).

A game takes about half a second, too long for a notebook that must run in a minute, so the notebook reads this
table and re-plays its first chunks live to check they are reproduced exactly. The chunks are those of
``engine.kf2100.tournament``: ``CHUNK`` games each, seeded by ``SeedSequence(SEED).spawn(n)`` (a prefix of the
same spawn for any n), so chunk k of this file is chunk k of ``tournament(..., seed=SEED)``.

    nice -n 15 .venv/bin/python notebooks/data/kf2100_tournament.py --games 400

Scenarios are played round-robin, a chunk at a time, and each row is written as soon as it is done, so a run
stopped early still leaves a balanced table.
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path

from engine.core.distributed import chunk_seeds, chunk_sizes
from engine.kf2100.data import GRADES
from engine.kf2100.tournament import CHUNK, play_chunk

SEED = 2026
SCENARIOS = ("basic", "advanced", "solo")
OUT = Path(__file__).with_name("kf2100_tournament.csv")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=400, help="games per scenario")
    args = parser.parse_args()
    sizes = chunk_sizes(args.games, CHUNK)
    seeds = chunk_seeds(SEED, len(sizes))
    fields = ["scenario", "chunk", "games", "turns", *GRADES]
    with OUT.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        for k, (seed, n) in enumerate(zip(seeds, sizes, strict=True)):
            for scenario in SCENARIOS:
                start = time.perf_counter()
                grades, turns = play_chunk(scenario, "heuristic", "heuristic", seed, n)
                writer.writerow({"scenario": scenario, "chunk": k, "games": n, "turns": turns,
                                 **{g: grades.get(g, 0) for g in GRADES}})
                f.flush()
                print(f"{scenario} chunk {k}: {n} games in {time.perf_counter() - start:.1f} s", flush=True)


if __name__ == "__main__":
    main()
