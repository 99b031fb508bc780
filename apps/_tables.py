"""Tables in the browser: the server's one registry, a browser's token, and the page of a table.

Opening ``/<game>`` with no table makes one (its maker takes the first seat) and puts ``?table=<id>`` in the
address bar: that link is what a player sends to another. ``&seat=<name>`` takes that seat if it is free. A
browser's token is kept in a cookie (:data:`TOKEN_COOKIE`, set by the page itself on its first visit): the
server reads it from the request that opens the page (``pn.state.cookies``), so a reload gets its seats back,
and the table keeps only its hash. A browser without a seat at the table watches it.

Every page of a table is built over the table's one session, so it is live: when anyone acts, the session's
parameters change and Panel updates every document bound to them. Panel documents this (its "Global Thread"
how-to binds many sessions' views to one Parameterized) and does it in ``Reactive._apply_update``: a change
made while another document holds the lock is scheduled onto each other document with
``state.execute(schedule=True)`` under that document's own lock.

A game joins tables with a few lines: a :class:`~engine.core.tables.TableGame` (its engine's ``table``
module), an entry in :data:`TABLE_GAMES`, and a ``create_table_app`` that calls :func:`table_page` with a
:data:`PageBuilder`: the game's page over the table's session, given the table, this browser's token (what it
may see follows the seats the token holds) and the seat bar's ``may_act`` gate.
"""

from __future__ import annotations

import asyncio
import contextvars
import html
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import panel as pn
import param
from bokeh.models import CustomJS

from apps._files import NO_HTML, data_dir
from apps.commands import on_page
from engine.core.seal import Sealer
from engine.core.session import BOT
from engine.core.tables import Table, TableError, TableGame, TableRegistry, new_token, possessive, token_key, valid_id
from engine.kf2100.table import KF2100_TABLE
from engine.kzin.table import KZIN_TABLE
from engine.zoo.table import ZOO_TABLE

log = logging.getLogger(__name__)

TOKEN_COOKIE = "dojo_token"
TABLE_GAMES: dict[str, TableGame] = {game.slug: game for game in (KZIN_TABLE, KF2100_TABLE, ZOO_TABLE)}
"""The games played at tables: all three."""
IDLE_SECONDS = 1800.0
"""A table no page has shown for this long is written out and dropped from memory (``$TABLETOP_DOJO_IDLE``)."""
MAX_TABLES = 200
SET_TOKEN = """
// Keep this browser's table token: the server reads it from the cookie of every page this browser opens.
document.cookie = `${name}=${token}; path=/; max-age=31536000; SameSite=Strict`;
"""

_registries: dict[Path, TableRegistry] = {}


def registry() -> TableRegistry:
    """The server's tables, in the data folder's ``tables/`` (one registry per data folder: tests move it)."""
    import os

    folder = data_dir()
    found = _registries.get(folder)
    if found is None:
        idle = float(os.environ.get("TABLETOP_DOJO_IDLE", IDLE_SECONDS))
        found = TableRegistry(folder / "tables", TABLE_GAMES, Sealer.in_folder(folder), max_tables=MAX_TABLES,
                              idle_seconds=idle)
        _registries[folder] = found
    return found


def use_registry(reg: TableRegistry) -> TableRegistry:
    """Make ``reg`` the registry of the current data folder (a benchmark's or a test's, with lighter games)."""
    _registries[data_dir()] = reg
    return reg


def browser_token() -> tuple[str, bool]:
    """This browser's token (from its cookie) and whether it is new (the page must then keep it)."""
    token = pn.state.cookies.get(TOKEN_COOKIE)
    if token_key(token) is not None:
        return str(token), False
    return new_token(), True


def query(name: str) -> str | None:
    values = pn.state.session_args.get(name)
    if not values:
        return None
    try:
        return values[0].decode("utf-8")[:64]
    except UnicodeDecodeError:
        return None


@dataclass
class BotDriver:
    """Plays a table's bot seats when they are to move: the move worked out on a worker thread over a
    snapshot, then played on the server's event loop (a click in the meantime makes it stale, and it is
    refused by the version it was for). One per table, whatever the number of pages."""

    table: Table
    busy: bool = False
    moves: int = 0
    task: asyncio.Task[None] | None = None
    errors: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.table.session.param.watch(self.poke, ["version", "seats"])

    def poke(self, *_events: Any) -> None:
        if self.busy or not self.table.session.bot_to_move():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (a notebook kernel between cells, a test): play here and now
            self._step()
            return
        self.busy = True
        # kept: a task no one holds may be collected mid-move. Made in a context of its own: a task copies the
        # context it is made in, Panel's current document with it, and the table outlives the page that poked it
        # (a closed tab's document, and through its session-destroyed callbacks its page, stayed in memory).
        self.task = loop.create_task(self._move(), context=contextvars.Context())

    def _step(self) -> None:
        self.table.session.attempt(self.table.session.step)

    async def _move(self) -> None:
        s, spec = self.table.session, self.table.game
        try:
            version = s.version
            if spec.bot_think is None or spec.bot_play is None:
                self._step()
            else:
                result = await asyncio.to_thread(spec.bot_think(s))
                if s.version == version and s.bot_to_move():
                    spec.bot_play(s, result, version)
            self.moves += 1
        except Exception as exc:  # a bot's own failure: said at the table, and the seat waits
            log.exception("a bot at table %s failed", self.table.id)
            self.errors.append(repr(exc))
            s.refuse(f"the bot could not move ({type(exc).__name__})")
        finally:
            self.busy = False
            self.task = None  # done: nothing of this move is kept
        self.poke()


