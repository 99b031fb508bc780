"""Saved games as plain JSON: an envelope with the game's name, a version and a checksum.

The envelope is ``{"game", "version", "rules", "state", "checksum"}``. Loading checks each layer
and turns every failure into a ``StateFormatError`` with a short message a person can act on:

* :func:`decode` reads the JSON strictly (msgspec), within :data:`MAX_SAVE_BYTES`, :data:`MAX_DEPTH`,
  :data:`MAX_TEXT` and :data:`MAX_INT`, so no later step meets a RecursionError or an OverflowError;
* the checksum (SHA-256 of the canonical rules and state) catches accidents and hand edits, not people: a
  forger recomputes it;
* so each game's ``state_from_dict`` checks the meaning, with a schema (:func:`check_schema`) for every
  field's type and range and its own rules for the rest: a position the rules cannot reach is refused.

A refusal never repeats the file: values are quoted short (:func:`quote`) and every reason is bounded.

A *session* file (what a dashboard saves) wraps that envelope with what one player's session adds: the
seed, the generator that plays chance and the bots from here on, and the log shown beside the game.
:func:`dump_session` and :func:`load_session` write and read it for every game, so each session model
only checks its own extra fields.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np

from engine.core.protocol import StateFormatError
from engine.core.rng import rng_from_state, rng_state

if TYPE_CHECKING:
    from engine.core.protocol import Game, State


MAX_SAVE_BYTES = 8 * 1024 * 1024
"""The largest save file any game reads (8 MB). Pages state it. A Man-Kzin Wars session, the largest, grows by
about 3 kB a turn (its log keeps a snapshot per turn): 134 turns saved 411 kB, so this holds some 2,500 turns;
as base64 in an upload it stays under the 15 MB a page's connection carries."""
MAX_DEPTH = 32
"""The deepest nesting of lists and objects a save file may have (the games write 8 at most)."""
MAX_TEXT = 1000
"""The longest text (a string or an object key) a save file may hold (a log line is under 200 characters)."""
MAX_INT = 2**128
"""Whole numbers in a save file lie between -MAX_INT and MAX_INT (a generator's state is 128-bit)."""
MAX_QUOTE = 40
"""How much of a file's own value a refusal quotes: enough to recognise it, never the upload."""
MAX_REASON = 240
"""The longest reason a refusal gives."""


_PLAIN = re.compile(r"[\w .,:/+-]*")


def quote(value: Any) -> str:
    """A file's value as a short plain-text repr for a message: a long one is cut, a container named by its type,
    and a text with anything but letters, digits, spaces and ``.,:/+-`` (markup, quotes, control characters) not
    shown at all, only described."""
    if isinstance(value, (dict, list)):
        return f"a JSON {'object' if isinstance(value, dict) else 'list'}"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**12:
        return "a very large number"
    if isinstance(value, str) and not _PLAIN.fullmatch(value):
        return f"a text of {len(value)} characters with symbols no name has"
    text = repr(value)
    return text if len(text) <= MAX_QUOTE else text[: MAX_QUOTE - 3] + "..."


def bounded(reason: str) -> str:
    """A reason cut to ``MAX_REASON`` characters, so no message repeats a large part of a file."""
    return reason if len(reason) <= MAX_REASON else reason[: MAX_REASON - 3] + "..."


