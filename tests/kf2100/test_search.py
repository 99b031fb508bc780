"""The searching bot: it never sees what its side cannot see, it is seeded, it keeps to its budget."""

import numpy as np
import pytest

from engine.core import play_game
from engine.kf2100.actions import Answer, Attack, Chits
from engine.kf2100.bots import HeuristicBot
from engine.kf2100.search import SearchBot, determinize, search_budget
from engine.kf2100.state import CLONE_MASTER, TERMINATORS, KungFuGame, skirmish
from engine.kf2100.tournament import make_bot

BASIC = KungFuGame("basic")


def _with_face_down(swap: bool):
    """T1 and J6 in combat, a Servant and an unarmed Technician face down far off; ``swap`` trades their squares
    (the Terminators cannot tell which is which)."""
    s = skirmish(BASIC, {"T1": "n9", "J6": "o9"}, phase="combat1")
    servant, tech = s.figs["S1"], s.figs["U1"]
    both = sorted(set(s.setup_squares(servant)) & set(s.setup_squares(tech)))
    a, b = both[-1], both[-2]
    if swap:
        a, b = b, a
    for f, sq in ((servant, a), (tech, b)):
        f.pos, f.status, f.face_up = sq, "active", False
    return s


def _cm_to_pick(t1_chits: tuple[str, ...]):
    """T1 has picked ``t1_chits`` (hidden from the Clone Master), J6 is to pick."""
    s = skirmish(BASIC, {"T1": "n9", "J6": "o9", "J3": "n10"}, phase="combat1")
    s.apply_action(Chits("T1", t1_chits))
    assert s.current_player() == CLONE_MASTER
    return s


def test_terminators_worlds_and_decision_ignore_which_face_down_counter_is_where():
    s1, s2 = _with_face_down(False), _with_face_down(True)
    assert s1.player_view(TERMINATORS) == s2.player_view(TERMINATORS)
    assert s1.figs["S1"].pos != s2.figs["S1"].pos  # the truth differs
    w1 = determinize(s1, TERMINATORS, np.random.default_rng(3))
    w2 = determinize(s2, TERMINATORS, np.random.default_rng(3))
    assert w1.to_dict() == w2.to_dict()
    bot = SearchBot(TERMINATORS, playouts=16)
    assert bot.searches(s1)
    assert bot.choose(s1, np.random.default_rng(5)) == bot.choose(s2, np.random.default_rng(5))


def test_the_face_down_counters_are_really_redrawn():
    s = _with_face_down(False)
    truth = s.figs["S1"].pos
    seen = {determinize(s, TERMINATORS, np.random.default_rng(k)).figs["S1"].pos for k in range(20)}
    assert seen == {truth, s.figs["U1"].pos}  # both squares, each a place a Servant may be set up
    # the Clone Master sees his own counters as they are
    assert determinize(s, CLONE_MASTER, np.random.default_rng(0)).figs["S1"].pos == truth


def test_clone_masters_worlds_and_decision_ignore_the_terminators_chits():
    s1, s2 = _cm_to_pick(("fist", "fist", "kick")), _cm_to_pick(("kick", "mist", "monkey"))
    assert s1.player_view(CLONE_MASTER) == s2.player_view(CLONE_MASTER)
    w1 = determinize(s1, CLONE_MASTER, np.random.default_rng(8))
    w2 = determinize(s2, CLONE_MASTER, np.random.default_rng(8))
    assert w1.to_dict() == w2.to_dict()
    held = w1.combat.chits["T1"]
    assert len(held) == 3 and all(held.count(c) <= s1.figs["T1"].levels[i]
                                  for i, c in enumerate(("fist", "kick", "mist", "monkey")))
    draws = {tuple(determinize(s1, CLONE_MASTER, np.random.default_rng(k)).combat.chits["T1"]) for k in range(30)}
    assert len(draws) > 3  # redrawn, not read
    bot = SearchBot(CLONE_MASTER, playouts=16)
    assert bot.searches(s1)
    assert bot.choose(s1, np.random.default_rng(2)) == bot.choose(s2, np.random.default_rng(2))


def test_an_answer_is_the_one_the_crt_favours():
    # J6 kicks T1, who holds Fist, Kick and Mist: Mist leaves the Kick a 1 in 6 (Fist 4, Kick 3), and a Mist
    # answer also leaves T1 unhurt to strike back; the search answers Mist.
    s = skirmish(BASIC, {"T1": "n9", "J6": "o9"}, phase="combat1")
    s.apply_action(Chits("T1", ("fist", "kick", "mist")))
    s.apply_action(Chits("J6", ("kick", "mist")))
    s.apply_action(s.legal_actions()[1])  # the Clone Master leads
    s.apply_action(Attack("J6", "kick", "T1"))
    assert s.current_player() == TERMINATORS
    assert SearchBot(TERMINATORS, playouts=24).choose(s, np.random.default_rng(0)) == Answer("T1", "mist")


def test_a_seed_replays_a_game_and_the_budget_holds():
    def game(seed):
        bot = SearchBot(TERMINATORS, playouts=8)
        end = play_game(BASIC.new_initial_state(), [bot, HeuristicBot(CLONE_MASTER)], np.random.default_rng(seed))
        return end.to_dict(), bot

    (a, bot), (b, _) = game(11), game(11)
    assert a == b
    assert bot.stats.decisions > 0 and bot.stats.playouts >= 8 * bot.stats.decisions


