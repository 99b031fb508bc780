"""Malformed moves (issue 18, point 8): refused with IllegalActionError by the protocol, and caught by the fuzz."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest
from toy import Bonus, DuelGame, DuelState, Roll

from engine.core import Action, IllegalActionError, random_sim_test
from engine.core.protocol import malformed
from engine.core.testing import malformed_variants


@dataclass(frozen=True, slots=True)
class Aim(Action):
    die: str
    speed: float
    along: float | None
    chits: tuple[str, ...]
    ability: bool = False


GOOD = Aim("C1", 1.2, None, ("fist",))


@pytest.mark.parametrize(("action", "words"), [
    (Aim(["C1"], 1.2, None, ()), "die must be a text"),
    (Aim("C1" * 100, 1.2, None, ()), "die must be a text of at most 100"),
    (Aim("C1", "1.2", None, ()), "speed must be a finite number, not str"),
    (Aim("C1", math.nan, None, ()), "speed must be a finite number, not nan"),
    (Aim("C1", True, None, ()), "speed must be a finite number"),
    (Aim("C1", 1.2, "x", ()), "along must be a finite number or empty"),
    (Aim("C1", 1.2, None, ["fist"]), "chits must be a tuple of texts"),
    (Aim("C1", 1.2, None, ("fist", 3)), "chits must be"),
    (Aim("C1", 1.2, None, (), ability=1), "ability must be true or false"),
    (Bonus(True), "amount must be a whole number"),
    (Bonus(2.0), "amount must be a whole number"),
    (42, "a int is not a move"),
    (None, "a NoneType is not a move"),
])
def test_malformed_names_the_field_and_the_type_it_needs(action, words):
    assert words in malformed(action)


def test_well_formed_moves_pass():
    assert malformed(GOOD) is None and malformed(Aim("C1", 2, 3.5, ())) is None and malformed(Bonus(-5)) is None


def test_every_state_refuses_a_malformed_move_through_apply_action():
    s = DuelGame().new_initial_state()
    for bad in (Bonus("2"), Bonus(None), Bonus([2]), "not a move", 3, None):
        with pytest.raises(IllegalActionError):
            s.apply_action(bad)
    assert s.bonus is None


def test_the_variants_cover_every_field_with_wrong_types_and_out_of_range_values():
    variants = malformed_variants(GOOD)
    assert {type(v.die) for v in variants} >= {int, type(None), list, str}
    assert any(isinstance(v.speed, float) and math.isnan(v.speed) for v in variants)
    assert all(malformed(v) is not None or v.die == "<b>" for v in variants)
    assert {v.amount for v in malformed_variants(Bonus(2)) if type(v.amount) is int} >= {-35, -1, 10**6}


class _Sloppy(DuelState):
    """Accepts a bonus through Python's negative index, as Kzin's Commit(-35) once was."""

    def illegal_reason(self, action):
        if isinstance(action, Bonus) and self.bonus is None:
            try:
                self.game.bonuses[action.amount]
                return None
            except (IndexError, TypeError):
                pass
        return super().illegal_reason(action)


class _SloppyGame(DuelGame):
    def new_initial_state(self, rng=None):
        return _Sloppy(self)


class _Crashing(DuelState):
    """Compares a move's field without checking its type first: ``Roll("x")`` raises TypeError."""

    def illegal_reason(self, action):
        if isinstance(action, Roll) and not 1 <= action.value <= 10:
            return "a d10 shows 1-10"
        return super().illegal_reason(action)


class _CrashingGame(DuelGame):
    def new_initial_state(self, rng=None):
        return _Crashing(self)


@pytest.mark.parametrize("game", [_SloppyGame(), _CrashingGame()], ids=["accepts -1", "raises TypeError"])
def test_the_fuzz_catches_a_game_that_accepts_or_chokes_on_a_malformed_move(game):
    with pytest.raises(AssertionError, match="malformed action"):
        random_sim_test(game, num_games=20, seed=1, malformed_probes=6)


def test_the_fuzz_passes_a_sound_game_and_counts_its_probes():
    report = random_sim_test(DuelGame(), num_games=20, seed=1)
    assert report.malformed_probes > 0
