"""The Kung Fu 2100 board: the lair as one Bokeh figure, and clicks on it turned into session commands.

The figure is built once: the static lair drawn once, each moving layer (the pieces' squares and texts, the trail
of the last moves, the way) a ``ColumnDataSource`` whose data is replaced only when that layer changed, on the
page's own document tick. A HoloViews overlay redrew the whole figure for every change (every layer's glyphs and
the ranges of them all: a board click took ~140 ms of the server, now ~40 ms with the rest of the page's views,
the board's part of it ~2 ms). A click is written into a ``gesture`` source by the browser (:mod:`apps.gestures`)
and run on the page's next tick, in a served tab and in a notebook cell alike. What the layers draw is
:func:`apps.kf2100.lair.frames`.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import panel as pn
import param
from bokeh.models import ColumnDataSource, HoverTool
from bokeh.plotting import figure
from panel.io.state import set_curdoc

from apps.commands import on_page
from apps.gestures import gesture_source, take_clicks
from apps.kf2100.lair import LAYERS, BoardModel, armed_after, frames, layer_columns
from apps.kf2100.sides import Sides
from apps.live import on_page_of, page_document
from engine.kf2100.session import KungFuSession
from engine.kf2100.steps import Step

SCALE = 30  # pixels per square
LAYER_FRAMES = frozenset().union(*LAYERS.values())
"""Every frame a moving layer draws: a layer is sent anew only when one of its frames changed."""
CENTRED: dict[str, Any] = {"text_align": "center", "text_baseline": "middle"}


def lair_figure(m: BoardModel, sources: dict[str, ColumnDataSource]) -> figure:
    """The lair at ``SCALE`` pixels a square, the static layers drawn here once and the moving ones from
    ``sources`` (``rects``, ``texts``, ``trail``, ``way``); the room names under the counters, so a counter on a
    room's top edge hides its name, never the other way. Named ``board`` for the browser tests."""
    xlim, ylim = (-4.3, m.width + 0.1), (-1.0, m.height + 1.15)
    fig = figure(name="board", x_range=xlim, y_range=ylim, frame_width=round((xlim[1] - xlim[0]) * SCALE),
                 frame_height=round((ylim[1] - ylim[0]) * SCALE), tools="", toolbar_location=None, min_border=0,
                 margin=0, outline_line_alpha=0, background_fill_color="#f8fafc")
    fig.axis.visible = False
    fig.grid.visible = False
    corners = {"left": "x0", "right": "x1", "bottom": "y0", "top": "y1"}
    base = fig.quad(**corners, source=ColumnDataSource(m.base()), fill_color="colour", line_color="#cbd5e1",
                    line_width=0.5)
    fig.segment(x0="x0", y0="y0", x1="x1", y1="y1", source=ColumnDataSource(m.elevation_edges()),
                line_color="#ea580c", line_width=3.5, line_dash="dashed")
    fig.text(x="x", y="y", text="text", source=ColumnDataSource(m.fixed_labels()), text_color="colour",
             text_font_size="8pt", **CENTRED)
    fig.text(x="x", y="y", text="text", angle="angle", angle_units="deg", source=ColumnDataSource(m.room_labels()),
             text_color="#334155", text_font_size="7pt", text_font_style="italic", background_fill_color="#f8fafc",
             background_fill_alpha=0.85, **CENTRED)
    fig.segment(x0="x0", y0="y0", x1="x1", y1="y1", source=sources["trail"], line_color="#2563eb", line_width=3,
                line_alpha=0.7)
    fig.multi_line(xs="xs", ys="ys", source=sources["way"], line_color="#7c3aed", line_width=3, line_dash="dotted",
                   line_alpha=0.9)
    # the highlights and the counters are one layer of squares, their numbers and names one of text
    pieces = fig.quad(**corners, source=sources["rects"], fill_color="fill", line_color="line", fill_alpha="alpha",
                      line_width="lw")
    fig.text(x="x", y="y", text="text", source=sources["texts"], text_color="tcolour", text_font_size="7pt",
             text_font_style="bold", **CENTRED)
    fig.add_tools(HoverTool(renderers=[base], tooltips=[("", "@{what}")], sort_by=None),
                  HoverTool(renderers=[pieces], tooltips=[("", "@{detail}")], sort_by=None))
    return fig


