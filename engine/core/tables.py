"""Tables: one game on the server with its seats and watchers, shared by the browsers at it (no UI import).

A :class:`Table` holds one :class:`~engine.core.session.GameSession` and its seats, each held by a browser's
token, by a bot, or free. A browser's token is a random secret (:func:`new_token`) that the browser keeps; the
table keeps only its SHA-256 (:func:`token_key`), so neither a page nor a table file ever holds a token that
could act. A seat belongs to the browser that took it: the same token gets it back after a reload, another
cannot act for it, and its holder may leave it or hand it to a bot. One token may hold every seat (hot-seat).
A browser at the table without a seat is a watcher: it sees the game and acts on nothing. A refusal changes
nothing and says why (:meth:`Table.refusal`).

The :class:`TableRegistry` is the server's one set of tables, shared on purpose and kept within limits: at most
``max_tables`` in memory, each written to its own file after every change (so a finished or idle table is on
disk), a table no page has shown for ``idle_seconds`` dropped from memory by :meth:`TableRegistry.sweep` and
reopened from its file when it is asked for again. Tables ids and tokens from a URL or a cookie are checked
against their patterns before they name a file.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import param

from engine.core.protocol import StateFormatError
from engine.core.seal import Hidden, Sealer, sealed_class
from engine.core.serialize import decode
from engine.core.session import BOT, PERSON, GameSession, Seat

TABLE_FORMAT = "tabletop-dojo/table"
TABLE_VERSION = 1
ID_PATTERN = re.compile(r"[A-Za-z0-9_-]{6,32}")
TOKEN_PATTERN = re.compile(r"[A-Za-z0-9_-]{32,64}")
KEY_PATTERN = re.compile(r"[0-9a-f]{64}")
MIN_TABLES = 50
"""A server holds at least this many tables in memory at once."""



def possessive(seat: str) -> str:
    """A seat's name as an owner: "the Humans' seat", "the Clone Master's seat", "P2's move"."""
    return f"{seat}'" if seat.endswith("s") else f"{seat}'s"

class TableError(Exception):
    """A table that cannot be opened or made now (unknown, damaged, or the server is full); the text says why."""


def new_token() -> str:
    """A browser's secret: 32 random bytes, URL-safe."""
    return secrets.token_urlsafe(32)


def token_key(token: str | None) -> str | None:
    """What a table keeps of a token (its SHA-256), or None for a missing or malformed one."""
    if not token or not TOKEN_PATTERN.fullmatch(token):
        return None
    return hashlib.sha256(token.encode("ascii")).hexdigest()


def valid_id(table_id: Any) -> bool:
    return isinstance(table_id, str) and ID_PATTERN.fullmatch(table_id) is not None


@dataclass(frozen=True)
class TableGame:
    """What tables need to know of one game: its session class, what its files hide, how its games are dealt,
    its one-line summary, and (optionally) how a bot's move is worked out off the event loop and then played.

    ``bot_think(session)`` returns a function of no arguments (run on a worker thread) whose result
    ``bot_play(session, result, version)`` plays on the loop; without them a bot seat plays ``session.step()``.
    """

    slug: str
    title: str
    session_class: type[GameSession]
    hidden: Hidden
    summary: Callable[[GameSession], str]
    secret_seed: Callable[[], int] | None = None
    bot_think: Callable[[GameSession], Callable[[], Any]] | None = None
    bot_play: Callable[[GameSession, Any, int], bool] | None = None
    session_options: Mapping[str, Any] = field(default_factory=dict)
    """Parameters of every session made for a table (a test's lighter advisor, say)."""

    def new_session(self, sealer: Sealer) -> GameSession:
        """A session whose files seal what this game hides, dealt from a fresh secret seed."""
        cls = table_class(self.session_class, self.hidden)
        session = cls(**self.session_options, **({"seed": self.secret_seed()} if self.secret_seed else {}))
        session.sealer = sealer  # type: ignore[attr-defined]
        return session


