"""The Kung Fu 2100 board: the lair drawn with HoloViews, and clicks on it turned into session commands.

The lair is static; the moving layers (highlights and counters, their texts, the trail of the last moves, the
way) are DynamicMaps fed by one ``Pipe`` stream that is sent new data only when a layer changed, so the board
follows the game in a served tab and in a notebook cell alike (HoloViews sends the data through Panel's channel).
One stream, because each stream that fires redraws the whole board's figure (every layer's plot, and the ranges
of them all): a move that changed the pieces and the trail cost two such redraws with a stream each. A layer
whose data did not change is sent as the same object, and its DynamicMap then gives back the same element, which
HoloViews leaves as it is. What the layers draw is :func:`apps.kf2100.lair.frames`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import holoviews as hv
import panel as pn
import param

from apps.commands import on_page
from apps.kf2100.lair import BoardModel, armed_after, frames, layer_data, pieces
from apps.kf2100.sides import Sides
from apps.live import on_page_of, page_document
from apps.plotting import use_bokeh
from engine.kf2100.session import KungFuSession
from engine.kf2100.steps import Step

SCALE = 30  # pixels per square
NO_TOOLS = {"default_tools": [], "tools": [], "toolbar": None}
PIECE_FRAMES = frozenset({"marks", "costs", "counters", "labels"})
"""The frames drawn as the pieces' two layers (squares and texts)."""
LAYER_FRAMES = PIECE_FRAMES | {"trail", "way"}
"""Every frame a moving layer draws: one that changed is sent anew, the others as the objects sent before."""


def same_for_same(draw: Callable[[dict[str, Any]], Any], *keys: str) -> Callable[[dict[str, Any]], Any]:
    """``draw`` of the pipe's data, drawn again only when one of its layers ``keys`` is a new object: an
    unchanged layer gives back its element as it was, and HoloViews then sends nothing for it."""
    last: dict[str, Any] = {}

    def drawn(data: dict[str, Any]) -> Any:
        shown = tuple(data[k] for k in keys)
        if "element" not in last or any(a is not b for a, b in zip(shown, last["shown"], strict=True)):
            last.update(shown=shown, element=draw(data))
        return last["element"]

    return drawn


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
        self.pipe = hv.streams.Pipe(data=self._layers(self.frames))
        self.tap = hv.streams.Tap(transient=True)
        self.tap.add_subscriber(self._on_tap)
        self._pane = pn.pane.HoloViews(self._plot(), linked_axes=False, name="board", margin=0)
        # A change may come from another browser at the table: the board's layers follow on this page's document.
        doc = page_document()
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

    @staticmethod
    def _layers(f: dict[str, Any], sent: dict[str, Any] | None = None, changed: frozenset[str] = LAYER_FRAMES
                ) -> dict[str, Any]:
        """What the pipe carries: the pieces' two layers (``rects``, ``texts``), the ``trail`` and the ``way``;
        a layer whose frames are not in ``changed`` keeps its object of ``sent``."""
        if sent is None:
            changed = LAYER_FRAMES
        drawn = {**pieces(f)} if changed & PIECE_FRAMES else {"rects": sent["rects"], "texts": sent["texts"]}
        drawn["trail"] = layer_data(f["trail"]) if "trail" in changed else sent["trail"]
        drawn["way"] = f["way"] if "way" in changed else sent["way"]
        return drawn

    def follow(self, *_events: Any) -> None:
        """Bring the moving layers in step: the pipe is sent on only when a layer's data changed."""
        new = frames(self.session, self.model, self.armed, self.sides)
        old, self.frames = self.frames, new
        changed = frozenset(name for name in LAYER_FRAMES if new[name] != old[name])
        if changed:
            self.pipe.send(self._layers(new, self.pipe.data, changed))

    def _plot(self) -> hv.Overlay:
        use_bokeh()
        m = self.model
        w, h = m.width, m.height
        xlim, ylim = (-4.3, w + 0.1), (-1.0, h + 1.15)
        base = hv.Rectangles(m.base(), kdims=["x0", "y0", "x1", "y1"], vdims=["colour", "square", "what"]).opts(
            color="colour", line_color="#cbd5e1", line_width=0.5, tools=["hover"], hover_tooltips=[("", "@what")],
            default_tools=[], toolbar=None, apply_ranges=False)
        self.tap.source = base
        edge = hv.Segments(m.elevation_edges(), kdims=["x0", "y0", "x1", "y1"]).opts(
            color="#ea580c", line_width=3.5, line_dash="dashed", apply_ranges=False, **NO_TOOLS)
        fixed = hv.Labels(m.fixed_labels(), kdims=["x", "y"], vdims=["text", "colour"]).opts(
            text_font_size="8pt", text_color="colour", apply_ranges=False, **NO_TOOLS)
        rooms = hv.Labels(m.room_labels(), kdims=["x", "y"], vdims=["text", "angle"]).opts(
            text_font_size="7pt", text_color="#334155", text_font_style="italic", angle="angle",
            background_fill_color="#f8fafc", background_fill_alpha=0.85, apply_ranges=False, **NO_TOOLS)
        still = {"apply_ranges": False, **NO_TOOLS}
        trail = hv.DynamicMap(same_for_same(lambda data: hv.Segments(data["trail"], kdims=["x0", "y0", "x1", "y1"]),
                                            "trail"), streams=[self.pipe]).opts(
            color="#2563eb", line_width=3, alpha=0.7, **still)

        def moving(data: dict[str, Any]) -> hv.Overlay:
            # the highlights and the counters are one layer of squares, their numbers and names one of text:
            # a click then updates two glyphs, not six (each costs the whole board's update)
            return (hv.Rectangles(data["rects"], kdims=["x0", "y0", "x1", "y1"],
                                  vdims=["fill", "line", "alpha", "lw", "name", "detail"]).opts(
                fill_color="fill", line_color="line", fill_alpha="alpha", line_width="lw", tools=["hover"],
                hover_tooltips=[("", "@detail")], default_tools=[], toolbar=None, apply_ranges=False)
                * hv.Labels(data["texts"], kdims=["x", "y"], vdims=["text", "tcolour"]).opts(
                    text_font_size="7pt", text_color="tcolour", text_font_style="bold", **still))

        layers = hv.DynamicMap(same_for_same(moving, "rects", "texts"), streams=[self.pipe])
        way = hv.DynamicMap(same_for_same(lambda data: hv.Path(data["way"], kdims=["x", "y"]), "way"),
                            streams=[self.pipe]).opts(color="#7c3aed", line_width=3, line_dash="dotted", alpha=0.9,
                                                      **still)
        # the room names under the counters: a counter on a room's top edge hides its name, never the other way
        return (base * edge * fixed * rooms * trail * way * layers).opts(
            hv.opts.Overlay(xlim=xlim, ylim=ylim, frame_width=round((xlim[1] - xlim[0]) * SCALE),
                            frame_height=round((ylim[1] - ylim[0]) * SCALE), xaxis=None, yaxis=None, toolbar=None,
                            show_frame=False, bgcolor="#f8fafc", border=0, backend_opts={"plot.name": "board"}))

    # --- clicks -----------------------------------------------------------------------------------------
    def _on_tap(self, x: float | None, y: float | None) -> None:
        """HoloViews delivers a tap outside the page's document lock: the click runs on the page's next tick
        (``apps.commands.on_page``), for the game as it was when it was made."""
        if x is not None and y is not None:
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
