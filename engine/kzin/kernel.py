"""What every numba kernel of Man-Kzin Wars shares: the card columns, the exact odds table and a turn's mechanics.

Three kernels play the game: the fixed policies' simulator (:mod:`engine.kzin.fast`), the expert's
(:mod:`engine.kzin.expert`) and the clairvoyant's search (:mod:`engine.kzin.clairvoyant`). They
differ in who decides and where the random numbers come from; the rest of a turn is the same rules
and lives here once:

* :func:`take` draws the card at an index (the last card fills the hole: each remaining card equally
  likely when the index is uniform), :func:`place` puts it where the rules put it (a Kzin Fleet to
  the discards, Technology counted for good, anything else into play);
* :func:`kzin_force` and :func:`human_force` sum a battle's forces, :func:`battle_chance` reads the
  Humans' exact chance from the tail table;
* :func:`clear_table` discards the committed cards (marked in the play list) and the Conquest cards;
* :func:`end_turn` moves the marker, checks victory and the deck, and reshuffles;
* the counter-based random numbers of the expert's games (:func:`u53`, :func:`draw_index`).

The kernels read cards only through numeric columns built from ``CARDS`` (never names), so an
edited deck is simulated as it is played.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numba import njit

from engine.kzin.cards import CARDS, CONQUEST, HUMAN_FLEET, INVASION, KZIN_FLEET, LIBERATION, TACTICS, TECHNOLOGY
from engine.kzin.odds import _difference_tail

TYPE_CODES = {KZIN_FLEET: 0, CONQUEST: 1, HUMAN_FLEET: 2, TACTICS: 3, TECHNOLOGY: 4}
T_K, T_C, T_H, T_T, T_R = (TYPE_CODES[t] for t in (KZIN_FLEET, CONQUEST, HUMAN_FLEET, TACTICS, TECHNOLOGY))
PHASE_CODES = {None: -1, INVASION: 0, LIBERATION: 1}
PHASES = (INVASION, LIBERATION)


def card_arrays() -> dict[str, np.ndarray]:
    """The card fields the kernels need, one int64 entry per kind (phases and types as codes)."""
    return {
        "type": np.array([TYPE_CODES[c.type] for c in CARDS], dtype=np.int64),
        "const": np.array([c.const for c in CARDS], dtype=np.int64),
        "dice": np.array([c.dice for c in CARDS], dtype=np.int64),
        "reinforcements": np.array([c.reinforcements for c in CARDS], dtype=np.int64),
        "only_phase": np.array([PHASE_CODES[c.only_phase] for c in CARDS], dtype=np.int64),
        "bonus_phase": np.array([PHASE_CODES[c.bonus_phase] for c in CARDS], dtype=np.int64),
        "bonus": np.array([c.bonus for c in CARDS], dtype=np.int64),
        "copies": np.array([c.copies for c in CARDS], dtype=np.int64),
    }


# Columns of the per-kind attribute matrix the kernels read (phase p = 0 invasion, 1 liberation).
A_TYPE = 0
A_COMMIT = 1  # +p: all-in commits this card in phase p (a Fleet or Tactics card that counts there)
A_HCONST = 3  # +p: its constant force in phase p, without Technology and Reinforcements' X
A_HDICE = 5  # +p: its dice in phase p
A_REINF = 7  # +p: it is Reinforcements and counts in phase p (adds X = kem - 1)
A_FLEET = 9  # +p: it is a Fleet that counts in phase p (gets +1 per Technology card)
A_KCONST = 11  # +p: a Conquest card's constant force in phase p
A_KDICE = 13  # a Conquest card's dice (every battle)
A_FLEETFORCE = 14  # a Kzin Fleet card's own force
N_ATTR = 15


def attribute_matrix(arrays: dict[str, np.ndarray] | None = None) -> np.ndarray:
    """Per-kind contributions to a battle in each phase, derived from the raw card columns as ``Card.const_in``."""
    a = card_arrays() if arrays is None else arrays
    kinds = len(a["type"])
    m = np.zeros((kinds, N_ATTR), dtype=np.int64)
    m[:, A_TYPE] = a["type"]
    human = (a["type"] == T_H) | (a["type"] == T_T)
    conquest = a["type"] == T_C
    for p in (0, 1):
        counts = (a["only_phase"] == -1) | (a["only_phase"] == p)
        const_p = np.where(counts, a["const"] + np.where(a["bonus_phase"] == p, a["bonus"], 0), 0)
        commit = human & counts
        m[:, A_COMMIT + p] = commit
        m[:, A_HCONST + p] = np.where(commit, const_p, 0)
        m[:, A_HDICE + p] = np.where(commit, a["dice"], 0)
        m[:, A_REINF + p] = commit & (a["reinforcements"] == 1)
        m[:, A_FLEET + p] = commit & (a["type"] == T_H)
        m[:, A_KCONST + p] = np.where(conquest, const_p, 0)
    m[:, A_KDICE] = np.where(conquest, a["dice"], 0)
    m[:, A_FLEETFORCE] = np.where(a["type"] == T_K, a["const"], 0)
    return m


ATTR = attribute_matrix()
MAX_HUMAN_DICE = 1 + int(max(sum(c.dice_in(p) * c.copies for c in CARDS if c.type == TACTICS) for p in PHASES))
MAX_KZIN_DICE = 1 + sum(c.dice * c.copies for c in CARDS if c.type == CONQUEST)
OFFSET = 10 * MAX_KZIN_DICE  # need + OFFSET indexes the tail table; need = -OFFSET is below any difference
TAIL_LEN = OFFSET + 10 * MAX_HUMAN_DICE + 2  # the last entry is above any difference: probability 0


@lru_cache(maxsize=1)
def tail_table() -> np.ndarray:
    """``t[h, k, need + OFFSET] = P(h d10 - k d10 >= need)`` as floats, from the exact odds."""
    t = np.zeros((MAX_HUMAN_DICE + 1, MAX_KZIN_DICE + 1, TAIL_LEN))
    for h in range(1, MAX_HUMAN_DICE + 1):
        for k in range(1, MAX_KZIN_DICE + 1):
            low, tail = _difference_tail(h, k)
            for i in range(TAIL_LEN):
                j = i - OFFSET - low
                t[h, k, i] = 1.0 if j <= 0 else (float(tail[j]) if j < len(tail) else 0.0)
    t.setflags(write=False)
    return t


# --- a turn's mechanics -------------------------------------------------------------------------

@njit(cache=True, nogil=True)
def ids(counts, out):
    """Write kind ``k`` ``counts[k]`` times into ``out``, in kind order; return how many."""
    n = 0
    for k in range(counts.shape[0]):
        for _ in range(counts[k]):
            out[n] = k
            n += 1
    return n


@njit(cache=True, nogil=True)
def take(pile, n_pile, i):
    """Draw the card at index ``i``: (its kind, cards left); the last card fills the hole."""
    k = pile[i]
    n_pile -= 1
    pile[i] = pile[n_pile]
    return k, n_pile


@njit(cache=True, nogil=True)
def place(k, attr, discard, n_disc, play, n_play, tech):
    """Put the drawn card where the rules put it; returns (discards, cards in play, Technology).

    A Kzin Fleet goes to the discards, battle or not; Technology stays in play for good (counted,
    not listed); anything else joins the cards in play.
    """
    t = attr[k, A_TYPE]
    if t == T_K:
        discard[n_disc] = k
        n_disc += 1
    elif t == T_R:
        tech += 1
    else:
        play[n_play] = k
        n_play += 1
    return n_disc, n_play, tech


@njit(cache=True, nogil=True)
def kzin_force(k, play, n_play, attr, options):
    """(phase code, Kzin constant, Kzin dice with their own d10) of the battle the card ``k`` brings."""
    invasion = attr[k, A_TYPE] == T_K
    phase = 0 if invasion else 1
    kc = options[3] + (attr[k, A_FLEETFORCE] if invasion and options[1] == 1 else 0)
    kd = 1
    for j in range(n_play):
        kc += attr[play[j], A_KCONST + phase]
        kd += attr[play[j], A_KDICE]
    return phase, kc, kd


@njit(cache=True, nogil=True)
def card_force(c, phase, tech, kem, attr):
    """One committed card's constant: its own, +1 per Technology card for a Fleet, X = kem - 1 for Reinforcements."""
    return attr[c, A_HCONST + phase] + attr[c, A_FLEET + phase] * tech + attr[c, A_REINF + phase] * (kem - 1)


