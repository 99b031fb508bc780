"""Every rule of the seed, with scripted flick outcomes (the physics is tested on its own)."""

from __future__ import annotations

import json
import math

import pytest
from helpers import Script, fresh, in_arena

from engine.core import IllegalActionError, StateFormatError, dump_state, load_state
from engine.zoo import ChooseFirst, Flick, Pass, Place, UseAbility, ZooGame
from engine.zoo.game import new_game

FLICK_C1 = "flick C1 from S-dot face=head dir=0.0 speed=1.2"


def refused(state, action, words: str) -> None:
    before = state.to_json()
    with pytest.raises(IllegalActionError, match=words):
        state.apply_action(action)
    assert state.to_json() == before


# --- Cage Battle ------------------------------------------------------------------------------------

def test_caging_an_opponent_gives_an_extra_flick_which_may_be_passed(monkeypatch) -> None:
    s = in_arena(fresh())
    Script(monkeypatch).then(caged={"E1": "NE"})
    s.apply_action(FLICK_C1)
    assert s.dice["E1"].status == "caged" and s.phase == "extra" and s.current_player() == 0
    assert Pass() in s.legal_actions()
    s.apply_action("pass")
    assert s.phase == "flick" and s.current_player() == 1


def test_extra_flick_picks_up_a_non_stunned_animal_from_the_arena(monkeypatch) -> None:
    s = fresh()
    in_arena(s, dice=["C2", "E1", "E2"], faces={"C2": "feet"})  # C1, C3, C4 still in hand
    Script(monkeypatch).then(caged={"E1": "NE"})
    s.apply_action(FLICK_C1)
    # the only arena animal C2 is stunned and C1 (just flicked, back-up) can be picked up
    assert s.phase == "extra" and set(s.flickable()) == {"C1"}
    refused(s, "flick C3 from S-dot face=head dir=0.0 speed=1.0", "cannot be flicked now")
    refused(s, "flick C2 from S-dot face=head dir=0.0 speed=1.0", "stunned")


def test_no_extra_flick_without_a_non_stunned_animal(monkeypatch) -> None:
    s = fresh()
    in_arena(s, dice=["C2", "E1", "E2"], faces={"C2": "feet"})  # C3, C4 in hand do not count
    Script(monkeypatch).then(caged={"E1": "NE"}, face="feet")
    s.apply_action(FLICK_C1)
    assert s.current_player() == 1 and s.phase == "flick" and s.wins == [0, 0]


def test_caging_your_own_and_an_opponent_ends_the_turn(monkeypatch) -> None:
    s = in_arena(fresh())
    Script(monkeypatch).then(caged={"E1": "NE", "C2": "SW"})
    s.apply_action(FLICK_C1)
    assert s.dice["E1"].status == s.dice["C2"].status == "caged"
    assert s.current_player() == 1 and s.phase == "flick"


def test_your_own_animal_out_is_gone_for_the_round(monkeypatch) -> None:
    s = in_arena(fresh())
    Script(monkeypatch).then(left={"C1": "N"})
    s.apply_action(FLICK_C1)
    assert s.dice["C1"].status == "out" and s.current_player() == 1
    refused(s, "flick E1 from S-dot face=head dir=0.0 speed=1.0 ability", "no ability")
    s.apply_action("flick E1 from S-dot face=head dir=0.0 speed=1.0")
    assert s.current_player() == 0
    refused(s, FLICK_C1, "out for the round")


