"""``dojo kf2100 tournament``: bot against bot per scenario and side, on a 2-worker Dask cluster."""

from __future__ import annotations

import json
from collections import Counter

import pandas as pd
import pytest

from engine import cli as dojo
from engine.core import make_rng, play_game, wilson_interval
from engine.kf2100.bots import bots_for
from engine.kf2100.state import KungFuGame
from engine.kf2100.tournament import CHUNK, COLUMNS, tournament


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    code = dojo.main(["kf2100", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def replay(scenario: str, games: int, seed: int) -> Counter[str]:
    """The grades of the tournament's games played by hand: chunks of CHUNK games, a spawned seed each."""
    import numpy as np

    game = KungFuGame(scenario)
    sizes = [CHUNK] * (games // CHUNK) + ([games % CHUNK] if games % CHUNK else [])
    grades: Counter[str] = Counter()
    for child, n in zip(np.random.SeedSequence(seed).spawn(len(sizes)), sizes, strict=True):
        rng = make_rng(child)
        for _ in range(n):
            grades[play_game(game.new_initial_state(), bots_for(game), rng).result] += 1
    return grades


def test_a_tournament_on_a_cluster_gives_the_games_of_one_process(dask_scheduler, capsys, tmp_path):
    """The cluster's table against the same games replayed here by hand (two chunks: 5 games and 1)."""
    argv = ["tournament", "--scenarios", "basic", "--games", "6", "--seed", "3", "--json"]
    code, out, _ = run([*argv, "--scheduler", dask_scheduler, "--out", str(tmp_path / "t.csv")], capsys)
    assert code == 0
    there = pd.DataFrame(json.loads(out))
    assert list(there.columns) == COLUMNS
    assert pd.read_csv(tmp_path / "t.csv")[["wins", "draws", "losses"]].equals(there[["wins", "draws", "losses"]])
    assert there.side.tolist() == ["terminators", "clone_master"] and (there.games == 6).all()
    assert (there.wins + there.draws + there.losses == 6).all()
    t, cm = there.iloc[0], there.iloc[1]
    assert (t.wins, t.draws, t.losses) == (cm.losses, cm.draws, cm.wins) and t.mean_return == -cm.mean_return
    grades = replay("basic", 6, 3)
    assert t.wins == grades["terminator_victory"] + grades["terminator_total_victory"]
    assert cm.wins == grades["clone_master_victory"] + grades["clone_master_total_victory"]
    assert t.total_wins == grades["terminator_total_victory"]
    assert [t.win_low, t.win_high] == pytest.approx(wilson_interval(int(t.wins), 6), rel=1e-13)
    assert (cm.loss_low, cm.loss_high) == (t.win_low, t.win_high)


def test_the_solo_scenario_and_partial_rows(dask_scheduler):
    seen = []
    frame = tournament(["solo"], games=3, seed=1, scheduler=dask_scheduler, on_rows=seen.append)
    assert [r["side"] for r in seen[0]] == ["terminators", "clone_master"] and len(frame) == 2
    grades = replay("solo", 3, 1)
    assert frame.iloc[1].wins == grades["clone_master_victory"] and frame.iloc[0].draws == grades["draw"]


def test_the_readable_table(capsys):
    code, out, _ = run(["tournament", "--games", "1", "--terminators", "random,heuristic", "--workers", "1"], capsys)
    lines = out.splitlines()
    assert code == 0 and "1 games a pairing" in lines[0] and lines[1].split()[:2] == ["scenario", "side"]
    assert [line.split()[:4] for line in lines[2:]] == [
        ["basic", "terminators", "random", "heuristic"], ["basic", "clone_master", "heuristic", "random"],
        ["basic", "terminators", "heuristic", "heuristic"], ["basic", "clone_master", "heuristic", "heuristic"]]


@pytest.mark.parametrize(("argv", "message"), [
    (["--scenarios", "bogus"], "no scenario 'bogus'"),
    (["--terminators", "smart"], "unknown bot 'smart'"),
    (["--games", "0"], "games must be"),
    (["--workers", "0", "--games", "9"], "workers must be"),
    (["--scenarios", ""], "at least one scenario"),
    (["--out", "/nonexistent/dir/t.csv"], "no folder"),
])
def test_bad_tournaments_exit_2_with_a_message(argv, message, capsys):
    code, out, err = run(["tournament", *argv], capsys)
    assert code == 2 and out == "" and message in err
