"""A numba whole-game kernel for the fixed policies: the plain engine's rules, about a thousand times faster.

The kernel plays the same rules as :mod:`engine.kzin.rules` (every option of ``KzinRules``) for
``all-in``, ``defend-only``, ``never-fight`` and ``threshold``. It reads cards only through numeric
columns built from ``CARDS`` (never names), so an edited deck is simulated as it is played.

Two shortcuts keep it fast without changing any probability:

* The deck is an array of card ids; a draw takes a uniform index among the remaining cards and
  swaps the last card into its place, which is the plain engine's chance node (each remaining card
  equally likely) in O(1).
* A battle's dice are not rolled one by one: the Humans win with probability
  ``P(H_dice - K_dice >= K_const - H_const)``, read from a table built from the exact odds of
  :mod:`engine.kzin.odds`, so a battle costs one uniform draw. Nothing in the game reads the dice
  except who won.

Threshold decisions compare exact odds: for each pair of dice counts the table ``ok_need`` holds the
largest ``K_const - H_const`` whose exact ``Fraction`` probability still reaches the threshold, so
the kernel decides exactly as :class:`~engine.kzin.policies.Threshold` does.

Every random number comes from the injected ``numpy.random.Generator``; a game can start from any
state at the start of a turn (``rollout_wins`` for the advisor).
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np
from numba import njit

from engine.kzin.cards import DECK_SIZE, EARTH, FULL_DECK, HOME_WORLDS, NUM_KINDS
from engine.kzin.kernel import (
    A_COMMIT,
    A_FLEET,
    A_FLEETFORCE,
    A_HCONST,
    A_HDICE,
    A_KCONST,
    A_KDICE,
    A_REINF,
    A_TYPE,
    ATTR,
    MAX_HUMAN_DICE,
    MAX_KZIN_DICE,
    N_ATTR,
    OFFSET,
    PHASE_CODES,
    T_C,
    T_H,
    T_K,
    T_R,
    T_T,
    TAIL_LEN,
    TYPE_CODES,
    attribute_matrix,
    battle_chance,
    card_arrays,
    card_force,
    clear_table,
    end_turn,
    ids,
    kzin_force,
    place,
    tail_table,
    take,
)
from engine.kzin.odds import _difference_tail
from engine.kzin.rules import DRAW, HUMANS, OVER, KzinRules, KzinState, make_rules

FAST_POLICIES = ("all-in", "defend-only", "never-fight", "threshold")
ALL_IN, DEFEND_ONLY, NEVER_FIGHT, THRESHOLD = range(4)
POLICY_CODES = dict(zip(FAST_POLICIES, range(4), strict=True))

def _threshold_need(limit: float) -> np.ndarray:
    """``n[h, k]``: the largest ``need`` with exact P(h d10 - k d10 >= need) >= limit, as the plain policy compares."""
    exact = Fraction(limit).limit_denominator(10**6)
    n = np.full((MAX_HUMAN_DICE + 1, MAX_KZIN_DICE + 1), -(10**6), dtype=np.int64)
    for h in range(1, MAX_HUMAN_DICE + 1):
        for k in range(1, MAX_KZIN_DICE + 1):
            low, tail = _difference_tail(h, k)
            ok = [i for i, p in enumerate(tail) if p >= exact]
            # Below the lowest difference the chance is 1; above the highest it is 0.
            n[h, k] = 10**6 if exact <= 0 else (low + max(ok) if ok else low - 1)
    return n


@lru_cache(maxsize=64)
def need_tables(defend: float, attack: float) -> np.ndarray:
    """``[phase, h, k]`` largest acceptable need for the threshold policy (phase 0 defend, 1 attack)."""
    for label, value in (("defend", defend), ("attack", attack)):
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"the {label} threshold is a probability from 0 to 1, not {value}")
    out = np.stack([_threshold_need(defend), _threshold_need(attack)])
    out.setflags(write=False)
    return out


# --- the kernel ---------------------------------------------------------------------------------

TWO53 = 1 << 53


@njit(cache=True, nogil=True)
def _uniform_index(rng, n):
    """A uniform integer in [0, n), exactly (Lemire's method on the 53 bits of ``rng.random()``).

    ``rng.integers`` does the same but costs six times as much inside numba.
    """
    while True:
        x = np.int64(rng.random() * 9007199254740992.0)  # exact: random() is a multiple of 2**-53
        m = x * n
        low = m & (TWO53 - 1)
        if low >= n or low >= (TWO53 - n) % n:
            return m >> 53


@njit(cache=True, nogil=True)
def _play_one(pile0, n_pile0, disc0, n_disc0, play0, n_play0, tech, kem, turn, policy, need_ok, tail, attr, options,
              rng, pile, discard, play):
    """Play one game from the start of a turn to its end; return (humans won, turn at the end).

    The cards in play but Technology (only counted: ``tech``) are a short list of ids; a battle's
    forces are summed over it, a handful of cards. The turn's mechanics are :mod:`engine.kzin.kernel`'s.
    """
    n_pile, n_disc, n_play = n_pile0, n_disc0, n_play0
    pile[:n_pile] = pile0[:n_pile]
    discard[:n_disc] = disc0[:n_disc]
    play[:n_play] = play0[:n_play]
    fleets = 0
    for j in range(n_play):
        fleets += attr[play[j], A_TYPE] == T_H
    while True:
        # Draw: each remaining card equally likely.
        k, n_pile = take(pile, n_pile, _uniform_index(rng, n_pile))
        n_disc, n_play, tech = place(k, attr, discard, n_disc, play, n_play, tech)
        fleets += attr[k, A_TYPE] == T_H
        invasion = attr[k, A_TYPE] == T_K
        phase, kc, kd = kzin_force(k, play, n_play, attr, options)
        fight = False
        hd = 1
        need = 0
        if fleets > 0 and policy != NEVER_FIGHT and (invasion or policy != DEFEND_ONLY):
            # Everything that counts is committed.
            hc = 0
            for j in range(n_play):
                c = play[j]
                if attr[c, A_COMMIT + phase] == 1:
                    hc += card_force(c, phase, tech, kem, attr)
                    hd += attr[c, A_HDICE + phase]
            need = kc - hc
            fight = policy != THRESHOLD or need <= need_ok[phase, hd, kd]
        if fight:
            for j in range(n_play):
                if attr[play[j], A_COMMIT + phase] == 1:
                    play[j] = -1 - play[j]  # committed: discarded after the battle
        if fight or (invasion and options[2] == 1):
            # After a battle the Conquest cards and every committed card go; a fall-back may take the Conquest cards.
            n_play, n_disc = clear_table(play, n_play, discard, n_disc, True, attr)
            fleets = 0
            for j in range(n_play):
                fleets += attr[play[j], A_TYPE] == T_H
        won = fight and rng.random() < battle_chance(tail, hd, kd, need)
        kem, outcome, n_pile, n_disc = end_turn(kem, invasion, fight, won, options, pile, n_pile, discard, n_disc)
        if outcome != 0:
            return outcome > 0, turn
        turn += 1


@njit(cache=True, nogil=True)
def _play_many(won, turns, pile_counts, disc_counts, play_counts, kem, turn, policy, need_ok, tail, attr, options,
               rng):
    """Play ``len(won)`` games from the same start, writing each result into ``won`` and ``turns``."""
    size = pile_counts.sum() + disc_counts.sum() + play_counts.sum() + 1
    pile0 = np.empty(size, dtype=np.int64)
    disc0 = np.empty(size, dtype=np.int64)
    play0 = np.empty(size, dtype=np.int64)
    n_pile0 = ids(pile_counts, pile0)
    n_disc0 = ids(disc_counts, disc0)
    tech = 0
    listed = play_counts.copy()
    for k in range(listed.shape[0]):
        if attr[k, A_TYPE] == T_R:
            tech += listed[k]
            listed[k] = 0
    n_play0 = ids(listed, play0)
    pile = np.empty(size, dtype=np.int64)
    discard = np.empty(size, dtype=np.int64)
    play = np.empty(size, dtype=np.int64)
    for g in range(won.shape[0]):
        w, t = _play_one(pile0, n_pile0, disc0, n_disc0, play0, n_play0, tech, kem, turn, policy, need_ok, tail, attr,
                         options, rng, pile, discard, play)
        won[g] = w
        turns[g] = t


# --- Python side --------------------------------------------------------------------------------

def policy_tables(policy: str, defend: float = 0.5, attack: float = 0.5) -> tuple[int, np.ndarray]:
    """The kernel's policy code and threshold table; a clear ``ValueError`` for anything else."""
    if policy not in POLICY_CODES:
        raise ValueError(f"the fast simulator plays {', '.join(FAST_POLICIES)}; not {policy!r}")
    code = POLICY_CODES[policy]
    if code != THRESHOLD:
        return code, need_tables(0.5, 0.5)  # unused by the kernel
    return code, need_tables(float(defend), float(attack))


def rule_vector(rules: KzinRules) -> np.ndarray:
    return np.array([rules.reshuffle, rules.kzin_fleet_force, rules.fallback_discards_conquest,
                     rules.kzin_base_force, EARTH, HOME_WORLDS], dtype=np.int64)


def check_policy_params(policy: str, params: dict[str, Any]) -> tuple[float, float]:
    """(defend, attack) of a fixed policy's parameters; only threshold takes any (``ValueError`` otherwise)."""
    unknown = set(params) - {"defend", "attack"}
    if unknown or (params and policy != "threshold"):
        raise ValueError(f"the {policy} policy takes {'defend and attack' if policy == 'threshold' else 'no'} "
                         f"parameters, not {', '.join(sorted(params))}")
    return float(params.get("defend", 0.5)), float(params.get("attack", 0.5))


def play(games: int, rng: np.random.Generator, policy: str = "all-in", rules: KzinRules | None = None,
         state: KzinState | None = None, **policy_params: float) -> tuple[np.ndarray, np.ndarray]:
    """Play ``games`` games with ``rng``: (won: bool array, turns: int32 array, the turn each game ended on).

    From the start (``rules``, default the rulings) or from ``state``, which must be at the start of a
    turn (phase ``draw``); its own rules are used then.
    """
    if type(games) is not int or games < 0:
        raise ValueError(f"games must be a count, not {games!r}")
    code, need_ok = policy_tables(policy, *check_policy_params(policy, policy_params))
    if state is not None:
        if rules is not None:
            raise ValueError("give rules or a state, not both (a state carries its rules)")
        if state.phase != DRAW:
            raise ValueError(f"rollouts start at the start of a turn (phase draw), not in phase {state.phase!r}")
        rules = state.rules
        pile0, disc0, play0 = (np.array(x, dtype=np.int64) for x in (state.pile, state.discard, state.in_play))
        kem, turn = state.kem, state.turn
    else:
        rules = rules if rules is not None else make_rules()
        pile0 = np.array(FULL_DECK, dtype=np.int64)
        disc0 = np.zeros(NUM_KINDS, dtype=np.int64)
        play0 = np.zeros(NUM_KINDS, dtype=np.int64)
        kem, turn = rules.start_space, 1
    won = np.zeros(games, dtype=np.bool_)
    turns = np.zeros(games, dtype=np.int32)
    if games:
        _play_many(won, turns, pile0, disc0, play0, int(kem), int(turn), code, need_ok, tail_table(), ATTR,
                   rule_vector(rules), rng)
    return won, turns


def rollout_wins(state: KzinState, policy: str = "all-in", n: int = 10_000, seed: Any = 0,
                 **policy_params: float) -> tuple[int, int]:
    """(games the Humans won, n) over ``n`` games played on from ``state`` under a fixed policy.

    ``state`` must be at the start of a turn (phase ``draw``) or over; ``seed`` is anything
    ``numpy.random.default_rng`` takes (an int, a SeedSequence or a Generator to draw from).
    """
    if state.phase == OVER:
        check_policy_params(policy, policy_params)
        policy_tables(policy)
        return (n if state.winner == HUMANS else 0), n
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    won, _ = play(n, rng, policy, rules=None, state=state, **policy_params)  # the state carries its rules
    return int(won.sum()), n


# The card columns and the odds table live in engine.kzin.kernel; they are read here too, as before.
__all__ = [
    "ATTR",
    "A_COMMIT",
    "A_FLEET",
    "A_FLEETFORCE",
    "A_HCONST",
    "A_HDICE",
    "A_KCONST",
    "A_KDICE",
    "A_REINF",
    "A_TYPE",
    "DECK_SIZE",
    "FAST_POLICIES",
    "MAX_HUMAN_DICE",
    "MAX_KZIN_DICE",
    "N_ATTR",
    "OFFSET",
    "PHASE_CODES",
    "TAIL_LEN",
    "TYPE_CODES",
    "T_C",
    "T_H",
    "T_K",
    "T_R",
    "T_T",
    "attribute_matrix",
    "card_arrays",
    "play",
    "rollout_wins",
    "tail_table",
]