class AtTableSession:
    """Mixed into a table's session class by :func:`table_class`: a file loaded at a table keeps the table's seats.

    Who plays each seat (a person or a bot) is the table's, not the file's: a file that says a bot plays a seat a
    person holds (or the other way round) is loaded with the table's kinds before anything of it plays (a bot
    of the file never moves for a person's seat), and the notice says so. A file with another number of seats
    (a Kung-Fu Zoo battle of another number of teams) is refused with the reason: its seats would not be the
    table's. A session not yet at a table (being reopened from its file) loads as the game's own does."""

    table_kinds: Callable[[], list[str]] | None = None
    """The table's seat kinds in seat order (set by the table)."""
    _file_kinds: list[str] | None = None

    def _check_saved(self, saved: Any) -> dict[str, Any]:
        extra: dict[str, Any] = super()._check_saved(saved)  # type: ignore[misc]
        seats, kinds = extra.get("seats"), self.table_kinds() if self.table_kinds is not None else None
        self._file_kinds = None
        if kinds is None or not isinstance(seats, list):
            return extra
        if len(seats) != len(kinds):
            raise StateFormatError(f"the file is a game of {len(seats)} players and this table has {len(kinds)} "
                                   "seats: a table keeps its seats (open the file at a new table)")
        file_kinds = [s.kind if isinstance(s, Seat) else str(s) for s in seats]
        if file_kinds != kinds:
            self._file_kinds = file_kinds
            extra = {**extra, "seats": [Seat(s.name, k) if isinstance(s, Seat) else k for s, k in zip(seats, kinds,
                                                                                                        strict=True)]}
        return extra

    def load(self, text: str | bytes) -> None:
        super().load(text)  # type: ignore[misc]
        if self._file_kinds is not None:
            session: Any = self
            theirs = ", ".join(f"{seat.name} {'a bot' if k == BOT else 'a person'}"
                               for seat, k in zip(session.seats, self._file_kinds, strict=True))
            session.notice = replace(session.notice, text=f"{session.notice.text} The seats stay as this table has "
                                     f"them (the file had: {theirs}).")
            self._file_kinds = None


_table_classes: dict[tuple[type, Hidden], type[GameSession]] = {}


def table_class(cls: type[GameSession], hidden: Hidden) -> type[GameSession]:
    """``cls`` as a table plays it: its files sealed (:func:`~engine.core.seal.sealed_class`) and loaded with the
    table's seats (:class:`AtTableSession`); one class per game, made once."""
    made = _table_classes.get((cls, hidden))
    if made is None:
        sealed = sealed_class(cls, hidden)
        made = type(f"Table{sealed.__name__}", (AtTableSession, sealed), {})
        _table_classes[(cls, hidden)] = made
    return made