def test_opponent_knocked_out_is_placed_face_up_by_its_owner(monkeypatch) -> None:
    s = in_arena(fresh())
    Script(monkeypatch).then(left={"E2": "W"})
    s.apply_action(FLICK_C1)
    assert s.phase == "place" and s.current_player() == 1
    assert all(isinstance(a, Place) and a.face == "head" and a.die == "E2" for a in s.legal_actions())
    refused(s, "place E2 at 150.0,250.0 face=back", "face-up")
    refused(s, "place E2 at 30.0,30.0 face=head", "over the SW cage")
    x, y = s.dice["C3"].x, s.dice["C3"].y
    refused(s, f"place E2 at {x + 5},{y} face=head", "on top of C3")
    refused(s, "place E2 at 5.0,150.0 face=head", "not inside the arena")
    refused(s, FLICK_C1, "must first place E2")
    s.apply_action("place E2 at 150.0,262.5 face=head")
    assert s.dice["E2"].status == "arena" and s.dice["E2"].face == "head"
    assert s.phase == "flick" and s.current_player() == 1  # the turn passes as usual


def test_faq_cage_an_opponent_while_your_animal_leaves(monkeypatch) -> None:
    s = in_arena(fresh())
    Script(monkeypatch).then(caged={"E1": "NE"}, left={"C1": "S"})
    s.apply_action(FLICK_C1)
    assert s.dice["C1"].status == "out"
    assert s.phase == "place" and s.current_player() == 1
    s.apply_action("place E1 at 150.0,262.5 face=feet")  # any side up
    assert s.dice["E1"].status == "arena" and s.dice["E1"].face == "feet"
    assert s.current_player() == 1 and s.phase == "flick"  # no extra flick for player 1


def test_second_players_first_flick_must_touch_a_rail_before_striking(monkeypatch) -> None:
    s = new_game("cage", 2, seed=0)
    script = Script(monkeypatch)
    script.then(land=(150.0, 150.0))
    s.apply_action(FLICK_C1)
    assert s.rail_rule == 1
    script.then(land=(150.0, 130.0), moved={"C1": (150.0, 250.0)}, rail_before_strike=False)
    s.apply_action("flick E1 from S-dot face=head dir=0.0 speed=1.5")
    assert s.last["foul"]
    assert s.dice["E1"].status == "out"
    assert (s.dice["C1"].x, s.dice["C1"].y) == (150.0, 150.0)  # the arena is put back
    assert s.current_player() == 0 and s.rail_rule is None
    # later flicks may strike directly
    s.apply_action("flick C2 from W-dot face=head dir=0.0 speed=1.0")
    script.then(land=(150.0, 130.0), moved={"C1": (150.0, 250.0)}, rail_before_strike=False)
    s.apply_action("flick E2 from S-dot face=head dir=0.0 speed=1.5")
    assert not s.last["foul"] and s.dice["C1"].y == 250.0


def test_second_players_first_flick_off_a_rail_first_is_fine(monkeypatch) -> None:
    s = new_game("cage", 2, seed=0)
    script = Script(monkeypatch)
    s.apply_action(FLICK_C1)
    script.then(land=(150.0, 130.0), moved={"C1": (150.0, 250.0)}, rail_before_strike=True)
    s.apply_action("flick E1 from N-dot face=head dir=0.0 speed=1.5")
    assert not s.last["foul"] and s.dice["E1"].status == "arena" and s.dice["C1"].y == 250.0


def test_entry_flicks_come_from_the_hand_and_the_dot(monkeypatch) -> None:
    s = new_game("cage", 2, seed=0)
    Script(monkeypatch)
    refused(s, "flick C1 from S@100.0 face=head dir=0.0 speed=1.0", "Ambush")  # Crocodile could ambush
    s2 = new_game("cage", 2, seed=0, teams=("gorilla", "zebra"))
    refused(s2, "flick G1 from S@100.0 face=head dir=0.0 speed=1.0", "enters from the midpoint")
    s.apply_action(FLICK_C1)
    s.apply_action("flick E1 from S-dot face=head dir=0.0 speed=1.0")
    refused(s, "flick C1 from S-dot face=head dir=0.0 speed=1.0", "first flick an animal from your hand")


