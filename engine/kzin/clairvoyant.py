"""The clairvoyant reference: a player who knows the deck order, with the dice still random.

A game's deal is its key's draw stream (:mod:`engine.kzin.expert`): the card of every turn, and
after a reshuffle the order of the new deck, follow from the key and the discards. The clairvoyant
sees that stream; the battle luck (``u(key, t, 1)``) stays hidden.

At each battle decision it searches the known cards of the next ``depth`` turns: every option
(decline, and the expert's ``top`` best commitments by learned value) branches on the battle's two
outcomes with their exact odds, the next known card is drawn, the best option there is taken, and
so on; after ``depth`` turns a position is valued by the expert's learned table. This is a feasible
clairvoyant policy, so its win rate is an **estimate from below** of perfect clairvoyant play (not
an exact bound: exact play would search the whole deal). Its gap over the expert is what knowing
the cards buys; what stays out of reach even then is the luck of the dice.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engine.kzin.cards import FULL_DECK
from engine.kzin.expert import ATTR, RV, _candidates, _reserve, _scores, _value, load_values
from engine.kzin.fast import rule_vector
from engine.kzin.kernel import (
    A_TYPE,
    T_K,
    U53,
    after_decision,
    battle_chance,
    draw_index,
    end_turn,
    human_force,
    ids,
    kzin_force,
    place,
    tail_table,
    take,
    u53,
)
from engine.kzin.rules import KzinRules, make_rules

_after = after_decision  # by its old name


@njit(nogil=True)  # not cached: numba's cache of mutually recursive functions crashes on load
def _end_of_turn(depth, key, turn, kem, tech, pile, n_pile, disc, n_disc, play, n_play, V, tail, attr, rv, options,
                 top):
    """The value of the position after a turn's decision: victory, the deck, then the next known turn (or V)."""
    if kem <= options[4]:
        return 0.0
    if kem >= options[5]:
        return 1.0
    if n_pile == 0:
        if options[0] == 0 or n_disc == 0:
            return 0.0
        return _turn_value(depth, key, turn + 1, kem, tech, disc, n_disc, disc, 0, play, n_play, V, tail, attr, rv,
                           options, top)
    return _turn_value(depth, key, turn + 1, kem, tech, pile, n_pile, disc, n_disc, play, n_play, V, tail, attr, rv,
                       options, top)


@njit(nogil=True)  # not cached: numba's cache of mutually recursive functions crashes on load
def _turn_value(depth, key, turn, kem, tech, pile, n_pile, disc, n_disc, play, n_play, V, tail, attr, rv, options,
                top):
    """The value of the start of ``turn``: the learned V at the search's depth, else the known card's best option."""
    if depth == 0:
        r, nf, c2 = _reserve(play, n_play, tech, kem, attr, rv)
        return _value(V, kem, c2, nf, tech, n_pile, r, options)
    best, _, _ = _search(depth, key, turn, kem, tech, pile, n_pile, disc, n_disc, play, n_play, V, tail, attr, rv,
                         options, top)
    return best


