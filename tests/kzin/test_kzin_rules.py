"""Man-Kzin Wars rules: scripted-dice scenarios through every phase, both victories and the options."""

from fractions import Fraction

import numpy as np
import pytest
from kzin_helpers import draw, fresh, kinds, put_in_play, roll

from engine.core import CHANCE, IllegalActionError, StateFormatError, load_state, play_game, random_sim_test
from engine.kzin.cards import CARDS, DECK_SIZE, card
from engine.kzin.policies import make_policy
from engine.kzin.rules import Attack, Commit, Defend, FallBack, KzinAction, KzinGame, Pass


def test_deck_is_the_seed_card_list():
    by_type = {}
    for c in CARDS:
        by_type[c.type] = by_type.get(c.type, 0) + c.copies
    assert DECK_SIZE == 95
    assert by_type == {"K": 20, "C": 20, "H": 22, "T": 20, "R": 13}
    assert card("Giant Launch Lasers").dice == 2 and card("Giant Launch Lasers").only_phase == "invasion"
    assert card("Reinforcements").reinforcements
    assert card("Stasis Fields").const_in("liberation") == 7 and card("Stasis Fields").const_in("invasion") == 5
    assert card("Militia Home Fleet").const_in("invasion", technology=0) == 2


def test_first_draw_is_uniform_over_the_95_cards():
    s = fresh()
    outcomes = dict(s.chance_outcomes())
    assert s.current_player() == CHANCE
    assert outcomes[KzinAction.parse("draw Kzinti Armada")] == Fraction(4, 95)
    assert outcomes[KzinAction.parse("draw Marines")] == Fraction(1, 95)
    assert sum(outcomes.values()) == 1


def test_invasion_without_a_fleet_must_fall_back():
    s = fresh()
    draw(s, "Kzinti Armada")
    assert s.legal_actions() == [FallBack()]
    with pytest.raises(IllegalActionError, match="no Fleet in play: you must fall back"):
        s.apply_action(Defend())
    s.apply_action(FallBack())
    assert s.kem == 8 and s.turn == 2 and s.discard[card("Kzinti Armada").index] == 1


def test_defended_invasion_scripted_dice():
    s = fresh()
    put_in_play(s, "ARM Defense Force", "Interstellar Trade", "Revenge")
    draw(s, "Kzinti Horde")
    s.apply_action(Commit(card("ARM Defense Force").index))
    s.apply_action(Defend())
    # Humans: d10 + 3 + 1 tech; Kzinti: d10 + 10 + 1 (Horde) + 4 (Revenge).
    roll(s, 10, 4)  # 14 vs 19: Kzinti win
    assert s.last_battle.human_force == 14 and s.last_battle.kzin_force == 19 and not s.last_battle.humans_won
    assert s.kem == 8
    # Committed fleet, the Kzin card and the Conquest card are discarded; technology stays.
    assert s.in_play[card("ARM Defense Force").index] == 0
    assert s.discard[card("ARM Defense Force").index] == 1 and s.discard[card("Revenge").index] == 1
    assert s.in_play[card("Interstellar Trade").index] == 1


def test_tie_goes_to_the_humans():
    s = fresh()
    put_in_play(s, "Pirate Fleet")
    draw(s, "Kzinti Pride")
    s.apply_action("commit Pirate Fleet")
    s.apply_action("defend")
    roll(s, 9, 1)  # 9 + 2 = 11 vs 1 + 10 + 0 = 11
    assert s.last_battle.human_force == s.last_battle.kzin_force == 11
    assert s.last_battle.humans_won and s.kem == 9


