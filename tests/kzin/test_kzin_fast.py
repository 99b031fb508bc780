"""The numba kernel against the exact odds and the plain engine.

One-battle positions (a single card left in the deck) turn a game's outcome into one battle's, so
the kernel's win rate there must match ``Battle.win_probability`` for every force rule; whole
games from a mid-game position must match the plain engine's win rate and mean length.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from engine.core import monte_carlo
from engine.kzin import fast
from engine.kzin.cards import CARDS, CONQUEST, DECK_SIZE, HUMAN_FLEET, KZIN_FLEET, TACTICS, TECHNOLOGY, card
from engine.kzin.odds import Battle, p_humans_win, p_humans_win_float
from engine.kzin.policies import make_policy
from engine.kzin.rules import DRAW, KzinGame, KzinState


def position(pile: list[str], in_play: list[str], kem: int, turn: int = 5, **options) -> KzinState:
    """A start-of-turn state: ``pile`` in the deck, ``in_play`` in play, every other card discarded."""
    s = KzinGame(**options).new_initial_state()
    s.pile = [0] * len(CARDS)
    s.discard = [c.copies for c in CARDS]
    for name, where in [(n, s.pile) for n in pile] + [(n, s.in_play) for n in in_play]:
        k = card(name).index
        s.discard[k] -= 1
        assert s.discard[k] >= 0, name
        where[k] += 1
    s.kem, s.turn = kem, turn
    return s


def within(count: int, n: int, p: float, sigmas: float = 4.5) -> bool:
    return abs(count / n - p) <= sigmas * math.sqrt(max(p * (1 - p), 1e-12) / n) + 1e-12


def test_card_arrays_come_from_the_card_data():
    a = fast.card_arrays()
    assert a["copies"].sum() == DECK_SIZE == 95
    for code, t, copies in ((fast.T_K, KZIN_FLEET, 20), (fast.T_C, CONQUEST, 20), (fast.T_H, HUMAN_FLEET, 22),
                            (fast.T_T, TACTICS, 20), (fast.T_R, TECHNOLOGY, 13)):
        assert a["copies"][a["type"] == code].sum() == copies, t
    assert fast.MAX_HUMAN_DICE == 11 and fast.MAX_KZIN_DICE == 5
    m = fast.ATTR
    for c in CARDS:
        for p, phase in enumerate(("invasion", "liberation")):
            if c.committable:
                assert m[c.index, fast.A_COMMIT + p] == c.counts_in(phase)
                assert m[c.index, fast.A_HCONST + p] == c.const_in(phase, technology=0, kem=1)
                assert m[c.index, fast.A_HDICE + p] == c.dice_in(phase)
            if c.type == CONQUEST:
                assert m[c.index, fast.A_KCONST + p] == c.const_in(phase)


def test_tail_table_is_the_exact_odds():
    t = fast.tail_table()
    rng = np.random.default_rng(0)
    for _ in range(400):
        h, k = int(rng.integers(1, 12)), int(rng.integers(1, 6))
        need = int(rng.integers(-60, 120))
        j = min(max(need + fast.OFFSET, 0), fast.TAIL_LEN - 1)
        assert t[h, k, j] == p_humans_win_float(0, h, need, k)


@pytest.mark.parametrize("limit", [0.0, 0.06, 0.5, 0.73, 1.0])
def test_threshold_table_decides_as_the_exact_comparison(limit):
    n = fast.need_tables(limit, limit)[0]
    exact = Fraction(limit).limit_denominator(10**6)
    for h in range(1, 12):
        for k in range(1, 6):
            for need in range(-55, 115, 3):
                assert (need <= n[h, k]) == (p_humans_win(0, h, need, k) >= exact), (h, k, need)


LIBERATION_PLAY = ["ARM Defense Force", "Militia Home Fleet", "Interstellar Trade", "Human Ingenuity",
                   "Reinforcements", "Wunderland Treaty Maker", "Giant Launch Lasers", "Lines of Defense",
                   "Stasis Fields", "Kzinti Scouts", "Revenge"]


@pytest.mark.parametrize("options", [{}, {"kzin_base_force": 16}, {"fallback_discards_conquest": True}])
def test_a_liberation_battle_is_won_at_its_exact_odds(options):
    # One card left (it joins the play), no reshuffle: the game is won iff the all-in attack wins.
    s = position(["Human Luck"], LIBERATION_PLAY, kem=11, reshuffle=False, **options)
    p = Battle("liberation", fleets=["ARM Defense Force", "Militia Home Fleet"],
               tactics=["Reinforcements", "Wunderland Treaty Maker", "Human Luck"], technology=2,
               conquest=["Stasis Fields", "Kzinti Scouts", "Revenge"], kem=11, **options).win_probability()
    assert 0.1 < p < 0.9
    won, turns = fast.play(100_000, np.random.default_rng(1), "all-in", state=s)
    assert within(int(won.sum()), len(won), float(p))
    assert (turns == 5).all()
    # defend-only and never-fight never attack: the deck runs out and the Kzinti win.
    for policy in ("defend-only", "never-fight"):
        assert fast.rollout_wins(s, policy, 2000, seed=2) == (0, 2000)


INVASION_PLAY = ["Belter Ships", "Militia Home Fleet", "Interstellar Trade", "Reinforcements",
                 "Giant Launch Lasers", "Lines of Defense", "Wunderland Treaty Maker", "Stasis Fields",
                 "Telepathy", "Surprise Attack", "Heavy Armaments"]


@pytest.mark.parametrize("options", [{}, {"kzin_fleet_force": False}, {"kzin_base_force": 6}])
def test_an_invasion_battle_is_lost_at_its_exact_odds(options):
    # Marker on 2: losing the invasion (or falling back) ends the game on this turn.
    s = position(["Kzinti Armada"], INVASION_PLAY, kem=2, **options)
    p = Battle("invasion", fleets=["Belter Ships", "Militia Home Fleet"],
               tactics=["Reinforcements", "Giant Launch Lasers", "Lines of Defense"], technology=1,
               conquest=["Stasis Fields", "Telepathy", "Surprise Attack", "Heavy Armaments"],
               kzin_fleet="Kzinti Armada", kem=2, **options).win_probability()
    assert 0.1 < p < 0.9
    for policy in ("all-in", "defend-only"):
        won, turns = fast.play(100_000, np.random.default_rng(3), policy, state=s)
        assert within(int((turns == 5).sum()), len(turns), 1 - float(p))
        assert not won[turns == 5].any()
    won, turns = fast.play(1000, np.random.default_rng(3), "never-fight", state=s)
    assert (turns == 5).all() and not won.any()


def test_threshold_fights_exactly_at_its_limit():
    s = position(["Kzinti Armada"], INVASION_PLAY, kem=2)
    p = Battle("invasion", fleets=["Belter Ships", "Militia Home Fleet"],
               tactics=["Reinforcements", "Giant Launch Lasers", "Lines of Defense"], technology=1,
               conquest=["Stasis Fields", "Telepathy", "Surprise Attack", "Heavy Armaments"],
               kzin_fleet="Kzinti Armada", kem=2).win_probability()
    # At the odds it defends (and sometimes survives the turn); a hair above them it falls back and loses.
    _, turns = fast.play(20_000, np.random.default_rng(4), "threshold", state=s, defend=float(p), attack=1.0)
    assert within(int((turns == 5).sum()), len(turns), 1 - float(p))
    won, turns = fast.play(2000, np.random.default_rng(4), "threshold", state=s, defend=float(p) + 1e-5)
    assert (turns == 5).all() and not won.any()


def test_deck_running_out_with_and_without_reshuffle():
    s = position(["Interstellar Trade"], ["Kzinti Scouts"], kem=6, reshuffle=False)
    assert fast.rollout_wins(s, "all-in", 100) == (0, 100)  # no Fleet, the deck is out: the Kzinti win
    _, turns = fast.play(100, np.random.default_rng(0), "all-in", state=s)
    assert (turns == 5).all()
    s = position(["Interstellar Trade"], ["Kzinti Scouts"], kem=6)  # reshuffle: the game goes on
    _, turns = fast.play(100, np.random.default_rng(0), "never-fight", state=s)
    assert (turns > 5).all()


def test_a_seed_gives_the_same_games():
    a = fast.play(500, np.random.default_rng(11), "threshold", defend=0.3, attack=0.6)
    b = fast.play(500, np.random.default_rng(11), "threshold", defend=0.3, attack=0.6)
    c = fast.play(500, np.random.default_rng(12), "threshold", defend=0.3, attack=0.6)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    assert not np.array_equal(a[1], c[1])
    assert fast.rollout_wins(KzinGame().new_initial_state(), "all-in", 300, seed=5) == \
        fast.rollout_wins(KzinGame().new_initial_state(), "all-in", 300, seed=5)


def test_rollouts_from_a_finished_game():
    s = position(["Interstellar Trade"], [], kem=2)
    s.kem, s.phase, s.winner = 12, "over", "Humans"
    assert fast.rollout_wins(s, "never-fight", 50) == (50, 50)
    s.winner = "Kzinti"
    assert fast.rollout_wins(s, "all-in", 50) == (0, 50)


def test_bad_input_is_refused():
    s = KzinGame().new_initial_state()
    with pytest.raises(ValueError, match="fast simulator plays"):
        fast.rollout_wins(s, "advisor", 10)
    with pytest.raises(ValueError, match="takes no parameters"):
        fast.rollout_wins(s, "all-in", 10, defend=0.5)
    with pytest.raises(ValueError, match="probability from 0 to 1"):
        fast.rollout_wins(s, "threshold", 10, defend=1.5)
    with pytest.raises(ValueError, match="not speed"):
        fast.rollout_wins(s, "threshold", 10, speed=1)
    with pytest.raises(ValueError, match="games must be"):
        fast.play(-1, np.random.default_rng(0))
    s.apply_action(s.legal_actions()[0])  # a draw: now mid-turn
    if s.phase != DRAW:
        with pytest.raises(ValueError, match="start of a turn"):
            fast.rollout_wins(s, "all-in", 10)


# --- against the plain engine -------------------------------------------------------------------

MID_GAME_PILE = [
    "Kzinti Armada", "Kzinti Horde", "Kzinti Pride", "Kzinti Pride", "Kzinti Vanguard", "Kzinti Strike Force",
    "Kzinti Horde", "Kzinti Vanguard", "Revenge", "Telepathy", "Kzin Warriors", "Military Outposts", "Expansionism",
    "Pirate Fleet", "Belter Ships", "Rag Tag Fleet", "New Battle Cruisers", "Clonial Squadron", "Militia Home Fleet",
    "Free Wunderland Navy", "Fusion Ramships", "Marines", "Psionics", "Wunderland Treaty Maker", "Reinforcements",
    "Lines of Defense", "Human Luck", "Hyperdrive Engines", "Human Ingenuity", "Inertialess Drives"]
MID_GAME_PLAY = ["ARM Defense Force", "Merchant Marine", "Giant Launch Lasers", "Interstellar Trade", "Stasis Fields",
                 "Kzinti Scouts"]


def two_sample_z(x1: float, v1: float, n1: int, x2: float, v2: float, n2: int) -> float:
    """z of the difference of two means (each with its sample variance)."""
    return (x1 - x2) / math.sqrt(v1 / n1 + v2 / n2 + 1e-12)


def plain_rollouts(state: KzinState, policy, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    won, turns = [], []

    def measure(s):
        won.append(s.winner == "Humans")
        turns.append(s.turn)
        return {}

    monte_carlo(lambda rng: state.clone(), [policy], n, seed=seed, measure=measure)
    return np.array(won, dtype=float), np.array(turns, dtype=float)


@pytest.mark.parametrize(("policy", "params", "kem", "options"), [
    ("all-in", {}, 10, {"kzin_base_force": 0}),
    ("defend-only", {}, 5, {"kzin_fleet_force": False, "kzin_base_force": 4}),
    ("never-fight", {}, 8, {"fallback_discards_conquest": True}),
    ("threshold", {"defend": 0.35, "attack": 0.6}, 10, {"kzin_base_force": 2}),
    ("all-in", {}, 10, {"fallback_discards_conquest": True, "kzin_base_force": 1, "kzin_fleet_force": False}),
])
def test_rollouts_agree_with_the_plain_engine(policy, params, kem, options):
    # 30 cards left, no reshuffle: at most 30 turns, so the plain engine plays a few hundred games fast.
    s = position(MID_GAME_PILE, MID_GAME_PLAY, kem=kem, turn=60, reshuffle=False, **options)
    pw, pt = plain_rollouts(s, make_policy(policy, **params), 600, seed=7)
    for rules in ({}, {"kzin_base_force": options.get("kzin_base_force", 10) + 4}):
        other = position(MID_GAME_PILE, MID_GAME_PLAY, kem=kem, turn=60, reshuffle=False, **{**options, **rules})
        fw, ft = fast.play(40_000, np.random.default_rng(7), policy, state=other, **params)
        fw, ft = fw.astype(float), ft.astype(float)
        z_win = two_sample_z(pw.mean(), pw.var(ddof=1), len(pw), fw.mean(), fw.var(ddof=1), len(fw))
        z_len = two_sample_z(pt.mean(), pt.var(ddof=1), len(pt), ft.mean(), ft.var(ddof=1), len(ft))
        if not rules:
            assert abs(z_win) < 3.5 and abs(z_len) < 3.5, (z_win, z_len)
        elif policy != "never-fight":  # the comparison has the power to see a Kzin force 4 higher
            assert max(abs(z_win), abs(z_len)) > 3.5, (z_win, z_len)