PageBuilder = Callable[[Table, str, Callable[..., bool]], pn.viewable.Viewable]
"""How a game builds its page at a table: ``build(table, token, may_act)`` (the same shape for every game). The
token says which seats the page's browser holds (and so what it may see); it is never put in a parameter, so
nothing sends it to the browser."""


def driver(table: Table) -> BotDriver:
    """The table's bot driver, made with the first page that shows it (it lives and goes with the table)."""
    found = getattr(table, "bot_driver", None)
    if found is None:
        found = BotDriver(table)
        table.bot_driver = found  # type: ignore[attr-defined]
    return found


class SeatBar(pn.viewable.Viewer):
    """The table as this browser sees it: its link, who holds each seat, and this browser's seat buttons; plus
    this page's own notice (a refusal for this browser, never shown to the others)."""

    table = param.ClassSelector(class_=Table)
    said = param.String(default="", doc="This page's own notice: why a click was refused here.")

    def __init__(self, token: str, **params: Any) -> None:
        super().__init__(**params)
        self.token = token  # never a parameter: nothing sends it to the browser
        t = self.table
        self.buttons: dict[str, list[pn.widgets.Button]] = {}
        for seat in t.seat_names():
            take = pn.widgets.Button(label=f"Take the {possessive(seat)} seat", color="primary", margin=(2, 4),
                                     visible=pn.bind(lambda seats, s=seat: self._can_take(seats, s), t.param.seats))
            leave = pn.widgets.Button(label=f"Leave the {possessive(seat)} seat", margin=(2, 4),
                                      visible=pn.bind(lambda seats, s=seat: s in self._mine(seats), t.param.seats))
            bot = pn.widgets.Button(label=f"Hand the {seat} to a bot", margin=(2, 4),
                                    visible=pn.bind(lambda seats, s=seat: s in self._mine(seats), t.param.seats))
            take.on_click(on_page(lambda s=seat: self.act(self.table.take, s)))
            leave.on_click(on_page(lambda s=seat: self.act(self.table.leave, s)))
            bot.on_click(on_page(lambda s=seat: self.act(self.table.hand_to_bot, s)))
            self.buttons[seat] = [take, leave, bot]
        self.status = pn.pane.HTML(pn.bind(self._status_html, t.param.seats, t.param.watching),
                                   sizing_mode="stretch_width", margin=(0, 10), name="seats")
        self.notice = pn.pane.Alert(self.param.said, alert_type="warning", margin=(0, 10), name="seat-notice",
                                    visible=self.param.said.rx.pipe(bool), renderer_options=NO_HTML)

    def _mine(self, seats: dict[str, str | None]) -> list[str]:
        return self.table.seats_of(self.token)

    def _can_take(self, seats: dict[str, str | None], seat: str) -> bool:
        return seat not in self._mine(seats) and (seats.get(seat) is None or seats.get(seat) == BOT)

    def act(self, change: Callable[[str, str], str], seat: str) -> bool:
        """Take, leave or hand over a seat for this browser; a refusal is said on this page only."""
        was_watching = not self.table.seats_of(self.token)
        reason = change(seat, self.token)
        watching = not self.table.seats_of(self.token)
        if watching != was_watching:
            self.table.watching = max(0, self.table.watching + (1 if watching else -1))
        self.said = f"Not done: {reason}." if reason else ""
        return not reason

    def may_act(self, move: bool = True, seats: bool = False) -> bool:
        """The page's gate: whether this browser may play now; if not, this page (only) says why. The table's
        maker may always start a new game or load a file (when a bot holds every seat, say), and only the maker
        may change the number of seats (``seats=True``: a new game with another number of players)."""
        reason = "" if not move and self._owner() else self.table.refusal(self.token, move, seats)
        self.said = f"Not done: {reason}." if reason else ""
        return not reason

    def _owner(self) -> bool:
        return bool(self.table.owner) and self.table.owner == token_key(self.token)

    def _status_html(self, seats: dict[str, str | None], watchers: int) -> str:
        mine = self.table.seats_of(self.token)
        parts = []
        for seat, holder in seats.items():
            who = ("you" if seat in mine else "a bot" if holder == BOT else "free" if holder is None
                   else "another player")
            parts.append(f"<b>{html.escape(seat)}</b>: {who}")
        role = "You are watching: only the players at this table can act." if not mine else ""
        return (f"<div class='table-status'>Table <code>{html.escape(self.table.id)}</code> · {' · '.join(parts)} · "
                f"{watchers} watching. {role}</div>")

    def __panel__(self) -> pn.viewable.Viewable:
        buttons = [b for group in self.buttons.values() for b in group]
        return pn.Column(pn.Row(self.status, *buttons, sizing_mode="stretch_width"), self.notice,
                         sizing_mode="stretch_width", name="seat-bar")


