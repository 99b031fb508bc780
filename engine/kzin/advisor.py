"""The strategy advisor: rank the commitments of a battle decision by battle odds and by game odds.

1. **Group, don't enumerate.** Cards are grouped into classes with the same force contribution
   in this battle (constant, dice, Fleet or not). A dynamic programme over the classes maps every
   reachable (total constant, total dice, has a Fleet) to the number of subsets that reach it and a
   representative subset: the one that spends the least *card value* (expected force, Fleets
   counted higher because they grow with every Technology card and are needed to fight at all).
   Every subset with the same totals has the same exact odds, computed once.
2. **Game odds by rollouts.** For the decline option and a handful of candidate commitments (the
   cheapest to reach each odds level, and the strongest), the battle's consequences depend on the dice
   only through who wins, so the chance of winning the game is ``p * V(win) + (1 - p) * V(loss)``
   with ``p`` exact and each ``V`` estimated by rollouts of the fast simulator under a default
   policy from the start of the next turn. The same seed is used for every state (common random
   numbers), so differences between options are sharper than the intervals suggest.
3. The recommendation is the option with the best estimated chance of winning the game.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, cast

import numpy as np
import pandas as pd

from engine.core import Action, wilson_interval
from engine.kzin.cards import CARDS, HUMAN_FLEET, INVASION
from engine.kzin.odds import p_humans_win
from engine.kzin.policies import CommitmentPolicy
from engine.kzin.rules import OVER, KzinState

Z95 = 1.959963984540054
ODDS_LEVELS = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99)
FLEET_PREMIUM = 3.0  # extra value of keeping a Fleet, in force points (see module docstring)


@dataclass(frozen=True)
class Option:
    """One choice of the decision: decline, or commit ``cards`` (a representative of its group)."""

    action: str  # "fall back", "pass", "defend" or "attack"
    cards: tuple[int, ...]
    human_const: int
    human_dice: int
    battle_odds: Fraction | None  # None when declining
    subsets: int  # how many distinct commitments share these totals (same odds)
    cost: float
    game_win: float | None = None
    game_low: float | None = None
    game_high: float | None = None

    @property
    def card_names(self) -> list[str]:
        return [CARDS[k].name for k in self.cards]

    def describe(self) -> str:
        if self.battle_odds is None:
            return self.action
        return f"{self.action} with {', '.join(self.card_names)}"


@dataclass
class Advice:
    """The advisor's answer for one decision."""

    phase: str
    options: list[Option]  # every grouped commitment, best battle odds first, decline last
    evaluated: list[Option]  # the options with game odds, best first
    recommended: Option
    rollouts_per_state: int
    seconds: float
    rollout_policy: str = "threshold"
    notes: list[str] = field(default_factory=list)

    def table(self) -> pd.DataFrame:
        """The evaluated options as a table (percentages as floats from 0 to 1)."""
        return pd.DataFrame([
            {
                "option": o.describe(),
                "cards": len(o.cards),
                "battle_odds": None if o.battle_odds is None else float(o.battle_odds),
                "game_win": o.game_win,
                "game_low": o.game_low,
                "game_high": o.game_high,
                "same_odds_subsets": o.subsets,
                "recommended": o is self.recommended,
            }
            for o in self.evaluated
        ])


def card_value(kind: int, phase: str | None, technology: int, kem: int) -> float:
    """What spending this card costs, in expected force points (the grouping's tie-break)."""
    c = CARDS[kind]
    value = c.const_in(phase, technology, kem) + 5.5 * c.dice_in(phase)
    return value + (FLEET_PREMIUM if c.type == HUMAN_FLEET else 0.0)


def commitment_groups(state: KzinState) -> dict[tuple[int, int, bool], tuple[int, float, tuple[int, ...]]]:
    """(constant, dice, has Fleet) -> (number of subsets, least cost, a least-cost subset).

    A dynamic programme over classes of interchangeable cards: never enumerates subsets.
    """
    phase, tech, kem = state.battle_phase, state.technology(), state.kem
    classes: dict[tuple[int, int, bool], list[int]] = {}
    for c in state.committable():
        n = state.uncommitted()[c.index]
        key = (c.const_in(phase, tech, kem), c.dice_in(phase), c.type == HUMAN_FLEET)
        classes.setdefault(key, []).extend([c.index] * n)
    table: dict[tuple[int, int, bool], tuple[int, float, tuple[int, ...]]] = {(0, 0, False): (1, 0.0, ())}
    for (const, dice, fleet), kinds in classes.items():
        # Within a class, spend the cheapest cards first (same force, maybe different future value).
        kinds = sorted(kinds, key=lambda k: card_value(k, phase, tech, kem))
        nxt: dict[tuple[int, int, bool], tuple[int, float, tuple[int, ...]]] = {}
        for (tc, td, tf), (count, cost, cards) in table.items():
            for take in range(len(kinds) + 1):
                key = (tc + take * const, td + take * dice, tf or (fleet and take > 0))
                ways = count * math.comb(len(kinds), take)
                add_cost = sum(card_value(k, phase, tech, kem) for k in kinds[:take])
                old = nxt.get(key)
                new_cost = cost + add_cost
                if old is None:
                    nxt[key] = (ways, new_cost, cards + tuple(kinds[:take]))
                else:
                    best = (old[1], old[2]) if old[1] <= new_cost else (new_cost, cards + tuple(kinds[:take]))
                    nxt[key] = (old[0] + ways, *best)
        table = nxt
    return {k: v for k, v in table.items() if k[2]}


