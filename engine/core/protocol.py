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

import enum
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
        """Apply an action (or its text); raise ``IllegalActionError`` and change nothing if illegal."""
        if isinstance(action, str):
            action = self.parse_action(action)
        reason = self.illegal_reason(action)
        if reason is not None:
            raise IllegalActionError(reason)
        self._apply(action)

    @abstractmethod
    def _apply(self, action: Action) -> None:
        """Apply an action already known to be legal."""

    def parse_action(self, text: str) -> Action:
        try:
            return self.game.action_type.parse(text)
        except IllegalActionError:
            raise
        except (ValueError, KeyError, IndexError) as exc:
            raise IllegalActionError(f"cannot read {text!r} as a move: {exc}") from None

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
