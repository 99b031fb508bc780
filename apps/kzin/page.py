"""The Man-Kzin Wars page: the track, the cards in play, the decisions and the odds behind them.

:class:`KzinPage` lays out the components over one :class:`~engine.kzin.session.KzinSession`. Every part is
bound to the session's parameters, so the same page is live in a served tab and in a notebook cell.
"""

from __future__ import annotations

import html
from functools import partial
from typing import Any

import panel as pn
import param

from apps.kzin import charts, views
from apps.kzin.controls import CardTiles, Decisions, GameControls, KzinView
from apps.kzin.panels import LEFT_TABLE, Advisor, RunningOdds
from apps.live import in_this_document
from engine.core.session import Notice
from engine.kzin.session import KzinSession

BOX = {"background": "#ffffff", "border": "1px solid #e5e7eb", "border-radius": "10px",
       "padding": "4px 12px 10px 12px", "box-shadow": "0 1px 3px rgba(0,0,0,0.06)"}
NOTICE_CSS = """
:host .notice { padding: 10px 14px; border-radius: 6px; border: 1px solid; font-size: 14px; }
:host .info { background: #eff6ff; border-color: #bfdbfe; color: #1e3a8a; }
:host .success { background: #f0fdf4; border-color: #bbf7d0; color: #14532d; }
:host .warning { background: #fffbeb; border-color: #fde68a; color: #78350f; }
:host .danger { background: #fef2f2; border-color: #fecaca; color: #7f1d1d; }
"""


def box(title: str, *objects: Any, **kwargs: Any) -> pn.Column:
    """A white card with a heading."""
    return pn.Column(pn.pane.Markdown(f"### {title}", margin=(0, 0, -8, 0)), *objects, styles=BOX,
                     margin=(6, 6), sizing_mode="stretch_width", **kwargs)


def notice_html(notice: Notice) -> str:
    """A notice as an alert box: its text is escaped, so a file's words can never become markup."""
    if not notice.text:
        return ""
    return f"<div class='notice {notice.level.value}' role='status'>{html.escape(notice.text)}</div>"


