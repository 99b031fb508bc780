"""The tournament's table (tournament.side_rows) from chunks.py's JSON lines: only the chunks both bots finished.

Usage: assemble.py CHUNKS.jsonl SIDE SEED [OUT.csv]; SIDE is "terminators" or "clone_master" (the seat of the bots
that are not the opponent). Prints the search bot against the heuristic (search.versus_heuristic)."""

import json
import sys
from collections import Counter, defaultdict

import pandas as pd

from engine.kf2100.search import versus_heuristic
from engine.kf2100.state import KungFuGame
from engine.kf2100.tournament import COLUMNS, side_rows

SHOWN = ("scenario", "side", "search_bot", "search_games", "search_wins", "search_draws", "search_win_rate",
         "search_win_low", "search_win_high", "heuristic_wins", "heuristic_draws", "heuristic_win_rate",
         "heuristic_win_low", "heuristic_win_high", "beats_heuristic")


def main(argv: list[str]) -> None:
    path, side, seed = argv[0], argv[1], int(argv[2])
    with open(path, encoding="utf-8") as f:
        records = [json.loads(line) for line in f]
    by_chunk: dict[int, dict[str, dict]] = defaultdict(dict)
    for record in records:
        by_chunk[record["chunk"]][record["bot"]] = record
    bots = sorted({r["bot"] for r in records})
    full = sorted(k for k, v in by_chunk.items() if len(v) == len(bots))
    rows = []
    for bot in bots:
        grades: Counter = Counter()
        turns = games = 0
        for k in full:
            record = by_chunk[k][bot]
            grades.update(record["grades"])
            turns += record["turns"]
            games += record["games"]
        scenario, opponent = records[0]["scenario"], records[0]["opponent"]
        pair = (bot, opponent) if side == "terminators" else (opponent, bot)
        rows += side_rows(scenario, pair, grades, turns, games, seed, KungFuGame(scenario).book.scenarios.grades)
    frame = pd.DataFrame(rows, columns=COLUMNS)
    if len(argv) > 3:
        frame.to_csv(argv[3], index=False)
    pd.set_option("display.width", 250)
    table = versus_heuristic(frame)
    print(len(full), "chunks;", table[[c for c in table.columns if c in SHOWN]].to_string())
    searched = [r for r in records if r["bot"].startswith("search")]
    games = max(1, sum(r["games"] for r in searched))
    print("search s/game wall", sum(r["wall_s"] for r in searched) / games, "cpu",
          sum(r["cpu_s"] for r in searched) / games, "loads", [round(r["load"], 1) for r in searched])


if __name__ == "__main__":
    main(sys.argv[1:])
