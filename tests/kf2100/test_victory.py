"""The victory screen and the solo score: what decided a finished game, line by line."""

from __future__ import annotations

import pytest

from apps.kf2100 import victory
from engine.core import play_game
from engine.core.rng import make_rng
from engine.kf2100.bots import HeuristicBot
from engine.kf2100.figures import CLONE_MASTER, TERMINATORS
from engine.kf2100.session import KungFuSession, default_seats
from engine.kf2100.state import KungFuGame


def finished(scenario: str, seed: int):
    game = KungFuGame(scenario)
    bots = [HeuristicBot(TERMINATORS), HeuristicBot(CLONE_MASTER, solo=bool(game.solo))]
    return play_game(game.new_initial_state(make_rng(seed)), bots, make_rng(seed))


@pytest.mark.parametrize("seed", [1, 2])
def test_a_finished_games_screen_names_its_result_and_what_stood(seed):
    st = finished("basic", seed)
    s = KungFuSession(seats=default_seats("bot", "bot"))
    s.state = st
    shown = victory.victory_html(s)
    assert f"<h2 class='result'>{victory.RESULTS[st.result]}</h2>" in shown
    smashed = sum(1 for alive in st.equipment.values() if not alive)
    assert f"Vital equipment destroyed: {smashed} of {len(st.equipment)}." in shown
    cm_dead = st.figs["CM"].status == "dead"
    assert ("The Clone Master is dead." in shown) == cm_dead
    # The grade follows from what the screen lists (the basic scenario's conditions, read independently).
    terms = st.terminators()
    if cm_dead and smashed == len(st.equipment):
        assert st.result.startswith("terminator")
    elif all(f.status == "dead" for f in terms):
        assert st.result.startswith("clone_master")
    else:
        assert st.result == "draw"


def test_the_solo_score_adds_up_line_by_line_and_decides_the_winner():
    st = finished("solo", 3)
    lines = st.solo_score()
    t = sum(p for side, _, _, p in lines if side == TERMINATORS)
    c = sum(p for side, _, _, p in lines if side == CLONE_MASTER)
    assert (t, c) == st.solo_points()
    pts = st.game.book.scenarios.solo_points
    killed = sum(f.status == "dead" for f in st.terminators())
    assert ("Terminators killed" in [w for _, w, n, _ in lines if n]) == (killed > 0)
    assert dict((w, p) for _, w, _, p in lines)["Terminators killed"] == killed * pts["terminator_killed"]
    assert st.result == ("terminator_victory" if t > c else "clone_master_victory" if c > t else "draw")
    s = KungFuSession(seats=default_seats("bot", "bot"), scenario="solo")
    s.state = st
    assert f"<b>Terminators {t} · Clone Master {c}</b>" in victory.victory_html(s)


def test_no_screen_while_the_game_goes_on():
    assert victory.victory_html(KungFuSession()) == ""
