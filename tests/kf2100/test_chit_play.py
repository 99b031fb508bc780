"""The bots' chit play measured from games (engine.kf2100.chit_play) and the data file behind notebook 02's
section 7: the recorded games are the tournament's, each exchange is the one ``combat_exchange`` builds, the file
is what its command writes, and a mix's concession is checked against a linear program solved apart."""

from __future__ import annotations

import csv
import importlib.util
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import linprog

from engine.core import make_rng
from engine.core.distributed import chunk_seeds
from engine.core.protocol import CHANCE
from engine.kf2100.actions import Attack
from engine.kf2100.chit_play import (
    answer_concession,
    attack_concession,
    chunk_exchanges,
    exchange_shape,
    mix_of,
)
from engine.kf2100.exchange import combat_exchange, exchange_game
from engine.kf2100.state import KungFuGame
from engine.kf2100.steps import Step
from engine.kf2100.tournament import make_bot, play_chunk

DATA = Path(__file__).resolve().parents[2] / "notebooks" / "data"


def load_command():
    spec = importlib.util.spec_from_file_location("kf2100_chit_play", DATA / "kf2100_chit_play.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_recorded_games_are_the_tournaments_games():
    seed = chunk_seeds(7, 1)[0]
    grades, records = chunk_exchanges("basic", seed, 2)
    assert grades == play_chunk("basic", "heuristic", "heuristic", chunk_seeds(7, 1)[0], 2)[0]
    assert records and {r["side"] for r in records} == {0, 1}
    for r in records:
        assert r["attack"] in r["rows"].split("+"), r  # the chit played is one of the exchange's rows
        assert r["answer"] == "none" or r["answer"] in r["columns"].split("+"), r


def test_each_exchange_is_the_one_combat_exchange_builds():
    """At every fresh attack on a figure in a game, for every attack the rules allow: the same rows in the same
    order, the same answer columns."""
    game = KungFuGame("basic")
    policies = [make_bot("heuristic", 0, game), make_bot("heuristic", 1, game)]
    state, rng, checked = game.new_initial_state(), make_rng(11), 0
    while checked < 60:
        player = state.current_player()
        if player == CHANCE:
            state._apply(state.sample_chance(rng))
            continue
        if player < 0:
            break
        if state.step is Step.ATTACK:
            for a in state.legal_actions():
                if isinstance(a, Attack) and not a.target.startswith("E"):
                    rows, columns = exchange_shape(state, a.figure, a.target)
                    g = combat_exchange(state, a.figure, a.target)
                    assert rows == g.rows and set(columns) == set(g.columns), (a, rows, columns, g.rows, g.columns)
                    checked += 1
        state.apply_action(policies[player].choose(state, rng))
    assert checked >= 10


def test_the_data_file_is_what_its_command_writes():
    """Chunk 0 of ``kf2100_chit_play.csv``, played again by the command's own function, gives the same rows."""
    command = load_command()
    with (DATA / "kf2100_chit_play.csv").open() as f:
        table = list(csv.DictReader(f))
    assert table and sorted({int(r["chunk"]) for r in table}) == list(range(max(int(r["chunk"]) for r in table) + 1))
    first = [r for r in table if r["chunk"] == "0"]
    games = int(first[0]["games"])
    again = command.chunk_rows(0, chunk_seeds(command.SEED, 1)[0], games)
    assert [{k: str(v) for k, v in r.items()} for r in again] == first


def lp_best_reply(payoff: list[list[float]], mix: list[float], attacker: bool) -> float:
    """The best reply to a fixed mix as a linear program over the other side's mixes (HiGHS, floats)."""
    a = np.array(payoff, dtype=float)
    if attacker:  # the answering side minimizes x A y over its y
        c, n = np.array(mix) @ a, a.shape[1]
        res = linprog(c, A_eq=[[1.0] * n], b_eq=[1.0], bounds=[(0, None)] * n, method="highs")
        return res.fun
    c, n = -(a @ np.array(mix)), a.shape[0]  # the attacker maximizes x A y over its x
    res = linprog(c, A_eq=[[1.0] * n], b_eq=[1.0], bounds=[(0, None)] * n, method="highs")
    return -res.fun


def lp_value(payoff: list[list[float]]) -> float:
    a = np.array(payoff, dtype=float)
    m, n = a.shape
    res = linprog([0.0] * m + [-1.0], A_ub=np.hstack([-a.T, np.ones((n, 1))]), b_ub=np.zeros(n),
                  A_eq=[[1.0] * m + [0.0]], b_eq=[1.0], bounds=[(0, None)] * m + [(None, None)], method="highs")
    return -res.fun


def test_the_2x2_exchange_by_hand():
    """Fist and kick against kick and mist (notebook 02): the fixed fist keeps 2/6 against the kick that beats it,
    7/18 - 1/3 = 1/18 given away; the minimax mixes give nothing away; a defender always answering mist is beaten
    by fist, 3/6, so it gives away 1/2 - 7/18 = 1/9."""
    g = exchange_game(["fist", "kick"], ["kick", "mist"])
    assert attack_concession(g.payoff, (1, 0)) == Fraction(1, 18)
    assert attack_concession(g.payoff, g.attack_strategy) == 0 == answer_concession(g.payoff, g.answer_strategy)
    assert answer_concession(g.payoff, (Fraction(0), Fraction(1))) == Fraction(1, 2) - Fraction(7, 18) == Fraction(1, 9)


@pytest.mark.parametrize("seed", range(6))
def test_a_concession_agrees_with_a_linear_program(seed):
    """On random exchanges and random measured mixes (counts), the exact concession equals value minus (or the
    best attack minus value) as two linear programs in floats find them."""
    rng = np.random.default_rng(seed)
    m, n = rng.integers(2, 6, size=2)
    payoff = [[Fraction(int(v), 6) for v in row] for row in rng.integers(0, 7, size=(m, n))]
    floats = [[float(v) for v in row] for row in payoff]
    x = mix_of({str(i): int(c) for i, c in enumerate(rng.integers(0, 20, size=m))} | {"0": 1}, [str(i) for i in
                                                                                                range(m)])
    y = mix_of({str(j): int(c) for j, c in enumerate(rng.integers(1, 20, size=n))}, [str(j) for j in range(n)])
    v = lp_value(floats)
    assert float(attack_concession(payoff, x)) == pytest.approx(v - lp_best_reply(floats, list(map(float, x)), True),
                                                                abs=1e-9)
    assert float(answer_concession(payoff, y)) == pytest.approx(lp_best_reply(floats, list(map(float, y)), False) - v,
                                                                abs=1e-9)
    assert attack_concession(payoff, x) >= 0 and answer_concession(payoff, y) >= 0


def test_bad_mixes_are_refused_with_their_reason():
    g = exchange_game(["fist", "kick"], ["kick", "mist"])
    with pytest.raises(ValueError, match="not strategies of this exchange"):
        mix_of({"fist": 3, "gun": 1}, g.rows)
    with pytest.raises(ValueError, match="at least one counted play"):
        mix_of({}, g.rows)
    with pytest.raises(ValueError, match="not a mix over the 2 attack chits"):
        attack_concession(g.payoff, (Fraction(1, 2), Fraction(1, 3)))
    with pytest.raises(ValueError, match="not a mix over the 2 answers"):
        answer_concession(g.payoff, (Fraction(1),))
