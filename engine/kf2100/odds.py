"""Combat odds: one chit against each possible answer, untrained mobs, the door, Mountain Heart,
and the distribution of hits in a whole combat under the bots' choices.

All single-roll chances are exact ``Fraction``s read from the CRT (a hit when the d6 is at or below
the table value). A whole combat is enumerated exactly when its tree is small: a d6 only matters
through hit or miss, so each roll branches twice with probabilities need/6 and 1 - need/6. Larger
combats fall back to Monte Carlo with 95% Wilson intervals.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

from engine.core import CHANCE, Policy, wilson_interval
from engine.core.rng import sample_outcome
from engine.kf2100.actions import Attack, Roll
from engine.kf2100.bots import answer_column
from engine.kf2100.data import ANSWER_COLUMNS, CHIT_TECHNIQUES, RuleBook, rulebook

TERMINATORS, CLONE_MASTER = 0, 1


def p_hit(need: int) -> Fraction:
    """A d6 at or below ``need``."""
    return Fraction(max(0, min(6, need)), 6)


def crt_table(book: RuleBook | None = None) -> pd.DataFrame:
    """Hit chance of every attack (rows) against every answer (columns), as exact fractions."""
    crt = (book or rulebook()).crt
    return pd.DataFrame({col: {att: p_hit(row[col]) for att, row in crt.items()} for col in ANSWER_COLUMNS})


def technique_values(book: RuleBook | None = None) -> pd.DataFrame:
    """Each chit as an attack (mean hit chance over the answers and None) and as an answer (mean
    chance it leaves an attack to hit, over every attack; lower is better)."""
    crt = (book or rulebook()).crt
    rows = []
    for chit, row in crt.items():
        attack = sum((p_hit(v) for v in row.values()), Fraction(0)) / len(row)
        col = answer_column(chit)
        answer = sum((p_hit(crt[a][col]) for a in crt), Fraction(0)) / len(crt)
        rows.append({"chit": chit, "as_attack": attack, "as_answer": answer})
    return pd.DataFrame(rows).set_index("chit")


def attack_odds(state: Any, attack: Attack) -> dict[str, Fraction]:
    """For a proposed attack, the hit chance against each answer the other side could give, and None (no
    answer). The CRT reads the attack against the answering chit whoever answers (seed): in a combat, any
    conscious figure of the other side in it may answer, so its techniques (and weapons) count; outside a
    combat, the target's own.

    A figure that is not in this game, a chit that is not on the CRT or that the figure cannot play (no
    level left in it, or not its weapon), and a target that is not an enemy figure or, for a Terminator, a
    piece of vital equipment are refused with a ValueError naming what is wrong: odds of a move that
    cannot exist would only mislead.
    """
    crt = state.game.book.crt
    f = state.figs.get(attack.figure)
    if f is None:
        raise ValueError(f"there is no figure {attack.figure}")
    if attack.chit not in crt:
        raise ValueError(f"{attack.chit!r} is not a chit: the CRT has {', '.join(crt)}")
    if attack.chit in CHIT_TECHNIQUES and not f.levels[CHIT_TECHNIQUES.index(attack.chit)]:
        raise ValueError(f"{f.id} has no level in {attack.chit}, so it cannot play a {attack.chit} chit")
    if attack.chit not in CHIT_TECHNIQUES and f.weapon != attack.chit:
        raise ValueError(f"{f.id} is not armed with {attack.chit}" + (f" (its weapon is {f.weapon})" if f.weapon
                                                                     else ""))
    if attack.target in state.equipment:
        if f.side != TERMINATORS:
            raise ValueError(f"{attack.target} is the Clone Master's own equipment: only Terminators attack it")
        answerers = []
    else:
        t = state.figs.get(attack.target)
        if t is None:
            raise ValueError(f"there is no figure or equipment {attack.target}")
        if t.side == f.side:
            raise ValueError(f"{t.id} is on {f.id}'s own side")
        answerers = [t] if t.conscious else []
    combat = state.combat
    if combat is not None and attack.figure in combat.members:
        answerers = [state.figs[m] for m in combat.members if m in state.figs and state.figs[m].side != f.side
                     and state.figs[m].conscious]
    cols = [c for i, c in enumerate(CHIT_TECHNIQUES) if any(g.levels[i] > 0 for g in answerers)]
    cols += ["weapon"] if any(g.weapon for g in answerers) else []
    return {c: p_hit(crt[attack.chit][c]) for c in [*cols, "none"]}


def untrained_odds(max_attackers: int = 6) -> pd.DataFrame:
    """Untrained attacks: success when the d6 is at or below the number of attackers adjacent."""
    return pd.DataFrame({"attackers": list(range(1, max_attackers + 1)),
                         "p_hit": [p_hit(n) for n in range(1, max_attackers + 1)]}).set_index("attackers")


def door_tries(book: RuleBook | None = None, tries: int = 12) -> pd.DataFrame:
    """Tries to break the armored door: geometric with success p per try. P(broken within k tries)."""
    p = p_hit((book or rulebook()).units.rules["door_breaks_at_most"])
    rows = [{"tries": k, "p_exactly": (1 - p) ** (k - 1) * p, "p_within": 1 - (1 - p) ** k}
            for k in range(1, tries + 1)]
    return pd.DataFrame(rows).set_index("tries")


def expected_door_tries(book: RuleBook | None = None) -> Fraction:
    return 1 / p_hit((book or rulebook()).units.rules["door_breaks_at_most"])


def mountain_heart_recovery(lost: int, turns: int, book: RuleBook | None = None) -> dict[int, Fraction]:
    """Levels of Mountain Heart regained after ``turns`` recovery rolls, starting ``lost`` levels down.

    One roll a turn while below the starting level; each succeeds with p (1-2 on a d6).
    """
    p = p_hit((book or rulebook()).units.rules["recovery_at_most"])
    dist = {0: Fraction(1)}
    for _ in range(turns):
        nxt: dict[int, Fraction] = {}
        for k, q in dist.items():
            if k >= lost:
                nxt[k] = nxt.get(k, Fraction(0)) + q
            else:
                nxt[k + 1] = nxt.get(k + 1, Fraction(0)) + q * p
                nxt[k] = nxt.get(k, Fraction(0)) + q * (1 - p)
        dist = nxt
    return dict(sorted(dist.items()))


# --- whole combats ----------------------------------------------------------------------------------

class TreeTooLarge(RuntimeError):
    pass


Z95 = 1.959963984540054  # the two-sided 95% normal quantile, as in wilson_interval


@dataclass
class CombatOdds:
    """Hits each side takes in one combat: exact (Fractions) or estimated from ``games`` simulated combats.

    Simulated figures are estimates, so every one of them comes with a 95% interval: Wilson for each
    probability, a normal interval for the mean hits. Exact outlooks give zero-width intervals.
    """

    exact: bool
    joint: dict[tuple[int, int], Fraction | float]   # (hits on Terminators, hits on Clone Master side)
    games: int = 0
    intervals: dict[str, tuple[float, float]] = field(default_factory=dict)
    counts: dict[tuple[int, int], int] = field(default_factory=dict)  # simulated combats ending so

    @property
    def source(self) -> str:
        """Where the numbers come from, for titles: "exact" or "N simulated combats"."""
        return "exact" if self.exact else f"{self.games} simulated combats"

    def marginal(self, side: int) -> dict[int, Fraction | float]:
        out: dict[int, Any] = {}
        for key, p in self.joint.items():
            out[key[side]] = out.get(key[side], 0) + p
        return dict(sorted(out.items()))

    def marginal_intervals(self, side: int) -> dict[int, tuple[float, float]]:
        """95% interval of each P(``side`` takes k hits): Wilson over the simulated combats, or the exact value
        twice (zero width)."""
        if self.exact:
            return {k: (float(p), float(p)) for k, p in self.marginal(side).items()}
        n: dict[int, int] = {}
        for key, c in self.counts.items():
            n[key[side]] = n.get(key[side], 0) + c
        return {k: wilson_interval(c, self.games) for k, c in sorted(n.items())}

    def expected(self, side: int) -> float:
        return float(sum(k * p for k, p in self.marginal(side).items()))

    def expected_interval(self, side: int) -> tuple[float, float]:
        """95% interval of the mean hits ``side`` takes: mean ± 1.96 standard errors over the simulated combats
        (the sample is hundreds of combats, so the normal approximation holds; if every combat gave the same
        count the interval is that count); exact: zero width."""
        mean = self.expected(side)
        if self.exact:
            return (mean, mean)
        var = sum(c * (k[side] - mean) ** 2 for k, c in self.counts.items()) / (self.games - 1)
        half = Z95 * math.sqrt(var / self.games)
        return (max(0.0, mean - half), mean + half)


def _hits(state: Any, start: int) -> tuple[int, int]:
    t = cm = 0
    for e in state.log[start:]:
        if e.get("result") == "hit" and "target_side" in e:
            if e["target_side"] == TERMINATORS:
                t += 1
            else:
                cm += 1
    return t, cm


def _combat_over(state: Any, members: list[str]) -> bool:
    return state.combat is None or state.combat.members != members or state.phase not in ("combat1", "combat2")


def combat_odds(state: Any, policies: Sequence[Policy], max_nodes: int = 20_000, games: int = 2000,
                seed: int = 0) -> CombatOdds:
    """Distribution of hits in the combat now being fought, every decision by ``policies``.

    Exact when the tree (rolls collapsed to hit/miss) has at most ``max_nodes`` nodes, otherwise
    Monte Carlo over ``games`` seeded playouts.
    """
    if state.combat is None:
        raise ValueError("no combat is being fought now")
    if games < 2:
        raise ValueError(f"games must be at least 2 for the simulated figures to carry intervals, not {games}")
    members = list(state.combat.members)
    start = len(state.log)
    try:
        return CombatOdds(True, _exact(state, policies, members, start, max_nodes))
    except TreeTooLarge:
        return _sampled(state, policies, members, start, games, seed)


def _exact(state: Any, policies: Sequence[Policy], members: list[str], start: int, max_nodes: int):
    counter = [0]
    out: dict[tuple[int, int], Fraction] = {}

    def walk(s: Any, prob: Fraction) -> None:
        counter[0] += 1
        if counter[0] > max_nodes:
            raise TreeTooLarge
        if s.is_terminal() or _combat_over(s, members):
            key = _hits(s, start)
            out[key] = out.get(key, Fraction(0)) + prob
            return
        if s.current_player() == CHANCE:
            need = s.combat.need if s.combat.step == "roll" else (s.combat.untrained[0][1] if s.combat.step ==
                                                                  "untrained" else None)
            if need is None:
                branches = s.chance_outcomes()
            else:
                p = p_hit(need)
                branches = [(Roll(1), p), (Roll(6), 1 - p)]
                branches = [(a, q) for a, q in branches if q > 0]
        else:
            branches = policies[s.current_player()].action_probabilities(s)
        for action, q in branches:
            child = s.clone()
            child.apply_action(action)
            walk(child, prob * q)

    walk(state.clone(), Fraction(1))
    return dict(sorted(out.items()))


def _sampled(state: Any, policies: Sequence[Policy], members: list[str], start: int, games: int,
             seed: int) -> CombatOdds:
    rng = np.random.default_rng(seed)
    counts: dict[tuple[int, int], int] = {}
    for _ in range(games):
        s = state.clone()
        while not (s.is_terminal() or _combat_over(s, members)):
            if s.current_player() == CHANCE:
                s.apply_action(sample_outcome(s.chance_outcomes(), rng))
            else:
                s.apply_action(policies[s.current_player()].choose(s, rng))
        key = _hits(s, start)
        counts[key] = counts.get(key, 0) + 1
    joint: dict[tuple[int, int], Fraction | float] = {k: v / games for k, v in sorted(counts.items())}
    intervals = {}
    for side, label in ((0, "terminators"), (1, "clone_master")):
        hit_any = sum(v for k, v in counts.items() if k[side] > 0)
        intervals[f"{label}_hit_at_least_once"] = wilson_interval(hit_any, games)
    return CombatOdds(False, joint, games, intervals, dict(sorted(counts.items())))
