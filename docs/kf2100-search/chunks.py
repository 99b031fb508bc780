"""Play the tournament's own chunks (same seeds as `dojo kf2100 tournament --seed S --games G`), one
pairing after the other chunk by chunk, appending each chunk's grades to a JSON-lines file as it finishes.

Usage: chunks.py SCENARIO BOTS GAMES SEED OUT.jsonl [OPPONENT]; BOTS play the Terminators when OUT's name
contains "terminators", else the Clone Master; OPPONENT (default heuristic) the other side. A chunk already in
OUT is not played again, so a run cut short carries on. Used for the 2026-12-03 runs (docs/kf2100-search.md)."""
import json, sys, time, os
from engine.core.distributed import chunk_seeds, chunk_sizes
from engine.kf2100.tournament import CHUNK, play_chunk
scenario, bots, games, seed, out = sys.argv[1], sys.argv[2].split(","), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
opponent = sys.argv[6] if len(sys.argv) > 6 else "heuristic"
sizes = chunk_sizes(games, CHUNK); seeds = chunk_seeds(seed, len(sizes))
done = set()
if os.path.exists(out):
    for line in open(out):
        r = json.loads(line); done.add((r["chunk"], r["bot"]))
for i, (s, n) in enumerate(zip(seeds, sizes)):
    for bot in bots:
        if (i, bot) in done: continue
        t, c = time.perf_counter(), time.process_time()
        grades, turns = play_chunk(scenario, bot, opponent, s, n) if "terminators" in out else play_chunk(scenario, opponent, bot, s, n)
        rec = {"scenario": scenario, "chunk": i, "bot": bot, "opponent": opponent, "games": n, "grades": grades, "turns": turns,
               "wall_s": time.perf_counter() - t, "cpu_s": time.process_time() - c, "load": os.getloadavg()[0]}
        with open(out, "a") as f: f.write(json.dumps(rec) + "\n")
