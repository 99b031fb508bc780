"""The Kung Fu 2100 page: the lair on a clickable board, the decisions, the combat with its odds, the side panels.

:class:`KungFuPage` lays out the components over one :class:`~engine.kf2100.session.KungFuSession`. Every part
is bound to the page's ``followed`` (the session's changes, followed on this page's own document) or the
board's armed chit, so the same page is live in a served tab, at a table and in a notebook cell. On a served
page the session is paced: :class:`BotTurns` plays the bots' and the dice's steps one at a time, so a bot's turn
unfolds on screen.
"""

from __future__ import annotations

from typing import Any

import panel as pn
import param

from apps._files import NO_HTML
from apps.kf2100 import game_theory, reference, victory, views
from apps.kf2100.board import Board
from apps.kf2100.controls import DecisionPanel, GameControls, StandingControl, WayControls
from apps.kf2100.lair import KIND_COLOURS, KIND_NAMES
from apps.kf2100.panels import BotTurns, Outlook
from apps.kf2100.sides import Sides
from apps.kzin.page import NOTICE_CSS, notice_html
from apps.live import on_page_of, page_document
from engine.kf2100.session import KungFuSession
from engine.kf2100.steps import Step

TITLE = "Kung Fu 2100"
RECONSTRUCTION = ("The map, the Combat Results Table and the unit values are **a reconstruction**: the original "
                  "rules sheet is not available (see `engine/kf2100/data/`).")
BOX = {"background": "#ffffff", "border": "1px solid #e5e7eb", "border-radius": "10px",
       "padding": "4px 12px 10px 12px", "box-shadow": "0 1px 3px rgba(0,0,0,0.06)"}
RIGHT_WIDTH = 300
"""The column beside the lair: narrow enough that the lair and it fit a 1280 px wide window side by side."""
LEFT_TABLE = ":host table td, :host table th { text-align: left !important; padding: 1px 6px !important; }"
ODDS_CSS = ":host table.odds td, :host table.odds th {padding: 1px 6px; text-align: left;}"
LEGEND = ("".join(f"<span style='display:inline-block;margin:0 8px 0 0'><span style='display:inline-block;"
                  f"width:11px;height:11px;background:{c};margin-right:3px'></span>{KIND_NAMES[k]}</span>"
                  for k, c in KIND_COLOURS.items())
          + "<span style='display:inline-block'><span style='display:inline-block;width:11px;height:11px;"
            "background:#94a3b8;margin-right:3px'></span>face down</span><br>Counter digits: levels left of Fist, "
            "Kick, Mist, Monkey, Heart. Orange dashes: the change of elevation (+2 movement, free with Monkey Soul).")


def box(title: str, *objects: Any, **kwargs: Any) -> pn.Column:
    """A white card with a heading."""
    return pn.Column(pn.pane.Markdown(f"### {title}", margin=(0, 0, -8, 0)), *objects, styles=BOX,
                     margin=(6, 6), **kwargs)


