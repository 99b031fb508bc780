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
         "  const shown = found === null ? null : found.length > 1 ? found.slice(1).join(' | ') : found[0];\n"
         "  return shown !== null && shown !== before ? shown : null; }")
"""JS: the first text of the page that matches ``pattern`` if it is not ``before`` (else null); a pattern with
groups gives its groups joined by " | " (two parts of the page with what lies between them left out)."""

FIRST_CHANGE = ("([pattern, before]) => { const shown = (" + SHOWN + ")([pattern, before]);\n"
                "  if (shown !== null) return [shown, performance.timeOrigin + performance.now()];\n"
                "  return (STARTED) ? [null, performance.timeOrigin + performance.now()] : null; }")
"""JS for :meth:`TablePlay.first_change`: [the status shown or null, the browser's clock in ms] at the first
frame where the status is not ``before`` or ``STARTED`` (replaced by a play's ``started``) holds."""
CLICK_CLOCK = """window.addEventListener('click', () => {
  window.dojoClickAt = performance.timeOrigin + performance.now(); }, true);"""
"""An init script: every click in the page keeps the browser's clock (ms) at the moment the page received it, in
``window.dojoClickAt`` (before any handler of the page runs: a listener of the window, in the capture phase)."""

FIGURE_POINT = """([name, x, y]) => {
  const v = [...Bokeh.index.all_views()].find(v => v.model.name === name && v.frame);
  const r = v.canvas.events_el.getBoundingClientRect();
  return [r.left + v.frame.x_scale.compute(x), r.top + v.frame.y_scale.compute(y)];
}"""
"""JS: data (x, y) on the Bokeh figure named ``name`` -> viewport pixels (Playwright's mouse coordinates)."""


SETTLE_S = 1.0
"""Seconds a page's new status must stay the same before it counts as the status after a move."""


@dataclass(frozen=True)
class TablePlay:
    """How the load test and the delay benchmark play one game at a table, through the page only.

    ``move(page)`` makes one move in the browser of the table's first player (its maker). ``status`` is a
    regular expression (JavaScript's and Python's alike) over the page's text that says where the game is: after
    a move, every browser at the table comes to show the same status, and the browsers at other tables keep
    theirs (a pattern with groups: its groups, see :data:`SHOWN`). ``join`` is added to the table's link for the
    second browser (``&seat=<name>`` for a second player; empty: a watcher)."""

    slug: str
    board: str
    move: Callable[[Any], str]
    status: str
    join: str = ""
    prepare: Callable[[Any], None] | None = None
    """Done once by the maker's browser before its first move (the move does it too, if it was not): the
    benchmark calls it so that its first timed click is a move like the others."""
    started: str = ""
    """A JavaScript expression, true in a page once it shows a move that its status does not show yet (the Zoo's
    flick playing out: its status changes when the flick has stopped); '' when the status is the first change."""
    before_move: str = ""
    """JavaScript run in a page before a move is made, that ``started`` compares with ('' for none)."""

    def first_change(self, page: Any, before: str, timeout: float = 30.0) -> tuple[str | None, float]:
        """Wait, checking in the page on every animation frame, for the first change it shows after a move: a
        status other than ``before``, or what ``started`` says (then the status is None). With the browser's
        clock (``performance.timeOrigin + performance.now()``, ms) at the first frame that shows it."""
        handle = page.wait_for_function(FIRST_CHANGE.replace("STARTED", self.started or "false"),
                                        arg=[self.status, before], polling="raf", timeout=timeout * 1000)
        shown, at = handle.json_value()
        return shown, float(at)

    def shown(self, page: Any) -> str:
        """The status this page shows now ('' before it is drawn)."""
        return str(page.evaluate(SHOWN, [self.status, None]) or "")

    def wait_change(self, page: Any, before: str, timeout: float = 30.0, settle: float = SETTLE_S) -> str:
        """Wait, polling in the page on every frame, until it shows a status other than ``before``, and then until
        that status has stayed the same for ``settle`` s (a status made of two panes may show one updated a moment
        before the other); the status. ``settle=0``: the first change (the delay benchmark's moment)."""
        handle = page.wait_for_function(SHOWN, arg=[self.status, before], polling="raf", timeout=timeout * 1000)
        shown, since, end = str(handle.json_value()), time.time(), time.time() + timeout
        while settle > 0 and time.time() - since < settle:
            if (now := self.shown(page)) != shown:
                shown, since = now, time.time()
            if time.time() > end:
                raise TimeoutError(f"{self.slug}: the status did not settle in {timeout:.0f} s (last '{shown}')")
            page.wait_for_timeout(50)
        return shown

    def wait_status(self, page: Any, status: str, timeout: float = 30.0) -> None:
        """Wait until the page shows ``status`` (another browser's, after a move at the table)."""
        end = time.time() + timeout
        while (now := self.shown(page)) != status:
            if time.time() > end:
                raise TimeoutError(f"{self.slug}: the page shows '{now}' after {timeout:.0f} s, not '{status}'")
            page.wait_for_timeout(20)


