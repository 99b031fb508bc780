"""The session base every game's session model subclasses: one game for the people (and bots) playing it.

A session holds what a view shows and a player changes: the game in progress (``state``), the seeded
generator that plays chance and the bots, the seats (a person or a bot each), the log, a typed ``notice``
(text and level, so a view never searches a message for words) and a ``version`` bumped after every change
that views depend on. It imports no UI: a dashboard, a notebook and a test drive it the same way.

Two kinds of command, one contract each:

* ``play(action)`` takes a typed :class:`~engine.core.protocol.Action`. An illegal or wrongly typed action
  raises :class:`~engine.core.protocol.IllegalActionError` with its reason and changes nothing.
* ``load(text)`` raises :class:`~engine.core.protocol.StateFormatError` with its reason and changes nothing;
  ``save()`` writes the one session file format (:func:`engine.core.serialize.dump_session`).

A view calls them through :meth:`GameSession.attempt`, which turns a refusal into a warning notice and
returns whether the command was carried out; the named commands a game adds for its views (``defend``,
``fall_back``) are such attempts.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import param

from engine.core.protocol import Action, Game, IllegalActionError, State, StateFormatError
from engine.core.rng import make_rng
from engine.core.serialize import SavedSession, dump_session, load_session


class Level(enum.Enum):
    """How a notice is shown: the names are the alert kinds of every UI toolkit."""

    INFO = "info"
    SUCCESS = "success"
    WARNING = "warning"
    DANGER = "danger"


@dataclass(frozen=True)
class Notice:
    """What just happened, or why a command was refused: plain text (never markup) and its level."""

    text: str
    level: Level = Level.INFO


PERSON, BOT = "person", "bot"


@dataclass(frozen=True)
class Seat:
    """One side of the game, in the game's own words ("Humans", "Terminators"), and who plays it."""

    name: str
    kind: str = PERSON

    def __post_init__(self) -> None:
        if self.kind not in (PERSON, BOT):
            raise ValueError(f"a seat is played by a {PERSON} or a {BOT}, not {self.kind!r}")


