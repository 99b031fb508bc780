"""The turn flow as one ``Step``: every position of a played game has exactly one step, and that step
agrees with who acts and with the kind of every legal move."""

import numpy as np
import pytest

from engine.core import CHANCE, TERMINAL
from engine.kf2100.actions import (
    Activate,
    Answer,
    Attack,
    Chits,
    Deal,
    DoorAttack,
    End,
    Exit,
    Lead,
    Lose,
    Move,
    Place,
    Roll,
    Wait,
)
from engine.kf2100.bots import HeuristicBot
from engine.kf2100.state import CLONE_MASTER, TERMINATORS, KungFuGame, skirmish
from engine.kf2100.steps import Step

# the kinds of move each step offers, and who may make them (None: either side, by the phase)
KINDS = {
    Step.SETUP: ({Place}, CLONE_MASTER), Step.ENTRY: ({Wait}, TERMINATORS),
    Step.MOVE: ({Move, Exit, Activate, End}, None), Step.BONUS_MOVE: ({Move, End}, CLONE_MASTER),
    Step.CM_WINDOW: ({Activate, End}, CLONE_MASTER), Step.DOOR: ({DoorAttack, End}, TERMINATORS),
    Step.PICK: ({Chits}, None), Step.LEAD: ({Lead}, TERMINATORS), Step.ATTACK: ({Attack}, None),
    Step.ANSWER: ({Answer}, None), Step.AIM: ({Attack}, None), Step.LOSS: ({Lose}, None),
    Step.ROLL: ({Roll, Deal}, CHANCE), Step.OVER: (set(), TERMINAL),
}


def check(s):
    step = s.step
    kinds, who = KINDS[step]
    player = s.current_player()
    if who is not None:
        assert player == who, (step, player)
    assert {type(a) for a in s.legal_actions()} <= kinds, (step, s.legal_actions())
    assert (step is Step.OVER) == s.is_terminal()
    return step


def play_out(game, seed, bots=True):
    rng = np.random.default_rng(seed)
    s = game.new_initial_state(rng)
    players = [HeuristicBot(TERMINATORS), HeuristicBot(CLONE_MASTER, solo=game.solo)]
    seen = set()
    for _ in range(5000):
        seen.add(check(s))
        if s.is_terminal():
            break
        if s.is_chance_node():
            s.apply_action(s.sample_chance(rng))
        elif bots and rng.random() < 0.8:
            s.apply_action(players[s.current_player()].choose(s, rng))
        else:
            legal = s.legal_actions()
            s.apply_action(legal[rng.integers(len(legal))])
    assert s.is_terminal()
    return seen


def test_step_values_are_short_snake_case_and_titled():
    assert [str(x) for x in Step] == ["setup", "entry", "move", "bonus_move", "cm_window", "door", "pick",
                                      "lead", "attack", "answer", "aim", "loss", "roll", "over"]
    assert Step("cm_window") is Step.CM_WINDOW and Step.CM_WINDOW.title == "Clone Master may reveal himself"


@pytest.mark.parametrize("scenario", ["basic", "advanced", "solo"])
def test_every_position_of_played_games_has_one_consistent_step(scenario):
    game = KungFuGame(scenario)
    seen = set()
    for seed in range(6):
        seen |= play_out(game, seed)
    # the common steps of any game; the rarer ones are pinned by the scripted positions below
    assert {Step.MOVE, Step.PICK, Step.ATTACK, Step.ANSWER, Step.ROLL, Step.OVER} <= seen
    assert (Step.SETUP in seen) != game.solo  # Solo deals its counters (rolls); the others place them


def test_scripted_positions_name_their_step():
    game = KungFuGame("basic")
    s = skirmish(game, {"T1": "g3", "J3": "g5"})
    assert s.step is Step.MOVE and s.phase == "move1"
    s = skirmish(game, {"T1": "g3", "J3": "g4"}, phase="combat1")
    assert s.step is Step.PICK
    s = skirmish(game, {"T1": "g3"}, phase="combat1", waiting={"T2": "door"})
    assert s.step is Step.DOOR
    s.apply_action(s.legal_actions()[0])
    assert s.step is Step.ROLL and s.current_player() == CHANCE
    s = skirmish(game, {"T1": "g3", "CM": "m10"}, face_up=False)
    assert s.step is Step.CM_WINDOW
    s.apply_action("activate CM")
    assert s.step is Step.BONUS_MOVE
    s = game.new_initial_state(np.random.default_rng(1))
    assert s.step is Step.SETUP
