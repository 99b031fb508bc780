"""Play the tournament's own chunks (same seeds as `dojo kf2100 tournament --seed S --games G`), one pairing after
the other chunk by chunk, appending each chunk's grades to a JSON-lines file as it finishes.

Usage: chunks.py SCENARIO BOTS GAMES SEED OUT.jsonl [OPPONENT]; BOTS play the Terminators when OUT's name contains
"terminators", else the Clone Master; OPPONENT (default heuristic) the other side. A chunk already in OUT is not
played again, so a run cut short carries on. Used for the 2026-12-03 runs (docs/kf2100-search.md)."""

import json
import os
import sys
import time

from engine.core.distributed import chunk_seeds, chunk_sizes
from engine.kf2100.tournament import CHUNK, play_chunk


def main(argv: list[str]) -> None:
    scenario, bots, games, seed, out = argv[0], argv[1].split(","), int(argv[2]), int(argv[3]), argv[4]
    opponent = argv[5] if len(argv) > 5 else "heuristic"
    terminators = "terminators" in out
    sizes = chunk_sizes(games, CHUNK)
    seeds = chunk_seeds(seed, len(sizes))
    done = set()
    if os.path.exists(out):
        with open(out, encoding="utf-8") as f:
            for line in f:
                record = json.loads(line)
                done.add((record["chunk"], record["bot"]))
    for i, (chunk_seed, n) in enumerate(zip(seeds, sizes, strict=True)):
        for bot in bots:
            if (i, bot) in done:
                continue
            t, c = time.perf_counter(), time.process_time()
            pairing = (bot, opponent) if terminators else (opponent, bot)
            grades, turns = play_chunk(scenario, *pairing, chunk_seed, n)
            record = {"scenario": scenario, "chunk": i, "bot": bot, "opponent": opponent, "games": n,
                      "grades": grades, "turns": turns, "wall_s": time.perf_counter() - t,
                      "cpu_s": time.process_time() - c, "load": os.getloadavg()[0]}
            with open(out, "a", encoding="utf-8") as f:
                f.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