class Table(param.Parameterized):
    """One game on the server: its session, who holds each seat, how many watch, when it last moved."""

    id = param.String(constant=True, doc="The table's id, as in ?table=<id>.")
    # Always given (a table is made with its session); param types a ClassSelector without a default as optional.
    session: param.ClassSelector[GameSession] = param.ClassSelector(  # type: ignore[assignment]
        class_=GameSession, constant=True, doc="The game at this table.")
    seats = param.Dict(default={}, doc="Seat name -> holder: a token's key, 'bot', or None (free).")
    watching = param.Integer(default=0, doc="Pages showing the table without a seat (not 'watchers': that name is "
                             "param's own list of callbacks, ``obj.param.watchers``).")
    owner = param.String(default="", doc="The key of the token that made the table.")
    created = param.Number(default=0.0, doc="When the table was made (seconds since the epoch).")
    last_move = param.Number(default=0.0, doc="When its game last changed.")

    def __init__(self, game: TableGame, **params: Any) -> None:
        super().__init__(**params)  # type: ignore[no-untyped-call]
        self.game = game
        self.views = 0
        self.seen = self.last_move or self.created
        if not self.seats:
            self.seats = {s.name: None for s in self.session.seats}
        if isinstance(self.session, AtTableSession):
            self.session.table_kinds = self._kinds
        self.session.param.watch(self._follow_game_seats, ["seats"])

    # --- who holds what -----------------------------------------------------------------------
    def _kinds(self) -> list[str]:
        """Who plays each seat, in seat order, as the table says: a bot, or a person (held or free)."""
        return [BOT if self.seats.get(s.name) == BOT else PERSON for s in self.session.seats]

    def seat_names(self) -> list[str]:
        return [s.name for s in self.session.seats]

    def seats_of(self, token: str | None) -> list[str]:
        key = token_key(token)
        if key is None:
            return []
        return [name for name, holder in self.seats.items() if holder is not None and holder != BOT
                and secrets.compare_digest(holder, key)]

    def free_seats(self) -> list[str]:
        return [name for name, holder in self.seats.items() if holder is None]

    def seat_to_move(self) -> str | None:
        player = self.session.state.current_player()
        names = self.seat_names()
        return names[player] if 0 <= player < len(names) else None

    def refusal(self, token: str | None, move: bool = True, seats: bool = False) -> str:
        """Why the browser with ``token`` may not act now ("" when it may): a move is for the holder of the seat
        to move; a table command (a new game, a file) is for anyone holding a seat; a change of the number of
        seats (Kung-Fu Zoo's teams) is for the table's maker alone, so no player's seat goes from under them."""
        mine = self.seats_of(token)
        if not mine:
            return "you are watching this table: only the players at it can act"
        if seats and not (self.owner and token_key(token) == self.owner):
            return "only the table's maker may change the number of players at it"
        if not move:
            return ""
        seat = self.seat_to_move()
        if seat is None or seat in mine:
            return ""
        holder = self.seats[seat]
        who = "a bot" if holder == BOT else "nobody yet" if holder is None else "another player"
        return f"it is the {possessive(seat)} move, and their seat is held by {who}"

    # --- changing seats (each returns "" or why not, and a refusal changes nothing) --------------------
    def take(self, seat: str, token: str | None) -> str:
        key = token_key(token)
        if key is None:
            return "this browser has no token to hold a seat with (cookies are off?)"
        if seat not in self.seats:
            return f"there is no seat called {seat[:30]!r} at this table"
        holder = self.seats[seat]
        if holder is not None and holder != BOT and not secrets.compare_digest(holder, key):
            return f"the {possessive(seat)} seat is taken by another player"
        self._set(seat, key)
        return ""

    def leave(self, seat: str, token: str | None) -> str:
        if seat not in self.seats_of(token):
            return f"you do not hold the {possessive(seat)} seat"
        self._set(seat, None)
        return ""

    def hand_to_bot(self, seat: str, token: str | None) -> str:
        """A seat's holder hands it to a bot (a player at the table may also give a free seat to one)."""
        if seat not in self.seats:
            return f"there is no seat called {seat[:30]!r} at this table"
        mine = self.seats_of(token)
        if seat not in mine and not (self.seats[seat] is None and mine):
            return f"you do not hold the {possessive(seat)} seat"
        self._set(seat, BOT)
        return ""

    def _set(self, seat: str, holder: str | None) -> None:
        kinds = {n: (BOT if h == BOT else PERSON) for n, h in {**self.seats, seat: holder}.items()}
        with param.parameterized.batch_call_watchers(self):
            self.seats = {**self.seats, seat: holder}
            if any(s.kind != kinds[s.name] for s in self.session.seats):
                self.session.seats = [Seat(s.name, kinds[s.name]) for s in self.session.seats]

    def _follow_game_seats(self, *_events: Any) -> None:
        """A new game may rename or add seats (Kung-Fu Zoo's teams and their number): each holder keeps their
        place in the seat order, a new seat is free, and the game plays each seat as its holder says."""
        names, holders = self.seat_names(), list(self.seats.values())
        if names != list(self.seats):
            self.seats = {n: holders[i] if i < len(holders) else None for i, n in enumerate(names)}
        if any(s.kind != (BOT if self.seats[s.name] == BOT else PERSON) for s in self.session.seats):
            self._set(names[0], self.seats[names[0]])

    # --- what the landing page lists -------------------------------------------------------------
    def info(self) -> TableInfo:
        return TableInfo(self.id, self.game.slug, dict(self.seats), self.game.summary(self.session),
                         self.last_move, self.watching, in_memory=True)

    def record(self) -> dict[str, Any]:
        """The table as its file holds it: the seats (token keys only), times and the sealed session."""
        return {"format": TABLE_FORMAT, "version": TABLE_VERSION, "id": self.id, "game": self.game.slug,
                "owner": self.owner, "seats": dict(self.seats), "created": self.created, "last_move": self.last_move,
                "summary": self.game.summary(self.session), "session": json.loads(self.session.save())}