def test_face_up_animals_flick_from_anywhere_others_from_the_dot(monkeypatch) -> None:
    s = in_arena(fresh(teams=("gorilla", "zebra")), faces={"G1": "head", "G2": "left"})
    Script(monkeypatch)
    refused(s, "flick G2 from E@100.0 face=head dir=0.0 speed=1.0", "only a face-up animal")
    refused(s, "flick G1 from E@20.0 face=head dir=0.0 speed=1.0", "away from the corners")
    s.apply_action("flick G1 from E@100.0 face=tail dir=-10.0 speed=1.0")
    assert s.current_player() == 1


def test_round_won_when_opponents_animals_are_all_stunned_or_caged(monkeypatch) -> None:
    s = in_arena(fresh(), faces={"E2": "feet", "E3": "feet"})
    s.dice["E4"].status = "caged"
    Script(monkeypatch).then(faces={"E1": "feet"})
    s.apply_action(FLICK_C1)
    assert s.wins == [1, 0]
    assert s.phase == "first" and s.current_player() == 1  # the loser chooses who starts
    assert s.legal_actions() == [ChooseFirst(0), ChooseFirst(1)]
    s.apply_action("first P1")
    assert s.round_no == 2 and s.current_player() == 0
    assert all(d.status == "hand" for d in s.dice.values())
    assert s.rail_rule == 1


def test_three_round_wins_win_the_battle(monkeypatch) -> None:
    s = in_arena(fresh(), faces={"E2": "feet", "E3": "feet", "E4": "feet"})
    s.wins = [2, 1]
    Script(monkeypatch).then(faces={"E1": "feet"})
    s.apply_action(FLICK_C1)
    assert s.is_terminal() and s.returns() == [1.0, -1.0] and s.legal_actions() == []
    refused(s, FLICK_C1, "over")


def test_both_teams_beaten_at_once_the_flicker_wins(monkeypatch) -> None:
    s = in_arena(fresh(), faces={"E2": "feet", "E3": "feet", "E4": "feet", "C2": "feet", "C3": "feet",
                                 "C4": "feet"})
    Script(monkeypatch).then(face="feet", faces={"E1": "feet"})
    s.apply_action(FLICK_C1)
    assert s.wins == [1, 0]


def test_animals_still_fighting_count_those_to_enter_and_those_on_their_feet() -> None:
    s = in_arena(fresh(), faces={"C1": "feet", "E1": "feet", "E2": "head"}, dice=["C1", "C2", "E1", "E2"])
    s.dice["C3"].status = "caged"
    # C2 standing, C4 still to enter (C1 stunned, C3 caged); E2 standing, E3 and E4 to enter (E1 stunned).
    assert [s.still_fighting(0), s.still_fighting(1)] == [2, 3]
    for d in ("C2", "C4"):
        s.dice[d].status = "caged"
    assert s.still_fighting(0) == 0 and s._beaten(0) and not s._beaten(1)
    valley = in_arena(fresh(all_valley=True), faces={"C1": "feet"}, dice=["C1"])
    assert valley.still_fighting(0) == 4  # under All Valley a stunned animal still fights


def test_all_valley_stunned_animals_flick_with_the_off_hand_and_only_cages_win(monkeypatch) -> None:
    s = in_arena(fresh(all_valley=True), faces={"C1": "feet", "E2": "feet", "E3": "feet", "E4": "feet"})
    script = Script(monkeypatch).then(face="feet", faces={"E1": "feet"})
    assert s.jitter(Flick("C1", "S", None, "head", 0.0, 1.2))[0] > 0
    s.apply_action(FLICK_C1)
    assert s.wins == [0, 0] and s.current_player() == 1  # all stunned is not a win under All Valley
    normal = math.pi / 2
    assert script.launches[-1].heading != normal  # the off-hand flick was jittered
    for d in ("E1", "E2", "E3"):
        s.dice[d].status = "caged"
    s.to_move = 0
    script.then(caged={"E4": "NW"})
    s.apply_action("flick C2 from S-dot face=head dir=0.0 speed=1.2")
    assert s.wins == [1, 0]