class TablePage(pn.viewable.Viewer):
    """One browser's page of a table: the seat bar over the game's own page, built over the table's session."""

    table = param.ClassSelector(class_=Table)

    def __init__(self, token: str, build: PageBuilder, **params: Any) -> None:
        super().__init__(**params)
        t = self.table
        before = watchers_of(t)
        self.bar = SeatBar(token, table=t)
        self.game = build(t, token, self.bar.may_act)
        self.watchers = [w for w in watchers_of(t) if id(w) not in {id(b) for b in before}]
        self._layout = pn.Column(self.bar, self.game, sizing_mode="stretch_width", name="table")

    def close(self) -> None:
        """Forget this page: the watchers its views put on the shared session and table go with it."""
        for w in self.watchers:
            w.inst.param.unwatch(w)
        self.watchers = []

    def __panel__(self) -> pn.viewable.Viewable:
        return self._layout


def watchers_of(table: Table) -> list[Any]:
    """Every watcher on the table and its session (param's public ``watchers``)."""
    found = []
    for obj in (table, table.session):
        for per_param in obj.param.watchers.values():
            for group in per_param.values():
                found.extend(group)
    return found


def no_table_page(slug: str, title: str, reason: str) -> pn.viewable.Viewable:
    return pn.Column(pn.pane.Markdown(f"# {title}"),
                     pn.pane.Alert(f"{reason}.", alert_type="warning", renderer_options=NO_HTML, name="no-table"),
                     pn.pane.Markdown(f"[Start a new table](/{slug}) · [All tables](/)"), name="no-table")


def table_page(slug: str, build: PageBuilder) -> pn.viewable.Viewable:
    """The page of ``/<slug>`` for this request: the table of ``?table=`` (a new one without it), with the seat
    of ``&seat=`` taken if it is free."""
    reg = registry()
    spec = reg.games[slug]
    token, new = browser_token()
    doc = pn.state.curdoc
    if new and doc is not None:
        doc.js_on_event("document_ready", CustomJS(code=SET_TOKEN, args={"name": TOKEN_COOKIE, "token": token}))
    wanted = query("table")
    reg.sweep()
    try:
        if wanted is None:
            table = reg.create(slug, token)
        elif not valid_id(wanted):
            return no_table_page(slug, spec.title, "That link does not name a table")
        else:
            table = reg.get(wanted)
    except TableError as exc:
        return no_table_page(slug, spec.title, str(exc))
    if table.game.slug != slug:
        return no_table_page(slug, spec.title, f"Table {table.id} plays {table.game.title}, not {spec.title}")
    seat = query("seat")
    refused = table.take(seat, token) if seat is not None and seat not in table.seats_of(token) else ""
    driver(table).poke()
    page = TablePage(token, build, table=table)
    if refused:
        page.bar.said = f"You are watching: {refused}."
    watcher = not table.seats_of(token)
    reg.attach(table, watcher)
    location = pn.state.location
    if location is not None and wanted is None:  # once loaded: the browser first reports its own address
        pn.state.onload(lambda: location.update_query(table=table.id))
    if doc is not None and doc.session_context is not None:
        def closed(_context: Any) -> None:
            page.close()
            reg.detach(table, watcher=not table.seats_of(token))

        pn.state.on_session_destroyed(closed)
    return page


def start_sweeps(period_seconds: float = 60.0, dropped: Callable[[list[str]], None] | None = None) -> None:
    """Write out and drop idle tables every ``period_seconds`` while the server runs (``dojo serve``); ``dropped``
    is told the ids of the tables a sweep dropped (the server then gives their memory back)."""

    def sweep() -> None:
        ids = registry().sweep()
        if ids and dropped is not None:
            dropped(ids)

    pn.state.schedule_task("tables-sweep", sweep, period=f"{int(period_seconds)}s")


def ago(seconds: float) -> str:
    """A time since, as the landing page shows it."""
    s = max(0, time.time() - seconds)
    return "just now" if s < 60 else f"{int(s // 60)} min ago" if s < 3600 else f"{int(s // 3600)} h ago"
