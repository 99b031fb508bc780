"""The expert: legal everywhere, reproducible from its seed, its numba kernel playing the plain engine's games
card for card, and better than the threshold policy on the same deals and dice."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.core import CHANCE
from engine.kzin import expert
from engine.kzin.fast import play as fast_play
from engine.kzin.policies import Threshold, make_policy
from engine.kzin.rules import OVER, KzinGame, make_rules

from .kzin_helpers import put_in_play


def test_counter_random_numbers_match_in_python_and_numba():
    for key in (0, 1, 12345678901234567, 2**63 - 2):
        for turn in (1, 2, 77, 1000):
            for slot in range(8):
                assert expert._u53(key, turn, slot) == expert.u53_py(key, turn, slot)
            for n in (1, 2, 7, 95):
                i = expert._draw_index(key, turn, n)
                assert i == expert.draw_index_py(key, turn, n) and 0 <= i < n


def test_draws_are_uniform():
    # 95 cards: the first draw of 60,000 keys lands on each position about equally often (chi-square).
    keys = expert.game_keys(np.random.default_rng(3), 60_000)
    counts = np.bincount([expert._draw_index(int(k), 1, 95) for k in keys], minlength=95)
    chi2 = float(((counts - 60_000 / 95) ** 2 / (60_000 / 95)).sum())
    assert chi2 < 160  # 94 degrees of freedom: P(chi2 > 160) < 1e-4


@pytest.mark.parametrize("ruling", list(expert.RULINGS))
def test_the_kernel_plays_the_plain_engines_games_card_for_card(ruling):
    rules = make_rules(**expert.RULINGS[ruling])
    keys = expert.game_keys(np.random.default_rng(7), 12)
    for name, policy in (("expert", make_policy("expert")), ("expert-table", make_policy("expert-table")),
                         ("threshold", Threshold(0.3, 0.6))):
        won, turns = expert.play_keys(keys, name, rules=rules, defend=0.3, attack=0.6)
        for k, w, t in zip(keys, won, turns, strict=True):
            assert expert.play_plain(int(k), policy, rules) == (bool(w), int(t)), (ruling, name, int(k))


def test_the_kernel_matches_the_plain_engine_from_a_mid_game_state():
    s = KzinGame().new_initial_state()
    put_in_play(s, "ARM Defense Force", "Merchant Marine", "Rag Tag Fleet", "Marines", "Human Luck", "Stasis Fields",
                "Telepathy", "Interstellar Trade", "Reinforcements")
    s.kem, s.turn = 7, 9
    keys = expert.game_keys(np.random.default_rng(8), 15)
    won, turns = expert.play_keys(keys, "expert", state=s)
    policy = make_policy("expert")
    kernel = list(zip(won.tolist(), turns.tolist(), strict=True))
    assert [expert.play_plain(int(k), policy, state=s) for k in keys] == kernel


def test_the_expert_is_legal_in_every_state_random_play_reaches():
    # Random legal play (commits included) through the protocol; at every decision the expert's move is legal.
    policy = make_policy("expert")
    rng = np.random.default_rng(4)
    asked = 0
    for options in expert.RULINGS.values():
        game = KzinGame(**options)
        for _ in range(6):
            s = game.new_initial_state()
            while s.phase != OVER:
                if s.current_player() == CHANCE:
                    s.apply_action(s.sample_chance(rng))
                    continue
                legal = s.legal_actions()
                assert policy.choose(s) in legal, s.to_dict()
                asked += 1
                s.apply_action(legal[int(rng.integers(len(legal)))])
    assert asked > 200


def test_training_is_reproducible_from_its_seed():
    rules = make_rules()
    a, log_a = expert.train(rules, games=3000, iterations=2, seed=5)
    b, log_b = expert.train(rules, games=3000, iterations=2, seed=5)
    c, _ = expert.train(rules, games=3000, iterations=2, seed=6)
    assert np.array_equal(a, b) and log_a.win_rates == log_b.win_rates
    assert not np.array_equal(a, c)
    assert a.shape == expert.value_shape(rules) and ((0 <= a) & (a <= 1)).all()


def test_the_shipped_tables_cover_every_ruling_with_their_settings():
    settings = expert.stored_settings()
    assert {k: type(v)(settings[k]) for k, v in expert.TRAIN_DEFAULTS.items()} == expert.TRAIN_DEFAULTS
    for options in expert.RULINGS.values():
        V = expert.load_values(make_rules(**options))
        assert V.shape == expert.value_shape(make_rules(**options))
        # The chance of winning grows with the marker: on 11 (one win from the Home Worlds) above the middle,
        # and that above space 2 (one loss from Earth), averaged over the rest of the table.
        by_kem = V.mean(axis=(1, 2, 3, 4, 5))
        assert by_kem[-1] > by_kem[len(by_kem) // 2] > by_kem[0]
        assert (0 <= V).all() and (V <= 1).all()
    with pytest.raises(ValueError, match="has learned"):
        expert.load_values(make_rules(kzin_base_force=8))


def test_the_expert_beats_threshold_on_the_same_deals_and_dice():
    keys = expert.game_keys(np.random.default_rng(16), 60_000)
    we, _ = expert.play_keys(keys, "expert-table")
    wt, _ = expert.play_keys(keys, "threshold")
    d = we.astype(float) - wt.astype(float)
    low = d.mean() - 1.96 * d.std(ddof=1) / math.sqrt(len(d))
    assert low > 0, (we.mean(), wt.mean())


def test_looking_one_card_deeper_beats_the_table_on_the_same_deals_and_dice():
    keys = expert.game_keys(np.random.default_rng(17), 3000)
    deeper, _ = expert.play_keys(keys, "expert")
    table, _ = expert.play_keys(keys, "expert-table")
    assert expert.paired(deeper, table).low > 0, expert.paired(deeper, table)


def test_the_kernels_threshold_is_the_fast_simulators():
    # Different random streams, the same policy: win rates agree within sampling error.
    n = 120_000
    a = expert.play_keys(expert.game_keys(np.random.default_rng(1), n), "threshold")[0].mean()
    b = fast_play(n, np.random.default_rng(2), "threshold")[0].mean()
    assert abs(a - b) < 4.5 * math.sqrt(2 * b * (1 - b) / n)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="expert kernel plays"):
        expert.play_keys(np.zeros(1, dtype=np.int64), "advisor")
    with pytest.raises(ValueError, match="no parameters"):
        make_policy("expert", depth=2)
    with pytest.raises(ValueError, match="battle decision"):
        expert.decide(KzinGame().new_initial_state())
    with pytest.raises(ValueError, match="does not fit"):
        expert.play_keys(np.zeros(1, dtype=np.int64), "expert", values=np.zeros((2, 2)))
    with pytest.raises(ValueError, match="at least 1"):
        expert.train(games=0)
    with pytest.raises(ValueError, match="lookahead takes"):
        expert.play_keys(np.zeros(1, dtype=np.int64), "expert", top=0)


def test_the_clairvoyant_beats_the_expert_on_the_same_deals_and_dice():
    from engine.kzin.clairvoyant import play_clairvoyant

    keys = expert.game_keys(np.random.default_rng(17), 400)
    wc, tc = play_clairvoyant(keys)
    assert np.array_equal((wc, tc), play_clairvoyant(keys))  # the deal and the dice come from the keys alone
    we, _ = expert.play_keys(keys)
    assert expert.paired(wc, we).low > 0


def test_the_lessons_tables():
    from engine.kzin.expert_lessons import decision_frame, lessons, value_frame

    frame = decision_frame(games=15, seed=3)
    assert set(frame["choice"]) <= {"decline", "sacrifice", "fight"} and len(frame) > 50
    fights = frame[frame["choice"] != "decline"]
    assert fights["battle_odds"].between(0, 1).all() and (fights["fleets_committed"] >= 1).all()
    table = lessons(frame)
    shares = table.drop(columns="decisions").sum(axis=1)
    assert np.allclose(shares, 1.0) and table["decisions"].sum() == len(frame)
    values = value_frame()
    assert len(values) == expert.load_values(make_rules()).size and values["value"].between(0, 1).all()


def test_dojo_kzin_train_expert_writes_tables_that_load(tmp_path, capsys):
    from engine.cli import main

    out = tmp_path / "tables.npz"
    assert main(["kzin", "train-expert", "--games", "300", "--iterations", "1", "--vi-iterations", "1",
                 "--seed", "3", "--out", str(out)]) == 0
    assert "wrote" in capsys.readouterr().out
    assert expert.stored_settings(out)["games"] == "300"
    for options in expert.RULINGS.values():
        assert expert.load_values(make_rules(**options), out).shape == expert.value_shape(make_rules(**options))
    assert main(["kzin", "train-expert", "--games", "0", "--out", str(out)]) == 2


def test_simulate_plays_the_expert_on_its_kernel_as_the_plain_engine_does():
    from engine.kzin.simulate import play_chunk, simulate

    seed = np.random.SeedSequence(11)
    wins, lengths, _ = play_chunk("fast", "expert", {}, make_rules().options(), seed, 40)
    keys = expert.game_keys(np.random.default_rng(np.random.SeedSequence(11)), 40)
    plain = [expert.play_plain(int(k), make_policy("expert")) for k in keys]
    assert wins == sum(w for w, _ in plain)
    assert np.array_equal(lengths, np.bincount([t for _, t in plain]))
    r = simulate("expert", games=40, seed=3)
    assert r.engine == "fast" and r.games == 40


def test_dojo_kzin_win_rates_writes_every_ruling_and_policy(tmp_path, capsys):
    import csv

    from engine.cli import main
    from engine.kzin.compare import compare_keys

    adv = tmp_path / "advisor.csv"
    keys = compare_keys(3)
    adv.write_text("key,won,turn\n" + "".join(f"{int(k)},{i % 2},9\n" for i, k in enumerate(keys)))
    out = tmp_path / "win_rates.csv"
    code = main(["kzin", "win-rates", "--games", "all-in=50", "--games", "threshold=50", "--games",
                 "expert-table=50", "--games", "expert=10", "--games", "clairvoyant=4", "--advisor-csv", str(adv),
                 "--out", str(out)])
    assert code == 0
    rows = list(csv.DictReader(out.open()))
    assert list(rows[0]) == ["ruling", "policy", "games", "wins", "rate", "low", "high", "note"]
    assert len(rows) == 4 * 5 + 1
    assert {r["ruling"] for r in rows} == set(expert.RULINGS)
    (advisor,) = [r for r in rows if r["policy"] == "advisor"]
    assert (advisor["ruling"], advisor["games"], advisor["wins"]) == ("default", "3", "1")
    for r in rows:
        assert float(r["low"]) <= float(r["rate"]) <= float(r["high"])
    assert main(["kzin", "win-rates", "--games", "advisor=5"]) == 2
    assert "POLICY=N" in capsys.readouterr().err


def each_rulings_table():
    """(ruling, its shipped value table, its rule vector) for every ruling: what the kernel's values are read with."""
    from engine.kzin.fast import rule_vector

    for ruling, options in expert.RULINGS.items():
        rules = make_rules(**options)
        yield ruling, expert.load_values(rules), rule_vector(rules)


