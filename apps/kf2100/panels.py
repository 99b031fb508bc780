"""The Kung Fu 2100 page's background work: the bots' paced turns and the whole-combat outlook.

Both are async generators bound with ``pn.bind`` to the session's ``version`` (the outlook: as its page follows
it on its own document): Panel runs them on the page's event loop (or the notebook kernel's), starts the first
once the page is loaded (``defer_load``), cancels the
run a newer version supersedes, and cancels it when the tab closes. The work itself runs in
``asyncio.to_thread`` over a snapshot taken on the loop (the state and the generator copied), and the result
comes back to the loop before any parameter changes, so no thread writes to a page or to the session.
"""

from __future__ import annotations

import asyncio
import html
from collections.abc import AsyncIterator
from functools import partial
from typing import Any

import panel as pn
import param

from apps.busy import BUSY_CSS, FAILED, busy_html
from apps.kf2100 import charts, views
from apps.live import in_turn, on_page_of, page_document
from engine.core import IllegalActionError
from engine.core.rng import clone_rng
from engine.kf2100.odds import CombatOdds
from engine.kf2100.session import KungFuSession, outlook_open


class BotTurns(pn.viewable.Viewer):
    """Plays the bots' and the dice's steps of a paced session one at a time, ``delay`` ms apart, so a served
    page shows the bot's turn unfold. Outside a paced session (a notebook) the session plays them at once."""

    session = param.ClassSelector(class_=KungFuSession)
    delay = param.Integer(default=350, bounds=(20, 3000), doc="Milliseconds between bot steps.")
    active = param.Boolean(default=True, doc="Play the steps (a served page); off, whoever drives the page steps.")
    error = param.String(default="", doc="Why the bot failed, if it did.")

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        # The work shows nothing itself; why it failed is a pane made once and bound (see apps.busy).
        work = pn.panel(pn.bind(self._play, self.session.param.version), defer_load=True, margin=0)
        failed = pn.pane.HTML(self.param.error.rx.pipe(html.escape), styles=FAILED, margin=0, name="bot-failed")
        self._view = pn.Column(work, failed, margin=0)

    async def _play(self, version: int) -> AsyncIterator[Any]:
        """The step of the bot or the dice at ``version``, ``delay`` ms after it (an async generator that shows
        nothing itself)."""
        s = self.session
        if not s.pending or not s.pace or not self.active:
            return
        await asyncio.sleep(self.delay / 1000)
        if s.version != version:
            return  # a newer run plays the next step
        state, rng = s.state.clone(), clone_rng(s.rng)
        try:
            action = await asyncio.to_thread(s.next_step, state, rng)
        except Exception as exc:  # the page must hear of it: a silent bot would never move
            in_turn(partial(setattr, self, "error", f"The bot failed: {exc!r}"))
            return
        in_turn(partial(self._step, action, version, rng))  # in turn with the page's own changes (apps.live)
        return
        yield  # an async generator that shows nothing itself

    def _step(self, action: Any, version: int, rng: Any) -> None:
        """Play the step worked out for the game at ``version`` (refused if the game moved on meanwhile)."""
        try:
            self.session.play_step(action, version, rng)
        except IllegalActionError:
            return  # the game moved on meanwhile (a new game, a load): the newer run takes over
        if self.error:
            self.error = ""

    def play_all(self) -> None:
        """Play every pending bot and dice step now (tests, notebooks, the benchmark)."""
        while self.session.pending:
            self.session.step()

    def __panel__(self) -> pn.viewable.Viewable:
        return self._view


