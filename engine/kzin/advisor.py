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
import threading
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
EXPERT = "expert"  # the rollout_policy of the expert's advice (expert_advice): no rollouts
ADVISORS = ("rollouts", EXPERT)  # the advisors a page offers: today's rollouts, and the learned expert
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
    game_se: float | None = None  # standard error of game_win (0 when the game is decided)
    effect: str = ""  # what the option does to the table, in a player's words

    @property
    def card_names(self) -> list[str]:
        return [CARDS[k].name for k in self.cards]

    def describe(self) -> str:
        if self.battle_odds is None:
            return self.action
        return f"{self.action} with {', '.join(self.card_names)}"


@dataclass(frozen=True)
class Margin:
    """How far the recommendation is ahead of the next best option: the difference of their chances of
    winning the game, with its 95% interval; ``separated`` when the interval lies above zero."""

    best: str
    runner_up: str
    difference: float
    low: float
    high: float

    @property
    def separated(self) -> bool:
        return self.low > 0


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
    lead: Margin | None = None  # the paired lead (paired_lead), when advise worked it out

    def margin(self) -> Margin | None:
        """The best option's lead over the runner-up, with its 95% interval (None with a single option): the
        paired one (:func:`paired_lead`) when advise worked it out, else :meth:`unpaired_margin`."""
        if len(self.evaluated) < 2 or self.rollout_policy == EXPERT:
            return None  # the expert's estimates are a learned table's: no sampling interval to give
        return self.lead if self.lead is not None else self.unpaired_margin()

    def unpaired_margin(self) -> Margin | None:
        """The lead from the two options' own estimates, their variances added as for independent estimates (the
        fast simulator's games use its stream in turn, so the options' rollouts do not share their cards or dice)."""
        if len(self.evaluated) < 2:
            return None
        best, second = self.evaluated[0], self.evaluated[1]
        d = (best.game_win or 0.0) - (second.game_win or 0.0)
        half = Z95 * math.sqrt((best.game_se or 0.0) ** 2 + (second.game_se or 0.0) ** 2)
        return Margin(best.describe(), second.describe(), d, d - half, d + half)

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
                "effect": o.effect,
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


def _conquest_force(cards: list[Any]) -> str:
    const, dice = sum(c.const for c in cards), sum(c.dice for c in cards)
    parts = ([f"{const:+d}"] if const or not dice else []) + ([f"{dice}d10"] if dice else [])
    return " and ".join(parts)


def effect(state: KzinState, option: Option) -> str:
    """What an option does to the table, read off the states after it (the rules, not a second copy of them):
    the cards it spends, the Conquest force it clears off every later Kzin force, where the marker goes."""
    before = state.conquest_in_play()
    parts = []
    if option.battle_odds is None:
        after = state.after_declining()
        moved = after.kem - state.kem
        parts.append("keeps every card" if not moved else f"marker {state.kem} → {after.kem}, keeps every card")
        if before and not after.conquest_in_play():
            parts.append(f"clears the Conquest cards ({_conquest_force(before)} off every later Kzin force)")
        elif before:
            parts.append(f"the Conquest cards stay ({_conquest_force(before)} on every Kzin force)")
        return "; ".join(parts)
    won, lost = state.after_battle(list(option.cards), True), state.after_battle(list(option.cards), False)
    parts.append(f"spends {', '.join(option.card_names)}")
    if before and not won.conquest_in_play() and not lost.conquest_in_play():
        parts.append(f"clears the Conquest cards win or lose ({_conquest_force(before)} off every later Kzin force)")
    for outcome, after in (("won", won), ("lost", lost)):
        if after.kem != state.kem:
            parts.append(f"if {outcome}, marker {state.kem} → {after.kem}")
    return "; ".join(parts)


