"""What the player clicks on the Kung Fu 2100 page besides the board: the decisions and the game controls.

Each is a :class:`panel.viewable.Viewer` over the session. The decision panel shows :func:`views.decisions`
of the step in view (typed actions from the session) as buttons; a click plays its action through
``apps.commands.on_page``, for the game as it was when it was clicked, and a refusal becomes a notice.
"""

from __future__ import annotations

from collections import OrderedDict
from functools import partial
from typing import Any

import panel as pn
import param

from apps._files import NO_HTML, GameFiles
from apps.commands import on_page
from apps.kf2100 import views
from apps.kf2100.board import Board
from apps.kf2100.panels import BotTurns
from apps.kf2100.sides import Sides
from apps.live import on_page_of, page_document
from engine.core.session import BOT, PERSON, Level, Notice
from engine.kf2100.session import SCENARIOS, KungFuSession, way_text
from engine.kf2100.state import CLONE_MASTER, PLAYER_NAMES
from engine.kf2100.steps import Step
from engine.kf2100.table import secret_seed

MAY_ACT_DOC = ("At a table: called before a click changes the game; it says why not on this page and returns False "
               "for a watcher or a browser without the seat to move.")
UNDO = views.Choice("Take back the last move", command="undo")
"""Shown while the last move of the phase can be taken back (no die rolled, nothing revealed since)."""


KEPT_PARTS = 24
"""How many of the decision panel's notes and rows it keeps, shown or hidden (see DecisionPanel._show)."""

REVEAL = views.Choice("Reveal the Clone Master now", command="reveal")
"""The Clone Master's standing control, a row of the decision panel (so it changes in the panel's one redraw)."""


class StandingControl(param.Parameterized):
    """The Clone Master's standing control at a table: "At any time (even during the Terminator's turn) the Clone
    Master player may voluntarily activate the Clone Master counter" (seed). Offered (as :data:`REVEAL`, a row of
    the decision panel) only on the page of a browser that holds the Clone Master's seat alone (at one screen his
    windows stay at the phase starts, so no extra hand-over is due), while he may reveal himself and it is not his
    turn; a click from any other page is refused."""

    session = param.ClassSelector(class_=KungFuSession)
    sides = param.ClassSelector(class_=Sides)
    may_act = param.Callable(default=None, doc=MAY_ACT_DOC)
    at_table = param.Boolean(default=False)

    def mine(self) -> bool:
        """Whether this page is the Clone Master's own seat at a table (the only page with the control)."""
        return self.at_table and self.sides.held == [CLONE_MASTER]

    def shown(self) -> bool:
        s = self.session
        return self.mine() and s.person_to_move() != CLONE_MASTER and bool(s.standing(CLONE_MASTER))

    def reveal(self) -> bool:
        """Reveal the Clone Master now; refused, changing nothing, for a watcher, a page without his seat, or
        when he may not (the reason is the engine's)."""
        if self.may_act is not None and not self.may_act(move=False):
            return False
        if not self.mine():
            self.session.refuse("only the Clone Master's player, at a seat of his own, may reveal him out of turn")
            return False
        return self.session.reveal_clone_master()