@njit(cache=True, nogil=True)
def human_force(play, sel, n_sel, phase, tech, kem, attr):
    """(Human constant, Human dice with their own d10) of the cards at positions ``sel[:n_sel]`` of ``play``."""
    hc = 0
    hd = 1
    for s in range(n_sel):
        c = play[sel[s]]
        hc += card_force(c, phase, tech, kem, attr)
        hd += attr[c, A_HDICE + phase]
    return hc, hd


@njit(cache=True, nogil=True)
def battle_chance(tail, hd, kd, need):
    """P(hd d10 - kd d10 >= need), exact (as a float) from the tail table, for any ``need``."""
    return tail[hd, kd, min(max(need + 10 * (tail.shape[1] - 1), 0), tail.shape[2] - 1)]


@njit(cache=True, nogil=True)
def clear_table(play, n_play, discard, n_disc, clear_conquest, attr):
    """Discard the committed cards (marked ``-1 - kind`` in ``play``) and, with ``clear_conquest``, every Conquest
    card; the cards kept close up in order. Returns (cards in play, discards)."""
    kept = 0
    for j in range(n_play):
        c = play[j]
        if c < 0:
            discard[n_disc] = -1 - c
            n_disc += 1
        elif clear_conquest and attr[c, A_TYPE] == T_C:
            discard[n_disc] = c
            n_disc += 1
        else:
            play[kept] = c
            kept += 1
    return kept, n_disc


