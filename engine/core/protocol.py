"""The game-state protocol every game implements, shaped like OpenSpiel's Python API.

A game is a :class:`Game` (rules and metadata) that makes :class:`State` objects. A state says whose
turn it is (a player index, :data:`CHANCE` or :data:`TERMINAL`), which actions are legal, and, at a
chance node, every outcome with its exact probability. Actions are small immutable value objects
that print to text and parse back (python-chess style), so logs, tests and the UI share one notation.

Two kinds of chance (``GameInfo.chance_mode``):

* ``EXPLICIT``: dice and card draws are chance nodes; ``chance_outcomes()`` lists them with
  ``Fraction`` probabilities and the caller applies one. Exact analysis works on these games.
* ``SAMPLED``: continuous noise (a flick's physics) is drawn inside ``apply_action`` from the
  ``numpy.random.Generator`` the state was built with. The state saves and clones that generator's
  state, so a seed still reproduces a game exactly.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import math
import types
import typing
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

CHANCE = -1
"""``current_player()`` at a chance node."""
TERMINAL = -4
"""``current_player()`` once the game is over (OpenSpiel's value)."""


class ChanceMode(enum.Enum):
    EXPLICIT = "explicit"
    SAMPLED = "sampled"


class Information(enum.Enum):
    PERFECT = "perfect"
    IMPERFECT = "imperfect"


@dataclass(frozen=True)
class GameInfo:
    """Static facts about a game, the analogue of OpenSpiel's ``GameType`` and ``GameInfo``."""

    name: str
    title: str
    num_players: int
    chance_mode: ChanceMode
    information: Information
    min_utility: float
    max_utility: float
    state_version: int
    max_game_length: int | None = None


class IllegalActionError(ValueError):
    """An action that is not legal in this state. The message says why; the state is unchanged."""


class StateFormatError(ValueError):
    """A saved game that cannot be loaded: corrupt, tampered with, or from another version."""


class Action:
    """Base of every game's action value objects.

    Subclasses are frozen dataclasses (hashable, comparable) with ``__str__`` printing the
    notation and ``parse`` reading it back: ``type(a).parse(str(a)) == a``.
    """

    __slots__ = ()

    @classmethod
    def parse(cls, text: str) -> Action:
        raise NotImplementedError


MAX_ACTION_TEXT = 100
"""The longest text a move's field may hold (a figure, a card name, a face): longer is not a move of any game."""


@functools.cache
def _field_hints(cls: type) -> tuple[tuple[str, Any], ...]:
    hints = typing.get_type_hints(cls)
    return tuple((f.name, hints[f.name]) for f in dataclasses.fields(cls))


def _fits(value: Any, hint: Any) -> bool:
    """Whether ``value`` is of the declared type of a move's field: exactly (``True`` is not an int, ``1.0`` is not
    a card index, nor is numpy's int64, which would not save as JSON), a float finite (an int is a float too, as
    in PEP 484), a text short."""
    if hint is Any:
        return True
    if hint is type(None) or hint is None:
        return value is None
    if hint is bool:
        return type(value) is bool
    if hint is int:
        return type(value) is int
    if hint is float:  # numpy's float64 is a float (and saves as one); True is not a number
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if hint is str:
        return type(value) is str and len(value) <= MAX_ACTION_TEXT
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, a) for a in args)
    if origin is tuple:
        if not isinstance(value, tuple):
            return False
        if len(args) == 2 and args[1] is Ellipsis:
            return len(value) <= MAX_ACTION_TEXT and all(_fits(v, args[0]) for v in value)
        return len(value) == len(args) and all(_fits(v, a) for v, a in zip(value, args, strict=True))
    return isinstance(value, origin or hint)


def malformed(action: Any) -> str | None:
    """Why ``action`` is not a well-formed move at all, or None: not an ``Action``, or a field not of its declared
    type (``Commit("x")``, ``ChooseFirst(1.5)``, a NaN speed). Every game's ``illegal_reason`` asks this first,
    so a wrongly typed move is refused with ``IllegalActionError`` before any rule compares, indexes or prints it;
    ranges (a card index, a side) are each game's to check next."""
    if not isinstance(action, Action):
        return f"a {type(action).__name__} is not a move"
    if not dataclasses.is_dataclass(action):
        return None
    for name, hint in _field_hints(type(action)):
        value = getattr(action, name)
        if not _fits(value, hint):
            shown = type(value).__name__ if not isinstance(value, (int, float)) else repr(value)[:20]
            return f"{type(action).__name__}'s {name} must be {_hint_text(hint)}, not {shown}"
    return None


def _hint_text(hint: Any) -> str:
    if hint is int:
        return "a whole number"
    if hint is float:
        return "a finite number"
    if hint is str:
        return f"a text of at most {MAX_ACTION_TEXT} characters"
    if hint is bool:
        return "true or false"
    if hint is type(None):
        return "empty"
    if typing.get_origin(hint) is tuple:
        item = typing.get_args(hint)[0]
        plural = {str: "texts", int: "whole numbers", float: "finite numbers", bool: "true/false values"}
        return f"a tuple of {plural.get(item, getattr(item, '__name__', 'values'))}"
    args = typing.get_args(hint)
    return " or ".join(_hint_text(a) for a in args) if args else getattr(hint, "__name__", str(hint))