@njit(nogil=True)  # not cached: numba's cache of mutually recursive functions crashes on load
def _search(depth, key, turn, kem, tech, pile, n_pile, disc, n_disc, play, n_play, V, tail, attr, rv, options, top):
    """Draw turn ``turn``'s known card and search its options; returns (best value, chosen positions, how many).

    The arrays passed in are not changed (each level works on copies).
    """
    size = n_pile + n_disc + n_play + 2
    pile2 = np.empty(size, dtype=np.int64)
    pile2[:n_pile] = pile[:n_pile]
    disc2 = np.empty(size, dtype=np.int64)
    disc2[:n_disc] = disc[:n_disc]
    play2 = np.empty(size, dtype=np.int64)
    play2[:n_play] = play[:n_play]
    k, n_p = take(pile2, n_pile, draw_index(key, turn, n_pile))
    n_d, n_pl, tech2 = place(k, attr, disc2, n_disc, play2, n_play, tech)
    invasion = attr[k, A_TYPE] == T_K
    phase, kc, kd = kzin_force(k, play2, n_pl, attr, options)
    nsz = 4 * n_pl + 1
    sets = np.empty((nsz, n_pl + 1), dtype=np.int64)
    lens = np.empty(nsz, dtype=np.int64)
    hcs = np.empty(nsz, dtype=np.int64)
    hds = np.empty(nsz, dtype=np.int64)
    spents = np.empty(nsz)
    fus = np.empty(nsz, dtype=np.int64)
    n_cand = _candidates(phase, kem, tech2, play2, n_pl, attr, rv, sets, lens, hcs, hds, spents, fus)
    probs = np.empty(max(n_cand, 1))
    scores = np.empty(max(n_cand, 1))
    _scores(phase, kem, tech2, kc, kd, play2, n_pl, n_p, V, tail, attr, rv, options, n_cand, hcs, hds, spents, fus,
            probs, scores)
    order = np.argsort(-scores[:n_cand], kind="mergesort")
    a_play = np.empty(size, dtype=np.int64)
    a_disc = np.empty(size, dtype=np.int64)
    # Decline (forced without a Fleet).
    n2, d2 = _after(play2, n_pl, disc2, n_d, sets[0], 0, invasion and options[2] == 1, attr, a_play, a_disc)
    best = _end_of_turn(depth - 1, key, turn, kem - 1 if invasion else kem, tech2, pile2, n_p, a_disc, d2, a_play, n2,
                        V, tail, attr, rv, options, top)
    chosen = -1
    for oi in range(min(top, n_cand)):
        ci = order[oi]
        p = probs[ci]
        n2, d2 = _after(play2, n_pl, disc2, n_d, sets[ci], lens[ci], True, attr, a_play, a_disc)
        score = 0.0
        if p > 0.0:
            score += p * _end_of_turn(depth - 1, key, turn, kem if invasion else kem + 1, tech2, pile2, n_p, a_disc,
                                      d2, a_play, n2, V, tail, attr, rv, options, top)
        if p < 1.0:
            score += (1.0 - p) * _end_of_turn(depth - 1, key, turn, kem - 1 if invasion else kem, tech2, pile2, n_p,
                                              a_disc, d2, a_play, n2, V, tail, attr, rv, options, top)
        if score > best + 1e-12:
            best = score
            chosen = ci
    if chosen < 0:
        return best, sets[0, :0].copy(), 0
    return best, sets[chosen, :lens[chosen]].copy(), lens[chosen]


@njit(nogil=True)  # not cached: numba's cache of mutually recursive functions crashes on load
def _clairvoyant_game(key, depth, top, V, tail, attr, rv, options, pile_counts, kem):
    """One game from the start with the search at every turn; returns (Humans won, last turn)."""
    size = pile_counts.sum() + 2
    pile = np.empty(size, dtype=np.int64)
    discard = np.empty(size, dtype=np.int64)
    play = np.empty(size, dtype=np.int64)
    a_play = np.empty(size, dtype=np.int64)
    a_disc = np.empty(size, dtype=np.int64)
    n_pile = ids(pile_counts, pile)
    n_disc = 0
    n_play = 0
    tech = 0
    turn = 1
    while True:
        _, sel, n_sel = _search(depth, key, turn, kem, tech, pile, n_pile, discard, n_disc, play, n_play, V, tail,
                                attr, rv, options, top)
        k, n_pile = take(pile, n_pile, draw_index(key, turn, n_pile))
        n_disc, n_play, tech = place(k, attr, discard, n_disc, play, n_play, tech)
        invasion = attr[k, A_TYPE] == T_K
        phase, kc, kd = kzin_force(k, play, n_play, attr, options)
        won = False
        if n_sel > 0:
            hc, hd = human_force(play, sel, n_sel, phase, tech, kem, attr)
            won = u53(key, turn, 1) * U53 < battle_chance(tail, hd, kd, kc - hc)
        n2, d2 = _after(play, n_play, discard, n_disc, sel, n_sel, n_sel > 0 or (invasion and options[2] == 1), attr,
                        a_play, a_disc)
        play[:n2] = a_play[:n2]
        n_play = n2
        discard[:d2] = a_disc[:d2]
        n_disc = d2
        kem, outcome, n_pile, n_disc = end_turn(kem, invasion, n_sel > 0, won, options, pile, n_pile, discard, n_disc)
        if outcome != 0:
            return outcome > 0, turn
        turn += 1


def play_clairvoyant(keys: np.ndarray, rules: KzinRules | None = None, depth: int = 3, top: int = 3
                     ) -> tuple[np.ndarray, np.ndarray]:
    """(won, last turn) of the clairvoyant, one game per key: the deals the expert meets for those keys."""
    if type(depth) is not int or depth < 1 or type(top) is not int or top < 1:
        raise ValueError("depth and top must be whole numbers of at least 1")
    rules = rules if rules is not None else make_rules()
    V = load_values(rules)
    won = np.zeros(len(keys), dtype=np.bool_)
    turns = np.zeros(len(keys), dtype=np.int32)
    pile = np.array(FULL_DECK, dtype=np.int64)
    for g, key in enumerate(np.asarray(keys, dtype=np.int64)):
        won[g], turns[g] = _clairvoyant_game(key, depth, top, V, tail_table(), ATTR, RV, rule_vector(rules), pile,
                                             rules.start_space)
    return won, turns