# --- Points Battle ----------------------------------------------------------------------------------

def test_points_round_scores_the_difference_and_fewer_points_choose(monkeypatch) -> None:
    s = fresh("points")
    in_arena(s, faces={"C1": "head", "C2": "back", "C3": "left", "C4": "feet", "E1": "back", "E2": "back",
                       "E3": "feet"}, dice=["C1", "C2", "C3", "C4", "E1", "E2", "E3"])
    s.to_move = 1
    Script(monkeypatch).then(face="tail")
    s.apply_action("flick E4 from S-dot face=head dir=0.0 speed=1.0")
    assert s.last["round_scores"] == [14, 13] and s.points == [1, 0]
    assert s.phase == "first" and s.current_player() == 1
    s.apply_action("first P2")
    assert s.current_player() == 1 and all(d.status == "hand" for d in s.dice.values())


def test_points_tied_round_previous_starter_starts(monkeypatch) -> None:
    s = fresh("points")
    in_arena(s, faces={d: "back" for d in s.dice}, dice=[d for d in s.dice if d != "E4"])
    s.to_move, s.starter = 1, 1
    Script(monkeypatch).then(face="back")
    s.apply_action("flick E4 from S-dot face=head dir=0.0 speed=1.0")
    assert s.points == [0, 0] and s.phase == "flick" and s.current_player() == 1 and s.round_no == 2


def test_points_first_to_21_wins(monkeypatch) -> None:
    s = fresh("points")
    in_arena(s, faces={d: "head" for d in s.dice if d[0] == "C"}, dice=[d for d in s.dice if d != "E4"])
    s.points, s.to_move = [18, 20], 1
    Script(monkeypatch).then(face="feet")
    s.apply_action("flick E4 from S-dot face=head dir=0.0 speed=1.0")
    assert s.is_terminal() and s.points[0] >= 21 and s.returns() == [1.0, -1.0]


def test_points_only_hand_animals_are_flicked_and_turns_skip_empty_hands(monkeypatch) -> None:
    s = fresh("points")
    in_arena(s, dice=["C1", "C2", "C3", "C4", "E1"])
    s.to_move = 1
    Script(monkeypatch)
    refused(s, "flick E1 from S-dot face=head dir=0.0 speed=1.0", "hand")
    s.apply_action("flick E2 from S-dot face=head dir=0.0 speed=1.0")
    assert s.current_player() == 1  # player 1 has flicked all four


def test_points_extra_flick_is_optional_and_may_use_a_stunned_animal(monkeypatch) -> None:
    s = fresh("points")
    in_arena(s, faces={"C2": "feet"}, dice=["C2", "E1", "E2"])
    Script(monkeypatch).then(caged={"E1": "SE"})
    s.apply_action(FLICK_C1)
    assert s.phase == "extra" and "C2" in s.flickable()
    s.apply_action("flick C2 from N-dot face=head dir=0.0 speed=1.0")
    assert s.current_player() == 1


def test_no_abilities_in_a_points_battle(monkeypatch) -> None:
    s = in_arena(fresh("points", teams=("gorilla", "zebra")), faces={"G2": "feet"})
    refused(s, "ability chest-pound G2", "not in play")
    with pytest.raises(ValueError, match="Cage Battle"):
        ZooGame(mode="points", abilities=True)


# --- 3-4 players ------------------------------------------------------------------------------------

