"""The tournament's table (tournament.side_rows) from chunks.py's JSON lines: only the chunks both bots finished."""
import json, sys
from collections import Counter, defaultdict
import pandas as pd
from engine.kf2100.state import KungFuGame
from engine.kf2100.tournament import COLUMNS, side_rows
from engine.kf2100.search import versus_heuristic
path, side, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
recs = [json.loads(l) for l in open(path)]
by = defaultdict(dict)
for r in recs: by[r["chunk"]][r["bot"]] = r
bots = sorted({r["bot"] for r in recs})
full = sorted(k for k, v in by.items() if len(v) == len(bots))
rows = []
for bot in bots:
    g, turns, n = Counter(), 0, 0
    for k in full:
        r = by[k][bot]; g.update(r["grades"]); turns += r["turns"]; n += r["games"]
    sc = recs[0]["scenario"]; opp = recs[0]["opponent"]
    pair = (bot, opp) if side == "terminators" else (opp, bot)
    rows += side_rows(sc, pair, g, turns, n, seed, KungFuGame(sc).book.scenarios.grades)
frame = pd.DataFrame(rows, columns=COLUMNS)
if len(sys.argv) > 4: frame.to_csv(sys.argv[4], index=False)
pd.set_option("display.width", 250)
v = versus_heuristic(frame)
print(len(full), "chunks;", v[[c for c in v.columns if c in ("scenario","side","search_bot","search_games","search_wins","search_draws","search_win_rate","search_win_low","search_win_high","heuristic_wins","heuristic_draws","heuristic_win_rate","heuristic_win_low","heuristic_win_high","beats_heuristic")]].to_string())
s = [r for r in recs if r["bot"].startswith("search")]
print("search s/game wall", sum(r["wall_s"] for r in s)/max(1,sum(r["games"] for r in s)), "cpu", sum(r["cpu_s"] for r in s)/max(1,sum(r["games"] for r in s)), "loads", [round(r["load"],1) for r in s])
