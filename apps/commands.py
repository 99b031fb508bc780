"""How a click reaches a session: every dashboard's widget handlers are made here.

A click runs its command through ``pn.state.execute(schedule=True)``, which Panel documents for work that
must change a served page: on a served page it runs on the page's next tick under the document lock, so
everything the command changes reaches the browser even when Panel delivered the click outside the lock (a
click in the moments before the browser has reported the page loaded); in a notebook or a test it runs at once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import panel as pn


class Versioned(Protocol):
    """A session as a click sees it: its ``version`` moves on with the game, and ``refuse`` says why not."""

    version: int

    def refuse(self, text: str) -> None: ...


def on_page(command: Callable[[], Any], session: Versioned | None = None) -> Callable[[Any], None]:
    """A widget's handler that runs ``command`` through ``pn.state.execute(schedule=True)``.

    With ``session``, the click is for the game as it was when it was made: if the game has moved on by the
    time it runs (a double click on Fall back), it is refused instead of being played on the next turn."""

    def handler(_event: Any) -> None:
        version = None if session is None else session.version

        def run() -> None:
            if session is not None and session.version != version:
                session.refuse("that click was for an earlier moment of the game: the game had moved on")
                return
            command()

        pn.state.execute(run, schedule=True)

    return handler