def test_the_shared_backup_is_the_backup_card_by_card():
    # The lookahead's one-card backup values a Kzin Fleet's or a Conquest card's decision from candidates found once
    # a phase: it must equal, to the last bit, the backup that values every kind's decision on its own.
    from engine.kzin.cards import FULL_DECK, NUM_KINDS
    from engine.kzin.fast import tail_table
    from engine.kzin.kernel import A_TYPE, T_K, T_R, kzin_force

    rng = np.random.default_rng(5)
    tail = tail_table()
    deck = [k for k in range(NUM_KINDS) for _ in range(FULL_DECK[k])]
    checked = 0
    for ruling, V, options in each_rulings_table():
        for _ in range(40):
            cards = rng.permutation(deck)
            n_in = int(rng.integers(0, 12))
            play = np.array([k for k in cards[:n_in] if expert.ATTR[k, A_TYPE] not in (T_K, T_R)], dtype=np.int64)
            pile = np.array(cards[n_in:n_in + int(rng.integers(1, 60))], dtype=np.int64)
            kem, tech = int(rng.integers(3, 11)), int(rng.integers(0, 4))
            buf = np.empty(len(play) + 1, dtype=np.int64)
            buf[:len(play)] = play
            counts = np.zeros(NUM_KINDS, dtype=np.int64)
            got = expert._backup(kem, tech, buf, len(play), pile, len(pile), expert.REP, counts, V, tail,
                                 expert.ATTR, expert.RV, options)
            total = 0.0
            reps = np.bincount(expert.REP[pile], minlength=NUM_KINDS)
            for k in range(NUM_KINDS):
                if reps[k] == 0:
                    continue
                t = expert.ATTR[k, A_TYPE]
                play2 = play if t == T_K else (play if t == T_R else np.append(play, k))
                phase, kc, kd = kzin_force(k, play2, len(play2), expert.ATTR, options)
                total += reps[k] * expert._best_value(phase, kem, tech + (t == T_R), kc, kd, play2, len(play2),
                                                      len(pile) - 1, V, tail, expert.ATTR, expert.RV, options)
            assert got == total / len(pile), (ruling, kem, tech, play.tolist())
            checked += 1
    assert checked == 160