@dataclass(frozen=True)
class TableInfo:
    """One line of the list of tables (for a table in memory or on disk)."""

    id: str
    game: str
    seats: dict[str, str | None]
    summary: str
    last_move: float
    watching: int = 0
    in_memory: bool = False

    def held_by(self, token: str | None) -> list[str]:
        key = token_key(token)
        return [] if key is None else [n for n, h in self.seats.items() if h == key]

    def state_of(self, seat: str) -> str:
        """'free', 'bot' or 'taken' (never whose)."""
        holder = self.seats.get(seat)
        return "free" if holder is None else "bot" if holder == BOT else "taken"


@dataclass
class TableRegistry:
    """The server's tables: made, found (in memory or reopened from disk), written after every change, and
    dropped from memory when idle."""

    folder: Path
    games: Mapping[str, TableGame]
    sealer: Sealer
    max_tables: int = 200
    idle_seconds: float = 1800.0
    clock: Callable[[], float] = time.time
    tables: dict[str, Table] = field(default_factory=dict)
    index: dict[str, TableInfo] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.max_tables < MIN_TABLES:
            raise ValueError(f"a server holds at least {MIN_TABLES} tables, not {self.max_tables}")
        self.lock = threading.RLock()
        self.folder.mkdir(parents=True, exist_ok=True)
        for path in sorted(self.folder.glob("*.json")):
            with contextlib.suppress(TableError):
                self.index[path.stem] = self._info_from(self._read(path.stem))

    # --- making and finding tables -----------------------------------------------------------------
    def create(self, game: str, owner: str | None) -> Table:
        """A new table of ``game`` made by the browser with token ``owner``, who takes its first seat."""
        if game not in self.games:
            raise TableError(f"no game called {game[:30]!r} is played at tables")
        with self.lock:
            self._make_room()
            spec = self.games[game]
            now = self.clock()
            table_id = secrets.token_urlsafe(8)
            table = Table(spec, id=table_id, session=spec.new_session(self.sealer), owner=token_key(owner) or "",
                          created=now, last_move=now)
            if owner is not None:
                table.take(table.seat_names()[0], owner)
            self._adopt(table)
            self.write(table)
            return table

    def get(self, table_id: str) -> Table:
        """The table ``table_id``, reopened from its file if it was dropped; TableError if there is none."""
        if not valid_id(table_id):
            raise TableError("that is not a table id")
        with self.lock:
            table = self.tables.get(table_id)
            if table is not None:
                return table
            record = self._read(table_id)
            self._make_room()
            table = self._reopen(record)
            self._adopt(table)
            return table

    def attach(self, table: Table, watcher: bool) -> None:
        """A page now shows ``table`` (a watcher's page counts among its watchers)."""
        with self.lock:
            table.views += 1
            table.seen = self.clock()
            if watcher:
                table.watching += 1

    def detach(self, table: Table, watcher: bool) -> None:
        with self.lock:
            table.views = max(0, table.views - 1)
            table.seen = self.clock()
            if watcher:
                table.watching = max(0, table.watching - 1)

    def sweep(self, now: float | None = None) -> list[str]:
        """Write out and drop from memory every table no page shows that has not been seen for ``idle_seconds``."""
        now = self.clock() if now is None else now
        with self.lock:
            idle = [t for t in self.tables.values()
                    if t.views == 0 and now - max(t.seen, t.last_move) >= self.idle_seconds]
            for table in idle:
                self.write(table)
                self._drop(table)
            return [t.id for t in idle]

    def listing(self, game: str | None = None) -> list[TableInfo]:
        """Every table (in memory or on disk), the last moved first."""
        with self.lock:
            infos = [t.info() for t in self.tables.values()]
            infos += [i for tid, i in self.index.items() if tid not in self.tables]
        return sorted((i for i in infos if game is None or i.game == game), key=lambda i: -i.last_move)

    # --- files ----------------------------------------------------------------------------------
    def path(self, table_id: str) -> Path:
        return self.folder / f"{table_id}.json"

    def write(self, table: Table) -> None:
        """Replace the table's file in one step (a crash mid-write leaves the last complete one)."""
        path = self.path(table.id)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            tmp.write_text(json.dumps(table.record()), encoding="utf-8")
            os.replace(tmp, path)
        except OSError as exc:
            self.errors.append(f"table {table.id} could not be written ({exc.strerror or exc})")
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
        with self.lock:
            self.index[table.id] = table.info()

    def _read(self, table_id: str) -> dict[str, Any]:
        try:
            text = self.path(table_id).read_bytes()
        except OSError:
            raise TableError(f"there is no table {table_id} on this server") from None
        try:
            record = decode(text)
        except StateFormatError as exc:
            raise TableError(f"the file of table {table_id} is damaged: {exc}") from None
        if not isinstance(record, dict) or record.get("format") != TABLE_FORMAT \
                or record.get("version") != TABLE_VERSION or record.get("id") != table_id:
            raise TableError(f"the file of table {table_id} is not a table of this version")
        if record.get("game") not in self.games:
            raise TableError(f"table {table_id} is of a game not played at tables here")
        seats = record.get("seats")
        if not isinstance(seats, dict) or not all(
                h is None or h == BOT or (isinstance(h, str) and KEY_PATTERN.fullmatch(h)) for h in seats.values()):
            raise TableError(f"the seats of table {table_id} are damaged")
        if not all(isinstance(record.get(k), (int, float)) for k in ("created", "last_move")) \
                or not isinstance(record.get("owner"), str) or not isinstance(record.get("session"), dict):
            raise TableError(f"the file of table {table_id} is damaged")
        return record

    def _info_from(self, record: dict[str, Any]) -> TableInfo:
        return TableInfo(record["id"], record["game"], dict(record["seats"]), str(record.get("summary", ""))[:80],
                         float(record["last_move"]))

    def _reopen(self, record: dict[str, Any]) -> Table:
        spec = self.games[record["game"]]
        session = table_class(spec.session_class, spec.hidden)(**spec.session_options)
        session.sealer = self.sealer  # type: ignore[attr-defined]
        try:
            session.load(json.dumps(record["session"]))
        except StateFormatError as exc:
            raise TableError(f"the game of table {record['id']} could not be read: {exc}") from None
        if set(record["seats"]) != {s.name for s in session.seats}:
            raise TableError(f"the seats of table {record['id']} are not its game's")
        table = Table(spec, id=record["id"], session=session, owner=record["owner"], created=record["created"],
                      last_move=record["last_move"])
        for seat, holder in record["seats"].items():
            table._set(seat, holder)
        table.seen = self.clock()
        return table

    # --- memory -----------------------------------------------------------------------------------
    def _make_room(self) -> None:
        if len(self.tables) < self.max_tables:
            return
        unseen = sorted((t for t in self.tables.values() if t.views == 0), key=lambda t: max(t.seen, t.last_move))
        for table in unseen[: len(self.tables) - self.max_tables + 1]:  # make room: the longest unseen goes
            self.write(table)
            self._drop(table)
        if len(self.tables) >= self.max_tables:
            raise TableError(f"this server holds its most tables ({self.max_tables}) and every one is in use; "
                             "try again when one is idle")

    def _adopt(self, table: Table) -> None:
        def moved(*_events: Any) -> None:
            table.last_move = self.clock()
            self.write(table)

        table.session.param.watch(moved, ["version"])
        table.param.watch(lambda *_e: self.write(table), ["seats"])
        self.tables[table.id] = table

    def _drop(self, table: Table) -> None:
        self.tables.pop(table.id, None)

    def drop_all(self, ids: Iterable[str] | None = None) -> None:
        """Write out and drop tables from memory at once (all of them by default): the server is stopping."""
        with self.lock:
            for table_id in list(self.tables if ids is None else ids):
                table = self.tables.get(table_id)
                if table is not None:
                    self.write(table)
                    self._drop(table)


__all__ = ["MIN_TABLES", "Table", "TableError", "TableGame", "TableInfo", "TableRegistry", "new_token", "token_key",
           "valid_id"]
