"""One chit exchange as a zero-sum matrix game, solved exactly.

An attack chit meets an answering chit, both chosen in secret, and the CRT gives the chance of a hit: the
attacker wants it high, the answering side low. With the levels in play as the two sides' choices (the rows
are the attacker's chits, the columns the answers the other side can give, read on the CRT "attack vs.
response, regardless of who responded or to whom", as the seed says) the exchange is a matrix game whose
minimax mixed strategies tell each side how often to play each chit so that the other cannot exploit it,
and whose value is the hit chance that results.

``scipy.optimize.linprog`` (HiGHS) finds the equilibrium in floating point; its supports are then solved
again as linear systems in ``Fraction`` and the result is verified exactly (no pure deviation of either side
gains anything), so the strategies and the value shown are exact rationals, not rounded floats. Should the
floating-point supports not give an exact equilibrium (a degenerate game), every pair of equal-size supports
is tried, which for games this small (at most seven chits a side) is instant.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd
from scipy.optimize import linprog

from engine.kf2100.data import CHIT_TECHNIQUES, WEAPON_CHITS, RuleBook, rulebook
from engine.kf2100.state_combat import CombatRules

answer_column = CombatRules.answer_column

TERMINATORS, CLONE_MASTER = 0, 1
SUPPORT_TOLERANCE = 1e-9
"""A probability above this in the floating-point solution puts its chit in the support."""
Matrix = Sequence[Sequence[Fraction]]


def p_hit(need: int) -> Fraction:
    """A d6 at or below ``need``."""
    return Fraction(max(0, min(6, need)), 6)


@dataclass(frozen=True)
class Equilibrium:
    """Minimax strategies of a zero-sum game (row player maximizes) and its value, exact."""

    rows: tuple[Fraction, ...]
    columns: tuple[Fraction, ...]
    value: Fraction


def _solve_square(payoff: Matrix, rows: Sequence[int], cols: Sequence[int]) -> tuple[list[Fraction], Fraction] | None:
    """The row mix on ``rows`` that makes every column of ``cols`` pay the same: solve Σ x_i a_ij = v (j in cols),
    Σ x_i = 1 in Fractions by Gaussian elimination. None if the system is singular."""
    k = len(rows)
    # unknowns x_0..x_{k-1}, v; equations: one per column, then the sum
    m = [[payoff[i][j] for i in rows] + [Fraction(-1), Fraction(0)] for j in cols]
    m.append([Fraction(1)] * k + [Fraction(0), Fraction(1)])
    n = k + 1
    for c in range(n):
        pivot = next((r for r in range(c, n) if m[r][c] != 0), None)
        if pivot is None:
            return None
        m[c], m[pivot] = m[pivot], m[c]
        for r in range(n):
            if r != c and m[r][c] != 0:
                f = m[r][c] / m[c][c]
                m[r] = [a - f * b for a, b in zip(m[r], m[c], strict=True)]
    sol = [m[r][n] / m[r][r] for r in range(n)]
    return sol[:k], sol[k]


def _transpose_negated(payoff: Matrix) -> list[list[Fraction]]:
    return [[-payoff[i][j] for i in range(len(payoff))] for j in range(len(payoff[0]))]


def is_equilibrium(payoff: Matrix, x: Sequence[Fraction], y: Sequence[Fraction], value: Fraction) -> bool:
    """Exact check: both mixes are distributions, no column does better than ``value`` against ``x`` for the
    column player, and no row does better than ``value`` against ``y`` for the row player."""
    m, n = len(payoff), len(payoff[0])
    if len(x) != m or len(y) != n or any(p < 0 for p in (*x, *y)) or sum(x) != 1 or sum(y) != 1:
        return False
    column_pays = [sum((x[i] * payoff[i][j] for i in range(m)), Fraction(0)) for j in range(n)]
    row_pays = [sum((payoff[i][j] * y[j] for j in range(n)), Fraction(0)) for i in range(m)]
    return min(column_pays) == value == max(row_pays)


def _float_supports(payoff: Matrix) -> tuple[list[int], list[int]]:
    """Supports of the row and column minimax mixes, from two HiGHS linear programs."""
    a = np.array([[float(v) for v in row] for row in payoff])
    m, n = a.shape

    def maximin(mat: np.ndarray) -> np.ndarray:
        rows, cols = mat.shape
        # variables x_1..x_rows, v; maximize v subject to v - Σ x_i a_ij <= 0 for every column j
        res = linprog(c=[0.0] * rows + [-1.0], A_ub=np.hstack([-mat.T, np.ones((cols, 1))]), b_ub=np.zeros(cols),
                      A_eq=[[1.0] * rows + [0.0]], b_eq=[1.0], bounds=[(0, None)] * rows + [(None, None)],
                      method="highs")
        if not res.success:
            raise ArithmeticError(f"the linear program failed: {res.message}")
        return res.x[:rows]

    x, y = maximin(a), maximin(-a.T)
    return [i for i in range(m) if x[i] > SUPPORT_TOLERANCE], [j for j in range(n) if y[j] > SUPPORT_TOLERANCE]


def _exact_on(payoff: Matrix, rows: Sequence[int], cols: Sequence[int]) -> Equilibrium | None:
    m, n = len(payoff), len(payoff[0])
    xs = _solve_square(payoff, rows, cols)
    ys = _solve_square(_transpose_negated(payoff), cols, rows)
    if xs is None or ys is None:
        return None
    x, y = [Fraction(0)] * m, [Fraction(0)] * n
    for i, p in zip(rows, xs[0], strict=True):
        x[i] = p
    for j, p in zip(cols, ys[0], strict=True):
        y[j] = p
    value = xs[1]
    if -ys[1] != value or not is_equilibrium(payoff, x, y, value):
        return None
    return Equilibrium(tuple(x), tuple(y), value)


def solve_game(payoff: Matrix) -> Equilibrium:
    """Exact minimax strategies and value of the zero-sum game ``payoff`` (the row player receives it).

    A bad matrix (empty, ragged, not rational) is a ``ValueError``.
    """
    if not payoff or not payoff[0] or any(len(r) != len(payoff[0]) for r in payoff):
        raise ValueError("a matrix game needs at least one row and one column, every row as long as the others")
    try:
        payoff = [[Fraction(v) for v in row] for row in payoff]
    except (TypeError, ValueError) as exc:
        raise ValueError(f"payoffs must be exact numbers (Fractions or integers): {exc}") from None
    rows, cols = _float_supports(payoff)
    k = min(len(rows), len(cols))
    for r_sub in itertools.combinations(rows, k):
        for c_sub in itertools.combinations(cols, k):
            found = _exact_on(payoff, r_sub, c_sub)
            if found is not None:
                return found
    m, n = len(payoff), len(payoff[0])  # degenerate: every support pair, smallest first
    for size in range(1, min(m, n) + 1):
        for r_sub in itertools.combinations(range(m), size):
            for c_sub in itertools.combinations(range(n), size):
                found = _exact_on(payoff, r_sub, c_sub)
                if found is not None:
                    return found
    raise ArithmeticError("no exact equilibrium found")  # impossible for a finite game: a bug if seen


@dataclass(frozen=True)
class ExchangeGame:
    """One exchange: the attack chits (rows) against the answers (CRT columns), the hit chance of each pair,
    both sides' minimax mixes and the value (the hit chance when both play them)."""

    attacker: str
    target: str
    rows: tuple[str, ...]
    columns: tuple[str, ...]
    payoff: tuple[tuple[Fraction, ...], ...]
    attack_strategy: tuple[Fraction, ...]
    answer_strategy: tuple[Fraction, ...]
    value: Fraction

    def frame(self) -> pd.DataFrame:
        """The payoff matrix as a table of exact hit chances, attack chits down, answers across."""
        return pd.DataFrame([list(r) for r in self.payoff], index=list(self.rows), columns=list(self.columns))

    def to_dict(self) -> dict[str, Any]:
        """For a page or JSON: every number as an exact fraction string ("7/18")."""
        return {"attacker": self.attacker, "target": self.target, "rows": list(self.rows),
                "columns": list(self.columns), "payoff": [[str(p) for p in r] for r in self.payoff],
                "attack_strategy": dict(zip(self.rows, map(str, self.attack_strategy), strict=True)),
                "answer_strategy": dict(zip(self.columns, map(str, self.answer_strategy), strict=True)),
                "value": str(self.value)}


