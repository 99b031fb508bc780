"""A tiny explicit-chance game for testing engine.core: pick a bonus, then two d10s are opposed.

The player picks ``+0`` or ``+2``; chance rolls the player's d10, then the foe's d10. The player
wins (return +1) when d10 + bonus beats the foe's d10, else loses (-1). P(d10 + 2 > d10) = 16/25.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

from engine.core import CHANCE, TERMINAL, Action, ChanceMode, Game, GameInfo, IllegalActionError, Information, State


@dataclass(frozen=True, slots=True)
class Bonus(Action):
    amount: int

    def __str__(self) -> str:
        return f"+{self.amount}"


@dataclass(frozen=True, slots=True)
class Roll(Action):
    value: int

    def __str__(self) -> str:
        return f"roll {self.value}"


def parse(text: str) -> Action:
    text = text.strip()
    if text.startswith("+"):
        return Bonus(int(text[1:]))
    if text.startswith("roll "):
        return Roll(int(text[5:]))
    raise ValueError("expected '+N' or 'roll N'")


class DuelAction(Action):
    parse = staticmethod(parse)  # type: ignore[assignment]


class DuelState(State):
    __slots__ = ("bonus", "rolls")

    def __init__(self, game: DuelGame) -> None:
        super().__init__(game)
        self.bonus: int | None = None
        self.rolls: list[int] = []

    def current_player(self) -> int:
        if self.bonus is None:
            return 0
        return CHANCE if len(self.rolls) < 2 else TERMINAL

    def legal_actions(self) -> list[Action]:
        p = self.current_player()
        if p == 0:
            return [Bonus(b) for b in self.game.bonuses]
        if p == CHANCE:
            return [Roll(v) for v in range(1, 11)]
        return []

    def chance_outcomes(self) -> list[tuple[Action, Fraction]]:
        if self.current_player() != CHANCE:
            raise IllegalActionError("not a chance node")
        return [(Roll(v), Fraction(1, 10)) for v in range(1, 11)]

    def _apply(self, action: Action) -> None:
        if isinstance(action, Bonus):
            self.bonus = action.amount
        else:
            self.rolls.append(action.value)

    def returns(self) -> list[float]:
        if self.current_player() != TERMINAL:
            return [0.0]
        return [1.0 if self.rolls[0] + self.bonus > self.rolls[1] else -1.0]

    def clone(self) -> DuelState:
        c = DuelState.__new__(DuelState)
        c.game, c.bonus, c.rolls = self.game, self.bonus, list(self.rolls)
        return c

    def to_dict(self) -> dict[str, Any]:
        return {"bonus": self.bonus, "rolls": list(self.rolls)}


class DuelGame(Game):
    info: ClassVar[GameInfo] = GameInfo("duel", "Duel", 1, ChanceMode.EXPLICIT, Information.PERFECT, -1, 1, 1, 3)
    action_type = DuelAction

    def __init__(self, bonuses: tuple[int, ...] = (0, 2)) -> None:
        self.bonuses = tuple(bonuses)

    def new_initial_state(self, rng: Any = None) -> DuelState:
        return DuelState(self)

    def rule_options(self) -> dict[str, Any]:
        return {"bonuses": list(self.bonuses)}

    def state_from_dict(self, data: dict[str, Any]) -> DuelState:
        s = DuelState(self)
        bonus = data["bonus"]
        if bonus is not None and bonus not in self.bonuses:
            raise ValueError(f"bonus {bonus} is not one of {self.bonuses}")
        rolls = [int(r) for r in data["rolls"]]
        if len(rolls) > 2 or any(not 1 <= r <= 10 for r in rolls) or (bonus is None and rolls):
            raise ValueError("impossible rolls")
        s.bonus, s.rolls = bonus, rolls
        return s