class DecisionPanel(pn.viewable.Viewer):
    """The choices of the step in view as buttons (moves, placements and targets are clicks on the board)."""

    session = param.ClassSelector(class_=KungFuSession)
    board = param.ClassSelector(class_=Board, doc="The board whose armed chit the attack buttons choose.")
    may_act = param.Callable(default=None, doc=MAY_ACT_DOC)
    standing = param.ClassSelector(class_=StandingControl, default=None, doc="The Clone Master's standing control "
                                   "(a table's page): its row is shown while he may use it.")

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self._buttons: dict[views.Choice, pn.widgets.Button] = {}  # the buttons shown now
        # each note and row shown now or kept hidden, by what it shows, the least recently shown first
        self._parts: OrderedDict[tuple, pn.viewable.Viewable] = OrderedDict()
        self._content: tuple | None = None  # what the panel shows now
        self._view = pn.Column(*self._show(self.session.version, self.board.armed), sizing_mode="stretch_width",
                               margin=0)
        # Redrawn on this page's document, whichever browser at the table moved (see apps.live).
        redraw = on_page_of(page_document(), self._redraw)
        self.session.param.watch(redraw, ["version"])
        self.board.param.watch(redraw, ["armed"])
        self.board.sides.param.watch(redraw, ["held"])

    def _redraw(self) -> None:
        shown_before = self._content
        objects = self._show(self.session.version, self.board.armed)  # sets self._content to what it shows
        if self._content != shown_before:  # unchanged (a bot's step while this page waits): nothing sent
            self._view.objects = objects

    def shown(self) -> views.Decisions:
        return views.decisions(self.session, self.board.armed, self.board.sides.held)

    def _show(self, _version: int, armed: tuple[str, str] | None, held: list[int] | None = None) -> list[Any]:
        """The panel's parts: its notes and rows of buttons, then the ones shown before and kept, hidden.

        A part shown again is the same pane, as a button is: a redraw builds Bokeh models only for parts never
        shown (a row is a FlexBox, whose model is costly, and each button is one; a bot's combat step showed a
        dozen new ones in 28 ms). Kept hidden, a part keeps its models: a redraw hides and shows them, and the
        steps of a turn come round again. At most :data:`KEPT_PARTS` are kept; the least recently shown go. A
        button is never relabelled: a click on its way from the browser plays what its label said."""
        d = views.decisions(self.session, armed, self.board.sides.held)
        undo = self.session.can_undo() and self.board.sides.acting(self.session) is not None
        rows = [*d.rows, (UNDO,)] if undo else list(d.rows)
        if self.standing is not None and self.standing.shown():
            rows.append((REVEAL,))
        self._content = (d, tuple(rows))
        note = partial(pn.pane.Markdown, margin=(0, 6), renderer_options=NO_HTML)
        shown: dict[tuple, pn.viewable.Viewable] = {}
        for i, text in enumerate(d.notes):
            kind = "warning" if d.warning and i == 0 else "waiting" if d.waiting else "note"
            key = (kind, text, d.notes[:i].count(text))  # a note twice is two panes (a model is shown once)
            if (part := self._parts.get(key)) is None:
                if kind == "warning":
                    part = pn.pane.Alert(text, alert_type="warning", margin=(0, 6), renderer_options=NO_HTML)
                elif kind == "waiting":
                    part = pn.Row(pn.indicators.LoadingSpinner(value=True, size=18, margin=(6, 6)), note(text))
                else:
                    part = note(text)
            shown[key] = part
        buttons: dict[views.Choice, pn.widgets.Button] = {}
        for row in rows:
            key = ("row", row)
            if (part := self._parts.get(key)) is None:  # a row's buttons are its own: a model has one parent
                part = pn.FlexBox(*(self._button(c) for c in row), margin=0)
            buttons.update(zip(row, part.objects, strict=True))
            shown[key] = part
        for key, part in shown.items():
            self._parts[key] = part
            self._parts.move_to_end(key)
        while len(self._parts) > max(KEPT_PARTS, len(shown)):
            self._parts.popitem(last=False)
        self._buttons = buttons
        for key, part in self._parts.items():
            if part.visible != (key in shown):
                part.visible = key in shown
        return [*shown.values(), *(part for key, part in self._parts.items() if key not in shown)]

    def _button(self, choice: views.Choice) -> pn.widgets.Button:
        button = pn.widgets.Button(label=choice.label, color="primary" if choice.primary else "default",
                                   margin=(3, 4))
        button.on_click(on_page(partial(self.choose, choice), self.session))
        return button

    def buttons(self) -> dict[str, pn.widgets.Button]:
        """The buttons shown now, by label."""
        return {c.label: b for c, b in self._buttons.items()}

    def choose(self, choice: views.Choice) -> bool:
        """What a button does: play its action, arm its chit, or run its command."""
        s = self.session
        if choice.command == "reveal":  # out of turn: his seat's gate, not the move's (see StandingControl)
            return self.standing is not None and self.standing.reveal()
        if self.may_act is not None and not self.may_act():
            return False
        if choice.arm is not None:
            self.board.armed = choice.arm
            return True
        if choice.command == "auto_setup":
            return s.auto_setup()
        if choice.command == "undo":
            return s.undo()
        if choice.command == "take_screen":
            return s.handover is not None and s.take_screen(s.handover)
        assert choice.action is not None
        return s.attempt(s.play, choice.action)

    def __panel__(self) -> pn.viewable.Viewable:
        return self._view


class WayControls(pn.viewable.Viewer):
    """The way of the selected figure's move: what it costs and which rooms it wakes, a switch that makes every
    click on the board a square of the way, and Clear the way. Shown while the page's side moves a figure."""

    session = param.ClassSelector(class_=KungFuSession)
    board = param.ClassSelector(class_=Board)
    may_act = param.Callable(default=None, doc=MAY_ACT_DOC)

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        s, b = self.session, self.board
        self.mark = pn.widgets.Toggle(label="Mark the way", value=b.mark_way, margin=(3, 4), width=120)
        self.mark.link(b, value="mark_way")
        self.clear = pn.widgets.Button(label="Clear the way", margin=(3, 4), width=120)
        self.clear.on_click(on_page(self.clear_way, s))
        self.text = pn.pane.Markdown(self.describe(), margin=(0, 6), renderer_options=NO_HTML, name="way")
        self._parts = [self.text, pn.Row(self.mark, self.clear, margin=0)]
        self._view = pn.Column(*(self._parts if self.shown() else []), margin=0, sizing_mode="stretch_width")
        follow = on_page_of(page_document(), self._follow)
        s.param.watch(follow, ["version", "selected", "way"])
        b.param.watch(follow, ["mark_way"])
        b.sides.param.watch(follow, ["held"])

    def shown(self) -> bool:
        """Whether the page's side is moving a figure now (the way is then its to pick)."""
        s = self.session
        return (bool(s.selected) and s.state.step is Step.MOVE and s.handover is None
                and self.board.sides.acting(s) is not None)

    def describe(self) -> str:
        """The way in words, or how to pick one."""
        s = self.session
        way = s.way_shown()
        if way is not None:
            return way_text(way) + "."
        if self.board.mark_way:
            return f"Click the squares {s.selected or 'the figure'} is to pass through, in order."
        return "By the cheapest path. To choose the way, click a square that is not green (or Mark the way)."

    def _follow(self, *_events: Any) -> None:
        # the parts come and go as the panel's objects (as the decision panel's buttons do), not by visibility
        parts = self._parts if self.shown() else []
        if list(self._view.objects) != parts:
            self._view.objects = parts
        self.clear.disabled = not self.session.way
        text = self.describe()
        if self.text.object != text:
            self.text.object = text

    def clear_way(self) -> bool:
        """Clear the way (a table's page asks may_act first: the way is the game's, shared by its browsers)."""
        if self.may_act is not None and not self.may_act():
            return False
        return self.session.clear_way()

    def __panel__(self) -> pn.viewable.Viewable:
        return self._view