def test_the_stable_argsort_is_numpys_mergesort():
    rng = np.random.default_rng(6)
    for n in (0, 1, 2, 5, 13, 40):
        for values in (rng.integers(0, 4, size=n), rng.integers(0, 4, size=n) * 0.5 - 1.0):
            idx = np.empty(max(n, 1), dtype=np.int64)
            expert._stable_argsort(values, n, idx)
            assert idx[:n].tolist() == np.argsort(values, kind="mergesort").tolist()


def test_win_rates_only_replays_some_policies_and_reads_every_rulings_advisor(tmp_path, capsys):
    import csv

    from engine.cli import main
    from engine.kzin import win_rates
    from engine.kzin.compare import advisor_path, compare_keys

    keys = compare_keys(4)
    adv = advisor_path("default", tmp_path)
    adv.write_text("key,won,turn\n" + "".join(f"{int(k)},{i % 2},9\n" for i, k in enumerate(keys)))
    # Under one alternative ruling the advisor has 3 games (the 4th key missing): its row counts the first 3.
    advisor_path("no-reshuffle", tmp_path).write_text(
        "key,won,turn\n" + "".join(f"{int(k)},1,9\n" for k in (keys[0], keys[2], keys[1])))
    out = tmp_path / "win_rates.csv"
    kept = {"ruling": "default", "policy": "all-in", "games": 7, "wins": 0, "rate": 0.0, "low": 0.0, "high": 0.1,
            "note": "kept"}
    win_rates.write([kept], out)
    assert main(["kzin", "win-rates", "--only", "advisor,expert", "--games", "expert=30", "--chunk", "7",
                 "--advisor-csv", str(adv), "--out", str(out)]) == 0
    rows = {(r["ruling"], r["policy"]): r for r in csv.DictReader(out.open())}
    assert rows[("default", "all-in")]["note"] == "kept"
    assert (rows[("default", "advisor")]["games"], rows[("default", "advisor")]["wins"]) == ("4", "2")
    assert (rows[("no-reshuffle", "advisor")]["games"], rows[("no-reshuffle", "advisor")]["wins"]) == ("3", "3")
    assert ("no-kzin-fleet-force", "advisor") not in rows
    # Rounds of 7 games play the same keys as one run of 30 (the first 30 of the seed's list).
    for ruling in expert.RULINGS:
        (one,) = win_rates.measure({"expert": 30}, rulings=[ruling])
        assert (rows[(ruling, "expert")]["games"], rows[(ruling, "expert")]["wins"]) == ("30", str(one["wins"]))
    assert main(["kzin", "win-rates", "--only", "advisor", "--out", str(out)]) == 2
    assert main(["kzin", "win-rates", "--only", "expert", "--chunk", "0", "--out", str(out)]) == 2
    assert main(["kzin", "win-rates", "--seconds", "5", "--out", str(out)]) == 2
    assert main(["kzin", "win-rates", "--only", "best", "--out", str(out)]) == 2
    assert "--only takes policies" in capsys.readouterr().err
    # --rulings: rounds under one ruling replace that ruling's row and keep the others'.
    before = {k: r for k, r in rows.items() if k != ("no-reshuffle", "expert")}
    assert main(["kzin", "win-rates", "--only", "expert", "--rulings", "no-reshuffle", "--games", "expert=12",
                 "--out", str(out)]) == 0
    after = {(r["ruling"], r["policy"]): r for r in csv.DictReader(out.open())}
    (twelve,) = win_rates.measure({"expert": 12}, rulings=["no-reshuffle"])
    assert after[("no-reshuffle", "expert")]["games"] == "12"
    assert after[("no-reshuffle", "expert")]["wins"] == str(twelve["wins"])
    assert {k: r for k, r in after.items() if k != ("no-reshuffle", "expert")} == before
    assert main(["kzin", "win-rates", "--only", "expert", "--rulings", "house", "--out", str(out)]) == 2
    assert main(["kzin", "win-rates", "--rulings", "default", "--out", str(out)]) == 2
    assert "--rulings" in capsys.readouterr().err