def test_phase_only_tactics_and_reinforcements_x():
    s = fresh(start_space=7)
    put_in_play(s, "Rag Tag Fleet", "Giant Launch Lasers", "Wunderland Treaty Maker", "Reinforcements")
    draw(s, "Kzinti Vanguard")
    legal = s.legal_actions()
    assert KzinAction.parse("commit Giant Launch Lasers") in legal
    assert KzinAction.parse("commit Wunderland Treaty Maker") not in legal
    with pytest.raises(IllegalActionError, match="counts only in the Liberation phase"):
        s.apply_action("commit Wunderland Treaty Maker")
    for name in ("Rag Tag Fleet", "Giant Launch Lasers", "Reinforcements"):
        s.apply_action(f"commit {name}")
    s.apply_action("defend")
    assert [side for side, _ in s.dice_plan()] == ["Humans", "Humans", "Humans", "Kzinti"]
    roll(s, 1, 1, 1, 10)
    # Humans: 1 + 1 + 1 (Lasers 2d10) + 1 (Rag Tag) + X=6 (marker on 7) = 10; Kzinti 10 + 10 - 2 = 18.
    assert s.last_battle.human_force == 10 and s.last_battle.kzin_force == 18
    assert s.kem == 6


def test_liberation_attack_moves_marker_and_conquest_is_discarded():
    s = fresh()
    put_in_play(s, "Stasis Fields", "Kzinti Scouts")
    draw(s, "New Battle Cruisers")  # Deployment, then Liberation
    assert s.phase == "liberation"
    assert Pass() in s.legal_actions() and Attack() not in s.legal_actions()
    s.apply_action("commit New Battle Cruisers")
    s.apply_action("attack")
    # Dice: Human d10; Kzin d10, Scouts d10. Kzinti: 10 + 5 + 2 (Stasis in Liberation) + 2 dice.
    assert [label for _, label in s.dice_plan()] == ["Human d10", "Kzin d10", "Kzinti Scouts d10"]
    roll(s, 10, 1, 1)  # 13 vs 19
    assert s.last_battle.kzin_force == 19 and s.kem == 9
    assert not any(s.in_play[c.index] for c in CARDS if c.type == "C")
    put_in_play(s, "Marines", "Exploit Kzinti Honor Code")
    draw(s, "Picket Ships")  # Tactics card into play, then Liberation needs a fleet: none left
    assert s.phase == "draw" and s.turn == 3


def test_humans_win_at_the_home_worlds():
    s = fresh(start_space=11)
    put_in_play(s, "Belter Ships", "Human Aptitude for War")
    draw(s, "Interstellar Trade")
    s.apply_action("commit Belter Ships")
    s.apply_action("commit Human Aptitude for War")
    s.apply_action("attack")
    roll(s, 5, 5)
    assert s.is_terminal() and s.winner == "Humans" and s.returns() == [1.0] and s.kem == 12


def test_kzinti_win_at_earth():
    s = fresh(start_space=2)
    draw(s, "Kzinti Armada")
    s.apply_action("fall back")
    assert s.is_terminal() and s.winner == "Kzinti" and s.returns() == [0.0]


def test_fallback_option_discards_conquest():
    for option, expected in ((False, 1), (True, 0)):
        s = fresh(fallback_discards_conquest=option)
        put_in_play(s, "Revenge")
        draw(s, "Kzinti Armada")
        s.apply_action("fall back")
        assert s.in_play[card("Revenge").index] == expected


def test_kzin_fleet_force_option():
    for option, expected in ((True, 12), (False, 10)):
        s = fresh(kzin_fleet_force=option)
        put_in_play(s, "Pirate Fleet")
        draw(s, "Kzinti Armada")
        assert s.kzin_const() == expected


def test_reshuffle_and_deck_out():
    s = fresh(reshuffle=True)
    # Empty the deck except one Kzin card into the discards.
    for c in CARDS:
        s.discard[c.index], s.pile[c.index] = s.pile[c.index], 0
    s.discard[0] -= 1
    s.pile[0] = 1
    draw(s, CARDS[0].name)
    s.apply_action("fall back")
    assert sum(s.pile) == 95 and sum(s.discard) == 0 and s.phase == "draw"
    s = fresh(reshuffle=False)
    for c in CARDS:
        s.discard[c.index], s.pile[c.index] = s.pile[c.index], 0
    s.discard[0] -= 1
    s.pile[0] = 1
    draw(s, CARDS[0].name)
    s.apply_action("fall back")
    assert s.is_terminal() and s.winner == "Kzinti"


