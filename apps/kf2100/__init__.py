"""Kung Fu 2100 in the browser: the lair on a clickable board, hot-seat or against the bot, with the odds.

``create_app()`` builds a new :class:`~engine.kf2100.session.KungFuSession` and a :class:`KungFuPage` on it for
every browser tab (or notebook cell). The page is a set of Panel components bound to the session's parameters
(:mod:`apps.kf2100.board`, :mod:`apps.kf2100.controls`, :mod:`apps.kf2100.panels`, :mod:`apps.kf2100.charts`),
and what they show is computed by the pure functions of :mod:`apps.kf2100.views` from typed actions.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import panel as pn

from apps.kf2100.page import TITLE, KungFuPage
from apps.kf2100.sides import Sides, held_sides
from engine.core.session import BOT
from engine.core.tables import Table
from engine.kf2100.session import KungFuSession

DESCRIPTION = ("Terminators storm the Clone Master's lair on a clickable map: hot-seat, against the bot or solo, "
               "with the odds of every chit.")
ORDER = 2


def create_app(served: bool = False) -> KungFuPage:
    """A new session and page; a served page (``dojo serve`` says so) paces the bots' turns and autosaves, a
    notebook cell plays the bots at once and keeps nothing on disk."""
    return KungFuPage(session=KungFuSession(hand_over=True, pace=served), served=served)


def table_game_page(table: Table, token: str, may_act: Callable[..., bool]) -> KungFuPage:
    """A browser's page of a Kung Fu 2100 table: it shows and plays the sides of the seats its browser (``token``)
    holds, and follows them as the browser takes or leaves seats (``may_act`` is the table's seat bar's gate)."""
    sides = Sides(held=held_sides(table.seat_names(), table.seats_of(token)))

    def follow(*_events: Any) -> None:
        held = held_sides(table.seat_names(), table.seats_of(token))
        if held != sides.held:
            sides.held = held

    # Made while the page is built, so it goes when the page closes; after the table's hand-over watcher (a
    # higher precedence runs later), so the page redrawn for its new seats sees the hand-over as it now is.
    table.param.watch(follow, ["seats"], precedence=1)
    return KungFuPage(session=table.session, may_act=may_act, sides=sides, at_table=True, served=True)


_HAND_OVER_KEPT: weakref.WeakSet[Table] = weakref.WeakSet()
"""The tables whose hand-over :func:`keep_hand_over` already follows (a table dropped from memory leaves it)."""


def keep_hand_over(table: Table) -> None:
    """The table's hot-seat hand-over is on while one browser holds both seats (today's hand-over screen), off
    while two browsers hold one side each (each screen shows only its own side). Watched once per table."""
    if table in _HAND_OVER_KEPT:
        return

    def follow(*_events: Any) -> None:
        holders = [h for h in table.seats.values()]
        one_browser = len(holders) == 2 and holders[0] == holders[1] and holders[0] not in (None, BOT)
        if table.session.hand_over != one_browser:
            table.session.hand_over = one_browser

    table.param.watch(follow, ["seats"])
    _HAND_OVER_KEPT.add(table)
    follow()


def create_table_app() -> pn.viewable.Viewable:
    """The page of a Kung Fu 2100 table (what ``dojo serve`` shows at ``/kf2100``): the table of ``?table=``, or a
    new one; two browsers play one side each, a side plays a bot, or one browser holds both seats (hot-seat)."""
    from apps._tables import TablePage, table_page

    page = table_page("kf2100", table_game_page)
    if isinstance(page, TablePage):
        keep_hand_over(page.table)
    return page


__all__ = ["DESCRIPTION", "ORDER", "TITLE", "KungFuPage", "create_app", "create_table_app", "keep_hand_over",
           "table_game_page"]