class Board(pn.viewable.Viewer):
    """The lair, clickable: a click is turned into the session command it means (:meth:`click`)."""

    session = param.ClassSelector(class_=KungFuSession)
    armed = param.Tuple(default=None, length=2, allow_None=True, doc="(figure, chit) about to be played")
    sides = param.ClassSelector(class_=Sides, doc="The sides this page shows and plays (both by default).")
    may_act = param.Callable(default=None, doc="At a table: called before a click changes the game; it says why "
                             "not on this page and returns False for a watcher or a browser without the seat.")
    mark_way = param.Boolean(default=False, doc="A click on a square adds it to the selected figure's way, even a "
                             "green one (a click on the way's last square again moves there).")

    def __init__(self, **params: Any) -> None:
        if params.get("sides") is None:
            params["sides"] = Sides()
        super().__init__(**params)
        s = self.session
        self.model = BoardModel(s.map_layout(), s.game.board)
        self.armed = armed_after(s, self.armed, self.sides)
        self.frames = frames(s, self.model, self.armed, self.sides)
        self.sources = {name: ColumnDataSource(data) for name, data in layer_columns(self.frames, LAYERS).items()}
        self.figure = lair_figure(self.model, self.sources)
        self.gesture = gesture_source()
        take_clicks(self.figure, self.gesture, self._on_gesture)
        self._pane = pn.pane.Bokeh(self.figure, name="board", margin=0)
        # A change may come from another browser at the table: the board's layers follow on this page's document.
        self._doc = doc = page_document()
        self._unsent: dict[str, dict[str, list]] = {}
        s.param.watch(on_page_of(doc, self._on_version), ["version"])
        s.param.watch(on_page_of(doc, self.follow), ["selected", "way"])
        self.param.watch(on_page_of(doc, self.follow), ["armed"])
        self.sides.param.watch(on_page_of(doc, self._on_version), ["held"])

    def _on_version(self, *_events: Any) -> None:
        armed = armed_after(self.session, self.armed, self.sides)
        if armed != self.armed:
            self.armed = armed  # its watcher redraws
        else:
            self.follow()

    def follow(self, *_events: Any) -> None:
        """Bring the moving layers in step: a layer's source is given new data only when its frames changed."""
        new = frames(self.session, self.model, self.armed, self.sides)
        old, self.frames = self.frames, new
        changed = {name for name in LAYER_FRAMES if new[name] != old[name]}
        layers = [k for k, drawn in LAYERS.items() if drawn & changed]
        if not layers:
            return
        due = bool(self._unsent)
        self._unsent.update(layer_columns(new, layers))
        if due:
            return  # already scheduled: that write sends these too
        if self._doc is None:
            self._write()
            return
        # On a served page the sources change on the page's next tick, where Bokeh holds the document's lock: a
        # change may come from a bot's step, which runs in an async task of the page's loop outside the lock.
        with set_curdoc(self._doc):
            pn.state.execute(self._write, schedule=True)

    def _write(self) -> None:
        unsent, self._unsent = self._unsent, {}
        for layer, data in unsent.items():
            self.sources[layer].data = data
        pn.io.push_notebook(self._pane)  # a notebook cell is sent a change made by hand only when pushed

    # --- clicks -----------------------------------------------------------------------------------------
    def _on_gesture(self, _kind: str, x: float, y: float, *_end: float) -> None:
        """A click the browser wrote into the ``gesture`` source. Bokeh calls this under the document lock, while
        it applies the browser's message: the click runs on the page's next tick (``apps.commands.on_page``; at
        once in a notebook), for the game as it was when it was made."""
        on_page(partial(self.click, x, y), self.session)(None)

    def figure_at(self, col: int, row: int) -> str | None:
        for fid, where in self.frames["where"].items():
            if where == (col, row):
                return fid
        return None

    def entry_at(self, square: str | None, col: int, row: int) -> str | None:
        """The entry a click means: its square, or the waiting slots beside it."""
        for entry, sq in self.model.entry_square.items():
            if square == sq:
                return entry
            ec, er = self.model.col_row(sq)
            if entry == "door" and row == -1 and abs(col - ec) <= 3:
                return entry
            if entry != "door" and row == er and col < 0:
                return entry
        return None

    def click(self, x: float, y: float) -> bool:
        """A click on the board at plot coordinates (x, y): the command it means now, or why it means none."""
        s = self.session
        st = s.state
        if self.may_act is not None and not self.may_act():
            return False
        if s.handover is not None:
            return self._refuse(f"hand the screen to the {('Terminators', 'Clone Master')[s.handover]} first")
        player = s.person_to_move()
        if player is None:
            return self._refuse("the game is over" if st.is_terminal() else "wait: the bot or the dice are playing")
        square = self.model.square_at(x, y)
        col, row = self.model.cell_of(x, y)
        fid = self.figure_at(col, row)
        step = st.step
        inside = "click a square inside the lair"
        if step is Step.SETUP:
            return s.place(st.queue[0], square) if square else self._refuse(inside)
        if step is Step.ENTRY:
            entry = self.entry_at(square, col, row)
            if entry is None:
                return self._refuse(f"click where {st.queue[0]} waits: the kitchen disposal, the loo or the "
                                    "armored front door")
            return s.wait_at(st.queue[0], entry)
        if step is Step.BONUS_MOVE:
            if fid == "CM" or square is None:
                return self._refuse("click a highlighted square for the bonus move, or end it")
            return s.move(square, "CM")
        if step is Step.CM_WINDOW:
            if fid == "CM":
                return s.activate("CM")
            return self._refuse("the Clone Master may reveal himself now: click him, or stay hidden")
        if step is Step.DOOR:
            return self._refuse("choose a door attack in the panel, or leave the door")
        if step in (Step.ATTACK, Step.AIM):
            target = fid or (self.model.equipment_at.get(square) if square else None)
            if self.armed is None:
                return self._refuse("pick the chit to play in the combat panel, then click its target")
            if target is None:
                return self._refuse("click a figure or a piece of equipment in this combat")
            return s.attack(self.armed[0], self.armed[1], target)
        if step is not Step.MOVE:
            return self._refuse("choose in the combat panel")
        if fid is not None and st.figs[fid].side == player:
            if player == 1 and not st.figs[fid].face_up and fid in st.activatable():
                return s.activate(fid)
            return s.select(fid)
        if fid is not None and square is None:
            return self._refuse(f"{fid} is not one of your figures")
        if not s.selected:
            return self._refuse("click one of your figures first")
        if square is None:
            return self._refuse(inside)
        # The way: a square that is not a destination (or any square, while marking the way) is one to pass
        # through; a destination is where the move goes, by the way picked so far.
        if self.mark_way:
            return s.move(square) if s.way and square == s.way[-1] else s.add_waypoint(square)
        if square in s.reachable() or (fid is not None and st.figs[fid].side != player):
            return s.move(square)
        return s.add_waypoint(square)

    def click_square(self, square: str) -> bool:
        """Click the middle of a square (tests, notebooks)."""
        return self.click(*self.model.centre(*self.model.col_row(square)))

    def click_figure(self, figure: str) -> bool:
        """Click where a figure is drawn (a waiting one sits beside its entry)."""
        return self.click(*self.model.centre(*self.frames["where"][figure]))

    def _refuse(self, reason: str) -> bool:
        self.session.refuse(reason)
        return False

    def __panel__(self) -> pn.viewable.Viewable:
        return self._pane
