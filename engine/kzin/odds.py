"""Exact battle odds for Man-Kzin Wars.

Both forces are a constant plus a number of d10s, so the Humans' chance is
``P(H_dice - K_dice >= K_const - H_const)`` (Humans win ties). The distribution of the dice
difference depends only on the two dice counts, so it is computed once per pair with icepool and
cached; any battle with the same dice is then a table look-up. That grouping is what makes the
advisor fast: commitments with the same total constant and dice have the same odds.

>>> Battle("invasion", fleets=["ARM Defense Force"], kzin_fleet="Kzinti Pride").win_probability()
Fraction(3, 50)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from fractions import Fraction
from functools import cache
from typing import Any

import pandas as pd

from engine.core import dist
from engine.kzin.cards import (
    CARDS,
    CONQUEST,
    EARTH,
    HOME_WORLDS,
    HUMAN_FLEET,
    INVASION,
    KZIN_FLEET,
    LIBERATION,
    TACTICS,
    TECHNOLOGY,
    Card,
    card,
)
from engine.kzin.rules import KzinRules, make_rules


@cache
def _difference_tail(human_dice: int, kzin_dice: int) -> tuple[int, tuple[Fraction, ...]]:
    """(lowest difference, P(H_dice - K_dice >= lowest + i) for each i)."""
    diff = dist.distribution(dist.dice_sum(human_dice, 10) - dist.dice_sum(kzin_dice, 10))
    low = min(diff)
    probs = [diff.get(v, Fraction(0)) for v in range(low, max(diff) + 1)]
    tail, acc = [], Fraction(0)
    for p in reversed(probs):
        acc += p
        tail.append(acc)
    return low, tuple(reversed(tail))


def p_humans_win(human_const: int, human_dice: int, kzin_const: int, kzin_dice: int) -> Fraction:
    """P(human_const + human_dice d10 >= kzin_const + kzin_dice d10), exactly."""
    low, tail = _difference_tail(human_dice, kzin_dice)
    need = kzin_const - human_const - low
    if need <= 0:
        return Fraction(1)
    if need >= len(tail):
        return Fraction(0)
    return tail[need]


def p_humans_win_float(human_const: int, human_dice: int, kzin_const: int, kzin_dice: int) -> float:
    return float(p_humans_win(human_const, human_dice, kzin_const, kzin_dice))


def _cards(names: Iterable[str], allowed: str, what: str) -> list[Card]:
    if isinstance(names, str):  # iterating it would try each letter as a card name
        raise ValueError(f"give the {what}s as a list of names, e.g. [{names!r}], not a bare string")
    out = []
    for name in names:
        c = card(name)
        if c.type != allowed:
            raise ValueError(f"{c.name} is a {c.type_name} card, not a {what}")
        out.append(c)
    for c, n in Counter(out).items():
        if n > c.copies:
            raise ValueError(f"the deck has {c.copies} {c.name} card(s), not {n}")
    return out


class Battle:
    """One battle, from either side's cards, with exact odds.

    ``fleets`` and ``tactics`` are the committed Human cards (names, repeated for copies),
    ``technology`` the number of Technology cards in play, ``conquest`` the Conquest cards in
    play, ``kzin_fleet`` the invading Kzin Fleet (Invasion only) and ``kem`` the marker's space
    (it sets Reinforcements' X). Rule options as in :class:`~engine.kzin.rules.KzinRules`.
    """

    def __init__(
        self,
        phase: str = INVASION,
        fleets: Iterable[str] = (),
        tactics: Iterable[str] = (),
        technology: int = 0,
        conquest: Iterable[str] = (),
        kzin_fleet: str | None = None,
        kem: int = 9,
        rules: KzinRules | None = None,
        **rule_options: Any,
    ) -> None:
        if phase not in (INVASION, LIBERATION):
            raise ValueError(f"phase must be 'invasion' or 'liberation', not {phase!r}")
        self.phase = phase
        self.rules = rules if rules is not None else make_rules(**rule_options)
        self.fleets = _cards(fleets, HUMAN_FLEET, "Human Fleet")
        self.tactics = _cards(tactics, TACTICS, "Human Tactics card")
        self.conquest = _cards(conquest, CONQUEST, "Kzinti Conquest card")
        if not self.fleets:
            raise ValueError("a battle needs at least one committed Fleet")
        for c in self.tactics:
            if c.only_phase is not None and not c.counts_in(phase):
                raise ValueError(f"{c.name} counts only in the {c.only_phase.capitalize()} phase; "
                                 f"it adds nothing in {phase.capitalize()}")
        n_tech = sum(c.copies for c in CARDS if c.type == TECHNOLOGY)
        if type(technology) is not int or not 0 <= technology <= n_tech:
            raise ValueError(f"technology must be a count from 0 to {n_tech}, not {technology!r}")
        self.technology = technology
        if kzin_fleet is None:
            if phase == INVASION:
                raise ValueError("an invasion needs the invading Kzin Fleet card")
            self.kzin_fleet = None
        else:
            if phase == LIBERATION:
                raise ValueError("no Kzin Fleet card takes part in a Liberation battle")
            self.kzin_fleet = _cards([kzin_fleet], KZIN_FLEET, "Kzin Fleet")[0]
        if type(kem) is not int or not EARTH < kem < HOME_WORLDS:
            raise ValueError(f"the marker must be on a space from {EARTH + 1} to {HOME_WORLDS - 1}, not {kem!r}")
        self.kem = kem

    @classmethod
    def from_state(cls, state: Any, committed: Iterable[int] | None = None) -> Battle:
        """The battle of a game state's current decision, with ``committed`` card kinds (default: as committed)."""
        phase = state.battle_phase
        if phase is None:
            raise ValueError("no battle is being decided now")
        kinds = list(state.committed if committed is None else committed)
        fleet = state.invading_fleet()
        return cls(
            phase,
            fleets=[CARDS[k].name for k in kinds if CARDS[k].type == HUMAN_FLEET],
            tactics=[CARDS[k].name for k in kinds if CARDS[k].type == TACTICS],
            technology=state.technology(),
            conquest=[c.name for c in state.conquest_in_play()],
            kzin_fleet=None if fleet is None else fleet.name,
            kem=state.kem,
            rules=state.rules,
        )

    # --- the two forces ------------------------------------------------------------------------
    def human_const(self) -> int:
        return sum(c.const_in(self.phase, self.technology, self.kem) for c in self.fleets + self.tactics)

    def human_dice(self) -> int:
        return 1 + sum(c.dice_in(self.phase) for c in self.tactics)

    def kzin_const(self) -> int:
        total = self.rules.kzin_base_force + sum(c.const_in(self.phase) for c in self.conquest)
        if self.kzin_fleet is not None and self.rules.kzin_fleet_force:
            total += self.kzin_fleet.const
        return total

    def kzin_dice(self) -> int:
        return 1 + sum(c.dice for c in self.conquest)

    def human_force(self) -> dist.Die:
        return dist.dice_sum(self.human_dice(), 10) + self.human_const()

    def kzin_force(self) -> dist.Die:
        return dist.dice_sum(self.kzin_dice(), 10) + self.kzin_const()

    # --- odds ----------------------------------------------------------------------------------
    def win_probability(self) -> Fraction:
        """The exact chance the Humans win this battle (ties go to the Humans)."""
        return p_humans_win(self.human_const(), self.human_dice(), self.kzin_const(), self.kzin_dice())

    def force_table(self) -> pd.DataFrame:
        """Each side's force distribution: side, force, p, at_least, at_most (and exact columns)."""
        frames = []
        for side, die in (("Humans", self.human_force()), ("Kzinti", self.kzin_force())):
            t = dist.table(die, name="force")
            t.insert(0, "side", side)
            frames.append(t)
        return pd.concat(frames, ignore_index=True)

    def __repr__(self) -> str:
        return (f"Battle({self.phase}: Humans {self.human_dice()}d10{self.human_const():+d} vs "
                f"Kzinti {self.kzin_dice()}d10{self.kzin_const():+d})")
