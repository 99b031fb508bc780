"""Exact dice distributions, built on icepool (exact integer counts, results as ``Fraction``).

Thin helpers for the questions the games ask: sums of dice, opposed rolls with a tie rule, and
at-least / at-most columns for tables and plots. Anything else, use icepool's ``Die`` directly.

>>> p_greater(d(10) + 2, d(10))
Fraction(16, 25)
>>> p_at_most(d(6), 2)
Fraction(1, 3)
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import icepool
import pandas as pd
from icepool import Die as Die  # re-exported: the games annotate with dist.Die


def d(sides: int) -> Die:
    """One fair die numbered 1..sides."""
    if sides < 1:
        raise ValueError(f"a die needs at least one side, not {sides}")
    return icepool.d(sides)


def dice_sum(count: int, sides: int) -> Die:
    """The sum of ``count`` dice of ``sides`` sides (0 dice is the constant 0)."""
    if count < 0:
        raise ValueError(f"cannot roll {count} dice")
    return count @ d(sides) if count else icepool.Die([0])


def constant(value: int) -> Die:
    return icepool.Die([value])


def distribution(die: Die) -> dict[int, Fraction]:
    """Outcome -> exact probability, in increasing order of outcome."""
    den = die.denominator()
    return {outcome: Fraction(q, den) for outcome, q in die.items()}


def p_at_least(die: Die, n: int) -> Fraction:
    return Fraction(die.probability(">=", n))


def p_at_most(die: Die, n: int) -> Fraction:
    return Fraction(die.probability("<=", n))


@dataclass(frozen=True)
class Opposed:
    """P(first > second), P(tie) and P(first < second) for two independent rolls."""

    win: Fraction
    tie: Fraction
    lose: Fraction

    def first_wins(self, ties_to_first: bool) -> Fraction:
        return self.win + self.tie if ties_to_first else self.win


def opposed(first: Die, second: Die) -> Opposed:
    diff = distribution(first - second)
    win = sum((p for v, p in diff.items() if v > 0), Fraction(0))
    tie = diff.get(0, Fraction(0))
    return Opposed(win, tie, 1 - win - tie)


def p_greater(first: Die, second: Die) -> Fraction:
    return opposed(first, second).win


def p_at_least_as_high(first: Die, second: Die) -> Fraction:
    """P(first >= second): the chance the first side wins when it wins ties."""
    o = opposed(first, second)
    return o.win + o.tie


def table(die: Die, name: str = "value") -> pd.DataFrame:
    """One row per outcome: exact probability, at-least and at-most, as Fractions and floats."""
    dist = distribution(die)
    values = list(dist)
    probs = list(dist.values())
    at_most, acc = [], Fraction(0)
    for p in probs:
        acc += p
        at_most.append(acc)
    at_least = [1 - m + p for m, p in zip(at_most, probs, strict=True)]
    frame = pd.DataFrame(
        {
            name: values,
            "p": [float(p) for p in probs],
            "at_least": [float(p) for p in at_least],
            "at_most": [float(p) for p in at_most],
            "p_exact": probs,
            "at_least_exact": at_least,
            "at_most_exact": at_most,
        }
    )
    return frame
