"""``dojo kf2100 solo-points``: the Solo scenario's points over the tournament's games, with 95% intervals."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from engine import cli as dojo
from engine.core import make_rng, play_game
from engine.kf2100.bots import bots_for
from engine.kf2100.state import KungFuGame
from engine.kf2100.tournament import CHUNK, points_summary, solo_points


def by_hand(games: int, seed: int) -> list[tuple[str, int, int]]:
    """The tournament's Solo games replayed by hand (chunks of CHUNK, a spawned seed each), scored from the end
    position by the seed's own numbers: 5 for the Clone Master and for each piece of equipment, 2 a Jelly, 50
    for everything; 30 for the Terminator killed, 60 for him still in the lair at the end."""
    game = KungFuGame("solo")
    sizes = [CHUNK] * (games // CHUNK) + ([games % CHUNK] if games % CHUNK else [])
    out = []
    for child, n in zip(np.random.SeedSequence(seed).spawn(len(sizes)), sizes, strict=True):
        rng = make_rng(child)
        for _ in range(n):
            end = play_game(game.new_initial_state(), bots_for(game), rng)
            cm_dead = end.figs["CM"].status == "dead"
            smashed = sum(not alive for alive in end.equipment.values())
            jellies = sum(f.kind == "jelly" and f.status == "dead" for f in end.figs.values())
            t = 5 * cm_dead + 5 * smashed + 2 * jellies + 50 * (cm_dead and smashed == 7)
            status = end.figs["T1"].status
            cm = 30 if status == "dead" else 0 if status == "escaped" else 60
            out.append((end.result, t, cm))
    return out


def test_the_points_are_the_tournaments_games_scored_as_the_seed_scores_them():
    points = solo_points(7, seed=3)
    assert list(zip(points.result, points.terminator, points.clone_master, strict=True)) == by_hand(7, 3)
    assert (points.margin == points.terminator - points.clone_master).all()
    assert points.turn.between(1, 12).all()


def test_the_summary_is_the_mean_with_a_students_t_interval():
    frame = pd.DataFrame({"result": ["draw"] * 3, "terminator": [0, 30, 30], "clone_master": [5, 5, 5],
                          "margin": [-5, 25, 25], "turn": [12, 12, 12]})
    row = points_summary(frame).set_index("points").loc["terminator"]
    # mean 20; sd sqrt((400 + 100 + 100) / 2) = sqrt(300); t(0.975, 2 df) = 4.302653
    assert row["mean"] == 20 and row.sd == pytest.approx(300 ** 0.5)
    assert row.high - row["mean"] == pytest.approx(4.302653 * 300 ** 0.5 / 3 ** 0.5, rel=1e-6)
    assert row.low == pytest.approx(20 - 43.0265, abs=1e-3) and (row["q1"], row["median"], row["q3"]) == (15, 30, 30)
    flat = points_summary(frame).set_index("points").loc["clone_master"]
    assert flat.sd == 0 and flat.low == flat.high == 5


def test_the_command_prints_the_points_and_refuses_a_bad_count_or_bot(capsys):
    assert dojo.main(["kf2100", "solo-points", "--games", "3", "--seed", "3", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert sum(report["results"].values()) == 3 and [r["points"] for r in report["summary"]] == [
        "terminator", "clone_master", "margin"]
    assert report["summary"][0]["mean"] == pytest.approx(np.mean([t for _, t, _ in by_hand(3, 3)]))
    assert dojo.main(["kf2100", "solo-points", "--games", "0"]) == 2
    assert "games must be a whole number of at least 1" in capsys.readouterr().err
    assert dojo.main(["kf2100", "solo-points", "--games", "2", "--terminators", "nobot"]) == 2
    assert "unknown bot 'nobot'" in capsys.readouterr().err