def click_matching(page: Any, names: tuple[re.Pattern[str], ...], timeout: float = 10.0) -> str:
    """Click the first visible and enabled button whose name matches one of ``names`` (in that order of
    preference); the name clicked. Waits up to ``timeout`` s for one."""
    end = time.time() + timeout
    while True:
        for name in names:
            buttons = page.get_by_role("button", name=name)
            for i in range(buttons.count()):
                button = buttons.nth(i)
                if button.is_visible() and button.is_enabled():
                    label = button.inner_text(timeout=5000).strip()
                    button.click(timeout=5000)
                    return label
        if time.time() > end:
            raise TimeoutError(f"none of the buttons {[n.pattern for n in names]} could be clicked")
        page.wait_for_timeout(100)


TAKE_SEAT = re.compile(r"^Take the (.+)'s? seat$")


def take_every_seat(page: Any, timeout: float = 30.0) -> None:
    """This browser takes every free seat at its table, through its seat bar (a table's maker may hold them all:
    the hot-seat game), and waits until the bar says they are its own."""
    end = time.time() + timeout
    while True:
        offered = page.get_by_role("button", name=TAKE_SEAT)
        shown = [offered.nth(i) for i in range(offered.count()) if offered.nth(i).is_visible()]
        if not shown:
            return
        label = shown[0].inner_text(timeout=5000).strip()
        seat = TAKE_SEAT.match(label)
        shown[0].click(timeout=5000)
        if seat is not None:
            page.wait_for_function(HAS_TEXT, arg=f"{seat.group(1)}: you", timeout=max(1.0, end - time.time()) * 1000)
        if time.time() > end:
            raise TimeoutError("the seats could not all be taken")


def kzin_move(page: Any) -> str:
    """The decision that needs no card (Fall back in an Invasion, Pass in a Liberation), or New game once over."""
    return click_first(page, ("Fall back", "Pass", "New game"))


KF2100_STATUS = (r"(Turn \d+, [^.]*?\.|Game over: [^.]*\.)"
                 r".*?Figures figure what where status levels left((?: T\d Terminator .*?Heart \d+/\d+)*)")
"""Kung Fu 2100 at a table, as every browser shows it: the turn, phase and who is to act (the first line of the
notice) with the Terminators' rows of the figures table (where each waits or stands, its levels left). Both are
public: a watcher's page shows them as the players' pages do."""
KF2100_DECISIONS = tuple(re.compile(p) for p in (
    r"^I am the (Terminators|Clone Master): show my side$",  # the hot-seat hand-over
    r"^Place the rest automatically$", r"^T\d at the (disposal|loo)$", r"^Stay hidden$", r"^No bonus move$",
    r"^Leave the door$", r"^End ",
    # a combat (none comes of these moves, but a game may start in one): play it out
    r"^Terminators lead$", r"^\w+ \+ \w+", r"\(hit", r"^Lose "))
"""The decisions Kung Fu 2100's load test and benchmark click, the first offered first: each changes the status
(a Terminator waits at an entry, or a step ends) and none enters the lair, so no dice are rolled off the page."""


def kf2100_move(page: Any) -> str:
    """One decision of whoever is to act (the maker holds both seats: the hot-seat game with its hand-over),
    or New game once the game is over."""
    take_every_seat(page)
    if TABLE_PLAYS["kf2100"].shown(page).startswith("Game over"):
        return click_first(page, ("New game",))
    return click_matching(page, KF2100_DECISIONS)


