"""Kung Fu 2100's turn flow as one ``Step``: the single decision (or roll) the game waits for.

The state keeps its phase (the turn's title and the log's heading) and the combat's own step; ``Step``
folds those and the few flags (the Clone Master's window, the bonus move, the door step) into one value
that the state's legal moves, its refusal reasons, ``current_player`` and the views all read.
"""

from __future__ import annotations

import enum


class Step(enum.StrEnum):
    """What the game is waiting for now, in the game's words (``Step.MOVE.title``)."""

    SETUP = "setup"            # Clone Master set-up: a counter is placed face down (or dealt, in Solo)
    ENTRY = "entry"            # Terminator set-up: each Terminator picks the way he will come in
    MOVE = "move"              # a move phase: Terminator move I/II or the Clone Master move
    BONUS_MOVE = "bonus_move"  # the Clone Master's bonus move after he reveals himself
    CM_WINDOW = "cm_window"    # the Clone Master may reveal himself (before a phase, or when he asks to)
    DOOR = "door"              # Terminators at the armored door may attack it
    PICK = "pick"              # a figure picks its chits for the exchange
    LEAD = "lead"              # the Terminators say which side plays the first attack
    ATTACK = "attack"          # a side plays a fresh attack chit at a target
    ANSWER = "answer"          # the attacked side answers with a chit (or lets it go on None)
    AIM = "aim"                # the answering chit becomes an attack: its player picks the target
    LOSS = "loss"              # a hit figure chooses the ability level it loses
    ROLL = "roll"              # a d6 is rolled (a hit, the door, an untrained mob, recovery, a Solo deal)
    OVER = "over"              # the game is over

    @property
    def title(self) -> str:
        return STEP_TITLES[self]


STEP_TITLES = {
    Step.SETUP: "Clone Master set-up", Step.ENTRY: "Terminator set-up", Step.MOVE: "Move",
    Step.BONUS_MOVE: "Clone Master bonus move", Step.CM_WINDOW: "Clone Master may reveal himself",
    Step.DOOR: "Attack the armored door", Step.PICK: "Pick chits", Step.LEAD: "Who leads",
    Step.ATTACK: "Attack", Step.ANSWER: "Answer", Step.AIM: "Aim the answer", Step.LOSS: "Lose a level",
    Step.ROLL: "Roll", Step.OVER: "Game over",
}

# the combat's own step (``Combat.step``) as a Step; "untrained" is a roll of the untrained attacks
STEP_OF_COMBAT = {
    "pick": Step.PICK, "lead": Step.LEAD, "attack": Step.ATTACK, "answer": Step.ANSWER, "aim": Step.AIM,
    "loss": Step.LOSS, "roll": Step.ROLL, "untrained": Step.ROLL,
}