def advise_until_sure(state: KzinState, rollouts: int = 4000, seed: int = 0, max_rollouts: int = 64_000,
                      tolerance: float = 0.01, rollout_policy: str = "threshold",
                      stop: threading.Event | None = None) -> Advice:
    """Advise with twice the rollouts of the advice already shown, and twice again, until the best option is
    separated from the runner-up (its lead's interval above zero), or the lead's interval is within
    ``tolerance`` of zero either way (the two are as good as each other), or ``max_rollouts`` a state is
    reached, or ``stop`` is set (the page moved on); the advice's notes say which ended it."""
    n = 2 * rollouts
    while True:
        advice = advise(state, n, seed, rollout_policy)
        margin = advice.margin()
        advice.notes[:] = [n_ for n_ in advice.notes if "choice is close" not in n_]
        if margin is None:
            advice.notes.append("there is only one option")
            return advice
        if margin.separated:
            advice.notes.append(f"the best option is separated from the next at {n:,} rollouts a state")
            return advice
        if margin.high - margin.low <= 2 * tolerance:
            advice.notes.append(f"at {n:,} rollouts a state the lead is between {100 * margin.low:+.2f} and "
                                f"{100 * margin.high:+.2f} points: the top two are as good as each other")
            return advice
        if 2 * n > max_rollouts or (stop is not None and stop.is_set()):
            advice.notes.append(f"still not separated at {n:,} rollouts a state (the most this plays)")
            return advice
        n *= 2


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


def option_outcomes(state: KzinState, option: Option, keys: np.ndarray, policy: str, params: dict[str, Any]
                    ) -> np.ndarray:
    """Per rollout, the option's chance of winning the game: ``q * won(after a win) + (1 - q) * won(after a loss)``,
    rollout ``i`` of every state played on key ``i`` (the same future cards and battle luck, :mod:`engine.kzin.expert`).
    """
    from engine.kzin.expert import play_keys

    def won(s: KzinState) -> np.ndarray:
        if s.phase == OVER:
            return np.full(len(keys), float(s.winner == "Humans"))
        return play_keys(keys, policy, state=s, **params)[0].astype(float)

    if option.battle_odds is None:
        return won(state.after_declining())
    q = float(option.battle_odds)
    return q * won(state.after_battle(list(option.cards), True)) + (1 - q) * won(state.after_battle(list(option.cards),
                                                                                                      False))


def paired_lead(state: KzinState, best: Option, second: Option, rollouts: int, seed: int = 0,
                rollout_policy: str = "threshold", policy_params: dict[str, Any] | None = None) -> Margin:
    """The lead of ``best`` over ``second`` from paired rollouts: both options' states are played on the same
    ``rollouts`` keys (from ``seed``), and the interval is the normal one on the per-rollout differences. Their
    variance is floored at one disagreement in ``rollouts + 4`` (as Agresti-Coull's): rollouts that all agree do
    not prove the two equal."""
    from engine.kzin.expert import game_keys

    keys = game_keys(np.random.default_rng(seed), rollouts)
    params = dict(policy_params or {})
    d = (option_outcomes(state, best, keys, rollout_policy, params)
         - option_outcomes(state, second, keys, rollout_policy, params))
    var = max(float(d.var(ddof=1)) if len(d) > 1 else 1.0, 1.0 / (len(d) + 4))
    half = Z95 * math.sqrt(var / len(d))
    mean = float(d.mean())
    return Margin(best.describe(), second.describe(), mean, mean - half, mean + half)


