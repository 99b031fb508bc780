"""Saved games as plain JSON: an envelope with the game's name, a version and a checksum.

The envelope is ``{"game", "version", "rules", "state", "checksum"}``. Loading checks each layer
and turns every failure into a ``StateFormatError`` with a message a person can act on; the
checksum (SHA-256 of the canonical rules and state) catches files edited by hand, and each game's
``state_from_dict`` still validates the contents, so a consistent forgery is refused too when it
breaks a rule of the game.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from engine.core.protocol import StateFormatError

if TYPE_CHECKING:
    from engine.core.protocol import Game, State


def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


def checksum(rules: Any, state: Any) -> str:
    return hashlib.sha256(_canonical({"rules": rules, "state": state}).encode()).hexdigest()


def dump_state(state: State) -> str:
    game = state.game
    rules = game.rule_options()
    body = state.to_dict()
    envelope = {
        "game": game.info.name,
        "version": game.info.state_version,
        "rules": rules,
        "state": body,
        "checksum": checksum(rules, body),
    }
    return json.dumps(envelope, indent=1, sort_keys=True)


def load_state(text: str | bytes, game_cls: type[Game]) -> State:
    """Read a saved game of ``game_cls``; raise ``StateFormatError`` saying what is wrong."""
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise StateFormatError(f"not a saved game: the file is not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise StateFormatError("not a saved game: expected a JSON object")
    missing = {"game", "version", "rules", "state", "checksum"} - data.keys()
    if missing:
        raise StateFormatError(f"not a saved game: missing {', '.join(sorted(missing))}")
    info = game_cls.info
    if data["game"] != info.name:
        raise StateFormatError(f"this is a saved {data['game']!r} game, not {info.name!r}")
    if data["version"] != info.state_version:
        raise StateFormatError(
            f"saved with format version {data['version']!r}; this program reads version {info.state_version}"
        )
    if data["checksum"] != checksum(data["rules"], data["state"]):
        raise StateFormatError("the file was changed after it was saved (checksum mismatch)")
    if not isinstance(data["rules"], dict) or not isinstance(data["state"], dict):
        raise StateFormatError("not a saved game: rules and state must be JSON objects")
    try:
        game = game_cls.from_rule_options(data["rules"])
        return game.state_from_dict(data["state"])
    except StateFormatError:
        raise
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        raise StateFormatError(f"the saved game is inconsistent: {type(exc).__name__}: {exc}") from None