def test_multiplayer_cage_reinforcements_and_elimination(monkeypatch) -> None:
    s = fresh("cage", 3)
    assert s.game.all_valley
    assert [s.dice[f"E{k}"].status for k in range(1, 5)] == ["hand", "hand", "reserve", "reserve"]
    in_arena(s, dice=["C1", "C2", "E1", "E2", "G1", "G2"])
    script = Script(monkeypatch).then(caged={"E1": "NE", "E2": "NW"})
    s.apply_action(FLICK_C1)
    assert [s.dice[f"E{k}"].status for k in (3, 4)] == ["hand", "hand"]  # reinforcements come in
    assert s.phase == "extra"
    s.apply_action("pass")
    assert s.current_player() == 1
    refused(s, "flick E1 from S-dot face=head dir=0.0 speed=1.0", "caged")
    s.apply_action("flick E3 from S-dot face=head dir=0.0 speed=1.0")
    s.apply_action("flick G1 from S-dot face=head dir=0.0 speed=1.0")
    s.apply_action(FLICK_C1)
    assert s.current_player() == 1
    refused(s, "flick E3 from S-dot face=head dir=0.0 speed=1.0", "first flick an animal from your hand")
    script.then(caged={"G1": "SW", "G2": "SE", "E4": "SW", "E3": "NE"})
    s.apply_action("flick E4 from S-dot face=head dir=0.0 speed=1.0")
    assert s.eliminated == [False, True, False]  # all four Elephants caged
    assert s.dice["G3"].status == "hand"
    script.then(caged={"G3": "SW", "G4": "SE"})
    s.apply_action("flick G3 from S-dot face=head dir=0.0 speed=1.0")
    assert s.is_terminal() and s.winners() == [0] and s.returns() == [1.0, -1.0, -1.0]


def test_multiplayer_only_the_second_player_must_hit_a_rail(monkeypatch) -> None:
    s = new_game("cage", 4, seed=0)
    script = Script(monkeypatch)
    assert s.rail_rule == 1
    s.apply_action(FLICK_C1)
    s.apply_action("flick E1 from S-dot face=head dir=0.0 speed=1.0")
    script.then(rail_before_strike=False, land=(100.0, 100.0))
    s.apply_action("flick G1 from S-dot face=head dir=0.0 speed=1.0")
    assert not s.last["foul"] and s.dice["G1"].status == "arena"


def test_multiplayer_points_three_animals_five_rounds(monkeypatch) -> None:
    s = fresh("points", 3)
    assert sorted(d.status for d in s.dice.values()).count("unused") == 3
    script = Script(monkeypatch)
    for _ in range(5):
        while s.phase == "flick":
            d = s.flickable()[0]
            script.then(face="head", land=(60.0 + 10 * int(d[1]), 150.0 + 20 * s.current_player()))
            s.apply_action(f"flick {d} from S-dot face=head dir=0.0 speed=1.0")
        if s.is_terminal():
            break
        assert s.phase == "flick" or s.phase == "first"
        if s.phase == "first":
            s.apply_action(s.legal_actions()[0])
    assert s.is_terminal() and s.round_no == 5
    assert s.points == [75, 75, 75]  # 3 face-up animals, 15 a round, added to each player's own total
    assert s.returns() == [1.0, 1.0, 1.0]


# --- abilities --------------------------------------------------------------------------------------

def test_gorilla_chest_pound_once_per_round(monkeypatch) -> None:
    s = in_arena(fresh(teams=("gorilla", "zebra")), faces={"G2": "feet", "G3": "feet"})
    assert UseAbility("chest-pound", "G2") in s.legal_actions()
    refused(s, "ability chest-pound G1", "not one")
    s.apply_action("ability chest-pound G2")
    assert s.dice["G2"].face == "back" and s.current_player() == 0 and s.spent[0]
    refused(s, "ability chest-pound G3", "already used")
    Script(monkeypatch)
    s.apply_action("flick G1 from S-dot face=head dir=0.0 speed=1.0")
    assert s.current_player() == 1