def test_the_value_pair_is_two_values():
    rng = np.random.default_rng(9)
    for _ruling, V, options in each_rulings_table():
        for _ in range(300):
            kem = int(rng.integers(options[4], options[5] + 2))
            nf, tech, n_pile = (int(rng.integers(-1, 7)), int(rng.integers(0, 6)), int(rng.integers(0, 96)))
            r = float(rng.choice([0.0, -3.0, 61.0, 80.0, rng.uniform(0, 64)]))
            pair = expert._value_pair(V, kem, kem - 1, nf, tech, n_pile, r, options)
            assert pair == (expert._value(V, kem, 0, nf, tech, n_pile, r, options),
                            expert._value(V, kem - 1, 0, nf, tech, n_pile, r, options))


def test_the_readme_table_is_the_shipped_win_rates():
    from pathlib import Path

    from engine.kzin import win_rates

    rows = win_rates.read()
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    assert win_rates.readme_table(rows) in readme
    cells = {(r["ruling"], r["policy"]) for r in rows}
    assert all((ruling, "advisor") in cells for ruling in expert.RULINGS)  # every ruling's advisor was run


def test_update_readme_puts_the_csvs_table_in_place_of_the_old(tmp_path):
    from engine.kzin import win_rates

    rows = win_rates.read()
    readme = tmp_path / "README.md"
    readme.write_text("# x\n\ntext\n\n| policy | default |\n|---|---|\n| all-in | 1% |\n\nafter\n")
    assert win_rates.update_readme(readme, rows)
    assert readme.read_text() == "# x\n\ntext\n\n" + win_rates.readme_table(rows) + "\n\nafter\n"
    assert not win_rates.update_readme(readme, rows)
    readme.write_text("no table\n")
    with pytest.raises(ValueError, match="0 win-rate tables"):
        win_rates.update_readme(readme, rows)
