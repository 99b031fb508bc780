"""Saves that keep secrets: the hidden part of a session file sealed with a key kept by the server.

A session file holds what no seat may read: for Man-Kzin Wars, the generator that deals every future card and
rolls every die, and the seed it was made from (the seed and the log replay it). A file saved from a seat at a
table must still restore the whole game on the server, so those values cannot simply be left out. They are
sealed instead: each hidden value in the file is replaced by :data:`SEALED`, and the values go, with the file's
own checksum and a digest of what is left, into one Fernet token (AES-128-CBC with an HMAC-SHA256, from
``cryptography``) made with the server's key. The file stays readable JSON that shows what the seat could see
anyway; only a server holding the key opens the token, and an edit of either part is refused with its reason.

The key lives in the server's data folder (``seal.key``, readable by its owner only): a file sealed on one
server does not open on another, and deleting the key makes every sealed file unreadable (plain files, the
engine's own ``save()``, are untouched). The engine's plain save and load stay as they are for notebooks and
the command line; :func:`sealed_class` gives a session class whose ``save`` seals and whose ``load`` opens.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cryptography.fernet import Fernet, InvalidToken

from engine.core.protocol import StateFormatError
from engine.core.serialize import decode, session_checksum
from engine.core.session import GameSession

SEALED = "sealed"
"""What stands in a sealed file where a hidden value was."""
TOKEN_FIELD = "sealed_part"
"""The top-level field of a sealed file that holds the token."""
KEY_FILE = "seal.key"
CHUNK = 800
"""The token is kept as a list of texts this long: a save file's texts are at most 1,000 characters."""
MAX_TOKEN = 6 * 1024 * 1024
"""A token longer than this is refused before it is opened (a saved game is at most 8 MB, its secrets small)."""

JsonPath = tuple[str | int, ...]
Hidden = Callable[[dict[str, Any]], list[JsonPath]]
"""A game's rule for what is hidden in its session file: the paths of the values no seat may read."""


def _canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


def _digest(public: dict[str, Any]) -> str:
    return hashlib.sha256(_canonical({k: v for k, v in public.items() if k != TOKEN_FIELD})).hexdigest()


def _get(body: Any, path: JsonPath) -> Any:
    for step in path:
        body = body[step]
    return body


def _set(body: Any, path: JsonPath, value: Any) -> None:
    for step in path[:-1]:
        body = body[step]
    body[path[-1]] = value


def load_key(folder: Path) -> bytes:
    """The server's sealing key in ``folder``, made (owner-readable only) the first time it is asked for.

    Made with ``O_EXCL``, so two servers starting at once on one folder agree on one key."""
    path = folder / KEY_FILE
    try:
        return path.read_bytes().strip()
    except FileNotFoundError:
        pass
    folder.mkdir(parents=True, exist_ok=True)
    key = Fernet.generate_key()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_bytes().strip()
    with os.fdopen(fd, "wb") as f:
        f.write(key)
    return key


class Sealer:
    """Seals and opens the hidden part of session files with one key."""

    def __init__(self, key: bytes) -> None:
        self.fernet = Fernet(key)

    @classmethod
    def in_folder(cls, folder: Path) -> Sealer:
        return cls(load_key(folder))

    def seal(self, text: str, hidden: Hidden) -> str:
        """``text`` (a session file) with every hidden value replaced by :data:`SEALED` and sealed in a token."""
        body = json.loads(text)
        values = {}
        for path in hidden(body):
            values[json.dumps(path)] = _get(body, path)
            _set(body, path, SEALED)
        checksum = body.get("checksum")
        body["checksum"] = session_checksum(body)  # of what is shown: the original one is inside the token
        secret = {"values": values, "checksum": checksum, "public": _digest(body)}
        token = self.fernet.encrypt(_canonical(secret)).decode("ascii")
        body[TOKEN_FIELD] = [token[i:i + CHUNK] for i in range(0, len(token), CHUNK)]  # a file's texts are short
        return json.dumps(body, indent=1)

    def open(self, text: str | bytes) -> str:
        """The whole session file of a sealed one (a file with no seal is returned as it is: it hides nothing).

        Raises ``StateFormatError`` for a token this server did not make, an edited token, or a file edited
        after it was sealed; the reason says which."""
        data = decode(text)
        if not isinstance(data, dict) or TOKEN_FIELD not in data:
            return text.decode("utf-8") if isinstance(text, bytes) else text
        chunks = data.pop(TOKEN_FIELD)
        if not isinstance(chunks, list) or not all(isinstance(c, str) for c in chunks) \
                or sum(map(len, chunks)) > MAX_TOKEN:
            raise StateFormatError("the file's sealed part is damaged")
        token = "".join(chunks)
        try:
            secret = json.loads(self.fernet.decrypt(token.encode("ascii")))
        except (InvalidToken, UnicodeEncodeError, ValueError):
            raise StateFormatError("the file's sealed part does not open with this server's key: it was sealed by "
                                   "another Tabletop Dojo server, or changed") from None
        if secret.get("public") != _digest(data):
            raise StateFormatError("the file was changed after it was saved (it no longer matches its seal)")
        for raw, value in secret["values"].items():
            path = tuple(json.loads(raw))
            try:
                if _get(data, path) != SEALED:
                    raise StateFormatError("the file was changed after it was saved (a sealed value was replaced)")
                _set(data, path, value)
            except (KeyError, IndexError, TypeError):
                raise StateFormatError("the file was changed after it was saved (a sealed value is missing)") \
                    from None
        data["checksum"] = secret["checksum"]
        return json.dumps(data, indent=1)


class SealedSession:
    """Mixed into a game's session class by :func:`sealed_class`: ``save`` seals, ``load`` opens first."""

    sealer: Sealer
    HIDDEN: Hidden

    def save(self) -> str:
        return self.sealer.seal(super().save(), type(self).HIDDEN)  # type: ignore[misc]

    def load(self, text: str | bytes) -> None:
        super().load(self.sealer.open(text))  # type: ignore[misc]


_classes: dict[tuple[type, Hidden], type] = {}


def sealed_class(cls: type[GameSession], hidden: Hidden) -> type[GameSession]:
    """``cls`` whose files seal what ``hidden`` names (one class per game, made once); an instance needs its
    ``sealer`` set before it saves or loads."""
    made = _classes.get((cls, hidden))
    if made is None:
        made = type(f"Sealed{cls.__name__}", (SealedSession, cls), {"HIDDEN": staticmethod(hidden)})
        _classes[(cls, hidden)] = made
    return made


__all__ = ["SEALED", "TOKEN_FIELD", "Hidden", "SealedSession", "Sealer", "load_key", "sealed_class"]