def battle_options(state: KzinState) -> list[Option]:
    """Every grouped commitment with its exact battle odds (best first), then the decline option."""
    phase = state.battle_phase
    if phase is None or state.phase == OVER or state.current_player() != 0:
        raise ValueError("the advisor answers a battle decision; there is none now")
    fight, decline = ("defend", "fall back") if phase == INVASION else ("attack", "pass")
    if state.committed:  # advise on the whole decision, whatever is committed so far
        state = state.clone()
        state.committed = []
    kc = state.kzin_const()
    kd = 1 + sum(c.dice for c in state.conquest_in_play())
    options = []
    if state.fleets_in_play():
        for (const, dice, _), (ways, cost, cards) in commitment_groups(state).items():
            p = p_humans_win(const, dice + 1, kc, kd)
            options.append(Option(fight, tuple(sorted(cards)), const, dice + 1, p, ways, cost))
    options.sort(key=lambda o: (-(o.battle_odds or 0), o.cost))  # all fights so far: battle_odds is set
    options.append(Option(decline, (), 0, 0, None, 1, 0.0))
    return options


def candidates(options: list[Option]) -> list[Option]:
    """The options worth a rollout: decline, the strongest, and the cheapest at each odds level."""
    fights = [o for o in options if o.battle_odds is not None]
    chosen: list[Option] = [options[-1]]
    if fights:
        best_p = fights[0].battle_odds
        chosen.append(min((o for o in fights if o.battle_odds == best_p), key=lambda o: o.cost))
        for level in ODDS_LEVELS:
            reach = [o for o in fights if o.battle_odds is not None and o.battle_odds >= level]
            if reach:
                chosen.append(min(reach, key=lambda o: (o.cost, -(o.battle_odds or 0))))
        chosen.append(min(fights, key=lambda o: (o.cost, -(o.battle_odds or 0))))
    unique: dict[tuple[str, tuple[int, ...]], Option] = {}
    for o in chosen:
        unique.setdefault((o.action, o.cards), o)
    return list(unique.values())


def _state_value(state: KzinState, n: int, seed: int, policy: str, params: dict[str, Any]
                 ) -> tuple[float, float, int | None]:
    """(estimated P(win), the variance of the estimate, the rollouts behind it) from the start of a turn; a
    game already over is exact (variance 0, no rollouts). The variance is Agresti-Coull's, (w+2)/(n+4): when
    every rollout went one way the plain p(1-p)/n is 0 and would claim a certainty that 4000 games cannot give."""
    if state.phase == OVER:
        return (float(state.winner == "Humans"), 0.0, None)
    from engine.kzin.fast import rollout_wins

    wins, games = rollout_wins(state, policy, n, seed=seed, **params)
    shrunk = (wins + 2) / (games + 4)
    return wins / games, shrunk * (1 - shrunk) / (games + 4), games


def advise(
    state: KzinState,
    rollouts: int = 4000,
    seed: int = 0,
    rollout_policy: str = "threshold",
    policy_params: dict[str, Any] | None = None,
) -> Advice:
    """Rank this decision's commitments by exact battle odds and by estimated chance of winning the game."""
    if rollouts < 1:
        raise ValueError("rollouts must be at least 1")
    start = time.perf_counter()
    params = dict(policy_params or {})
    options = battle_options(state)
    evaluated = []
    for o in candidates(options):
        if o.battle_odds is None:
            p, _, n = _state_value(state.after_declining(), rollouts, seed, rollout_policy, params)
            low, high = (p, p) if n is None else wilson_interval(round(p * n), n)
        else:
            q = float(o.battle_odds)
            vw, varw, _ = _state_value(state.after_battle(list(o.cards), True), rollouts, seed, rollout_policy, params)
            vl, varl, _ = _state_value(state.after_battle(list(o.cards), False), rollouts, seed, rollout_policy, params)
            p = q * vw + (1 - q) * vl
            half = Z95 * math.sqrt(q * q * varw + (1 - q) ** 2 * varl)
            low, high = max(0.0, p - half), min(1.0, p + half)
        evaluated.append(Option(o.action, o.cards, o.human_const, o.human_dice, o.battle_odds, o.subsets, o.cost,
                                p, low, high))
    evaluated.sort(key=lambda o: (-(o.game_win or 0.0), -(o.battle_odds or 0), o.cost))  # game_win is set
    best = evaluated[0]
    notes = []
    if (len(evaluated) > 1 and evaluated[1].game_high is not None and best.game_low is not None
            and evaluated[1].game_high >= best.game_low):
        notes.append("the top options' intervals overlap: the choice is close")
    phase = cast(str, state.battle_phase)  # battle_options refused a state outside a battle
    return Advice(phase, options, evaluated, best, rollouts, time.perf_counter() - start,
                  rollout_policy, notes)


class AdvisorPolicy(CommitmentPolicy):
    """Play the advisor's recommendation at every decision (slow: a full advice per battle)."""

    name = "advisor"

    def __init__(self, rollouts: int = 500, seed: int = 0, rollout_policy: str = "threshold",
                 policy_params: dict[str, Any] | None = None) -> None:
        self.rollouts, self.seed = rollouts, seed
        self.rollout_policy, self.policy_params = rollout_policy, policy_params
        self._cache: tuple[Any, list[int] | None] | None = None

    def commitment(self, state: KzinState) -> list[int] | None:
        key = (id(state.game), state.turn, state.phase, state.kem, tuple(state.in_play), tuple(state.pile))
        if self._cache is None or self._cache[0] != key:
            advice = advise(state, self.rollouts, self.seed, self.rollout_policy, self.policy_params)
            rec = advice.recommended
            self._cache = (key, None if rec.battle_odds is None else list(rec.cards))
        return self._cache[1]

    # A Kzin policy takes Kzin states only, narrower than Policy's State: mypy reports that as an override.
    def choose(self, state: KzinState, rng: np.random.Generator | None = None) -> Action:  # type: ignore[override]
        return super().choose(state, rng)
