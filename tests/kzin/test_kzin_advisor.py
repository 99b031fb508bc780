"""The advisor: grouping is exact (checked against brute-force subset enumeration) and advice is coherent."""

import itertools
from collections import Counter

import pytest
from kzin_helpers import draw, fresh, put_in_play

from engine.kzin.advisor import advise, battle_options, commitment_groups
from engine.kzin.cards import CARDS, HUMAN_FLEET
from engine.kzin.odds import Battle
from engine.kzin.policies import make_policy

TABLE = ("ARM Defense Force", "ARM Defense Force", "Rag Tag Fleet", "Pirate Fleet", "Marines", "Picket Ships",
         "Human Luck", "Psionics", "Reinforcements", "Lines of Defense", "Wunderland Treaty Maker",
         "Interstellar Trade", "Revenge", "Telepathy")


def position():
    s = fresh()
    put_in_play(s, *TABLE)
    draw(s, "Kzinti Armada")
    return s


def test_groups_cover_every_subset_exactly_once():
    s = position()
    cards = [c.index for c in s.cards_in_play() if c.committable and c.counts_in("invasion")]
    # Brute force over copies (each physical card in or out), grouped by the multiset of kinds.
    seen = {}
    for mask in itertools.product((0, 1), repeat=len(cards)):
        chosen = [k for k, m in zip(cards, mask, strict=True) if m]
        if not any(CARDS[k].type == HUMAN_FLEET for k in chosen):
            continue
        seen[tuple(sorted(Counter(chosen).items()))] = chosen
    # Distinct multisets per totals, and the odds of every one of them equal the group's.
    groups = commitment_groups(s)
    per_key = Counter()
    for chosen in seen.values():
        b = Battle.from_state(s, chosen)
        key = (b.human_const(), b.human_dice() - 1, True)
        per_key[key] += 1
        assert key in groups
    options = {(o.human_const, o.human_dice - 1): o for o in battle_options(s) if o.battle_odds is not None}
    for key, (_, _, rep) in groups.items():
        b = Battle.from_state(s, list(rep))
        assert (b.human_const(), b.human_dice() - 1) == key[:2]
        assert options[key[:2]].battle_odds == b.win_probability()
    # The programme counts physical subsets (copies distinguished); multisets are fewer or equal.
    assert sum(ways for ways, _, _ in groups.values()) == sum(
        1 for mask in itertools.product((0, 1), repeat=len(cards))
        if any(CARDS[k].type == HUMAN_FLEET for k, m in zip(cards, mask, strict=True) if m))
    assert set(per_key) == set(groups)


def test_advice_ranks_and_recommends_the_best_game_odds():
    s = position()
    advice = advise(s, rollouts=400, seed=3)
    wins = [o.game_win for o in advice.evaluated]
    assert wins == sorted(wins, reverse=True)
    assert advice.recommended is advice.evaluated[0]
    assert any(o.battle_odds is None and o.action == "fall back" for o in advice.evaluated)
    for o in advice.evaluated:
        assert o.game_low <= o.game_win <= o.game_high
    t = advice.table()
    assert t["recommended"].sum() == 1 and len(t) == len(advice.evaluated)


def test_rollouts_that_all_go_one_way_still_leave_an_interval():
    """With a Kzin base force of 30 the Humans never win a rollout; 300 rollouts cannot prove 0%, so every
    option's interval keeps some width (Wilson for falling back, Agresti-Coull variances for a battle)."""
    s = fresh(kzin_base_force=30)
    put_in_play(s, "Pirate Fleet", "Marines")
    draw(s, "Kzinti Armada")
    advice = advise(s, rollouts=300, seed=1)
    assert {o.game_win for o in advice.evaluated} == {0.0}
    for o in advice.evaluated:
        assert o.game_low == 0.0 and 0.005 < o.game_high < 0.05, (o.action, o.game_high)


def test_advice_is_reproducible_for_a_seed():
    a, b = advise(position(), rollouts=300, seed=9), advise(position(), rollouts=300, seed=9)
    assert a.table().equals(b.table())


def test_liberation_advice_offers_pass():
    s = fresh()
    put_in_play(s, "Pirate Fleet", "Marines")
    draw(s, "Interstellar Trade")
    advice = advise(s, rollouts=200)
    assert advice.phase == "liberation"
    assert {o.action for o in advice.evaluated} == {"attack", "pass"}


def test_advisor_policy_plays_a_legal_game():
    import numpy as np

    from engine.core import play_game
    from engine.kzin.rules import KzinGame

    s = play_game(KzinGame(kzin_base_force=6).new_initial_state(), [make_policy("advisor", rollouts=50)],
                  np.random.default_rng(2))
    assert s.is_terminal()


def _decision(seed: int = 5, moves: int = 4):
    from engine.kzin.session import KzinSession

    s = KzinSession(seed=seed, advisor_rollouts=100)
    for _ in range(moves):
        s.follow_advice()
    assert s.decision()
    return s.state


