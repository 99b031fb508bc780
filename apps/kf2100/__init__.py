"""Kung Fu 2100 in the browser: the lair on a clickable board, hot-seat or against the bot, with the odds.

``create_app()`` builds a new :class:`~engine.kf2100.session.KungFuSession` and a :class:`KungFuPage` on it for
every browser tab (or notebook cell). The page is a set of Panel components bound to the session's parameters
(:mod:`apps.kf2100.board`, :mod:`apps.kf2100.controls`, :mod:`apps.kf2100.panels`, :mod:`apps.kf2100.charts`),
and what they show is computed by the pure functions of :mod:`apps.kf2100.views` from typed actions.
"""

from __future__ import annotations

from apps.kf2100.page import TITLE, KungFuPage
from engine.kf2100.session import KungFuSession

DESCRIPTION = ("Terminators storm the Clone Master's lair on a clickable map: hot-seat, against the bot or solo, "
               "with the odds of every chit.")
ORDER = 2


def create_app(served: bool = False) -> KungFuPage:
    """A new session and page; a served page (``dojo serve`` says so) paces the bots' turns and autosaves, a
    notebook cell plays the bots at once and keeps nothing on disk."""
    return KungFuPage(session=KungFuSession(hand_over=True, pace=served), served=served)


__all__ = ["DESCRIPTION", "ORDER", "TITLE", "KungFuPage", "create_app"]