def test_zebra_dust_kick_blinds_the_next_flick(monkeypatch) -> None:
    s = in_arena(fresh(teams=("gorilla", "zebra")))
    s.to_move = 1
    script = Script(monkeypatch)
    refused(s, "ability dust-kick P2", "not an opponent")
    s.apply_action("ability dust-kick P1")
    assert s.dust == [True, False] and s.player_view(0)["aim_preview"] is False
    s.apply_action("flick Z1 from S-dot face=head dir=0.0 speed=1.0")
    s.apply_action("flick G1 from S-dot face=head dir=0.0 speed=1.0")
    jittered = script.launches[-1]
    assert jittered.heading != math.pi / 2 and s.dust == [False, False]
    s.apply_action("flick Z2 from S-dot face=head dir=0.0 speed=1.0")
    s.apply_action("flick G2 from S-dot face=head dir=0.0 speed=1.0")
    assert script.launches[-1].heading == math.pi / 2 and script.launches[-1].speed == 1000.0


def test_elephant_trunk_shot_flicks_from_where_it_lies(monkeypatch) -> None:
    s = in_arena(fresh(teams=("elephant", "zebra")))
    script = Script(monkeypatch)
    x, y = s.dice["E2"].x, s.dice["E2"].y
    refused(s, "flick E2 from here dir=45.0 speed=1.0", "add 'ability'")
    refused(s, "flick E2 from here face=head dir=45.0 speed=1.0 ability", "as it lies")
    assert Flick("E2", "here", None, None, 90.0, 1.2, True) in s.legal_actions()
    s.apply_action("flick E2 from here dir=45.0 speed=1.0 ability")
    launch = script.launches[-1]
    assert (launch.x, launch.y) == (x, y) and launch.heading == pytest.approx(math.pi / 4)
    s.apply_action("flick Z1 from S-dot face=head dir=0.0 speed=1.0")
    refused(s, "flick E1 from here dir=45.0 speed=1.0 ability", "already used")


def test_crocodile_ambush_from_any_point_whatever_its_face(monkeypatch) -> None:
    s = in_arena(fresh(), faces={"C1": "left"})
    script = Script(monkeypatch)
    refused(s, "flick C1 from E@100.0 face=back dir=0.0 speed=1.0", "Ambush")
    s.apply_action("flick C1 from E@100.0 face=back dir=0.0 speed=1.0 ability")
    # set on the east rail's top at 100 mm, half an edge and the launch gap beyond the playfield's edge
    assert (script.launches[-1].x, script.launches[-1].y) == pytest.approx((300 + 9.5, 100.0))
    s.apply_action("flick E1 from S-dot face=head dir=0.0 speed=1.0")
    refused(s, "flick C2 from E@100.0 face=back dir=0.0 speed=1.0 ability", "only a face-up")


def test_abilities_come_back_each_round(monkeypatch) -> None:
    s = in_arena(fresh(teams=("gorilla", "zebra")), faces={"G2": "feet", "Z2": "feet", "Z3": "feet", "Z4": "feet"})
    s.apply_action("ability chest-pound G2")
    Script(monkeypatch).then(faces={"Z1": "feet"})
    s.apply_action("flick G1 from S-dot face=head dir=0.0 speed=1.0")
    assert s.wins == [1, 0]
    s.apply_action("first P1")
    assert s.spent == [False, False]


# --- bad input, saving --------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "words"), [
    ("flick C1 from S-dot face=head dir=0.0 speed=3.0", "speed must be"),
    ("flick C1 from S-dot face=head dir=0.0 speed=0.1", "speed must be"),
    ("flick C1 from S-dot face=head dir=85.0 speed=1.0", "within 80"),
    ("flick C1 from S-dot face=wings dir=0.0 speed=1.0", "no face"),
    ("flick C1 from S-dot dir=0.0 speed=1.0", "which face"),
    ("flick E1 from S-dot face=head dir=0.0 speed=1.0", "belongs to"),
    ("flick X1 from S-dot face=head dir=0.0 speed=1.0", "no animal X1"),
    ("flick C1 from S-dot face=head dir=nan speed=1.0", "cannot read"),
    ("flick C1 from Q-dot face=head dir=0.0 speed=1.0", "cannot read"),
    ("place C1 at 100,100 face=head", "no animal to place"),
    ("first P2", "start of a round"),
    ("pass", "extra flick"),
    ("ability dust-kick P2", "Ambush"),
    ("jump", "cannot read"),
])
def test_bad_moves_are_refused_with_a_reason_and_change_nothing(text: str, words: str) -> None:
    refused(new_game("cage", 2, seed=1), text, words)


