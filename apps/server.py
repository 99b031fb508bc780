"""``dojo serve``: the landing page at ``/`` and every game app at ``/<slug>``, one session per tab."""

from __future__ import annotations

import gc
import ipaddress
import os
import socket
import sys
from collections.abc import Callable, Sequence
from typing import Any

import panel as pn
import psutil
from tornado.ioloop import IOLoop

from apps import GameApp, discover_games, landing
from apps._memory import REPORT_HISTORY, report_patterns, session_cleanup
from apps._tables import start_sweeps
from apps.allocator import malloc_trim
from apps.collector import start_idle_collection


def routes(games: Sequence[GameApp] | None = None) -> dict[str, Callable[[], Any]]:
    """``{"/": landing page, "<slug>": create_app, ...}``: factories ``pn.serve`` calls once per session."""
    games = tuple(discover_games() if games is None else games)

    def landing_page() -> Any:  # a plain function: pn.serve calls functions per session, not partials
        return landing.create_app(games)

    def experiments_page() -> Any:
        from apps import experiments

        return experiments.create_app()

    table: dict[str, Callable[[], Any]] = {"/": landing_page, "experiments": experiments_page}
    for game in games:
        # a game played at tables: its table page (always served); otherwise its page, told that it is served
        table[game.slug] = game.create_table_app or served_page(game.create_app)
    return table


def served_page(create_app: Callable[..., Any]) -> Callable[[], Any]:
    """``create_app`` as a server's factory: the page is told that it is served (it autosaves, animates, paces
    bots) instead of guessing it from the current document, which outside a server falls back to Bokeh's
    process-wide one (a test process serving other pages would make a plain page take itself for served)."""

    def page() -> Any:
        return create_app(served=True)

    return page


def titles(games: Sequence[GameApp]) -> dict[str, str]:
    """The browser tab title of each route (same keys as :func:`routes`)."""
    return {"/": landing.TITLE, "experiments": f"Experiments · {landing.TITLE}",
            **{g.slug: f"{g.title} · {landing.TITLE}" for g in games}}


def can_show() -> bool:
    """Whether opening a browser makes sense here (a desktop, not a headless server)."""
    return sys.platform in ("darwin", "win32") or bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


RELEASE_DELAY = 2.0
"""Seconds after a session ends before its memory is handed back (Bokeh drops the session's document then)."""


class MemoryRelease:
    """After tabs close, collect their pages and hand the freed heap back to the system.

    A closed tab's page is a web of cycles (dashboard, widgets, Bokeh models) that only the cyclic collector
    frees, and glibc keeps the freed heap for reuse: measured, 20 tabs opened and closed left the server
    about 50% above its warm start though every page had been collected; a collection and ``malloc_trim``
    after the sessions end bring it back. One release is pending at a time, however many tabs close."""

    def __init__(self) -> None:
        self._trim = malloc_trim()
        self._pending = False

    def session_destroyed(self, _context: Any) -> None:
        self.soon()

    def tables_dropped(self, _ids: list[str]) -> None:
        """Idle tables written out and dropped: their game sessions (a table's state, bots and caches) are freed
        by a collection as a closed tab's page is, and the heap trimmed likewise."""
        self.soon()

    def soon(self) -> None:
        """A release in :data:`RELEASE_DELAY` seconds, unless one is already pending."""
        if not self._pending:
            self._pending = True
            IOLoop.current().call_later(RELEASE_DELAY, self.release)

    def release(self) -> None:
        self._pending = False
        gc.collect()
        if self._trim is not None:
            self._trim(0)


def freeze_imports() -> None:
    """Move every object that exists now (the libraries and game modules imported) out of the cyclic collector's
    sight, once, before any page: a full collection walks every tracked object, and one falling in a click made
    the ~300 ms worst clicks of issue 11 (measured with the three games imported: ~170 ms of CPU a full collection,
    ~55 ms after this). Pages built later are collected as before (``gc.freeze``)."""
    gc.collect()
    gc.freeze()


LOOPBACK = ("127.0.0.1", "localhost", "::1")
WILDCARD = ("0.0.0.0", "::", "")
NO_LOGIN = ("There is no login: anyone who can reach these addresses can open every game, play any seat and "
            "load files into it (see the README, 'Serving beyond this machine').")


def interface_addresses(ipv6: bool = False) -> list[str]:
    """This machine's own network addresses (not loopback, not link-local), read from its interfaces: no name
    server or other machine is asked."""
    families = (socket.AF_INET, socket.AF_INET6) if ipv6 else (socket.AF_INET,)
    found: list[str] = []
    for addrs in psutil.net_if_addrs().values():
        for a in addrs:
            if a.family not in families:
                continue
            ip = ipaddress.ip_address(a.address.split("%")[0])
            if ip.is_loopback or ip.is_link_local or str(ip) in found:
                continue
            found.append(str(ip))
    return found


def url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def public_hosts(address: str) -> list[str]:
    """The names others may use to reach a server listening on ``address``: for every interface (``0.0.0.0``,
    ``::``) this machine's host name and its addresses; for one address, that address; none for loopback."""
    if address in LOOPBACK:
        return []
    if address in WILDCARD:
        name = socket.gethostname()
        return [*([name] if name and name != "localhost" else []), *interface_addresses(ipv6=address == "::")]
    return [address]


def serve_plan(port: int, address: str, games: int) -> tuple[list[str], list[str]]:
    """What ``dojo serve`` prints (the URL for this machine first, then those for others) and the websocket
    origins it allows: a page opened at any printed URL must be let in, or it loads and then cannot connect
    (Bokeh answers 403)."""
    others = public_hosts(address)
    here = "localhost" if address in LOOPBACK + WILDCARD else url_host(address)
    lines = [f"Tabletop Dojo dashboard: http://{here}:{port}/  ({games} game(s); Ctrl+C stops it)"]
    if address in WILDCARD and others:
        lines.append("Others can open: " + "  ".join(f"http://{url_host(h)}:{port}/" for h in others))
    if others:
        lines.append(NO_LOGIN)
    origins = sorted({f"localhost:{port}", f"127.0.0.1:{port}", *(f"{url_host(h)}:{port}" for h in others)})
    return lines, origins


def serve(port: int = 5006, address: str = "127.0.0.1", show: bool | None = None) -> None:
    """Serve the dashboard until interrupted, printing its URLs first (and, beyond this machine, that there
    is no login)."""
    games = discover_games()
    freeze_imports()
    start_idle_collection()  # full collections in the IOLoop's idle time, not inside a click (apps.collector)
    lines, origins = serve_plan(port, address, len(games))
    print("\n".join(lines), flush=True)
    release = MemoryRelease()
    pn.state.on_session_destroyed(release.session_destroyed)  # every session of this server
    start_sweeps(dropped=release.tables_dropped)  # idle tables written out and dropped from memory, then released
    report = report_patterns()  # GET /memory-report, only with TABLETOP_DOJO_MEMORY_REPORT set (the soak)
    pn.serve(
        routes(games),
        port=port,
        address=address,
        show=can_show() if show is None else show,
        title=titles(games),
        websocket_origin=origins,
        liveness=True,
        verbose=False,
        extra_patterns=report,
        **({"session_history": REPORT_HISTORY} if report else {}),
        **session_cleanup(),  # Bokeh's defaults unless TABLETOP_DOJO_UNUSED_SESSION_MS is set (the soak's test)
    )