class GameControls(pn.viewable.Viewer):
    """The scenario, seats and seed of the next game, the bots' pace, New game, and the game files."""

    session = param.ClassSelector(class_=KungFuSession)
    bots = param.ClassSelector(class_=BotTurns)
    autosave = param.Boolean(default=False, doc="Keep the game on disk after every change (a served page).")
    may_act = param.Callable(default=None, doc="Called with move=False before a new game or a file: a table's page "
                             "refuses a watcher there (and says why); None on a page of one's own.")
    at_table = param.Boolean(default=False, doc="A table's game: its seats are the table's, each new game is dealt "
                             "from a secret seed no page shows, and the bots are the table's.")

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        s = self.session
        self.scenario = pn.widgets.Select(label="Scenario", value=s.scenario, options=list(SCENARIOS), width=110)
        self.seats = [pn.widgets.Select(label=PLAYER_NAMES[p], value=s.seat(p), options=[PERSON, BOT], width=110)
                      for p in (0, 1)]
        self.seed = pn.widgets.IntInput(label="Seed", value=None if self.at_table else s.seed, start=0, width=90)
        self.bot_level = pn.widgets.Select(label="Bot", value=s.bot_level, width=130,
                                           options={"heuristic": "heuristic", "strong (search)": "search"})
        self.bot_level.link(s, value="bot_level")
        self.delay = pn.widgets.IntInput(label="Bot step (ms)", value=self.bots.delay, start=20, end=3000, width=100,
                                         css_classes=["bot-delay"])
        self.delay.link(self.bots, value="delay")
        self.new = pn.widgets.Button(label="New game", color="primary", margin=(22, 6, 4, 6))
        self.new.on_click(on_page(self.new_game))
        self.files = GameFiles("kf2100", self._filename(), s, self.load_text, self.autosave, refuse=self.refuse_file)
        s.param.watch(self._follow_game, ["version"])

    def new_game(self) -> bool:
        """Start a new game with the scenario, seats and seed in the controls; a bad field keeps the game."""
        if self.may_act is not None and not self.may_act(move=False):
            return False
        if self.at_table:  # the table's seats stay as they are held; the seed is a fresh secret
            return self.session.new_game(secret_seed(), scenario=self.scenario.value,
                                         seats=[seat.kind for seat in self.session.seats], terminator_levels={})
        seed = self.seed.value
        if seed is None or seed < 0:
            self.session.refuse("enter a seed, a whole number from 0")
            return False
        return self.session.new_game(int(seed), scenario=self.scenario.value,
                                     seats=[w.value for w in self.seats], terminator_levels={})

    def load_text(self, text: str | bytes) -> bool:
        """Load a saved game (a file's text, or the autosave); the controls then show its scenario, seats, seed."""
        s = self.session
        if self.may_act is not None and not self.may_act(move=False):
            return False
        if not s.try_load(text):
            return False
        self.scenario.value = s.scenario
        if not self.at_table:
            self.seed.value = s.seed
        for p, w in enumerate(self.seats):
            w.value = s.seat(p)
        return True

    def refuse_file(self, reason: str) -> None:
        """A file the page would not even read (too big, unreadable): said where every refusal of a file is."""
        self.session.notice = Notice(f"Could not load: {reason}. Your game goes on.", Level.DANGER)

    def _filename(self) -> str:
        s = self.session
        if self.at_table:
            return f"kung-fu-2100-{s.scenario}-turn{s.state.turn}.json"
        return f"kung-fu-2100-{s.scenario}-seed{s.seed}-turn{s.state.turn}.json"

    def _follow_game(self, *_events: Any) -> None:
        name = self._filename()
        if self.files.download.filename != name:
            self.files.download.filename = name

    def __panel__(self) -> pn.viewable.Viewable:
        if self.at_table:  # the seats are the table's (the seat bar), the seed a secret, the bots the table's
            return pn.Column(pn.Row(self.scenario, self.new), self.files.row(with_warning=False),
                             sizing_mode="stretch_width")
        return pn.Column(pn.Row(self.scenario, *self.seats, self.bot_level, self.seed, self.delay, self.new),
                         self.files.row(with_warning=False), sizing_mode="stretch_width")