class KzinPage(pn.viewable.Viewer):
    """One Man-Kzin Wars game on a page (a browser tab or a notebook cell)."""

    session = param.ClassSelector(class_=KzinSession, doc="The game this page plays.")
    autosave = param.Boolean(default=False, doc="Keep the game on disk after every change (a served page).")
    running_rollouts = param.Integer(default=2000, bounds=(100, None), doc="Rollouts per turn for the running odds.")
    may_act = param.Callable(default=None, doc="At a table: called (move=True for a move, False for a new game, a "
                             "file or the page's options) before a click changes the game; it says why not on this "
                             "page and returns False for a watcher or a browser without the seat.")
    secret_seed = param.Boolean(default=False, doc="At a table: games are dealt from secret seeds no page shows.")

    def __init__(self, **params: Any) -> None:
        if params.get("session") is None:
            params["session"] = KzinSession()
        super().__init__(**params)
        s = self.session
        # Every part follows one copy of the session's parameters made in this page's document: at a table another
        # browser's move changes the shared session while its own document is current, and the copy brings the
        # change to this page on one tick of its own (see apps.live).
        self.live = in_this_document(s, *KzinView.LIVE)
        self.charts_live = in_this_document(s, *CHARTS_LIVE, charts=True)
        parts = {"session": s, "live": self.live}
        self.tiles = CardTiles(**parts, may_act=self.may_act)
        self.decisions = Decisions(**parts, may_act=self.may_act)
        self.controls = GameControls(**parts, autosave=self.autosave, may_act=self.may_act,
                                     secret_seed=self.secret_seed)
        self.advisor = Advisor(**parts, may_act=self.may_act)
        self.running = RunningOdds(**parts, rollouts=self.running_rollouts)
        self._layout = self._build()

    def _bound(self, fn: Any, *deps: Any) -> Any:
        """``fn(session)`` recomputed when any of ``deps`` (session parameters) changes."""
        return pn.bind(lambda *_values: fn(self.session), *deps)

    def _build(self) -> pn.Column:
        s, live = self.session, self.live
        v, sel = live.param.version, live.param.selection
        html_pane = pn.pane.HTML
        status = html_pane(self._bound(views.status_html, v), margin=(0, 10), align="center")
        notice = html_pane(pn.bind(notice_html, live.param.notice), stylesheets=[NOTICE_CSS], margin=(0, 10),
                           sizing_mode="stretch_width", name="notice")
        track = charts.track(s, self.charts_live, sizing_mode="stretch_width")
        table_box = box(
            "The table",
            pn.pane.Markdown("**Drawn this turn**", margin=(0, 4)), html_pane(self._bound(views.drawn_html, v)),
            pn.pane.Markdown("**Your Fleets and Tactics** (click to select for the commitment)", margin=(0, 4)),
            self.tiles, self.decisions,
            html_pane(self._bound(views.table_html, v), margin=0, sizing_mode="stretch_width"))
        forces = charts.forces(s, self.charts_live, sizing_mode="stretch_width",
                                   visible=pn.bind(lambda _v: s.decision() is not None, v))
        predict = pn.widgets.Checkbox(label="Predict, then see (hide the exact chance until I have guessed)",
                                      value=s.predict)
        predict.param.watch(lambda e: pn.state.execute(partial(self._set_predict, predict, e.new), schedule=True),
                            "value")
        live.param.watch(lambda e: setattr(predict, "value", e.new), "predict")  # another browser at the table
        guess = pn.widgets.FloatInput(label="Your estimate (%)", start=0, end=100, step=1, width=140, value=None,
                                      visible=pn.bind(lambda _v, _s, p: p and s.battle() is not None, v, sel,
                                                      live.param.predict))
        guess.param.watch(lambda e: pn.state.execute(partial(self._take_guess, e.new), schedule=True), "value")
        self.predict_box = predict
        live.param.watch(lambda e: None if e.new is not None else setattr(guess, "value", None), "guess")
        self.odds_guess = guess
        calibration = html_pane(self._bound(views.calibration_html, live.param.predictions), margin=(0, 4))
        odds = html_pane(self._bound(views.odds_html, v, sel, live.param.guess, live.param.predict), margin=(0, 4),
                         name="odds", sizing_mode="stretch_width")
        odds_box = box("Live odds", pn.Row(predict, guess), odds, calibration,
                       forces, pn.pane.Markdown("#### The advisor", margin=(0, 4)), self.advisor)
        running = charts.running(s, self.charts_live, sizing_mode="stretch_width")
        running_box = box("Running odds", running, self.running)
        deck_box = box("The deck (order hidden)",
                       pn.pane.DataFrame(self._bound(views.deck_frame, v), index=False, sizing_mode="stretch_width"))
        log_box = box("Game log", pn.pane.DataFrame(self._bound(self._log_frame, v), index=False,
                                                    sizing_mode="stretch_width", stylesheets=[LEFT_TABLE],
                                                    max_height=320, styles={"overflow-y": "auto"}))
        # The status beside the title, on its line (as the other games have it): centred as a block, the title sat
        # in the middle of the page with the status floating above its right end.
        header = pn.Row(pn.pane.Markdown(f"# {TITLE}", margin=(0, 10)), status, sizing_mode="stretch_width")
        return pn.Column(
            header, notice, *([self.controls.files.warning] if self.controls.files.warning else []),
            box("The track: Earth (1) to the Kzin Home Worlds (12)", track),
            pn.Row(table_box, odds_box, sizing_mode="stretch_width"),
            pn.Row(running_box, deck_box, sizing_mode="stretch_width"),
            pn.Row(log_box, box("Game", self.controls), sizing_mode="stretch_width"),
            sizing_mode="stretch_width", styles={"background": "#f3f4f6", "max-width": "1400px", "margin": "0 auto"},
            name="kzin")

    def _log_frame(self, session: KzinSession) -> Any:
        """The log as shown; at a table the line that names the secret seed says only that the game began."""
        frame = views.log_frame(session)
        if self.secret_seed:
            frame.loc[frame["event"] == "new game", "detail"] = "dealt from a secret seed"
        return frame

    def _set_predict(self, box: pn.widgets.Checkbox, value: bool) -> None:
        if value == self.session.predict:
            return
        if self.may_act is not None and not self.may_act(move=False):
            box.value = self.session.predict  # this page's box goes back: the game's mode is unchanged
            return
        self.session.predict = value

    def _take_guess(self, value: float | None) -> None:
        """The player's estimate, typed in percent; an empty box takes the guess back."""
        if value is not None and self.may_act is not None and not self.may_act():
            return
        if value is None:
            self.session.guess = None
        elif 0 <= value <= 100:
            self.session.guess = value / 100
        else:
            self.session.refuse("an estimate is a chance from 0% to 100%")

    def __panel__(self) -> pn.viewable.Viewable:
        return self._layout


TITLE = "Man-Kzin Wars"
CHARTS_LIVE = ("version", "last_move", "selection", "guess", "predict", "running_odds")
"""The session's parameters the charts follow (apps.live: a copy of their own, redrawn after the page's text)."""