class GameSession(param.Parameterized):
    """One game in progress with its seats, log, notice and version; subclassed by each game's session."""

    seed = param.Integer(default=1, bounds=(0, None), doc="Seed of the next new game.")
    # Set by every subclass's __init__ (a new game) before anyone reads it; param types a ClassSelector without a
    # default as optional, and State is abstract, which its checker flags for class_.
    state: param.ClassSelector[State] = param.ClassSelector(  # type: ignore[assignment]
        class_=State, doc="The game in progress.")  # type: ignore[type-abstract]
    seats = param.List(default=[], item_type=Seat, doc="Who plays each side, in the game's player order.")
    notice = param.ClassSelector(class_=Notice, default=Notice(""), doc="What just happened, or why not.")
    log = param.List(default=[], doc="One dict per event of the game, oldest first.")
    version = param.Integer(default=0, doc="Bumped after every change of the game, for views to depend on.")

    #: The session file's format name (``tabletop-dojo/<game>-session``), its version, the game it holds and
    #: what a person calls the file ("saved Man-Kzin Wars game").
    FORMAT: ClassVar[str]
    FORMAT_VERSION: ClassVar[int]
    GAME: ClassVar[type[Game]]
    WHAT: ClassVar[str]
    #: What a player calls one game of it, for the notices ("game"; a Kung-Fu Zoo "battle").
    GAME_WORD: ClassVar[str] = "game"

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)  # type: ignore[no-untyped-call]  # param's own __init__ is not annotated
        self.rng: np.random.Generator = make_rng(self.seed)
        self.game_number = 0  # changes with every new or loaded game: background results for an older one are dropped

    # --- commands -------------------------------------------------------------------------------
    def play(self, action: Action) -> None:
        """Play ``action`` for the side to move, then chance and bots up to the next decision of a person.

        Raises ``IllegalActionError`` with the reason, and changes nothing, for an action that is illegal here
        or is not one of this game's actions at all."""
        if not isinstance(action, Action):
            raise IllegalActionError(f"{_short(action)} is not an action of this game")
        self._play(action)

    def attempt(self, command: Callable[..., Any], *args: Any) -> bool:
        """Run a command for a view: a refusal becomes a warning notice (the game unchanged) and False."""
        try:
            command(*args)
        except (IllegalActionError, StateFormatError) as exc:
            self.refuse(str(exc))
            return False
        return True

    def refuse(self, reason: str) -> None:
        """Say why a command was not carried out (the game is as it was, so the version stays)."""
        self.notice = Notice(reason, Level.WARNING)

    def bot_to_move(self) -> bool:
        """Whether the side to move is played by a bot (chance is never a seat: the session plays it)."""
        player = self.state.current_player()
        return 0 <= player < len(self.seats) and self.seats[player].kind == BOT

    def step(self) -> None:
        """Play one move of the bot whose turn it is; IllegalActionError when no bot is to move."""
        if not self.bot_to_move():
            raise IllegalActionError("no bot is to move")
        self._bot_move()

    # --- saving -----------------------------------------------------------------------------------
    def save(self) -> str:
        """The whole session as JSON: the checksummed game, the generator, the seed, the log, the game's extras."""
        return dump_session(self.FORMAT, self.FORMAT_VERSION, self.state, self.rng, self.seed, self.log,
                            default=self._json_default, **self._save_extra())

    def try_load(self, text: str | bytes) -> bool:
        """Load a file for a view: a refused one says why in a danger notice, and the game goes on."""
        try:
            self.load(text)
        except StateFormatError as exc:
            self.notice = Notice(f"Could not load: {exc}. Your {self.GAME_WORD} goes on.", Level.DANGER)
            return False
        return True

    def load(self, text: str | bytes) -> None:
        """Replace the game with a saved one. Everything is checked before anything changes: a bad file raises
        ``StateFormatError`` saying why, and the game in progress goes on untouched."""
        saved = load_session(text, self.FORMAT, self.FORMAT_VERSION, self.GAME, self.WHAT)
        try:
            extra = self._check_saved(saved)
        except StateFormatError:
            raise
        except (KeyError, TypeError, ValueError, IndexError, OverflowError, RecursionError) as exc:
            raise StateFormatError(f"the saved game is inconsistent ({type(exc).__name__})") from None
        with param.parameterized.batch_call_watchers(self):
            self.game_number += 1
            self.seed = saved.seed
            self.rng = saved.rng
            self._restore(saved, extra)
            self.log = saved.log
            self.state = saved.state
            self.notice = Notice(f"Game loaded. {self.prompt()}".strip())
            self._changed()

    # --- what subclasses provide ----------------------------------------------------------------------
    def _play(self, action: Action) -> None:
        raise NotImplementedError

    def _bot_move(self) -> None:
        raise NotImplementedError

    def prompt(self) -> str:
        """What the side to move is asked to do now, in a sentence."""
        return ""

    def _save_extra(self) -> dict[str, Any]:
        """The game's own fields of the session file, beside the game, the generator and the log."""
        return {}

    def _check_saved(self, saved: SavedSession) -> dict[str, Any]:
        """Check what the file adds beside the game (its log, its extras) and return the extras to restore;
        raise ``StateFormatError`` for a forged or damaged one."""
        return {}

    def _restore(self, saved: SavedSession, extra: dict[str, Any]) -> None:
        """Take over the game's own fields from a checked file (inside the batch that publishes it)."""

    @staticmethod
    def _json_default(obj: Any) -> Any:
        raise TypeError(f"cannot save {type(obj).__name__}")

    def _changed(self) -> None:
        self.version += 1


def _short(value: Any, limit: int = 40) -> str:
    """A bounded repr for a refusal: never the whole of what a caller passed."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


__all__ = ["BOT", "PERSON", "GameSession", "Level", "Notice", "Seat"]
