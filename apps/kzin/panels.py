"""The Man-Kzin Wars advisor and running odds: rollouts worked out off the page's event loop.

Both are async generators bound to the session's ``version`` with ``pn.bind``: Panel runs them on the
page's event loop (or the notebook kernel's), starts the first once the page is loaded (``defer_load``),
cancels the run a newer version supersedes, and cancels it when the tab closes. The rollouts themselves run
in ``asyncio.to_thread`` over a snapshot taken on the loop, and the results come back to the loop before any
parameter changes, so no thread writes to a page. Every change the work makes is made on the page's next tick
(:func:`apps.live.in_turn`), in turn with the page's own: made from the task, its message could overtake a move's.

A move's redraw of every page at a table goes out before this work starts (:func:`after_redraws`), and the work
shows itself through panes made once and bound to its parameters (a spinner's text, a progress bar): a
generator that yielded a new pane at every step made Panel build and send new models and lay the page out
again, on the server and in every browser, ahead of the move itself (measured: the other browser's status
waited up to 1.4 s behind the advisor's spinner and the running odds at a table on a loaded machine).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from functools import partial
from typing import Any

import panel as pn
import param

from apps.busy import BUSY_CSS, FAILED, busy_html
from apps.commands import on_page
from apps.kzin import views
from apps.kzin.controls import KzinView
from apps.live import in_turn
from engine.kzin.advisor import Advice, advise_until_sure
from engine.kzin.session import estimate_turn

LEFT_TABLE = ":host table td, :host table th { text-align: left !important; }"
MUTED = {"color": "#6b7280", "font-size": "12px"}


def advisor_busy(doing: str) -> str:
    """What the advisor is doing in the background, after a spinner ('' when it is doing nothing)."""
    return busy_html(f"The advisor is {doing} in the background…" if doing else "")


def running_html(said: str, busy: bool, progress: float) -> str:
    """What the running odds say of themselves, after a progress bar while several turns are worked out."""
    bar = f"<progress max='100' value='{round(100 * progress)}' style='width:100%;height:12px'></progress>" \
        if busy else ""
    return f"{bar}<div>{views.html.escape(said)}</div>" if said or busy else ""


REDRAWS_FIRST_S = 0.02
"""Seconds the background work of a move waits on the event loop before it starts (see :func:`after_redraws`)."""


async def after_redraws() -> None:
    """Let what a move queued on the server's event loop run before its background work: the redraw of every
    page at the table (Panel schedules each other page's update onto that page's next tick) and its message to
    the browser. The work's first step is queued by the same move, ahead of those redraws; a timer puts it back
    behind them, and behind the steps they queue in turn, however long they hold the loop."""
    await asyncio.sleep(REDRAWS_FIRST_S)


class Advisor(KzinView):
    """The advisor's ranking of the options of the decision in view, and a button that plays its choice.

    The work (an async generator: a spinner while the rollouts run, then nothing) and what is shown (a plain
    function of the advice, the version and predict-then-see) are bound apart, so showing or hiding the advice
    never runs the rollouts again."""

    advice = param.Parameter(default=None, doc="(version, Advice): the advice for the game at that version.")
    error = param.String(default="", doc="Why the advisor failed, if it did.")
    sure_of = param.Integer(default=-1, doc="The version whose advice is played on until the best is separated.")
    may_act = param.Callable(default=None, doc="Called before the advice is followed: False refuses the click "
                             "(a table's watcher); None on a page of one's own.")
    thinking = param.String(default="", doc="What the advisor is doing in the background ('' when it is not).")

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        s, live = self.session, self.live
        self.follow = pn.widgets.Button(
            label="Follow the advice", color="success", margin=(4, 6),
            disabled=pn.bind(lambda advice, version: self.ready(advice, version) is None, self.param.advice,
                             live.param.version),
            visible=pn.bind(lambda _v: s.decision() is not None, live.param.version))
        self.follow.on_click(on_page(self.follow_advice, s))
        self.play_on = pn.widgets.Button(
            label="Play on to be sure", margin=(4, 6),
            disabled=pn.bind(lambda advice, version: not self.can_play_on(advice, version), self.param.advice,
                             live.param.version),
            visible=pn.bind(lambda _v: s.decision() is not None, live.param.version))
        self.play_on.on_click(on_page(self.be_sure, s))
        # Who advises: today's rollouts, or the learned expert (the session's own parameter, so a game played
        # by "Follow the advice" follows the same one).
        # At a table the session is shared: the choice goes through may_act (a watcher's click is refused and the
        # buttons go back to the table's advisor), and follows another browser's choice.
        self.choice = pn.widgets.RadioButtonGroup(
            label="Advisor", options={"Rollouts": "rollouts", "Expert": "expert"}, value=s.advisor,
            color="primary", variant="outline", margin=(4, 6))
        self.choice.param.watch(lambda e: on_page(lambda: self.choose_advisor(e.new), s)(e), "value")
        live.param.watch(lambda e: setattr(self.choice, "value", e.new), "advisor")
        # defer_load: Panel starts the work once the browser has loaded the page. An async update that lands
        # before then is made outside the document lock, where Panel cannot yet send it, and is lost.
        self._work = pn.panel(pn.bind(self._think, live.param.version, live.param.advisor_rollouts,
                                      self.param.sure_of, live.param.advisor), defer_load=True,
                              sizing_mode="stretch_width")
        # What the work shows, made once: a step of the work changes a text or a visibility, never a whole pane.
        # One pane whose text comes and goes (a spinner drawn by CSS, and what the advisor does): never hidden and
        # shown again, since a browser lays the whole page out again (every chart redrawn) when a part of it is.
        self._busy = pn.pane.HTML(self.param.thinking.rx.pipe(advisor_busy), stylesheets=[BUSY_CSS],
                                  sizing_mode="stretch_width", margin=(0, 6), name="advisor-busy")
        self._failed = pn.pane.HTML(self.param.error.rx.pipe(views.html.escape), styles=FAILED,
                                    visible=self.param.error.rx.pipe(bool), name="advisor-failed")
        # The advice as shown: a text and the options' table, each made once and bound (a new pane per advice made
        # Panel build and send new models, and lay the page out again, at every move of every page at a table).
        deps = (self.param.advice, live.param.version, live.param.predict, live.param.guess)
        self._said = pn.pane.HTML(pn.bind(lambda *d: self._show(*d)[0], *deps), sizing_mode="stretch_width",
                                  name="advice")
        self._options = pn.pane.DataFrame(pn.bind(lambda *d: self._show(*d)[1], *deps), index=False,
                                          sizing_mode="stretch_width", stylesheets=[LEFT_TABLE])  # empty when None
        self._shown = pn.Column(self._said, self._options, sizing_mode="stretch_width")

    def ready(self, advice: tuple[int, Advice] | None, version: int) -> Advice | None:
        """The advice for the game at ``version``, once it has been worked out."""
        return advice[1] if advice is not None and advice[0] == version else None

    def can_play_on(self, advice: tuple[int, Advice] | None, version: int) -> bool:
        """More rollouts can settle something: the advice is in, and its best option is not yet separated."""
        a = self.ready(advice, version)
        margin = None if a is None else a.margin()
        return margin is not None and not margin.separated and self.sure_of != version

    def be_sure(self) -> None:
        """Add rollouts to this decision's advice until the best option is separated from the next (or the two
        are as good as each other, or its most rollouts are reached); the earlier advice is withdrawn meanwhile,
        so "Follow the advice" waits for the surer one."""
        self.param.update(sure_of=self.session.version, advice=None)

    def choose_advisor(self, advisor: str) -> bool:
        """Let ``advisor`` advise this game, if this browser may act for it (else the buttons show the game's)."""
        if advisor == self.session.advisor:
            return False
        if self.may_act is not None and not self.may_act():
            self.choice.value = self.session.advisor
            return False
        self.session.advisor = advisor
        return True

    def follow_advice(self) -> bool:
        if self.may_act is not None and not self.may_act():
            return False
        advice = self.ready(self.advice, self.session.version)
        if advice is None:
            self.session.refuse("the advisor is still playing out the options")
            return False
        return self.session.play_advice(advice, self.session.version)

    async def _think(self, version: int, rollouts: int, sure_of: int, advisor: str = "rollouts"
                     ) -> AsyncIterator[Any]:
        """The advice for the game at ``version``, worked out in a worker thread once the move's redraws are out
        (an async generator that shows nothing itself: the panes bound to ``thinking``, ``error`` and ``advice``
        do)."""
        s = self.session
        if s.decision() is None:
            in_turn(partial(self.param.update, thinking=""))
            return
        # Another advisor was chosen: the earlier advice is withdrawn until the new one is in.
        withdrawn = {"advice": None} if self.advice is not None and self.advice[0] == version else {}
        state = s.state.clone()
        sure = sure_of == version
        in_turn(partial(self.param.update, thinking="playing on until the best option is separated" if sure
                        else "playing out the options", **withdrawn))
        await after_redraws()
        stop = threading.Event()  # set when this run is superseded: a play-on stops at its next doubling
        try:
            if sure:
                advice = await asyncio.to_thread(advise_until_sure, state, rollouts, s.seed + state.turn, stop=stop)
            else:
                advice = await asyncio.to_thread(s.advice_for, state, version)
        except Exception as exc:  # the page must hear of it: a silent spinner would never stop
            in_turn(partial(self.param.update, error=f"The advisor failed: {exc!r}", thinking=""))
            return
        finally:
            stop.set()
        if s.version == version:  # else the game moved on meanwhile: the newer run shows its own advice
            in_turn(partial(self._advised, version, advice))
        return
        yield  # an async generator that shows nothing itself

    def _advised(self, version: int, advice: Advice | None) -> None:
        """Show the advice worked out for the game at ``version`` (None: there was none to give), if it is still
        that game's."""
        if self.session.version != version:
            return
        if advice is None:
            self.thinking = ""
        else:
            self.param.update(advice=(version, advice), error="", thinking="")

    def _show(self, advice: tuple[int, Advice] | None, version: int, predict: bool, guess: float | None
              ) -> tuple[str, Any]:
        """What the advice part says (HTML) and the table of its options (None: no table now)."""
        s = self.session
        if s.decision() is None:
            return "<p>No decision to advise on.</p>", None
        a = self.ready(advice, version)
        if a is None:
            return "", None
        if predict and guess is None:  # its table gives every option's battle chance: predict first
            return ("<p>Predict, then see: the advisor's odds appear once you have typed your estimate of the battle "
                    "you choose.</p>", None)
        return views.advice_html(a) + views.margin_html(a), views.advice_frame(a)

    def __panel__(self) -> pn.viewable.Viewable:
        return pn.Column(self.choice, self._work, self._busy, self._failed, self._shown,
                         pn.Row(self.follow, self.play_on), sizing_mode="stretch_width")


class RunningOdds(KzinView):
    """Estimates the chance of winning the game from the start of every turn, by rollouts, as the game goes."""

    rollouts = param.Integer(default=2000, bounds=(100, None), doc="Rollouts per turn.")
    busy = param.Boolean(default=False, doc="Estimates are being worked out.")
    progress = param.Number(default=1.0, bounds=(0, 1), doc="How far the estimates of this move are.")
    error = param.String(default="", doc="Why the estimates failed, if they did.")
    said = param.String(default="", doc="What the estimates say of themselves (how many turns, how far).")

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self._work = pn.panel(pn.bind(self._estimate, self.live.param.version), defer_load=True,
                              sizing_mode="stretch_width")  # started once the page is loaded (see Advisor)
        # Made once and bound (see the module's docstring): a progress bar in the text, for several turns at once.
        # One pane whose text changes: a part hidden and shown makes a browser lay the whole page out again.
        self._said = pn.pane.HTML(pn.bind(running_html, self.param.said, self.param.busy, self.param.progress),
                                  styles=MUTED, margin=(0, 10), sizing_mode="stretch_width", name="running-said")
        self._view = pn.Column(self._work, self._said, sizing_mode="stretch_width")

    async def _estimate(self, version: int) -> AsyncIterator[Any]:
        """The turns not yet estimated, each in a worker thread once the move's redraws are out (an async
        generator that shows nothing itself: the bar and the text bound to this panel's parameters do)."""
        s = self.session
        game, rules, seed, todo = s.game_number, s.state.rules, s.seed, s.running_odds_todo()
        many = len(todo) > 1  # one turn takes milliseconds: no progress bar for it
        try:
            if todo:
                await after_redraws()
            for i, entry in enumerate(todo):
                if many:
                    in_turn(partial(self.param.update, busy=True, progress=i / len(todo),
                                    said=f"Estimating by rollouts in the background… {i / len(todo):.0%}"))
                result = await asyncio.to_thread(estimate_turn, rules, entry["snapshot"], self.rollouts,
                                                 seed + entry["turn"])
                if s.game_number != game:
                    return  # another game is in play now
                in_turn(partial(s.record_running_odds, game, [result]))  # dropped there if a new game began
        except Exception as exc:
            failed = f"The running odds failed: {exc!r}"
            in_turn(partial(self.param.update, busy=False, error=failed, said=failed))
            return
        finally:
            in_turn(partial(setattr, self, "busy", False))
        in_turn(partial(self._estimated, game))
        return
        yield  # an async generator that shows nothing itself

    def _estimated(self, game: int) -> None:
        if self.session.game_number == game:
            self.param.update(progress=1.0, error="", said=f"{len(self.session.running_odds)} turn(s) estimated by "
                              "rollouts of the threshold policy, each with its 95% interval.")

    def __panel__(self) -> pn.viewable.Viewable:
        return self._view
