"""Saved games as plain JSON: an envelope with the game's name, a version and a checksum.

The envelope is ``{"game", "version", "rules", "state", "checksum"}``. Loading checks each layer
and turns every failure into a ``StateFormatError`` with a message a person can act on; the
checksum (SHA-256 of the canonical rules and state) catches files edited by hand, and each game's
``state_from_dict`` still validates the contents, so a consistent forgery is refused too when it
breaks a rule of the game.

A *session* file (what a dashboard saves) wraps that envelope with what one player's session adds: the
seed, the generator that plays chance and the bots from here on, and the log shown beside the game.
:func:`dump_session` and :func:`load_session` write and read it for every game, so each session model
only checks its own extra fields.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.core.protocol import StateFormatError
from engine.core.rng import rng_from_state, rng_state

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


SESSION_FIELDS = ("format", "version", "seed", "game", "rng", "log", "checksum")


@dataclass(frozen=True)
class SavedSession:
    """A session file read back and checked; ``extra`` holds the session's own fields, for it to check."""

    state: State
    rng: np.random.Generator
    seed: int
    log: list[dict[str, Any]]
    extra: dict[str, Any]


def session_checksum(data: dict[str, Any]) -> str:
    """SHA-256 of a session file's canonical JSON without its checksum (tests use it to forge consistent files)."""
    return hashlib.sha256(_canonical({k: v for k, v in data.items() if k != "checksum"}).encode()).hexdigest()


def dump_session(kind: str, version: int, state: State, rng: np.random.Generator, seed: int,
                 log: list[dict[str, Any]], default: Callable[[Any], Any] | None = None, **extra: Any) -> str:
    """A session as JSON: ``kind`` names the file format (``tabletop-dojo/<game>-session``), ``version``
    its version; the game goes in as its own checksummed envelope, the generator as its full state, and a
    checksum over the whole file catches a log or an extra field edited by hand."""
    clash = set(extra) & set(SESSION_FIELDS)
    if clash:
        raise ValueError(f"extra session fields may not be named {', '.join(sorted(clash))}")
    body = json.loads(json.dumps({"format": kind, "version": version, "seed": seed,
                                  "game": json.loads(dump_state(state)), "rng": rng_state(rng), "log": log, **extra},
                                 default=default))
    body["checksum"] = session_checksum(body)
    return json.dumps(body, indent=1)


def load_session(text: str | bytes, kind: str, version: int, game_cls: type[Game], what: str) -> SavedSession:
    """Read a session file of ``kind`` (``what`` names it for people: "saved Man-Kzin Wars game"); raise
    ``StateFormatError`` saying what is wrong, from bad JSON to a tampered game inside.

    The checksum refuses a file edited by hand; what the session keeps beside the game (its log, its extra
    fields) must still be checked by the session, entry by entry (:func:`check_entries`), for a consistent
    forgery."""
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise StateFormatError(f"the file is not valid JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != kind:
        raise StateFormatError(f"not a {what}")
    if data.get("version") != version:
        raise StateFormatError(f"saved with format version {data.get('version')!r}; this program reads version "
                               f"{version}")
    missing = [k for k in SESSION_FIELDS if k not in data]
    if missing:
        raise StateFormatError(f"the file lacks {', '.join(missing)}")
    if data["checksum"] != session_checksum(data):
        raise StateFormatError("the file was changed after it was saved (checksum mismatch)")
    state = load_state(json.dumps(data["game"]), game_cls)
    try:
        rng = rng_from_state(data["rng"])
    except (KeyError, TypeError, ValueError) as exc:
        raise StateFormatError(f"the random generator's state is damaged ({exc})") from None
    log = data["log"]
    if not isinstance(log, list) or not all(isinstance(e, dict) for e in log):
        raise StateFormatError("the log is damaged")
    seed = data["seed"]
    if type(seed) is not int or seed < 0:
        raise StateFormatError("the seed is damaged")
    extra = {k: v for k, v in data.items() if k not in SESSION_FIELDS}
    return SavedSession(state, rng, seed, log, extra)


# Field checks for check_entries: each takes a JSON value and says whether it is acceptable.
def is_count(v: Any) -> bool:
    return type(v) is int and v >= 0


def is_text(v: Any) -> bool:
    return isinstance(v, str)


def is_number(v: Any) -> bool:
    return type(v) in (int, float) and math.isfinite(v)


def is_probability(v: Any) -> bool:
    return is_number(v) and 0 <= v <= 1


def optional(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda v: v is None or check(v)


def check_entries(entries: Any, what: str, fields: Mapping[str, Callable[[Any], bool]],
                  optional_fields: Mapping[str, Callable[[Any], bool]] | None = None) -> list[dict[str, Any]]:
    """Check a saved list of records (a log, running odds): each a JSON object with every one of ``fields``
    passing its check, and each of ``optional_fields`` it has passing its own; ``StateFormatError`` names
    the first entry that fails, so a forged file is refused before a view trips over it."""
    if not isinstance(entries, list):
        raise StateFormatError(f"the {what} is damaged: not a list")
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise StateFormatError(f"the {what} is damaged: entry {i + 1} is not an object")
        for name, check in fields.items():
            if name not in entry or not check(entry[name]):
                raise StateFormatError(f"the {what} is damaged: entry {i + 1} has a bad or missing {name!r}")
        for name, check in (optional_fields or {}).items():
            if name in entry and not check(entry[name]):
                raise StateFormatError(f"the {what} is damaged: entry {i + 1} has a bad {name!r}")
    return entries