def decode(text: str | bytes) -> Any:
    """Parse a save file's JSON strictly, or raise ``StateFormatError`` with a short reason.

    msgspec's decoder is strict JSON (no ``NaN`` or ``Infinity``, no number that overflows a float, no whole
    number of thousands of digits) and never quotes the input in its errors; the size is checked before
    reading, and the nesting, long texts and huge whole numbers after, so that no later step (the checksum,
    a game's checks, a view) meets a value that makes it raise something other than a refusal."""
    if isinstance(text, str):
        try:
            raw = text.encode("utf-8")
        except UnicodeEncodeError:
            raise StateFormatError("the file is not UTF-8 text (it holds an unpaired surrogate)") from None
    elif isinstance(text, (bytes, bytearray, memoryview)):
        raw = bytes(text)
    else:
        raise StateFormatError(f"not a saved game: expected text, not {type(text).__name__}")
    if len(raw) > MAX_SAVE_BYTES:
        raise StateFormatError(f"the file is too large ({len(raw) / 1024 / 1024:.1f} MB; a saved game is at most "
                               f"{MAX_SAVE_BYTES // 1024 // 1024} MB)")
    if raw.startswith(b"\xef\xbb\xbf"):  # a UTF-8 byte-order mark some editors add
        raw = raw[3:]
    try:
        data = msgspec.json.decode(raw)
    except UnicodeDecodeError as exc:
        raise StateFormatError(f"the file is not UTF-8 text (byte {exc.start}: {exc.reason})") from None
    except RecursionError:
        raise StateFormatError(f"the file is nested too deeply (a saved game nests at most {MAX_DEPTH} levels)") \
            from None
    except msgspec.ValidationError as exc:  # a number too large for a float or a 64-bit-plus whole number
        raise StateFormatError(f"the file holds a number out of range ({bounded(str(exc))})") from None
    except msgspec.DecodeError as exc:
        if not raw.isascii():
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as uexc:
                raise StateFormatError(f"the file is not UTF-8 text (byte {uexc.start}: {uexc.reason})") from None
        raise StateFormatError(f"the file is not valid JSON ({bounded(str(exc))})") from None
    _check_values(data)
    return data


def _check_values(data: Any) -> None:
    """Refuse nesting deeper than ``MAX_DEPTH``, a text longer than ``MAX_TEXT`` and a whole number beyond
    ``MAX_INT``, walking the decoded file without recursion; the refusal says where (``rng.state.inc``).

    The walk runs without keeping paths (a large file is checked in a fraction of the time); only a file that
    fails is walked again, with them, to say where."""
    if _first_bad(data, paths=False) is not None:
        reason, path = _first_bad(data, paths=True) or ("", ())
        raise StateFormatError(reason + _where(path))


def _first_bad(data: Any, paths: bool) -> tuple[str, tuple[Any, ...]] | None:
    stack: list[tuple[Any, int, tuple[Any, ...]]] = [(data, 1, ())]
    deep = f"the file is nested too deeply (a saved game nests at most {MAX_DEPTH} levels)"
    while stack:
        value, depth, path = stack.pop()
        if isinstance(value, dict):
            if depth > MAX_DEPTH:
                return deep, ()
            for key, item in value.items():
                if len(key) > MAX_TEXT:
                    return f"the file holds a name of {len(key)} characters (at most {MAX_TEXT})", path
                stack.append((item, depth + 1, (*path, key) if paths else path))
        elif isinstance(value, list):
            if depth > MAX_DEPTH:
                return deep, ()
            if paths:
                stack.extend((item, depth + 1, (*path, i)) for i, item in enumerate(value))
            else:
                stack.extend((item, depth + 1, path) for item in value)
        elif isinstance(value, str):
            if len(value) > MAX_TEXT:
                return f"the file holds a text of {len(value)} characters (at most {MAX_TEXT})", path
        elif isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_INT:
            return "the file holds a whole number out of range", path
    return None


def _where(path: tuple[Any, ...]) -> str:
    """`` (at game.state.kem)``: where in the file, its last steps only, a name that is not plain shown as ``?``."""
    if not path:
        return ""
    steps = [f"[{p}]" if isinstance(p, int) else "." + (p if _PLAIN.fullmatch(p) and len(p) <= 30 else "?")
             for p in path[-5:]]
    return " (at " + ("..." if len(path) > 5 else "") + "".join(steps).lstrip(".") + ")"


def check_schema(data: Any, shape: Any, what: str) -> Any:
    """``data`` read strictly as ``shape`` (a msgspec type: ``true`` is not 1, ``"3"`` is not 3, an unknown field
    is refused), or ``StateFormatError`` saying what and where, e.g. "the saved position is damaged: Expected
    `int` <= 20 - at `$.figures[3].mp`". The value itself is never repeated: a file's text stays out of messages."""
    try:
        return msgspec.convert(data, shape, strict=True)
    except msgspec.ValidationError as exc:
        message = str(exc)
        problem, _, where = message.partition(" - at ")
        if problem.startswith(("Invalid enum value", "Invalid value")):
            problem = "a value that is not one of those allowed"
        elif problem.startswith("Object contains unknown field"):
            problem = "an unknown field"
        reason = f"{what}: {problem}" + (f" at {where}" if where else "")
        raise StateFormatError(bounded(reason)) from None


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
    return state_from_envelope(decode(text), game_cls)


