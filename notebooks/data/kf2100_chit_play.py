"""Count the bots' chit play in the exchanges of heuristic-against-heuristic Kung Fu 2100 games, behind notebook
02's section 7, and write one row per chunk and kind of play to ``kf2100_chit_play.csv`` (next to this file).

The games are those of ``engine.kf2100.tournament`` (chunks of ``CHUNK`` games seeded by
``SeedSequence(SEED).spawn(n)``, a prefix of the same spawn for any n), recorded by
``engine.kf2100.chit_play.chunk_exchanges``. A row counts how often, in one chunk, the side ``side`` attacking a
``target`` with an ``attacker`` in the exchange of ``rows`` against ``columns`` played the attack chit ``attack``
and got the answer ``answer``. ``tests/kf2100/test_chit_play.py`` re-plays the first chunk and checks its rows.

    nice -n 15 .venv/bin/python notebooks/data/kf2100_chit_play.py --games 200
"""

from __future__ import annotations

import argparse
import csv
import time
from collections import Counter
from pathlib import Path

from engine.core.distributed import chunk_seeds, chunk_sizes
from engine.kf2100.chit_play import RECORD_FIELDS, chunk_exchanges
from engine.kf2100.tournament import CHUNK

SEED = 2026
SCENARIO = "basic"
OUT = Path(__file__).with_name("kf2100_chit_play.csv")
FIELDS = ["chunk", "games", *RECORD_FIELDS, "count"]


def chunk_rows(k: int, seed, games: int) -> list[dict]:
    """The rows of chunk ``k``: its exchanges counted by kind, in a fixed order."""
    _, records = chunk_exchanges(SCENARIO, seed, games)
    counts = Counter(tuple(r[f] for f in RECORD_FIELDS) for r in records)
    return [{"chunk": k, "games": games, **dict(zip(RECORD_FIELDS, key, strict=True)), "count": n}
            for key, n in sorted(counts.items(), key=lambda kv: tuple(map(str, kv[0])))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200, help="games of the basic scenario")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    sizes = chunk_sizes(args.games, CHUNK)
    with args.out.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS)
        writer.writeheader()
        for k, (seed, n) in enumerate(zip(chunk_seeds(SEED, len(sizes)), sizes, strict=True)):
            start = time.perf_counter()
            writer.writerows(chunk_rows(k, seed, n))
            f.flush()
            print(f"chunk {k}: {n} games in {time.perf_counter() - start:.1f} s", flush=True)


if __name__ == "__main__":
    main()
