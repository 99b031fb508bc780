"""Kung-Fu Zoo in the browser: drag a flick on the arena, see its odds first, watch it play out.

``create_app()`` builds a new :class:`~engine.zoo.session.ZooSession` and a :class:`ZooPage` on it for every
browser tab (or notebook cell). The page is a set of Panel components bound to the session's parameters:
the arena and its animation (:mod:`apps.zoo.arena`, which alone reads the dice through
:mod:`apps.zoo.adapter`), the odds, heat map and bots worked out off the page's loop (:mod:`apps.zoo.panels`),
the controls (:mod:`apps.zoo.controls`), and the texts, pure functions of the session (:mod:`apps.zoo.views`).
"""

from __future__ import annotations

import weakref

from apps.zoo.page import TITLE, ZooPage
from apps.zoo.work import SharedWork
from engine.core.tables import Table

DESCRIPTION = "Flick animal dice into the cages: drag the flick on the arena and see its odds before you commit."
ORDER = 3


def create_app(served: bool = False) -> ZooPage:
    """A new session and page; on a served page (``dojo serve`` says so) flicks animate in the browser and the
    game is autosaved; a notebook cell keeps nothing on disk."""
    return ZooPage(served=served)


def create_table_app() -> object:
    """The page of a Kung-Fu Zoo table (what ``dojo serve`` shows at ``/zoo``): the table of ``?table=``, or a new
    one. The number of teams (2 to 4) is set in its Game box, Players then New game, by its maker alone (a
    player's seat would go from under them); each browser takes one team's seat (one browser may hold them all:
    the hot-seat game), and every flick animates on every page at the table."""
    from apps._tables import table_page

    return table_page("zoo", lambda table, _token, may_act: ZooPage(session=table.session, served=True,
                                                                     may_act=may_act, shared=table_work(table)))


_TABLE_WORK: weakref.WeakKeyDictionary[Table, SharedWork] = weakref.WeakKeyDictionary()


def table_work(table: Table) -> SharedWork:
    """The table's odds and heat-map work, shared by all its pages (it goes with the table)."""
    found = _TABLE_WORK.get(table)
    if found is None:
        found = _TABLE_WORK[table] = SharedWork()
    return found


__all__ = ["DESCRIPTION", "ORDER", "TITLE", "ZooPage", "create_app", "create_table_app", "table_work"]