@njit(cache=True, nogil=True)
def after_decision(play, n_play, discard, n_disc, sel, n_sel, clear, attr, new_play, new_disc):
    """The cards in play and the discards after a decision, into ``new_play`` and ``new_disc`` (the inputs are
    not changed); returns their counts. ``sel[:n_sel]`` are the committed positions (none when declining);
    ``clear``: the Conquest cards go too."""
    new_disc[:n_disc] = discard[:n_disc]
    new_play[:n_play] = play[:n_play]
    for i in range(n_sel):
        new_play[sel[i]] = -1 - new_play[sel[i]]
    return clear_table(new_play, n_play, new_disc, n_disc, clear, attr)


@njit(cache=True, nogil=True)
def end_turn(kem, invasion, fight, won, options, pile, n_pile, discard, n_disc):
    """Move the marker, then victory, then the deck: (marker, outcome, cards in the deck, discards).

    The outcome is 1 when the Humans have won, -1 when the Kzinti have (Earth reached, or the deck
    ran out without a reshuffle), 0 while the game goes on. A reshuffle makes the discards, in the
    order they were discarded, the new deck.
    """
    if fight:
        if invasion and not won:
            kem -= 1
        elif not invasion and won:
            kem += 1
    elif invasion:
        kem -= 1
    if kem <= options[4]:
        return kem, -1, n_pile, n_disc
    if kem >= options[5]:
        return kem, 1, n_pile, n_disc
    if n_pile == 0:
        if options[0] == 0 or n_disc == 0:
            return kem, -1, n_pile, n_disc
        pile[:n_disc] = discard[:n_disc]
        return kem, 0, n_disc, 0
    return kem, 0, n_pile, n_disc


# --- counter-based random numbers (the expert's and the clairvoyant's games) --------------------
U53 = 1.0 / 9007199254740992.0  # 2**-53


@njit(cache=True, nogil=True)
def mix(z):
    """splitmix64's finaliser."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True, nogil=True)
def u53(key, turn, slot):
    """53 random bits for (game key, turn, slot): splitmix64 of the key and the counter."""
    z = mix(np.uint64(key) ^ mix(np.uint64(turn * 8 + slot + 1) * np.uint64(0x9E3779B97F4A7C15)))
    return np.int64(z >> np.uint64(11))


@njit(cache=True, nogil=True)
def draw_index(key, turn, n):
    """A uniform index in [0, n), exactly: Lemire's method on 53 bits, retrying on slots 2-6."""
    for slot in (0, 2, 3, 4, 5, 6):
        m = u53(key, turn, slot) * n
        low = m & ((1 << 53) - 1)
        if low >= n or low >= ((1 << 53) - n) % n:
            return m >> 53
    return (u53(key, turn, 0) * n) >> 53  # six rejections in a row: chance below 1e-80