def test_a_decision_at_the_default_budget_takes_under_a_second():
    # CPU time of this process: "under 1 s a decision on one core", whatever else the machine is running.
    s = skirmish(BASIC, {"T1": "n9", "T2": "n10", "J6": "o9", "J3": "o10", "J1": "m9"}, phase="combat1")
    bot = SearchBot(TERMINATORS)
    for k in range(3):
        bot.choose(s, np.random.default_rng(k))
    assert bot.stats.decisions == 3 and bot.stats.playouts >= 3 * bot.playouts
    assert sorted(bot.stats.cpu_seconds)[1] < 1.0, bot.stats.cpu_seconds


def test_each_side_plays_at_its_stated_budget():
    # The Terminators search 128 playouts a decision, the Clone Master 32 (measured: docs/kf2100-search.md).
    assert SearchBot(TERMINATORS).playouts == 128 and SearchBot(CLONE_MASTER).playouts == 32
    assert SearchBot(TERMINATORS, playouts=12).playouts == 12
    bot = make_bot("search", TERMINATORS, BASIC)  # the tournament's "search" is each side's stated budget
    assert isinstance(bot, SearchBot) and bot.playouts == 128


def test_tournament_names_and_bad_input():
    assert search_budget("search") is None and search_budget("search:12") == 12
    bot = make_bot("search:12", CLONE_MASTER, KungFuGame("solo"))
    assert isinstance(bot, SearchBot) and bot.playouts == 12 and bot.rollout[CLONE_MASTER].solo
    for bad in ("search:0", "search:x", "searchy"):
        with pytest.raises(ValueError):
            make_bot(bad, TERMINATORS, BASIC)
    with pytest.raises(ValueError, match="playouts"):
        SearchBot(TERMINATORS, playouts=0)
    with pytest.raises(ValueError, match="not the"):
        SearchBot(CLONE_MASTER).choose(_with_face_down(False), np.random.default_rng(0))


def test_versus_heuristic_reads_the_tournament_table():
    from collections import Counter

    import pandas as pd

    from engine.kf2100.search import versus_heuristic
    from engine.kf2100.tournament import COLUMNS, side_rows

    grades = BASIC.book.scenarios.grades
    rows = side_rows("basic", ("search", "heuristic"), Counter(terminator_victory=60, draw=40), 1000, 100, 0, grades)
    rows += side_rows("basic", ("heuristic", "heuristic"), Counter(terminator_victory=45, draw=55), 1000, 100, 0,
                      grades)
    table = versus_heuristic(pd.DataFrame(rows, columns=COLUMNS))
    t = table.set_index("side").loc["terminators"]
    # 60 of 100 has the Wilson interval 0.502-0.691, above 0.45; the Clone Master side has no search row
    assert t["search_wins"] == 60 and t["heuristic_win_rate"] == 0.45 and t["beats_heuristic"]
    assert round(t["search_win_low"], 3) == 0.502 and list(table["side"]) == ["terminators"]
    rows[0]["wins"], rows[0]["win_low"] = 50, 0.40
    assert not versus_heuristic(pd.DataFrame(rows, columns=COLUMNS)).iloc[0]["beats_heuristic"]


def test_chits_already_played_in_the_combat_are_not_redrawn():
    # T1 (one level of each technique) picks Fist, Kick and Mist and punches: the Fist is spent, so the Clone
    # Master's worlds give him two of Kick, Mist and Monkey, never a second Fist (he has one level of it).
    from engine.kf2100.actions import Lead, Roll

    s = skirmish(BASIC, {"T1": "n9", "J6": "o9"}, phase="combat1", levels={"T1": [1, 1, 1, 1, 2]})
    s.apply_action(Chits("T1", ("fist", "kick", "mist")))
    s.apply_action(Chits("J6", ("kick", "mist")))
    s.apply_action(Lead(TERMINATORS))
    s.apply_action(Attack("T1", "fist", "J6"))
    assert s.current_player() == CLONE_MASTER
    draws = {tuple(determinize(s, CLONE_MASTER, np.random.default_rng(k)).combat.chits["T1"]) for k in range(40)}
    assert draws == {("kick", "mist"), ("kick", "monkey"), ("mist", "monkey")}
    # J6 answers with Mist, misses... the Mist goes on to attack T1 (the aim step): one chit played, not two
    s.apply_action(Answer("J6", "mist"))
    s.apply_action(Roll(6))
    s.apply_action(Attack("J6", "mist", "T1"))
    assert s.current_player() == TERMINATORS
    from engine.kf2100.search import played_chits  # new with the fix: imported here so the draws fail first

    assert played_chits(s) == {"T1": {"fist": 1}, "J6": {"mist": 1}}


def test_the_corrected_threshold_grows_with_the_candidates():
    # DESIGN (data/search.toml): off for both sides (measured no better for the Advanced Terminators)
    assert not SearchBot(TERMINATORS).corrected and not SearchBot(CLONE_MASTER).corrected
    bot = SearchBot(TERMINATORS, playouts=8)
    bot.confidence, bot.corrected = 1.0, False
    assert bot.threshold(2) == bot.threshold(10) == 1.0
    bot.corrected = True
    assert bot.threshold(2) == 1.0  # one comparison: no correction
    assert 1.40 < bot.threshold(3) < 1.42 and 2.10 < bot.threshold(10) < 2.11
    assert all(bot.threshold(k) < bot.threshold(k + 1) for k in range(2, 20))