def exchange_game(attacks: Sequence[str], answers: Sequence[str], book: RuleBook | None = None, attacker: str = "",
                  target: str = "") -> ExchangeGame:
    """The exchange of ``attacks`` (chits the attacker may play) against ``answers`` (answering chits; "none" for
    no answer), solved. An empty side, or a chit that is not on the CRT, is a ``ValueError``."""
    crt = (book or rulebook()).crt
    for a in answers:
        if a != "none" and a not in CHIT_TECHNIQUES and a not in WEAPON_CHITS:
            raise ValueError(f"{a!r} is not an answer column of the CRT: answer with "
                             f"{', '.join((*CHIT_TECHNIQUES, *WEAPON_CHITS))} or none")
    rows = tuple(dict.fromkeys(attacks))
    columns = tuple(dict.fromkeys("none" if a == "none" else answer_column(a) for a in answers))
    if not rows or not columns:
        raise ValueError("an exchange needs at least one attack chit and one answer")
    for chit in rows:
        if chit not in crt:
            raise ValueError(f"{chit!r} is not an attack chit of the CRT ({', '.join(crt)})")
    for col in columns:
        if col not in crt[rows[0]]:
            raise ValueError(f"{col!r} is not an answer column of the CRT ({', '.join(crt[rows[0]])})")
    payoff = tuple(tuple(p_hit(crt[r][c]) for c in columns) for r in rows)
    eq = solve_game(payoff)
    return ExchangeGame(attacker, target, rows, columns, payoff, eq.rows, eq.columns, eq.value)


