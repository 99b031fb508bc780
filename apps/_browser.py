"""Driving the served pages in Debian's headless Chromium: what the benchmarks, the soak and the browser tests share.

The browser's launch line, the page-side predicates (a figure drawn and idle, a text shown anywhere in the page,
through Panel's shadow roots) and, per game played at tables, how a seated player makes a move and what every
browser at the table then shows (:data:`TABLE_PLAYS`). The load test (:mod:`apps._soak`) and the delay benchmark
(:mod:`apps._tables_bench`) run over that list; a game joins them with one :class:`TablePlay` entry.

Everything here works through the page only (clicks and the text it shows), so it drives a server in another
process (``dojo serve``) as well as one in the test's own.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]

BOARD_READY = """(name) => window.Bokeh && Bokeh.index &&
  [...Bokeh.index.all_views()].some(v => v.model.name === name && v.frame && v.is_idle)"""
"""JS predicate for ``page.wait_for_function``: the figure named ``name`` is laid out and idle."""

HAS_TEXT = """(text) => {
  const stack = [document];
  while (stack.length) {
    const root = stack.pop();
    if ((root === document ? document.body : root).textContent.includes(text)) return true;
    for (const el of root.querySelectorAll('*')) if (el.shadowRoot) stack.push(el.shadowRoot);
  }
  return false;
}"""
"""JS predicate: ``text`` is shown somewhere in the page, shadow roots included (Panel draws in them)."""

PAGE_TEXT = """() => {
  const parts = [];
  const walk = (node) => {
    if (node.nodeType === Node.TEXT_NODE) { parts.push(node.textContent); return; }
    if (node.nodeType !== Node.ELEMENT_NODE && node.nodeType !== Node.DOCUMENT_FRAGMENT_NODE) return;
    if (node.localName === 'script' || node.localName === 'style') return;
    if (node.shadowRoot) walk(node.shadowRoot);
    for (const child of node.childNodes) walk(child);
  };
  walk(document.body);
  return parts.join(' ').replace(/\\s+/g, ' ');
}"""
"""JS: the page's text in document order, shadow roots included, whitespace folded."""

TABLE_ID = re.compile(r"Table ([A-Za-z0-9_-]+) ·")
"""The table's id as the seat bar shows it (``apps._tables.SeatBar``)."""


def launch(playwright: Any) -> Any:
    """Debian's Chromium, headless, as the tests and benchmarks run it."""
    return playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)


def page_text(page: Any) -> str:
    return str(page.evaluate(PAGE_TEXT))


def shown_table(page: Any) -> str | None:
    """The id of the table this page shows (from its seat bar), or None before the bar is drawn."""
    found = TABLE_ID.search(page_text(page))
    return found.group(1) if found else None


def click_first(page: Any, names: tuple[str, ...], timeout: float = 10.0) -> str:
    """Click the first of the buttons ``names`` that is visible and enabled (the page hides or disables the
    others); the name clicked. Waits up to ``timeout`` s for one (a page still drawing its last change)."""
    end = time.time() + timeout
    while True:
        for name in names:
            button = page.get_by_role("button", name=name, exact=True)
            if button.count() and button.first.is_visible() and button.first.is_enabled():
                button.first.click(timeout=5000)
                return name
        if time.time() > end:
            raise TimeoutError(f"none of the buttons {names} could be clicked")
        page.wait_for_timeout(100)


SHOWN = ("([pattern, before]) => { const text = (" + PAGE_TEXT + ")();\n"
         "  const found = text.match(new RegExp(pattern));\n"
         "  return found !== null && found[0] !== before ? found[0] : null; }")
"""JS: the first text of the page that matches ``pattern`` if it is not ``before`` (else null)."""


@dataclass(frozen=True)
class TablePlay:
    """How the load test and the delay benchmark play one game at a table, through the page only.

    ``move(page)`` makes one move in the browser of the table's first player (its maker). ``status`` is a
    regular expression (JavaScript's and Python's alike) over the page's text that says where the game is: after
    a move, every browser at the table comes to show the same status, and the browsers at other tables keep
    theirs. ``join`` is added to the table's link for the second browser (``&seat=<name>`` for a second player;
    empty: a watcher)."""

    slug: str
    board: str
    move: Callable[[Any], str]
    status: str
    join: str = ""

    def shown(self, page: Any) -> str:
        """The status this page shows now ('' before it is drawn)."""
        return str(page.evaluate(SHOWN, [self.status, None]) or "")

    def wait_change(self, page: Any, before: str, timeout: float = 30.0) -> str:
        """Wait, polling in the page on every frame, until it shows a status other than ``before``; the status."""
        handle = page.wait_for_function(SHOWN, arg=[self.status, before], polling="raf", timeout=timeout * 1000)
        return str(handle.json_value())

    def wait_status(self, page: Any, status: str, timeout: float = 30.0) -> None:
        """Wait until the page shows ``status`` (another browser's, after a move at the table)."""
        end = time.time() + timeout
        while (now := self.shown(page)) != status:
            if time.time() > end:
                raise TimeoutError(f"{self.slug}: the page shows '{now}' after {timeout:.0f} s, not '{status}'")
            page.wait_for_timeout(20)


def kzin_move(page: Any) -> str:
    """The decision that needs no card (Fall back in an Invasion, Pass in a Liberation), or New game once over."""
    return click_first(page, ("Fall back", "Pass", "New game"))


TABLE_PLAYS: dict[str, TablePlay] = {
    # One seat (the Humans): the second browser watches. Every decision ends a turn, so the status changes.
    "kzin": TablePlay("kzin", "track", kzin_move,
                      r"Turn \d+ · Expansion Marker on space \d+|Game over: the \w+ won on turn \d+\."),
}
"""The games at tables, as the load test and the delay benchmark play them (Kung Fu 2100 and the Zoo join here)."""
