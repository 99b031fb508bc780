"""Which sides of a Kung Fu 2100 game a page shows and plays, and so what its views may read.

A page of one's own (a tab, a notebook cell) holds both sides: it shows what the screen may show now (the side
that has taken the screen, or only public information while a hot-seat hand-over is due). At a table, a page
holds the seats of its browser: one side (it shows that side's ``player_view``: the other side's face-down
counters anonymous and its unplayed chits a count), both (hot-seat on one screen, with the hand-over), or none
(a watcher: the public view). Every part of the page that could carry a secret (the counters, the figures and
combat tables, the decisions, the odds of the legal moves, the armed chit, the notice) is made from
:meth:`Sides.view` or only for the side this page acts for (:meth:`Sides.acting`), so a secret of a side the
page does not hold never enters its browser's models.
"""

from __future__ import annotations

from typing import Any

import param

from engine.core.session import Level, Notice
from engine.kf2100.session import KungFuSession

BOTH = (0, 1)


class Sides(param.Parameterized):
    """The sides this page holds (a table's page follows its browser's seats)."""

    held = param.List(default=list(BOTH), item_type=int, doc="The sides this page shows and plays (0: the "
                      "Terminators, 1: the Clone Master); both on a page of one's own, none for a watcher.")

    def both(self) -> bool:
        return set(self.held) == set(BOTH)

    def view(self, s: KungFuSession) -> dict[str, Any]:
        """The board as this page may show it."""
        if self.both():
            return s.screen_view()
        if len(self.held) == 1:
            return s.state.player_view(self.held[0])
        return s.public_view()

    def acting(self, s: KungFuSession) -> int | None:
        """The side this page decides for now (None while the other side, a bot, the dice or a hand-over is due)."""
        player = s.person_to_move()
        return player if player is not None and player in self.held and s.handover is None else None

    def notice(self, s: KungFuSession) -> Notice:
        """The session's notice where it is this page's to read (this page holds the side to move, or the game is
        over); elsewhere the public prompt, since a notice answers the mover's clicks and may name their pieces."""
        player = s.state.current_player()
        if self.both() or player in self.held or s.state.is_terminal():
            return s.notice
        return Notice(s.prompt(), Level.INFO)


def held_sides(seat_names: list[str], mine: list[str]) -> list[int]:
    """The sides of the seats ``mine`` (a table's seat names are the sides' names, in order)."""
    return [i for i, name in enumerate(seat_names) if name in mine]


__all__ = ["BOTH", "Sides", "held_sides"]