def test_each_option_says_what_it_does_to_the_table_as_the_rules_play_it():
    from engine.kzin.advisor import advise

    state = _decision()
    advice = advise(state, 200, seed=1)
    conquest = state.conquest_in_play()
    for o in advice.evaluated:
        if o.battle_odds is None:
            assert o.effect.startswith("keeps every card") or "keeps every card" in o.effect
            stays = bool(state.after_declining().conquest_in_play())
            assert (not conquest) or (("stay" in o.effect) == stays)
        else:
            assert o.effect.startswith("spends " + ", ".join(o.card_names))
            if conquest:
                assert "clears the Conquest cards win or lose" in o.effect  # every battle discards them
            for outcome in (True, False):
                after = state.after_battle(list(o.cards), outcome)
                words = f"if {'won' if outcome else 'lost'}, marker {state.kem} → {after.kem}"
                assert (words in o.effect) == (after.kem != state.kem)
    assert set(advice.table()["effect"]) == {o.effect for o in advice.evaluated}


def test_the_lead_of_the_best_option_has_its_own_interval_and_more_rollouts_narrow_it():
    from engine.kzin.advisor import advise, advise_until_sure

    state = _decision()
    small = advise(state, 500, seed=1)
    unpaired = small.unpaired_margin()
    best, second = small.evaluated[:2]
    assert unpaired.difference == pytest.approx(best.game_win - second.game_win)
    half = 1.959963984540054 * (best.game_se ** 2 + second.game_se ** 2) ** 0.5
    assert (unpaired.low, unpaired.high) == pytest.approx((unpaired.difference - half, unpaired.difference + half))
    m = small.margin()
    assert m is small.lead and (m.best, m.runner_up) == (best.describe(), second.describe())
    sure = advise_until_sure(state, 500, seed=1, max_rollouts=4000, tolerance=0.0)
    assert sure.rollouts_per_state >= 500 and any("rollouts a state" in n for n in sure.notes)
    ms = sure.margin()
    if sure.rollouts_per_state > 500:
        assert ms.high - ms.low < m.high - m.low
    assert ms.separated or sure.rollouts_per_state == 4000


def _exact_value(s, memo):
    """The exact chance the Humans win from the start of a turn when the threshold policy plays (no reshuffle)."""
    from fractions import Fraction

    from engine.kzin.policies import Threshold
    from engine.kzin.rules import OVER, Draw

    if s.phase == OVER:
        return Fraction(int(s.winner == "Humans"))
    key = (tuple(s.pile), tuple(s.in_play), s.kem)
    if key not in memo:
        total = Fraction(0)
        for k, copies in enumerate(s.pile):
            if copies:
                t = s.clone()
                t.apply_action(Draw(k))
                if t.current_player() != 0:
                    v = _exact_value(t, memo)
                elif t.fleets_in_play() and (cards := Threshold().commitment(t)):
                    p = Battle.from_state(t, cards).win_probability()
                    v = p * _exact_value(t.after_battle(cards, True), memo) + (1 - p) * _exact_value(
                        t.after_battle(cards, False), memo)
                else:
                    v = _exact_value(t.after_declining(), memo)
                total += copies * v
        memo[key] = total / sum(s.pile)
    return memo[key]


def _exact_option(state, option, memo):
    if option.battle_odds is None:
        return _exact_value(state.after_declining(), memo)
    q = option.battle_odds
    return q * _exact_value(state.after_battle(list(option.cards), True), memo) + (1 - q) * _exact_value(
        state.after_battle(list(option.cards), False), memo)


def test_the_paired_lead_is_narrower_than_the_unpaired_and_contains_the_exact_difference():
    # The end of a game without reshuffle: eight cards left, so every option's chance is computable exactly.
    s = fresh(reshuffle=False)
    put_in_play(s, "Pirate Fleet", "Rag Tag Fleet", "Psionics", "Lines of Defense")
    left = {"Kzinti Vanguard", "Belter Ships", "ARM Defense Force", "Marines", "Interstellar Trade", "Human Luck",
            "New Battle Cruisers", "Picket Ships"}
    for k in range(len(s.pile)):
        n = s.pile[k] - (1 if CARDS[k].name in left else 0) - (1 if CARDS[k].name == "Revenge" else 0)
        s.pile[k] -= n
        s.discard[k] += n
    s.kem = 10
    draw(s, "Revenge")  # a liberation: attack with one Fleet, with more, or pass
    advice = advise(s, 3000, seed=2)
    paired, unpaired = advice.margin(), advice.unpaired_margin()
    assert paired is advice.lead
    assert paired.high - paired.low < 0.8 * (unpaired.high - unpaired.low), (paired, unpaired)
    memo: dict = {}
    best, second = advice.evaluated[:2]
    exact = float(_exact_option(s, best, memo) - _exact_option(s, second, memo))
    assert paired.low <= exact <= paired.high, (exact, paired)
    assert exact != 0  # the two options differ: the interval is not trivially around nothing
