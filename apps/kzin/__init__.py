"""Man-Kzin Wars in the browser: the track, the cards in play, the decisions and the odds behind them.

``create_app()`` builds a new :class:`~engine.kzin.session.KzinSession` and a :class:`KzinPage` on it for
every browser tab (or notebook cell). The page is a set of Panel components bound to the session's
parameters (:mod:`apps.kzin.controls`, :mod:`apps.kzin.panels`, :mod:`apps.kzin.charts`), and what they show
is computed by the pure functions of :mod:`apps.kzin.views`.
"""

from __future__ import annotations

import panel as pn

from apps.kzin.page import TITLE, KzinPage

DESCRIPTION = "Hold off the Kzinti from Earth to their Home Worlds, with the exact odds of every battle on screen."
ORDER = 1


def create_app(served: bool = False) -> KzinPage:
    """A new session and page; a served page (``dojo serve`` says so) keeps its game on disk, a notebook cell
    keeps nothing."""
    return KzinPage(autosave=served)


def create_table_app() -> pn.viewable.Viewable:
    """The page of a Man-Kzin Wars table (what ``dojo serve`` shows at ``/kzin``): the table of ``?table=``, or a
    new one; the game's own autosave is the table's file, and its games are dealt from secret seeds."""
    from apps._tables import table_page

    return table_page("kzin", lambda table, _token, may_act: KzinPage(session=table.session, may_act=may_act,
                                                                      secret_seed=True))


__all__ = ["DESCRIPTION", "ORDER", "TITLE", "KzinPage", "create_app", "create_table_app"]