def test_illegal_moves_are_refused_with_reasons_and_change_nothing():
    s = fresh()
    put_in_play(s, "Pirate Fleet", "Interstellar Trade")
    draw(s, "Kzinti Pride")
    before = s.to_json()
    cases = {
        "commit Interstellar Trade": "Technology card",
        "commit Marines": "not in play",
        "attack": "Kzinti are invading",
        "defend": "commit at least one Fleet",
        "roll 3": "player's decision",
        "commit Nonexistent Ships": "no card is called",
        "roll 11": "1 to 10",
    }
    for text, reason in cases.items():
        with pytest.raises(IllegalActionError, match=reason):
            s.apply_action(text)
        assert s.to_json() == before
    s.apply_action("commit Pirate Fleet")
    with pytest.raises(IllegalActionError, match="already committed"):
        s.apply_action("commit Pirate Fleet")


def test_random_sim_test_default_and_options():
    random_sim_test(KzinGame(), num_games=4, seed=1, check_every=5)
    random_sim_test(KzinGame(reshuffle=False, fallback_discards_conquest=True, kzin_base_force=4),
                    num_games=3, seed=2, check_every=5)


def test_policies_play_legal_games():
    for name in ("all-in", "defend-only", "never-fight", "threshold"):
        s = play_game(KzinGame().new_initial_state(), [make_policy(name)], np.random.default_rng(5))
        assert s.is_terminal()


def test_saved_game_round_trip_and_tampering():
    s = fresh()
    put_in_play(s, "Pirate Fleet")
    draw(s, "Kzinti Pride")
    s.apply_action("commit Pirate Fleet")
    text = s.to_json()
    again = load_state(text, KzinGame)
    assert again.to_json() == text and again.legal_actions() == s.legal_actions()
    with pytest.raises(StateFormatError, match="changed after it was saved"):
        load_state(text.replace('"kem": 9', '"kem": 11'), KzinGame)
    # A forged file with a correct checksum is still refused when it breaks the rules.
    import json

    from engine.core.serialize import checksum

    data = json.loads(text)
    data["state"]["in_play"]["Pirate Fleet"] = 3
    data["checksum"] = checksum(data["rules"], data["state"])
    with pytest.raises(StateFormatError, match="copies accounted for"):
        load_state(json.dumps(data), KzinGame)
    data = json.loads(text)
    data["rules"]["kzin_base_force"] = "ten"
    data["checksum"] = checksum(data["rules"], data["state"])
    with pytest.raises(StateFormatError, match="kzin_base_force"):
        load_state(json.dumps(data), KzinGame)


def test_bad_rule_options_are_clear_errors():
    with pytest.raises(ValueError, match="unknown rule option"):
        KzinGame(reshufle=True)
    with pytest.raises(ValueError, match="kzin_base_force"):
        KzinGame(kzin_base_force=99)


def test_committing_then_falling_back_returns_the_cards():
    s = fresh()
    put_in_play(s, "Pirate Fleet")
    draw(s, "Kzinti Pride")
    s.apply_action("commit Pirate Fleet")
    s.apply_action("fall back")
    assert s.in_play[card("Pirate Fleet").index] == 1 and s.committed == []
    assert kinds("Pirate Fleet") == [card("Pirate Fleet").index]


def test_make_policy_refuses_bad_names_and_parameters():
    with pytest.raises(ValueError, match="unknown policy"):
        make_policy("yolo")
    with pytest.raises(ValueError, match="defend and attack"):
        make_policy("threshold", courage=1)
    with pytest.raises(ValueError, match="takes no parameters"):
        make_policy("all-in", defend=0.5)
    with pytest.raises(ValueError, match="probability"):
        make_policy("threshold", defend=1.5)