class KungFuPage(pn.viewable.Viewer):
    """One Kung Fu 2100 game on a page (a browser tab or a notebook cell)."""

    session = param.ClassSelector(class_=KungFuSession, doc="The game this page plays.")
    served = param.Boolean(default=False, doc="A served page: the bots' turns are paced and the game autosaved.")
    bot_delay = param.Integer(default=350, bounds=(20, 3000), doc="Milliseconds between bot steps.")
    crt_cells = param.List(default=[], doc="The CRT cells outlined now (set only when they change).")
    sides = param.ClassSelector(class_=Sides, doc="The sides this page shows and plays (both on a page of one's "
                                "own; at a table, its browser's seats).")
    may_act = param.Callable(default=None, doc="At a table: called (move=True for a move, False for a new game or a "
                             "file) before a click changes the game; it says why not on this page and returns False "
                             "for a watcher or a browser without the seat.")
    at_table = param.Boolean(default=False, doc="A table's page: the table's bots play, its file is the autosave, "
                             "and its games are dealt from secret seeds no page shows.")
    followed = param.Integer(default=0, doc="Bumped, on this page's own document, after each change of the game, its "
                             "notice or its log: what this page's panes are bound to (see __init__).")

    def __init__(self, **params: Any) -> None:
        if params.get("session") is None:
            params["session"] = KungFuSession(hand_over=True, pace=bool(params.get("served")))
        if params.get("sides") is None:
            params["sides"] = Sides()
        super().__init__(**params)
        s = self.session
        self.board = Board(session=s, sides=self.sides, may_act=self.may_act)
        self.standing = StandingControl(session=s, sides=self.sides, may_act=self.may_act, at_table=self.at_table)
        self.decisions = DecisionPanel(session=s, board=self.board, may_act=self.may_act, standing=self.standing)
        self.way = WayControls(session=s, board=self.board, may_act=self.may_act)
        self.bots = BotTurns(session=s, delay=self.bot_delay, active=self.served and not self.at_table)
        self.outlook = Outlook(session=s)
        self.controls = GameControls(session=s, bots=self.bots, autosave=self.served and not self.at_table,
                                     may_act=self.may_act, at_table=self.at_table)
        doc = page_document()  # a change from another browser at the table reaches the CRT on this page's document
        s.param.watch(on_page_of(doc, self._follow_crt), ["version"])
        # The panes follow the game through ``followed``, bumped on this page's own document. Bound to the session
        # itself, a move from another browser at the table updated them in that browser's callback, where Panel
        # takes a pane's stylesheets from the other document's cache: this page's document then referred to a model
        # of the other's, its browser refused the patch ("reference ... isn't known") and the page stopped changing.
        s.param.watch(on_page_of(doc, lambda: self.param.trigger("followed")), ["version", "notice", "log"])
        self.board.param.watch(on_page_of(doc, self._follow_crt), ["armed"])
        self._follow_crt()
        self._layout = self._build()

    def _bound(self, fn: Any, *deps: Any) -> Any:
        """``fn()`` recomputed when any of ``deps`` (parameters) changes."""
        return pn.bind(lambda *_values: fn(), *deps)

    def _build(self) -> pn.Column:
        s, b, sides = self.session, self.board, self.sides
        v, armed, held = self.param.followed, b.param.armed, sides.param.held
        md = pn.pane.Markdown
        notice = pn.pane.HTML(self._bound(lambda: notice_html(sides.notice(s)), v, held),
                              stylesheets=[NOTICE_CSS], margin=(0, 6), sizing_mode="stretch_width", name="notice")
        combat = md(self._bound(lambda: views.combat_markdown(s, sides.view(s), s.combat_log_start), v, held),
                    margin=(0, 6), sizing_mode="stretch_width", name="combat", renderer_options=NO_HTML)
        odds = pn.pane.HTML(self._bound(lambda: views.odds_html(s, b.armed, sides.acting(s) is not None), v, armed,
                                        held), margin=(0, 6), sizing_mode="stretch_width", name="odds",
                            stylesheets=[ODDS_CSS])
        crt = pn.pane.HTML(self.param.crt_cells.rx.pipe(reference.crt_heat_html), stylesheets=[reference.CRT_CSS],
                           margin=(0, 6), width=420, name="crt")
        game = pn.pane.HTML(self._bound(lambda: game_theory.exchange_html(s, b.armed), v, armed), margin=(0, 6),
                            width=420, name="exchange", stylesheets=[ODDS_CSS])
        self.combat_box = box("Combat", pn.FlexBox(pn.Column(combat, odds, width=440), pn.Column(self.outlook, crt),
                                                   game, flex_wrap="wrap", margin=0),
                              sizing_mode="stretch_width",
                              visible=self._bound(lambda: s.state.combat is not None or s.state.step is Step.DOOR,
                                                  v))
        frame = pn.pane.DataFrame(self._bound(lambda: views.figures_frame(sides.view(s)), v, held), index=False,
                                  sizing_mode="stretch_width", stylesheets=[LEFT_TABLE], max_height=260,
                                  styles={"overflow-y": "auto"})
        log = pn.pane.DataFrame(self._bound(lambda: views.log_frame(s), v), index=False,
                                sizing_mode="stretch_width", stylesheets=[LEFT_TABLE], max_height=300,
                                styles={"overflow-y": "auto"}, name="log")
        rules = pn.Card(md(reference.RULES, margin=(0, 6), renderer_options=NO_HTML),
                        md(self._bound(lambda: reference.victory_markdown(s.state.game.scenario.key), v),
                           margin=(0, 6), renderer_options=NO_HTML),
                        pn.pane.HTML(reference.crt_html(), stylesheets=[ODDS_CSS], margin=(0, 6)),
                        title="Rules and the CRT", collapsed=True, sizing_mode="stretch_width", name="reference")
        right = pn.Column(
            box("Your move", self.decisions, self.way, self.bots, sizing_mode="stretch_width"),
            box("Game", md(self._bound(lambda: views.side_markdown(s, self.at_table), v), margin=(0, 6),
                           sizing_mode="stretch_width", renderer_options=NO_HTML), sizing_mode="stretch_width"),
            rules,
            box("Vital equipment", md(self._bound(lambda: views.equipment_markdown(s), v), margin=(0, 6),
                                      renderer_options=NO_HTML), sizing_mode="stretch_width"),
            width=RIGHT_WIDTH)
        heart = md(self._bound(lambda: views.heart_markdown(s, sides.view(s)), v, held), margin=(0, 6),
                   renderer_options=NO_HTML)
        # The note takes the width left beside the title and wraps there (in a notebook's narrow output area it ran
        # off the edge).
        header = pn.Row(pn.pane.Markdown(f"# {TITLE}", margin=(0, 10)),
                        pn.pane.Markdown(RECONSTRUCTION, styles={"color": "#6b7280", "font-size": "12px"},
                                         margin=(14, 10), sizing_mode="stretch_width"),
                        align="center", sizing_mode="stretch_width")
        warning = [self.controls.files.warning] if self.controls.files.warning else []
        over = box("Game over", pn.pane.HTML(self._bound(lambda: victory.victory_html(s), v), margin=(0, 6),
                                             stylesheets=[ODDS_CSS], name="victory", sizing_mode="stretch_width"),
                   sizing_mode="stretch_width", visible=self._bound(lambda: s.state.phase == "over", v))
        return pn.Column(
            header, notice, *warning, over,
            # A flex box, not a row: where the page is narrower than the board and the right column (a notebook's
            # output area), the column goes under the board instead of the page scrolling sideways.
            pn.FlexBox(box("The lair", self.board, pn.pane.HTML(LEGEND, styles={"font-size": "11px",
                                                                                "color": "#374151"}, margin=(0, 6))),
                       right, flex_wrap="wrap", margin=0),
            self.combat_box,
            pn.FlexBox(box("Roll log: every d6 with the chance it had", log, width=620),
                       pn.Column(box("Figures", frame, sizing_mode="stretch_width"),
                                 box("Mountain Heart", heart, sizing_mode="stretch_width"), width=640),
                       flex_wrap="wrap", margin=0),
            box("New game, save, load", self.controls,
                pn.pane.Markdown(RECONSTRUCTION, margin=(0, 6), styles={"color": "#6b7280"}),
                sizing_mode="stretch_width"),
            sizing_mode="stretch_width", styles={"background": "#f3f4f6", "max-width": "1400px", "margin": "0 auto"},
            name="kf2100")

    def _follow_crt(self, *_events: Any) -> None:
        cells = views.crt_target(self.session, self.board.armed)
        if cells != self.crt_cells:
            self.crt_cells = cells

    def __panel__(self) -> pn.viewable.Viewable:
        return self._layout
