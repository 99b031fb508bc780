"""The Kung Fu 2100 position's fields and helpers, the base of the rules' parts (set-up, movement, combat,
turn flow, saving) that ``KungFuState`` combines.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Any

from engine.core import (
    State,
)
from engine.core.protocol import Action
from engine.kf2100.board import Board
from engine.kf2100.figures import (
    CLONE_MASTER,
    MONKEY,
    PHASE_TITLES,
    Combat,
    Figure,
)
from engine.kf2100.steps import STEP_OF_COMBAT, Step

if TYPE_CHECKING:
    from engine.kf2100.state import KungFuGame


class StateCore(State):
    """The position's fields and the helpers every part of the rules reads."""

    __slots__ = ("_legal", "activated", "bonus_mp", "cm_window", "combat", "combats", "constabulary_in", "deal_rooms",
                 "door_broken", "door_chits", "door_step", "entered", "equipment", "figs", "log", "opened", "phase",
                 "queue", "result", "turn")

    game: KungFuGame

    def __init__(self, game: KungFuGame) -> None:
        super().__init__(game)
        self.turn = 1
        self.phase = "setup"
        self.figs: dict[str, Figure] = {}
        self.equipment: dict[str, bool] = dict.fromkeys(game.board.lair.equipment, True)
        self.door_broken = False
        self.entered: dict[str, int] = {}       # entry -> Terminators through it this move phase
        self.activated: list[str] = []          # activation classes used this Clone Master move
        self.bonus_mp = 0                       # > 0: the Clone Master's bonus move is pending
        self.door_step = False
        self.cm_window = False                  # the Clone Master's chance to reveal himself before a phase
        self.opened = True                      # this combat phase's door step and combats have begun
        self.door_chits: dict[str, list[str]] = {}  # attack chits each Terminator spent on the door this phase
        self.combats: list[list[str]] = []      # combats of this phase still to fight
        self.combat: Combat | None = None
        self.queue: list[str] = []              # set-up order, or figures still to roll for recovery
        self.deal_rooms: list[str] = []         # Solo: the rooms still to deal a counter to, in turn
        self.constabulary_in = 0
        self.result = ""
        self.log: list[dict[str, Any]] = []
        self._legal: list[Action] | None = None

    # --- helpers --------------------------------------------------------------------------------
    @property
    def board(self) -> Board:
        return self.game.board

    def name(self, sq: int) -> str:
        return self.board.names[sq]

    def at(self, sq: int) -> Figure | None:
        for f in self.figs.values():
            if f.pos == sq and f.status in ("active", "unconscious"):
                return f
        return None

    def occupied(self) -> set[int]:
        return {f.pos for f in self.figs.values() if f.on_board}

    def terminators(self) -> list[Figure]:
        return [f for f in self.figs.values() if f.kind == "terminator"]

    def utype(self, f: Figure):
        return self.game.book.units.types[f.kind]

    def can_monkey(self, f: Figure) -> bool:
        return f.kind in ("terminator", "jelly") and f.levels[MONKEY] > 0

    def effective(self, f: Figure) -> bool:
        """Conscious and with a combat level left (else only untrained attacks, or running)."""
        return f.conscious and f.combat_levels() > 0

    def rules(self) -> dict[str, Any]:
        return self.game.book.units.rules

    def scenario(self):
        return self.game.scenario

    def _event(self, text: str) -> None:
        self.log.append({"turn": self.turn, "phase": self.phase, "event": text})

    def _roll_log(self, what: str, value: int, need: int, success: str, target: str = "") -> None:
        """Every d6 with the chance it had of succeeding (the target, if any, for counting hits)."""
        p = Fraction(max(0, min(need, 6)), 6)
        entry = {"turn": self.turn, "phase": self.phase, "roll": value, "need": need, "what": what,
                 "p": str(p), "result": success if value <= need else "miss"}
        if target:
            entry["target"] = target
            entry["target_side"] = CLONE_MASTER if target.startswith("E") else self.figs[target].side
        self.log.append(entry)

    # --- the step -----------------------------------------------------------------------------------
    @property
    def step(self) -> Step:
        """The one thing the game waits for now, from the phase, the flags and the combat's step."""
        if self.phase == "over":
            return Step.OVER
        if self.bonus_mp > 0:
            return Step.BONUS_MOVE
        if self.cm_window:
            return Step.CM_WINDOW
        if self.phase == "setup":
            return Step.ROLL if self.deal_rooms else Step.SETUP
        if self.phase == "entry":
            return Step.ENTRY
        if self.phase in ("move1", "move2", "cm_move"):
            return Step.MOVE
        if self.phase == "recovery":
            return Step.ROLL
        if self.door_step:
            return Step.ROLL if self.queue and self.queue[0].startswith("door:") else Step.DOOR
        c = self.combat
        if c is None or c.step == "done":
            raise AssertionError(f"no step in {self.phase} with no combat being fought")
        return STEP_OF_COMBAT[c.step]

    def step_title(self) -> str:
        """The step in the turn's words: the phase's title, and the step within it where it says more."""
        step, phase = self.step, PHASE_TITLES[self.phase]
        if step in (Step.SETUP, Step.ENTRY, Step.MOVE, Step.OVER):
            return phase
        return f"{phase}: {step.label.lower()}"

    # --- the turn flow (state_flow) and the parts of a turn call each other through these ----------------
    def _settle(self) -> None:
        raise NotImplementedError

    def _begin_phase(self, phase: str) -> None:
        raise NotImplementedError
