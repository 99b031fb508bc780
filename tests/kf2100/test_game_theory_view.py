"""The chit exchange beside the CRT: the exchange in play, solved exactly, and shown without a hidden chit."""

from __future__ import annotations

import re
from fractions import Fraction

from apps.kf2100 import game_theory
from engine.core import dump_state
from engine.core.session import PERSON
from engine.kf2100.actions import Attack, Chits, Lead
from engine.kf2100.data import rulebook
from engine.kf2100.session import KungFuSession, default_seats
from engine.kf2100.state import KungFuGame, skirmish


def combat() -> KungFuSession:
    s = KungFuSession(seats=default_seats(PERSON, PERSON))
    s.load(dump_state(skirmish(KungFuGame("basic"), {"T1": "n9", "J3": "o9", "J1": "n10"}, phase="combat1")))
    for action in (Chits("T1", ("fist", "kick", "mist")), Chits("J1", ("fist", "kick")), Chits("J3", ("fist", "mist")),
                   Lead(0)):
        s.play(action)
    return s


def test_the_pending_attacks_exchange_is_a_minimax_solution_checked_here():
    s = combat()
    s.play(Attack("T1", "kick", "J3"))
    [g] = game_theory.exchanges(s, None)
    assert (g.attacker, g.target) == ("T1", "J3")
    crt = rulebook().crt
    # The matrix is the CRT's: a hit on 1..n of a d6, attack chit down, answer column across.
    for r, row in zip(g.rows, g.payoff, strict=True):
        assert list(row) == [Fraction(max(0, min(6, crt[r][c])), 6) for c in g.columns]
    # An equilibrium checked by its definition: no pure deviation does better for either side.
    x, y, v = g.attack_strategy, g.answer_strategy, g.value
    assert sum(x) == sum(y) == 1 and min(x) >= 0 and min(y) >= 0
    assert all(sum(x[i] * g.payoff[i][j] for i in range(len(x))) >= v for j in range(len(y)))
    assert all(sum(y[j] * g.payoff[i][j] for j in range(len(y))) <= v for i in range(len(x)))
    shown = game_theory.exchange_html(s, None)
    assert f"value <b>{v.numerator}/{v.denominator}</b>" in shown or f"value <b>{v}</b>" in shown
    # J1's answers count (the seed reads the answering chit whoever answers): its kick is a column.
    assert "kick" in g.columns and "none" not in g.columns


def test_an_armed_chit_shows_its_figure_on_every_enemy_in_reach_and_no_hidden_pick():
    s = combat()
    games = game_theory.exchanges(s, ("T1", "kick"))
    assert {g.target for g in games} == {"J1", "J3"} and all(g.attacker == "T1" for g in games)
    shown = game_theory.exchange_html(s, ("T1", "kick"))
    assert shown.count("class='exchange'") == 2
    # Built from levels, not picks: the same view whatever the Jellies picked (their chits are hidden).
    picks = s.state.combat.chits
    assert picks["J3"] and picks["J1"]
    picks["J3"], picks["J1"] = ["mist"], ["kick"]
    assert game_theory.exchange_html(s, ("T1", "kick")) == shown


def test_no_combat_no_exchange():
    s = KungFuSession(seats=default_seats(PERSON, PERSON))
    assert game_theory.exchanges(s, None) == [] and "When a chit is armed" in game_theory.exchange_html(s, None)
    assert not re.search(r"value <b>", game_theory.exchange_html(s, None))
