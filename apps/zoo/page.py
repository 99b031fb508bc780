"""The Kung-Fu Zoo page: the arena, the odds of the aimed flick, the abilities, the round's result and the log.

:class:`ZooPage` lays out the components over one :class:`~engine.zoo.session.ZooSession`. The texts are
bound to the session's parameters and to the arena's ``shown`` (the version the arena shows: while a flick
plays out in the browser, the score, the turn and the log wait for it), so the same page is live in a served
tab and in a notebook cell.

At a table (``may_act`` given) every page is built over the table's one session: each page's arena animates a
flick whoever made it, every click first asks ``may_act`` (a watcher, or a player out of turn, is refused on
their own page and nothing changes), the table's driver plays its bots, its battles are dealt from secret seeds
(no page shows the seed, the log's first line included), and the table's file is its autosave.
"""

from __future__ import annotations

from typing import Any

import panel as pn
import param

from apps.kzin.page import BOX, NOTICE_CSS, box, notice_html
from apps.zoo import views
from apps.zoo.arena import FIG_W, Arena
from apps.zoo.controls import Abilities, FlickControls, GameControls, RoundCard
from apps.zoo.panels import BotPlayer, OddsPanel
from apps.zoo.work import SharedWork
from engine.core.session import BOT, PERSON
from engine.zoo.session import ZooSession

TITLE = "Kung-Fu Zoo"
LEFT_TABLE = ":host table td, :host table th { text-align: left !important; }"
HELP = ("**Click** one of your dice (yellow frame: may be flicked) or a green spot on a rail; **drag** on the "
        "arena in the direction of the flick (the length sets the speed: 10 cm a metre a second), then "
        "**Commit**. Letters: **H**ead (face-up) **B**ack **L**eft/**R**ight side **T**ail **F**eet "
        "(stunned, hatched red). To place a die knocked out, click where it goes. The Crocodile's Ambush (flick "
        "from anywhere on a rail) is armed with its button on the card. *Dimensions, physics and two abilities "
        "are our design (see Game).*")


class ZooPage(pn.viewable.Viewer):
    """One battle of Kung-Fu Zoo on a page (a browser tab or a notebook cell)."""

    session = param.ClassSelector(class_=ZooSession, doc="The battle this page plays.")
    served = param.Boolean(default=False, doc="Built by a server: flicks animate, the game is kept on disk.")
    background = param.Boolean(default=True, doc="Odds, heat map and bots as the game goes (off: tests, benchmarks).")
    shared = param.ClassSelector(class_=SharedWork, doc="At a table: the table's odds and heat-map work, done "
                                 "once for all its pages (None: this page's own).")
    may_act = param.Callable(default=None, doc="At a table: called (move=True for a move or its aim, False for a "
                             "new game, a file or the aim noise) before a click changes the battle; it says why not "
                             "on this page and returns False for a watcher or a player out of turn.")

    def __init__(self, **params: Any) -> None:
        if params.get("session") is None:
            params["session"] = ZooSession(seats=[PERSON, BOT], odds_workers=1)
        super().__init__(**params)
        s = self.session
        s.odds_workers = 1  # never fork from the server's threads
        table = self.may_act is not None
        gate = {"may_act": self.may_act}
        self.arena = Arena(session=s, served=self.served, **gate)
        self.odds = OddsPanel(session=s, arena=self.arena, background=self.background, shared=self.shared)
        # At a table the table's driver plays the bots, once for every page.
        self.bots = BotPlayer(session=s, arena=self.arena, background=self.background and not table)
        self.flick = FlickControls(session=s, arena=self.arena, odds=self.odds, **gate)
        self.abilities = Abilities(session=s, arena=self.arena, **gate)
        self.result = RoundCard(session=s, arena=self.arena, **gate)
        self.controls = GameControls(session=s, autosave=self.served and not table, secret_seed=table, **gate)
        if table:  # who plays each team is the table's: its seat bar takes, leaves or hands a seat to a bot
            for w in self.controls.seats:
                w.disabled = True
            s.param.watch(lambda *_e: self._follow_seats(), ["seats"])
            self._follow_seats()
        self._layout = self._build()

    def _follow_seats(self) -> None:
        for w, seat in zip(self.controls.seats, self.session.seats, strict=False):
            w.value = seat.kind

    def _log_frame(self, session: ZooSession) -> Any:
        """The log as shown; at a table the first line (it names the secret seed) says only how the battle began."""
        frame = views.log_frame(session)
        if self.may_act is not None:
            first = frame["move"].str.startswith("new ") & frame["player"].eq("")
            frame.loc[first, "move"] = frame.loc[first, "move"].str.replace(r", seed \d+$", ", from a secret seed",
                                                                           regex=True)
        return frame

    def _shown(self, fn: Any) -> Any:
        """``fn(session)``, recomputed once the arena shows a new version (after the flick has played out)."""
        return pn.bind(lambda _shown: fn(self.session), self.arena.param.shown)

    def _build(self) -> pn.Column:
        s = self.session
        html_pane = pn.pane.HTML
        status = html_pane(pn.bind(lambda _v, _r: views.status_html(s), self.arena.param.shown,
                                   self.arena.live.param.round_result),
                           sizing_mode="stretch_width", margin=(0, 10))
        # A move's notice waits for the arena to show the move (the flick has played out); a refusal is at once.
        notice = html_pane(pn.bind(lambda n, *_: notice_html(n) if self.arena.settled() else "",
                                   self.arena.live.param.notice, self.arena.param.animating, self.arena.param.shown),
                           stylesheets=[NOTICE_CSS], margin=(0, 10), sizing_mode="stretch_width", name="notice")
        log = pn.pane.DataFrame(self._shown(self._log_frame), index=False, sizing_mode="stretch_width",
                                max_height=300, stylesheets=[LEFT_TABLE], styles={"overflow-y": "auto"})
        arena_box = pn.Column(  # a fixed width: the arena is drawn to scale
            pn.pane.Markdown("### The arena (top view, to scale)", margin=(0, 0, -8, 0)), self.arena, self.result,
            pn.pane.Markdown(HELP, styles={"font-size": "12px"}, margin=(0, 6), sizing_mode="stretch_width"),
            self.flick, self.bots, styles=BOX, margin=(6, 6), width=FIG_W + 60)
        odds_box = box("Odds of the aimed flick", self.odds)
        cards_box = box("Team abilities (once per round, Cage Battle)", self.abilities)
        header = pn.Row(pn.pane.Markdown(f"# {TITLE}", margin=(0, 10)), status, sizing_mode="stretch_width")
        warning = self.controls.files.warning
        return pn.Column(
            header, notice, *([warning] if warning else []),
            pn.Row(arena_box, pn.Column(odds_box, cards_box, sizing_mode="stretch_width"), sizing_mode="stretch_width"),
            pn.Row(box("Battle log", log), box("Game", self.controls), sizing_mode="stretch_width"),
            sizing_mode="stretch_width", styles={"background": "#f3f4f6", "max-width": "1400px", "margin": "0 auto"},
            name="zoo")

    def __panel__(self) -> pn.viewable.Viewable:
        return self._layout