# What a game's checks may raise on a value they did not foresee; each becomes a refusal with its reason.
_GAME_ERRORS = (KeyError, TypeError, ValueError, IndexError, AttributeError, ArithmeticError, AssertionError,
                RecursionError)


def state_from_envelope(data: Any, game_cls: type[Game]) -> State:
    """A decoded saved game (``{"game", "version", "rules", "state", "checksum"}``) checked layer by layer."""
    if not isinstance(data, dict):
        raise StateFormatError("not a saved game: expected a JSON object")
    missing = {"game", "version", "rules", "state", "checksum"} - data.keys()
    if missing:
        raise StateFormatError(f"not a saved game: missing {', '.join(sorted(missing))}")
    info = game_cls.info
    if data["game"] != info.name:
        raise StateFormatError(f"this is a saved {quote(data['game'])} game, not {info.name!r}")
    if data["version"] != info.state_version or type(data["version"]) is not int:
        raise StateFormatError(
            f"saved with format version {quote(data['version'])}; this program reads version {info.state_version}"
        )
    if data["checksum"] != checksum(data["rules"], data["state"]):
        raise StateFormatError("the file was changed after it was saved (checksum mismatch)")
    if not isinstance(data["rules"], dict) or not isinstance(data["state"], dict):
        raise StateFormatError("not a saved game: rules and state must be JSON objects")
    try:
        game = game_cls.from_rule_options(data["rules"])
        return game.state_from_dict(data["state"])
    except StateFormatError as exc:
        raise StateFormatError(bounded(str(exc))) from None
    except ValueError as exc:  # a game's own reason, in its words
        raise StateFormatError(bounded(f"the saved game is inconsistent: {exc}")) from None
    except KeyError as exc:
        raise StateFormatError(f"the saved game is inconsistent: it lacks {quote(exc.args[0] if exc.args else '')}") \
            from None
    except _GAME_ERRORS as exc:  # Python's own words may hold a file's text: name the error, not its message
        raise StateFormatError(f"the saved game is inconsistent ({type(exc).__name__})") from None


def checked_rng(data: Any) -> np.random.Generator:
    """The generator a file saved (PCG64), its numbers checked against their bits first: numpy would raise an
    OverflowError, or quietly reduce them, on a forged state."""
    shape = isinstance(data, dict) and set(data) == {"bit_generator", "state", "has_uint32", "uinteger"}
    inner = data.get("state") if shape else None
    if not shape or data["bit_generator"] != "PCG64" or not isinstance(inner, dict) or set(inner) != {"state", "inc"}:
        raise StateFormatError("the random generator's state is damaged (not a PCG64 state)")
    for name, value, bits in (("state", inner["state"], 128), ("inc", inner["inc"], 128),
                              ("uinteger", data["uinteger"], 32), ("has_uint32", data["has_uint32"], 1)):
        if type(value) is not int or not 0 <= value < 2**bits:
            raise StateFormatError(f"the random generator's state is damaged ({name} is not a {bits}-bit number)")
    try:
        return rng_from_state(data)
    except (KeyError, TypeError, ValueError, OverflowError) as exc:
        raise StateFormatError(bounded(f"the random generator's state is damaged ({exc})")) from None


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
    data = decode(text)
    if not isinstance(data, dict) or data.get("format") != kind:
        raise StateFormatError(f"not a {what}")
    if data.get("version") != version or type(data.get("version")) is not int:
        raise StateFormatError(f"saved with format version {quote(data.get('version'))}; this program reads "
                               f"version {version}")
    missing = [k for k in SESSION_FIELDS if k not in data]
    if missing:
        raise StateFormatError(f"the file lacks {', '.join(missing)}")
    if data["checksum"] != session_checksum(data):
        raise StateFormatError("the file was changed after it was saved (checksum mismatch)")
    state = state_from_envelope(data["game"], game_cls)
    rng = checked_rng(data["rng"])
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
    """A finite number a float can hold (a whole number beyond a float's range is refused, not an OverflowError)."""
    if type(v) is int:
        return abs(v) <= 2**1023
    return type(v) is float and math.isfinite(v)


def is_line(v: Any) -> bool:
    """A short line of plain text, as a game's log writes: at most 200 characters, no markup brackets, no
    control characters (a forged log's ``<img onerror>`` is refused, whatever a view would do with it)."""
    return isinstance(v, str) and len(v) <= 200 and not any(c in "<>" or (ord(c) < 32) for c in v)


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