def _chits_of(state: Any, f: Any) -> list[str]:
    """The chits a figure's levels (and weapon) let it play: public knowledge, unlike the chits it picked."""
    options, _ = state.chit_options(f)
    return [c for c in (*CHIT_TECHNIQUES, *sorted(set(options) - set(CHIT_TECHNIQUES))) if options.get(c, 0) > 0]


def combat_exchange(state: Any, attacker: str | None = None, target: str | None = None) -> ExchangeGame:
    """The exchange now in play in ``state``'s combat (the pending attack's figure and target), or the one of
    ``attacker`` on ``target``: rows are the attacker's chits that can reach the target, columns every answer
    the target's side can give in this combat (each answering figure's techniques and weapon, read on the
    CRT whoever answers), or "none" if nobody there can answer. Built from levels, which both sides see, so
    it shows nobody's hidden chits. No combat, or a pair that cannot fight in it, is a ``ValueError``."""
    c = state.combat
    if c is None:
        raise ValueError("no combat is being fought now")
    if attacker is None and target is None and c.attack is not None:
        attacker, target = c.attack[0], c.attack[2]
    if attacker is None or target is None:
        raise ValueError("name the attacker and the target: no attack is pending in this combat")
    for x in (attacker, target):
        if x not in c.members:
            raise ValueError(f"{x} is not in this combat ({', '.join(c.members)})")
    f = state.figs.get(attacker)
    if f is None:
        raise ValueError(f"{attacker} is vital equipment: it does not attack")
    if target.startswith("E"):
        square, answerable = state.board.lair.equipment[target][0], False
        if f.side != TERMINATORS:
            raise ValueError(f"{target} is the Clone Master's own equipment")
    else:
        g = state.figs[target]
        if g.side == f.side:
            raise ValueError(f"{target} is on {attacker}'s own side")
        square, answerable = g.pos, True
    rows = [chit for chit in _chits_of(state, f) if state.in_reach(f, chit, square)]
    if not rows:
        raise ValueError(f"{attacker} has no chit that reaches {target}")
    answers: list[str] = []
    if answerable:
        for x in c.members:
            g = state.figs.get(x)
            if g is not None and g.side != f.side and g.conscious:
                answers.extend(_chits_of(state, g))
    return exchange_game(rows, answers or ["none"], state.game.book, attacker, target)
