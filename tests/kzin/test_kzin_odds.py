"""Exact battle odds against independent derivations (brute-force dice enumeration, hand working)."""

import itertools
from fractions import Fraction

import pytest

from engine.kzin.odds import Battle, p_humans_win


def brute_force(human_const, human_dice, kzin_const, kzin_dice):
    """Count every equally likely combination of d10s; Humans win ties."""
    wins = total = 0
    for dice in itertools.product(range(1, 11), repeat=human_dice + kzin_dice):
        total += 1
        wins += human_const + sum(dice[:human_dice]) >= kzin_const + sum(dice[human_dice:])
    return Fraction(wins, total)


@pytest.mark.parametrize(("hc", "hd", "kc", "kd"), [
    (3, 1, 10, 1), (12, 1, 11, 1), (0, 1, 0, 1), (20, 2, 15, 2), (5, 3, 14, 1), (30, 1, 10, 2), (-5, 1, 20, 1),
])
def test_exact_odds_match_brute_force(hc, hd, kc, kd):
    assert p_humans_win(hc, hd, kc, kd) == brute_force(hc, hd, kc, kd)


def test_hand_worked_single_fleet_defence():
    # ARM Defense Force (+3) against Kzinti Pride (+0): Humans d10 + 3 vs d10 + 10.
    # They win when H - K >= 7: (8,1) (9,1) (9,2) (10,1) (10,2) (10,3) -> 6 of 100.
    b = Battle("invasion", fleets=["ARM Defense Force"], kzin_fleet="Kzinti Pride")
    assert b.win_probability() == Fraction(6, 100)


def test_hand_worked_with_technology_militia_and_tactics():
    # Militia (+1, +1 in invasion) with 2 technology = 4, Marines +5: d10 + 9 vs Armada d10 + 12.
    # Need H - K >= 3: pairs with a difference of 3 or more = (1+...+7) = 28 of 100.
    b = Battle("invasion", fleets=["Militia Home Fleet"], tactics=["Marines"], technology=2,
               kzin_fleet="Kzinti Armada")
    assert (b.human_const(), b.kzin_const()) == (9, 12)
    assert b.win_probability() == Fraction(28, 100)
    # Without the Kzin fleet's own force (the option): d10 + 9 vs d10 + 10, so H - K >= 1: 45 of 100.
    b = Battle("invasion", fleets=["Militia Home Fleet"], tactics=["Marines"], technology=2,
               kzin_fleet="Kzinti Armada", kzin_fleet_force=False)
    assert b.win_probability() == brute_force(9, 1, 10, 1) == Fraction(45, 100)


def test_liberation_bonus_reinforcements_and_base_force():
    b = Battle("liberation", fleets=["Pirate Fleet"], tactics=["Reinforcements"], conquest=["Stasis Fields"], kem=6,
               kzin_base_force=8)
    # Humans: 2 + X (5 spaces behind the marker) = 7; Kzinti: 8 + 5 + 2 = 15.
    assert (b.human_const(), b.kzin_const()) == (7, 15)
    assert b.win_probability() == brute_force(7, 1, 15, 1)


def test_dice_cards_on_both_sides():
    b = Battle("invasion", fleets=["Belter Ships"], tactics=["Giant Launch Lasers"], conquest=["Telepathy"],
               kzin_fleet="Kzinti Vanguard")
    assert (b.human_dice(), b.kzin_dice()) == (3, 2)
    assert b.win_probability() == brute_force(3, 3, 8, 2)


def test_force_table_columns():
    t = Battle("invasion", fleets=["Pirate Fleet"], kzin_fleet="Kzinti Pride").force_table()
    humans = t[t.side == "Humans"]
    assert list(humans.force) == list(range(3, 13))
    assert humans.p_exact.sum() == 1 and humans.at_least_exact.iloc[0] == 1 and humans.at_most_exact.iloc[-1] == 1
    assert set(t.columns) >= {"side", "force", "p", "at_least", "at_most"}


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"phase": "liberation", "fleets": ["Pirate Fleet"], "tactics": ["Lines of Defense"]}, "adds nothing"),
    ({"phase": "invasion", "fleets": ["Pirate Fleet"], "kzin_fleet": "Kzinti Pride",
      "tactics": ["Wunderland Treaty Maker"]}, "adds nothing"),
    ({"fleets": ["Warp Fleet"], "kzin_fleet": "Kzinti Pride"}, "no card is called"),
    ({"fleets": ["Pirate Fleet"] * 3, "kzin_fleet": "Kzinti Pride"}, "deck has 2"),
    ({"fleets": ["Marines"], "kzin_fleet": "Kzinti Pride"}, "not a Human Fleet"),
    ({"fleets": [], "kzin_fleet": "Kzinti Pride"}, "at least one"),
    ({"fleets": ["Pirate Fleet"]}, "needs the invading"),
    ({"fleets": ["Pirate Fleet"], "kzin_fleet": "Kzinti Pride", "technology": 14}, "technology"),
    ({"fleets": ["Pirate Fleet"], "kzin_fleet": "Kzinti Pride", "kem": 12}, "marker"),
    ({"phase": "space", "fleets": ["Pirate Fleet"]}, "phase"),
    ({"fleets": ["Pirate Fleet"], "kzin_fleet": "Kzinti Pride", "reshufle": True}, "unknown rule option"),
    ({"fleets": "Pirate Fleet", "kzin_fleet": "Kzinti Pride"}, r"as a list of names, e.g. \['Pirate Fleet'\]"),
    ({"fleets": ["Pirate Fleet"], "kzin_fleet": "Kzinti Pride", "tactics": "Marines"}, "Tactics cards as a list"),
])
def test_bad_battles_are_clear_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Battle(**kwargs)
