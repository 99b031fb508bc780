"""The Kung-Fu Zoo arena: one Bokeh figure, its gestures, and the animation of a flick.

A click (``Tap``) chooses a die, a launch spot or where to place a die knocked out; a drag (``PanStart`` /
``PanEnd``) aims the flick, its arrow drawn live in the browser while dragging (``CustomJS``). The browser writes
each gesture into a data source (``gesture``) that the arena watches, and from there it reaches the session
through :func:`apps.commands.on_page`: not through Python callbacks of Bokeh's events, which in a notebook lose a
widget change the browser sends with them (see :mod:`apps.gestures`). The figure's data
sources follow the session's parameters: every redraw goes through ``pn.state.execute``, which runs it at once
under the document lock (a click, a notebook) or on the page's next tick (a result that came back from a worker
thread), never from a thread.

A committed flick animates in the browser from the engine's frames (``requestAnimationFrame``, interpolating
the frames at the display's rate, each stunned die's hatch moving with it); the browser reports the end and
its frame rate back, and only then does :attr:`Arena.shown` (the version the page shows) move on. Outside a
served page (a notebook cell, a test) the board is shown at once.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import panel as pn
import param
from bokeh.models import ColumnDataSource, CustomJS
from bokeh.plotting import figure

from apps.commands import on_page
from apps.gestures import gesture_source, take_clicks
from apps.live import in_this_document, in_turn
from apps.zoo import adapter as za
from apps.zoo.arena_js import ANIMATE_JS, DRAG_END_JS, DRAG_MOVE_JS, DRAG_START_JS
from engine.zoo.constants import arena
from engine.zoo.session import ZooSession

FIG_W = 520
FIG_H = round(FIG_W * (za.Y_RANGE[1] - za.Y_RANGE[0]) / (za.X_RANGE[1] - za.X_RANGE[0]))
REPLAY_RATE = 0.25
""""Replay slowly" plays the last flick at a quarter of its speed."""
PROPOSAL = ("die", "spot", "face", "direction", "speed", "strike", "use_ability_flag")
LIVE = ("notice", "last_frames", "round_result", "seats", "aim_angle_sd", "aim_speed_sd", *PROPOSAL)
"""The session's parameters that the page's views follow through :attr:`Arena.live`."""

def _empty(*keys: str) -> dict[str, list[Any]]:
    return {k: [] for k in keys}


class Arena(pn.viewable.Viewer):
    """The arena (top view, to scale) of one session, with its gestures and the animation of each flick."""

    session = param.ClassSelector(class_=ZooSession, doc="The battle drawn.")
    served = param.Boolean(default=False, doc="On a served page: flicks animate in the browser.")
    animating = param.Boolean(default=False, doc="A flick is playing out in the browser.")
    shown = param.Integer(default=-1, doc="The session version the page shows (held back while a flick plays).")
    last_fps = param.Number(default=None, allow_None=True, doc="Frame rate of the last animation in the browser.")
    may_act = param.Callable(default=None, doc="At a table: asked before a click or a drag changes the battle.")

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.fps_log: list[dict[str, float]] = []
        self._pan_start: tuple[float, float] | None = None
        self._anim_seq = 0
        self._build()
        s = self.session
        # One watcher of both, called once a move: at the place of the frames, which a move sets first (so the
        # animation is scheduled before the page's other redraws), with the version it ends at.
        s.param.watch(self._on_version, ["last_frames", "version"])
        s.param.watch(self._on_proposal, [*PROPOSAL, "round_result", "seats"])
        # The page's other views follow this copy of the session's parameters, made in the page's document after
        # the watchers above: param calls its own and Panel's bindings to a parameter before any watcher of ours,
        # so views bound to the session would redraw on every page at the table before a flick's animation starts
        # there; bound to the copy, they redraw after it (see apps.live), on the page whose click it was too.
        self.live = in_this_document(s, *LIVE, last=True)
        self.draw()

    # --- the figure -------------------------------------------------------------------------------------------
    def _build(self) -> None:
        a = arena()
        size, w, e = a.size, a.rail_width, za.edge()
        fig = figure(frame_width=FIG_W, frame_height=FIG_H, x_range=za.X_RANGE, y_range=za.Y_RANGE, tools="",
                     toolbar_location=None, name="arena", min_border=0, outline_line_color=None)
        fig.axis.visible = False
        fig.grid.visible = False
        fig.background_fill_color = "#f3f4f6"
        fig.quad(left=[-w], right=[size + w], bottom=[-w], top=[size + w], fill_color="#8b5a2b", line_color="#5b3a1b")
        fig.quad(left=[0], right=[size], bottom=[0], top=[size], fill_color="#f5e6c8", line_color="#5b3a1b")
        holes = list(a.holes.values())
        fig.circle(x=[h[0] for h in holes], y=[h[1] for h in holes], radius=a.hole_radius, fill_color="#1f2937",
                   line_color="#000000")
        fig.text(x=[h[0] for h in holes], y=[h[1] for h in holes], text=["cage"] * 4, text_color="#e5e7eb",
                 text_align="center", text_baseline="middle", text_font_size="10px")
        fig.scatter(x=[size / 2, size / 2, -w / 2, size + w / 2], y=[-w / 2, size + w / 2, size / 2, size / 2], size=7,
                    fill_color="#fef3c7", line_color="#111827")
        self.sources = src = {
            "bands": ColumnDataSource(_empty("left", "right", "bottom", "top")),
            "dots": ColumnDataSource(_empty("x", "y")),
            "dice": ColumnDataSource(_empty(*za.DICE_COLUMNS)),
            "faces": ColumnDataSource(_empty(*za.FACE_COLUMNS)),
            "labels": ColumnDataSource(za.bench_labels(self.session)),
            "sel": ColumnDataSource(_empty("x", "y", "angle")),
            "launch": ColumnDataSource(_empty("x", "y", "angle", "face", "preview")),
            "aim": ColumnDataSource(_empty("x0", "y0", "x1", "y1", "x2", "y2", "angle")),
            "drag": ColumnDataSource({k: [float("nan")] for k in ("x0", "y0", "x1", "y1")}),
            "anim": ColumnDataSource(_empty(*za.ANIM_COLUMNS)),
            "animtext": ColumnDataSource(_empty(*za.ANIM_TEXT_COLUMNS)),
            "frames": ColumnDataSource(_empty(*za.FRAME_COLUMNS)),
            "done": ColumnDataSource(_empty("seq", "fps", "drawn", "seconds", "wall")),
            "gesture": gesture_source(),
        }
        fig.quad(left="left", right="right", bottom="bottom", top="top", source=src["bands"], fill_color="#22c55e",
                 fill_alpha=0.35, line_color=None, name="bands")
        fig.scatter(x="x", y="y", source=src["dots"], size=16, fill_color="#22c55e", fill_alpha=0.6,
                    line_color="#14532d", line_width=2)
        fig.text(x="x", y="y", text="text", source=src["labels"], text_color="colour", text_align="center",
                 text_baseline="middle", text_font_size="11px", text_font_style="bold")
        # Each die is its cube seen from above: the faces it shows (a polygon each), its letter on the top one.
        fig.patches(xs="xs", ys="ys", source=src["faces"], fill_color="fill", line_color="line", line_width="width",
                    hatch_pattern="hatch", hatch_color="#fecaca", hatch_alpha="halpha", fill_alpha="alpha",
                    line_alpha="alpha", name="faces")
        fig.text(x="tx", y="ty", text="face", source=src["dice"], text_color="#ffffff", text_align="center",
                 text_baseline="middle", text_font_size="13px", text_font_style="bold", text_alpha="alpha",
                 name="dice")
        fig.text(x="x", y="ly", text="label", source=src["dice"], text_color="#111827", text_align="center",
                 text_baseline="middle", text_font_size="9px", text_alpha="alpha")
        fig.text(x="x", y="ny", text="note", source=src["dice"], text_color="#6b7280", text_align="center",
                 text_baseline="middle", text_font_size="7px")
        fig.rect(x="x", y="y", width=e + 7, height=e + 7, angle="angle", source=src["sel"], fill_alpha=0,
                 line_color="#f59e0b", line_width=3)
        fig.rect(x="x", y="y", width=e, height=e, angle="angle", source=src["launch"], fill_alpha=0.15,
                 fill_color="#111827", line_color="#111827", line_dash="dashed", line_width=2)
        fig.text(x="x", y="y", text="face", source=src["launch"], text_color="#111827", text_align="center",
                 text_baseline="middle", text_font_size="12px", text_font_style="bold")
        fig.segment(x0="x0", y0="y0", x1="x2", y1="y2", source=src["aim"], line_color="#dc2626", line_dash="dotted",
                    line_width=1.5, line_alpha=0.7)
        fig.segment(x0="x0", y0="y0", x1="x1", y1="y1", source=src["aim"], line_color="#dc2626", line_width=4)
        fig.scatter(x="x1", y="y1", angle="angle", source=src["aim"], marker="triangle", size=14,
                    fill_color="#dc2626", line_color="#dc2626")
        fig.segment(x0="x0", y0="y0", x1="x1", y1="y1", source=src["drag"], line_color="#7c3aed", line_width=4,
                    line_alpha=0.8, level="overlay")
        # The moving dice are an overlay: each animation frame repaints only that layer.
        fig.patches(xs="xs", ys="ys", source=src["anim"], fill_color="fill", line_color="#111827", fill_alpha="alpha",
                    line_alpha="alpha", hatch_pattern="x", hatch_color="#fecaca", hatch_alpha="halpha",
                    level="overlay", name="moving")
        fig.text(x="x", y="y", text="face", source=src["animtext"], text_color="#ffffff", text_align="center",
                 text_baseline="middle", text_font_size="13px", text_font_style="bold", text_alpha="alpha",
                 level="overlay")
        src["frames"].js_on_change("data", CustomJS(
            args={"frames": src["frames"], "anim": src["anim"], "text": src["animtext"], "done": src["done"],
                  "faces": za.face_table(), "edge": e, "minUp": za.MIN_UP}, code=ANIMATE_JS))
        src["done"].on_change("data", self._on_done)
        # The frames and the report of the animation hang off the figure through this callback's arguments, so
        # that they are part of the page's document.
        fig.js_on_event("panstart", CustomJS(args={"drag": src["drag"], "frames": src["frames"], "done": src["done"]},
                                             code=DRAG_START_JS))
        fig.js_on_event("pan", CustomJS(args={"drag": src["drag"], "launch": src["launch"]}, code=DRAG_MOVE_JS))
        fig.js_on_event("panend", CustomJS(args={"drag": src["drag"], "gesture": src["gesture"]}, code=DRAG_END_JS))
        take_clicks(fig, src["gesture"], self._on_gesture)
        self.figure = fig
        self._pane = pn.pane.Bokeh(fig)

    def settled(self) -> bool:
        """The arena shows the battle as it is: no flick playing out, no move waiting to be drawn."""
        return not self.animating and self.shown == self.session.version

    # --- gestures ---------------------------------------------------------------------------------------------
    def tap(self, x: float, y: float) -> bool:
        """A click on the arena: place a die knocked out, choose a die, or choose a launch spot on a rail (off
        the dot only once the Ambush is armed: the click itself never arms it)."""
        s = self.session
        if self.may_act is not None and not self.may_act():
            return False
        if not self.settled():
            s.refuse("Wait for the flick to finish rolling.")
            return False
        if s.round_result is not None:
            s.refuse("The round is over: see its result, then press Next round.")
            return False
        st = s.state
        if st.phase == "place":
            _owner, die, rule = st.pending[0]
            return s.place(die, round(x, 1), round(y, 1), "head" if rule == "head" else s.face)
        die = za.at(s, x, y)
        if die is not None:
            return s.choose_die(die)
        spot = s.spot_at(x, y)
        if spot is not None:
            return s.launch_spot(spot)
        size = arena().size
        if 0 <= x <= size and 0 <= y <= size:
            s.refuse("Click one of your dice, or a green spot on a rail; drag to aim.")
        return False

    def _on_gesture(self, kind: str, x0: float, y0: float, x1: float, y1: float) -> None:
        """A click or a drag the browser wrote into the ``gesture`` source: run it as a click on the page."""
        if kind == "tap":
            on_page(partial(self.tap, x0, y0), self.session)(None)
        elif kind == "drag":
            self.pan_start(x0, y0)
            on_page(partial(self.pan_end, x1, y1), self.session)(None)

    def pan_start(self, x: float, y: float) -> None:
        self._pan_start = (x, y)

    def pan_end(self, x: float, y: float) -> bool:
        """Releasing a drag proposes the flick it draws."""
        start, self._pan_start = self._pan_start, None
        if start is not None and self.may_act is not None and not self.may_act():
            return False
        if start is None or not self.settled() or self.session.round_result is not None:
            return False
        return self.session.propose_vector(x - start[0], y - start[1])

    # --- following the session --------------------------------------------------------------------------------
    def _on_version(self, *_events: Any) -> None:
        frames = self.session.last_frames
        if self.served and frames:
            self._redraw(partial(self._animate, frames, self.session.version))
        else:
            self._redraw(self.draw)

    def _on_proposal(self, *_events: Any) -> None:
        self._redraw(lambda: None if self.animating else self.draw_proposal())

    def _redraw(self, fn: Any) -> None:
        """Change the figure's sources under the document lock: on a served page on its next tick (a change may
        come from an async task, which runs outside the lock), elsewhere at once. On this arena's own page: at a
        table the change may come from a click on another page, whose document is the current one."""
        in_turn(fn, self.figure.document)

    def _write(self, data: dict[str, dict[str, Any]]) -> None:
        """New data for the figure's sources (by name), sent to the browser as one message.

        Under ``pn.io.unlocked``, as Panel changes its own models: the changes go out as one message, written at
        once, where Bokeh sends each source's as a message of its own, each written in turn behind the page's other
        callbacks and drawn by the browser on its own. At a table of two (apps._tables_bench, 12 flicks), a
        flick's ten messages reached the other browser one by one ~100 ms after the server made them."""
        with pn.io.unlocked():
            for name, columns in data.items():
                self.sources[name].data = columns

    def draw(self, **also: dict[str, Any]) -> None:
        """Everything the arena shows of the session as it is now (``also``: more sources' data, in the same
        message)."""
        self._write({**also, **self._board()})
        self.shown = self.session.version

    def _board(self) -> dict[str, dict[str, Any]]:
        s = self.session
        dice, faces = za.layers(s)
        return {"dice": dice, "faces": faces, "labels": za.bench_labels(s), **self._proposal()}

    def draw_proposal(self) -> None:
        """The chosen die, where it may be flicked from, its spot and the aim."""
        self._write(self._proposal())

    def _proposal(self) -> dict[str, dict[str, Any]]:
        s = self.session
        spots = za.spots_data(s)
        return {"sel": za.selection_data(s), "dots": spots["dots"], "bands": spots["bands"],
                "launch": za.launch_data(s), "aim": za.aim_data(s)}

    # --- animation --------------------------------------------------------------------------------------------
    def replay(self, rate: float = REPLAY_RATE) -> bool:
        """Play the last flick's frames again, ``rate`` times as fast as it happened (a quarter: slowly)."""
        s = self.session
        if not self.settled():
            s.refuse("Wait for the flick to finish rolling.")
            return False
        if not s.last_frames:
            s.refuse("There is no flick to replay: the last move was not a flick.")
            return False
        self._animate(s.last_frames, s.version, rate)
        return True

    def _animate(self, frames: list[dict[str, Any]], version: int, rate: float = 1.0) -> None:
        """Send the frames to the browser, which plays them and reports back (``_on_done``); the dice that
        move are drawn by the animation (hatch and all), the others stay where they were."""
        if self.session.version != version:  # a newer move came first: show the game as it is
            self.draw()
            return
        self._anim_seq += 1
        seq = self._anim_seq
        first, text, rows = za.animation_data(self.session, frames, seq, rate)
        src = self.sources
        # One message: the moving dice drawn where they stand (the animation's first frame), their frames (the
        # animation starts as the browser takes them in), the board with them hidden and the aim cleared. What the
        # page's other views do once the arena is animating follows in messages of their own.
        moving = set(text["id"])
        self._write({"anim": first, "animtext": text, "frames": rows,
                     "dice": za.hide(dict(src["dice"].data), moving), "faces": za.hide(dict(src["faces"].data), moving),
                     **{k: {c: [] for c in src[k].data} for k in ("aim", "sel", "launch", "dots", "bands")}})
        self.animating = True
        duration = float(frames[-1]["t"]) / rate
        # If the browser never reports (a hidden tab pauses animation frames), finish anyway.
        pn.state.add_periodic_callback(lambda: self._finish(None) if self._anim_seq == seq and self.animating
                                       else None, period=int(1000 * duration) + 4000, count=1)

    def _on_done(self, _attr: str, _old: Any, new: Any) -> None:
        seq = list(new.get("seq", []))
        if seq and int(seq[0]) == self._anim_seq and self.animating:
            info = {k: float(new[k][0]) for k in ("fps", "drawn", "seconds", "wall") if k in new}
            self.fps_log.append(info)
            self._finish(info["fps"])

    def _finish(self, fps: float | None) -> None:
        with param.parameterized.batch_call_watchers(self):
            if fps is not None:
                self.last_fps = fps
            self.animating = False
            self.draw(anim=_empty(*za.ANIM_COLUMNS), animtext=_empty(*za.ANIM_TEXT_COLUMNS))

    def __panel__(self) -> pn.viewable.Viewable:
        return self._pane