ZOO_STATUS = (r"[\w\" -]*Battle, round \d+ · .*?(?:flick(?: \(or pass\))?: [^.]*\.|starts round \d+\.|"
              r"anywhere in the arena\.|the next round\.|won\.)")
"""Kung-Fu Zoo at a table: its status line (battle, round, score, the animals still fighting or the points on the
table, and whose turn it is). Every page shows it once its own arena has played the last flick out."""
ZOO_PLACES = ((150.0, 150.0), (75.0, 75.0), (225.0, 225.0), (75.0, 225.0), (225.0, 75.0), (150.0, 60.0))
"""Where a die knocked out is placed (arena millimetres), tried in turn until one is free."""
ZOO_STARTS = re.compile(r"^P\d \(\w+\) starts$")
ZOO_FLICK_STARTED = ("window.dojoZooRun !== undefined && window.dojoZooRun !== window.dojoRunBefore && "
                     "window.dojoZooRun.start !== null")
"""The Zoo's page has drawn the first frame of a flick's animation begun since the move (``dojoZooRun`` is the
animation running, set by ``apps.zoo.arena_js.ANIMATE_JS``, its ``start`` the time of its first frame)."""


def zoo_move(page: Any, timeout: float = 30.0) -> str:
    """One move of whoever is to act (the maker holds every team's seat): Next round after a round's result, who
    starts the next round, a knocked-out die placed by clicks on the arena, or the proposed flick committed (its
    default aim; another launch spot when that one is not playable). New game once the battle is over."""
    take_every_seat(page)
    play = TABLE_PLAYS["zoo"]
    end = time.time() + timeout
    while True:
        status = play.shown(page)
        if status.endswith("won."):
            return click_first(page, ("New game",))
        for name in ("Next round", ZOO_STARTS, "Commit flick"):
            button = page.get_by_role("button", name=name, exact=True) if isinstance(name, str) else \
                page.get_by_role("button", name=name)
            if button.count() and button.first.is_visible() and button.first.is_enabled():
                label = button.first.inner_text(timeout=5000).strip()
                button.first.click(timeout=5000)
                return label
        if status.endswith("anywhere in the arena."):
            for x, y in ZOO_PLACES:
                page.evaluate("window.scrollTo(0, 0)")
                page.mouse.click(*page.evaluate(FIGURE_POINT, ["arena", x, y]))
                try:
                    play.wait_change(page, status, timeout=3)
                    return f"placed at {x:g}, {y:g}"
                except Exception:  # refused (a die lies there): the next place
                    continue
        if "flick" in status:  # no playable proposal: another launch spot, then Commit
            spot = page.get_by_label("Launch spot")
            options = [o for o in spot.locator("option").all_inner_texts() if o.strip()]
            if options:
                spot.select_option(options[int(time.time() * 10) % len(options)])
        if time.time() > end:
            raise TimeoutError(f"zoo: no move could be made at '{status}'")
        page.wait_for_timeout(200)


TABLE_PLAYS: dict[str, TablePlay] = {
    # One seat (the Humans): the second browser watches. Every decision ends a turn, so the status changes.
    "kzin": TablePlay("kzin", "track", kzin_move,
                      r"Turn \d+ · Expansion Marker on space \d+|Game over: the \w+ won on turn \d+\."),
    # The maker takes both seats (hot-seat, with the hand-over screen); the second browser watches.
    "kf2100": TablePlay("kf2100", "board", kf2100_move, KF2100_STATUS, prepare=take_every_seat),
    # The maker takes every team's seat; the second browser watches every flick play out on its own arena: the
    # first sign of a flick there is its animation's first frame (``apps.zoo.arena_js``), its status comes after.
    "zoo": TablePlay("zoo", "arena", zoo_move, ZOO_STATUS, prepare=take_every_seat, started=ZOO_FLICK_STARTED,
                     before_move="window.dojoRunBefore = window.dojoZooRun || null;"),
}
"""The games at tables, as the load test and the delay benchmark play them."""