def test_any_in_range_flick_is_legal_not_only_the_listed_ones() -> None:
    s = new_game("cage", 2, seed=1)
    odd = Flick("C2", "W", None, "tail", 12.345, 1.987)
    assert odd not in s.legal_actions() and s.illegal_reason(odd) is None
    assert s.parse_action(str(odd)) == odd


def test_actions_print_and_parse_back() -> None:
    from engine.zoo.actions import parse

    for text in ["flick E2 from S-dot face=head dir=12.5 speed=1.4", "flick C1 from W@95.0 face=back dir=-20.0 "
                 "speed=0.8 ability", "flick E3 from here dir=270.0 speed=1.0 ability",
                 "place Z2 at 120.0,80.5 face=head", "ability chest-pound G2", "first P2", "pass"]:
        assert str(parse(text)) == text
    assert parse("flick E2 from S-dot face=head dir=12.5 speed=1.40").speed == 1.4


def test_save_and_load_round_trip_and_tampering_is_refused() -> None:
    s = new_game("points", 3, seed=4)
    s.apply_action("flick C1 from S-dot face=head dir=5.0 speed=1.1")
    text = dump_state(s)
    loaded = load_state(text, ZooGame)
    assert loaded.to_json() == s.to_json() and loaded.game.rule_options() == s.game.rule_options()
    # the loaded game continues exactly like the original (the generator is saved too)
    s.apply_action("flick E1 from N-dot face=back dir=-10.0 speed=1.3")
    loaded.apply_action("flick E1 from N-dot face=back dir=-10.0 speed=1.3")
    assert loaded.to_json() == s.to_json()
    data = json.loads(text)
    data["state"]["dice"]["C1"][1] = "flying"
    with pytest.raises(StateFormatError, match="checksum"):
        load_state(json.dumps(data), ZooGame)
    from engine.core.serialize import checksum

    data["checksum"] = checksum(data["rules"], data["state"])
    with pytest.raises(StateFormatError, match="unknown status"):
        load_state(json.dumps(data), ZooGame)


def test_bad_rule_options_are_refused() -> None:
    for kwargs, words in [({"mode": "darts"}, "mode"), ({"players": 5}, "2 to 4"),
                          ({"teams": ("zebra", "zebra")}, "different team"), ({"teams": ("lion", "zebra")}, "no team"),
                          ({"mode": "points", "all_valley": True}, "Cage Battle variant")]:
        with pytest.raises(ValueError, match=words):
            ZooGame(**kwargs)


def test_multiplayer_points_the_lowest_total_chooses_who_starts(monkeypatch) -> None:
    s = fresh("points", 3)
    in_arena(s, faces={"C1": "head", "C2": "head", "C3": "head", "E1": "feet", "E2": "feet", "E3": "feet",
                       "G1": "back", "G2": "back"}, dice=["C1", "C2", "C3", "E1", "E2", "E3", "G1", "G2"])
    s.to_move = 2
    Script(monkeypatch).then(face="back")
    s.apply_action("flick G3 from S-dot face=head dir=0.0 speed=1.0")
    assert s.points == [15, 6, 12]  # each player's own total: 3 x 5, 3 x 2, 3 x 4
    assert s.phase == "first" and s.current_player() == 1
    assert s.legal_actions() == [ChooseFirst(0), ChooseFirst(1), ChooseFirst(2)]
    s.apply_action("first P3")
    assert s.current_player() == 2 and s.rail_rule == 0  # the next player in seat order is "player 2"