class State(ABC):
    """One position of a game. Subclasses implement the abstract methods and ``_apply``.

    ``apply_action`` is a template: it asks ``illegal_reason`` first and only then calls
    ``_apply``, so an illegal action never touches the state. Games override ``illegal_reason``
    to give a reason in the game's own words.
    """

    __slots__ = ("game",)

    def __init__(self, game: Game) -> None:
        self.game = game

    # --- whose turn -------------------------------------------------------------------------
    @abstractmethod
    def current_player(self) -> int:
        """A player index, ``CHANCE`` or ``TERMINAL``."""

    def is_terminal(self) -> bool:
        return self.current_player() == TERMINAL

    def is_chance_node(self) -> bool:
        return self.current_player() == CHANCE

    # --- moves ------------------------------------------------------------------------------
    @abstractmethod
    def legal_actions(self) -> list[Action]:
        """The decision's legal actions; at a chance node, the outcomes; empty when terminal."""

    def chance_outcomes(self) -> list[tuple[Action, Fraction]]:
        """Each chance outcome with its exact probability; the probabilities sum to 1."""
        raise IllegalActionError(f"{self.describe_player()} is to move, not chance")

    def sample_chance(self, rng: Any) -> Action:
        """Draw one chance outcome with its probability.

        The default samples ``chance_outcomes()``; a game may override it with an equivalent
        sampler that skips building exact ``Fraction``s, which simulation does not need.
        """
        from engine.core.rng import sample_outcome

        return sample_outcome(self.chance_outcomes(), rng)

    def illegal_reason(self, action: Action) -> str | None:
        """Why ``action`` cannot be applied now, or None when it can."""
        reason = malformed(action)
        if reason is not None:
            return reason
        player = self.current_player()
        if player == TERMINAL:
            return "the game is over"
        if player == CHANCE:
            if action in {a for a, _ in self.chance_outcomes()}:
                return None
            return f"{action} is not a possible chance outcome here"
        if action in self.legal_actions():
            return None
        return f"{action} is not legal now"

    def apply_action(self, action: Action | str) -> None:
        """Apply an action (or its text); raise ``IllegalActionError`` and change nothing if illegal.

        A malformed move (:func:`malformed`) is refused even by a game whose ``illegal_reason`` would accept it
        (each game's asks first, so that none of its rules meets a wrongly typed field)."""
        if isinstance(action, str):
            action = self.parse_action(action)
        reason = self.illegal_reason(action) or malformed(action)
        if reason is not None:
            raise IllegalActionError(reason)
        self._apply(action)

    @abstractmethod
    def _apply(self, action: Action) -> None:
        """Apply an action already known to be legal."""

    def parse_action(self, text: str) -> Action:
        if not isinstance(text, str):
            raise IllegalActionError(f"a move is read from text, not from a {type(text).__name__}")
        try:
            return self.game.action_type.parse(text)
        except IllegalActionError:
            raise
        except (ValueError, KeyError, IndexError) as exc:
            shown = repr(text) if len(text) <= 40 else repr(text[:37]) + "..."
            reason = f"cannot read {shown} as a move: {exc}"
            raise IllegalActionError(reason if len(reason) <= 240 else reason[:237] + "...") from None

    def action_to_string(self, action: Action) -> str:
        return str(action)

    # --- outcome ----------------------------------------------------------------------------
    @abstractmethod
    def returns(self) -> list[float]:
        """Each player's return; all zero until the game is over."""

    # --- copies, views, persistence ------------------------------------------------------------
    @abstractmethod
    def clone(self) -> State:
        """An independent copy, made field by field (never ``deepcopy``)."""

    def player_view(self, player: int) -> dict[str, Any]:
        """What ``player`` may see, as plain JSON-able data. Perfect-information games show all."""
        return self.to_dict()

    @abstractmethod
    def to_dict(self) -> dict[str, Any]:
        """The whole state as plain JSON-able data (``Game.state_from_dict`` reads it back)."""

    def to_json(self) -> str:
        from engine.core.serialize import dump_state

        return dump_state(self)

    def describe_player(self, player: int | None = None) -> str:
        player = self.current_player() if player is None else player
        if player == CHANCE:
            return "chance"
        if player == TERMINAL:
            return "nobody (game over)"
        return self.game.player_name(player)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.describe_player()} to move>"


class Game(ABC):
    """A game with its rule options: a factory of states and the reader of saved ones."""

    info: ClassVar[GameInfo]
    action_type: ClassVar[type[Action]]

    @abstractmethod
    def new_initial_state(self, rng: Any = None) -> State:
        """The first state. ``rng`` is used only by games with sampled chance."""

    @abstractmethod
    def state_from_dict(self, data: dict[str, Any]) -> State:
        """Rebuild a state from ``State.to_dict`` output, validating everything."""

    def rule_options(self) -> dict[str, Any]:
        """The rule options this game was made with, as JSON-able data."""
        return {}

    @classmethod
    def from_rule_options(cls, options: dict[str, Any]) -> Game:
        return cls(**options)

    def player_name(self, player: int) -> str:
        return f"player {player + 1}"


def check_probabilities(outcomes: Sequence[tuple[Action, Fraction]]) -> None:
    """Raise ``AssertionError`` unless the outcomes are distinct with positive probabilities summing to 1."""
    total = sum((p for _, p in outcomes), Fraction(0))
    assert total == 1, f"chance probabilities sum to {total}, not 1"
    assert all(p > 0 for _, p in outcomes), "a chance outcome has probability <= 0"
    assert len({a for a, _ in outcomes}) == len(outcomes), "duplicate chance outcomes"