def advise(
    state: KzinState,
    rollouts: int = 4000,
    seed: int = 0,
    rollout_policy: str = "threshold",
    policy_params: dict[str, Any] | None = None,
    paired: bool = True,
) -> Advice:
    """Rank this decision's commitments by exact battle odds and by estimated chance of winning the game.

    ``paired``: the lead of the best over the next is measured again on paired rollouts (:func:`paired_lead`),
    for its interval; the ranking is the same either way (a simulation of the advisor's play leaves it out)."""
    if rollouts < 1:
        raise ValueError("rollouts must be at least 1")
    start = time.perf_counter()
    params = dict(policy_params or {})
    options = battle_options(state)
    evaluated = []
    for o in candidates(options):
        if o.battle_odds is None:
            p, var, n = _state_value(state.after_declining(), rollouts, seed, rollout_policy, params)
            low, high = (p, p) if n is None else wilson_interval(round(p * n), n)
        else:
            q = float(o.battle_odds)
            vw, varw, _ = _state_value(state.after_battle(list(o.cards), True), rollouts, seed, rollout_policy, params)
            vl, varl, _ = _state_value(state.after_battle(list(o.cards), False), rollouts, seed, rollout_policy, params)
            p = q * vw + (1 - q) * vl
            var = q * q * varw + (1 - q) ** 2 * varl
            half = Z95 * math.sqrt(var)
            low, high = max(0.0, p - half), min(1.0, p + half)
        evaluated.append(Option(o.action, o.cards, o.human_const, o.human_dice, o.battle_odds, o.subsets, o.cost,
                                p, low, high, math.sqrt(var), effect(state, o)))
    evaluated.sort(key=lambda o: (-(o.game_win or 0.0), -(o.battle_odds or 0), o.cost))  # game_win is set
    best = evaluated[0]
    phase = cast(str, state.battle_phase)  # battle_options refused a state outside a battle
    advice = Advice(phase, options, evaluated, best, rollouts, time.perf_counter() - start, rollout_policy, [])
    if paired and len(evaluated) > 1 and rollout_policy in ("all-in", "threshold"):
        advice.lead = paired_lead(state, evaluated[0], evaluated[1], rollouts, seed, rollout_policy, params)
        advice.seconds = time.perf_counter() - start
    margin = advice.margin()
    if margin is not None and not margin.separated:
        advice.notes.append("the best is not separated from the next: the choice is close")
    return advice


def expert_advice(state: KzinState) -> Advice:
    """The expert's choice for this decision, as advice: its commitment (the learned table, one card deeper on close
    calls: :mod:`engine.kzin.expert`) first, then decline and the rollout advisor's candidates, each with the
    table's estimate of the chance of winning the game (``p * V(won) + (1 - p) * V(lost)``; no interval)."""
    from engine.kzin.expert import decide, state_value

    start = time.perf_counter()
    options = battle_options(state)
    phase = cast(str, state.battle_phase)
    fight = "defend" if phase == INVASION else "attack"
    s = state.clone()
    s.committed = []
    chosen = tuple(sorted(decide(s)))
    tech, kem = s.technology(), s.kem
    listed = candidates(options)
    if chosen:
        const = sum(CARDS[k].const_in(phase, tech, kem) for k in chosen)
        dice = sum(CARDS[k].dice_in(phase) for k in chosen) + 1
        p = p_humans_win(const, dice, s.kzin_const(), 1 + sum(c.dice for c in s.conquest_in_play()))
        cost = sum(card_value(k, phase, tech, kem) for k in chosen)
        listed = [Option(fight, chosen, const, dice, p, 1, cost)] + [o for o in listed if o.cards != chosen]
    else:
        listed = [options[-1]] + [o for o in listed if o.battle_odds is not None]
    evaluated = []
    for o in listed:
        if o.battle_odds is None:
            v = state_value(s.after_declining())
        else:
            q = float(o.battle_odds)
            v = q * state_value(s.after_battle(list(o.cards), True)) + (1 - q) * state_value(
                s.after_battle(list(o.cards), False))
        evaluated.append(Option(o.action, o.cards, o.human_const, o.human_dice, o.battle_odds, o.subsets, o.cost,
                                v, v, v, 0.0, effect(s, o)))
    best, rest = evaluated[0], sorted(evaluated[1:], key=lambda o: -(o.game_win or 0.0))
    notes = ["the expert's choice: its learned table, looking one card deeper on close calls; the chances are "
             "the table's estimates, not rollouts"]
    return Advice(phase, options, [best, *rest], best, 0, time.perf_counter() - start, EXPERT, notes)


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
            advice = advise(state, self.rollouts, self.seed, self.rollout_policy, self.policy_params, paired=False)
            rec = advice.recommended
            self._cache = (key, None if rec.battle_odds is None else list(rec.cards))
        return self._cache[1]

    # A Kzin policy takes Kzin states only, narrower than Policy's State: mypy reports that as an override.
    def choose(self, state: KzinState, rng: np.random.Generator | None = None) -> Action:  # type: ignore[override]
        return super().choose(state, rng)