class Outlook(pn.viewable.Viewer):
    """The hits each side may take in the combat about to be fought (both sides played as the bots would),
    worked out before any chit is chosen, so it reveals nothing either side has picked."""

    session = param.ClassSelector(class_=KungFuSession)
    outlook = param.Parameter(default=None, doc="(combat key, CombatOdds): the outlook of the combat at that key.")
    max_nodes = param.Integer(default=6000, doc="Nodes of the exact search before the outlook is simulated.")
    games = param.Integer(default=400, doc="Simulated combats when the exact search is too large.")
    error = param.String(default="", doc="Why the outlook failed, if it did.")
    working = param.String(default="", doc="What the outlook is working out in the background ('' when nothing).")
    shown = param.Tuple(default=(None, None), length=2, doc="(combat key, CombatOdds or None): what is shown; set "
                        "only when it changes, so the chart is not redrawn on every click")
    followed = param.Integer(default=0, doc="Bumped on this page's own document after each change of the game: what "
                             "the work is bound to (a move from another browser at the table would build the spinner's "
                             "panes in that browser's callback, with its document's stylesheets).")

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        s = self.session
        self._work = pn.panel(pn.bind(self._think, self.param.followed), defer_load=True, margin=0)
        self._busy = pn.pane.HTML(self.param.working.rx.pipe(busy_html), stylesheets=[BUSY_CSS], margin=0,
                                  name="outlook-busy")
        self._failed = pn.pane.HTML(self.param.error.rx.pipe(html.escape), styles=FAILED, margin=0,
                                    name="outlook-failed")
        # The outlook comes back in an async task and a move may come from another browser at the table: the
        # chart follows on this page's document either way.
        doc = page_document()
        self.param.watch(on_page_of(doc, self._follow), ["outlook"])
        s.param.watch(on_page_of(doc, self._follow), ["version"])
        s.param.watch(on_page_of(doc, lambda: self.param.trigger("followed")), ["version"])
        self._follow()
        self.chart = charts.hits(lambda: self.shown[1], self, "shown", margin=0)
        self.note = pn.pane.HTML(pn.bind(lambda shown: views.outlook_note(shown[1], shown[0]), self.param.shown),
                                 width=420, margin=(0, 6), styles={"font-size": "12px"}, name="outlook")

    def _follow(self, *_events: Any) -> None:
        shown = (self.session.combat_key(), self.current())
        if shown[0] != self.shown[0] or shown[1] is not self.shown[1]:
            self.shown = shown

    def current(self) -> CombatOdds | None:
        """The outlook of the combat in view, once it has been worked out."""
        o = self.outlook
        key = self.session.combat_key()
        return o[1] if o is not None and key is not None and o[0] == key else None

    async def _think(self, _followed: int) -> AsyncIterator[Any]:
        """The outlook of the combat in view, worked out in a worker thread (an async generator that shows nothing
        itself: the panes bound to ``working`` and ``error`` do)."""
        s = self.session
        key = s.combat_key()
        if key is None or not outlook_open(s.state) or self.current() is not None:
            if self.working or self.error:
                in_turn(partial(self.param.update, working="", error=""))
            return
        state = s.state.clone()
        in_turn(partial(setattr, self, "working", "Working out the whole combat in the background…"))
        try:
            result = await asyncio.to_thread(s.outlook_for, state, key, self.max_nodes, self.games)
        except Exception as exc:
            in_turn(partial(self.param.update, error=f"The outlook failed: {exc!r}", working=""))
            return
        if s.combat_key() == key:  # made in turn with the page's own changes (apps.live.in_turn)
            in_turn(partial(self._worked_out, key, result))
        return
        yield  # an async generator that shows nothing itself

    def _worked_out(self, key: Any, result: CombatOdds) -> None:
        if self.session.combat_key() == key:
            self.param.update(outlook=(key, result), error="", working="")

    def work_out(self) -> CombatOdds | None:
        """Work the outlook out here and now (tests, notebooks, the benchmark)."""
        key = self.session.combat_key()
        if key is None or not outlook_open(self.session.state):
            return self.current()
        self.outlook = (key, self.session.outlook_for(self.session.state.clone(), key, self.max_nodes, self.games))
        return self.current()

    def __panel__(self) -> pn.viewable.Viewable:
        return pn.Column(self._work, self._busy, self._failed, self.chart, self.note, margin=0)
