"""Kung-Fu Zoo in the browser: drag a flick on the arena, see its odds first, watch it play out.

``create_app()`` builds a new :class:`~engine.zoo.session.ZooSession` and a :class:`ZooDashboard` on it
for every browser tab. The arena is one Bokeh figure fed from pure data functions (``apps._zoo_arena``):
a click (``Tap``) chooses a die, a launch spot or where to place an ejected die; a drag (``PanStart`` /
``PanEnd``) aims the flick, with the arrow drawn live in the browser while dragging. The odds of the aimed
flick (first from a few samples, then refined to 500, with progress) and the heat map of caging odds
over direction x speed run on a worker thread with one process (no fork from the server), as do the
bots' moves; results reach the page through its event loop (``pn.state.execute``). A committed flick
animates in the browser from the engine's frames (``requestAnimationFrame``, interpolating the 40 fps
frames at the display's rate); the browser reports the end and its frame rate back, and only then do
the board, the score and the turn change on the page.
"""

from __future__ import annotations

import html
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import panel as pn
import param
from bokeh.events import DoubleTap, PanEnd, PanStart, Tap
from bokeh.models import ColumnDataSource, CustomJS, HoverTool, LinearColorMapper
from bokeh.plotting import figure

from apps import _zoo_arena as za
from apps._background import (
    BackgroundWorker,
    changes_bokeh_models,
    page_command,
    page_document,
    run_on_page_loop,
)
from apps._files import NO_HTML, GameFiles
from engine.core.rng import make_rng
from engine.zoo.constants import FACE_NAMES, TEAMS, abilities, arena
from engine.zoo.odds import OUTCOMES, FlickOdds, noisy_jobs, odds_grid, run_samples, summarise
from engine.zoo.session import ZooSession

TITLE = "Kung-Fu Zoo"
DESCRIPTION = "Flick animal dice into the cages: drag the flick on the arena and see its odds before you commit."
ORDER = 3

ODDS_CHUNKS = (50, 90, 90, 90, 90, 90)  # a first estimate from 50 flicks, refined to 500
GRID_SAMPLES = 18
"""Simulated flicks per heat-map cell (each cell shows its count and 95% interval on hover): 3x the 6 it was,
which the small pieces below keep from delaying a new aim's odds; the whole map takes about 1 s (``benchmark``)."""
MAP_PIECE_FLICKS = 36
"""At most this many flicks between the worker's checks for a new aim while it maps: a re-aim waits for the
piece under way, so the piece, not the whole map, sets how late the new aim's first odds can be."""
GRID_SPEEDS = (0.4, 0.8, 1.2, 1.6, 2.0, 2.4)
GRID_DIRECTIONS = tuple(float(d) for d in range(-75, 76, 15))
GRID_HEADINGS = tuple(float(d) for d in range(0, 360, 30))
MODES = {"Cage Battle": ("cage", False), "Points Battle": ("points", False), '"All Valley" Cage Battle': ("cage", True)}
BOX = {"background": "#ffffff", "border": "1px solid #e5e7eb", "border-radius": "10px",
       "padding": "4px 12px 10px 12px", "box-shadow": "0 1px 3px rgba(0,0,0,0.06)"}
LEFT_TABLE = ":host table td, :host table th { text-align: left !important; }"
FIG_W = 520
FIG_H = round(FIG_W * (za.Y_RANGE[1] - za.Y_RANGE[0]) / (za.X_RANGE[1] - za.X_RANGE[0]))
DESIGN_NOTE = ("The rules give no dimensions: the arena (300 mm square, 45 mm cages), the dice, the physics and "
               "the tumble model are our design, and so are two abilities (Gorilla's Chest Pound and Crocodile's "
               "Ambush); Zebra's and Elephant's follow the retail cards' wording.")

ANIMATE_JS = """
const get = (s, k) => (s.data instanceof Map ? s.data.get(k) : s.data[k]);
const t = get(frames, 't');
if (!t || t.length == 0) { return; }
const n = get(anim, 'x').length;
if (n == 0) { return; }
const F = Math.round(t.length / n);
const fx = get(frames, 'x'), fy = get(frames, 'y'), fa = get(frames, 'angle');
const ff = get(frames, 'face'), fs = get(frames, 'shown'), seq = get(frames, 'seq')[0];
const X = get(anim, 'x'), Y = get(anim, 'y'), A = get(anim, 'angle'), FACE = get(anim, 'face');
const AL = get(anim, 'alpha');
const dur = t[(F - 1) * n];
const state = {seq: seq, drawn: 0, start: null, last: null};
anim._zoo = state;
function step(now) {
  if (anim._zoo !== state) { return; }
  if (state.start === null) {  // the first frame shows the start; the clock runs from the next one
    state.start = now;
    requestAnimationFrame(step);
    return;
  }
  const el = (now - state.start) / 1000;
  let f = 0;
  while (f < F - 1 && t[(f + 1) * n] <= el) { f++; }
  const g = Math.min(f + 1, F - 1);
  const t0 = t[f * n], t1 = t[g * n];
  const u = t1 > t0 ? Math.min(1, Math.max(0, (el - t0) / (t1 - t0))) : 0;
  for (let i = 0; i < n; i++) {
    const a = f * n + i, b = g * n + i;
    X[i] = fx[a] + (fx[b] - fx[a]) * u;
    Y[i] = fy[a] + (fy[b] - fy[a]) * u;
    A[i] = fa[a] + (fa[b] - fa[a]) * u;
    FACE[i] = ff[u < 0.5 ? a : b];
    AL[i] = (u < 0.5 ? fs[a] : fs[b]) > 0 ? 1.0 : 0.0;
  }
  anim.change.emit();
  state.drawn += 1;
  state.last = now;
  if (el < dur) {
    requestAnimationFrame(step);
  } else {
    const span = (state.last - state.start) / 1000;
    done.data = {seq: [state.seq], fps: [(state.drawn - 1) / Math.max(span, 1e-3)], drawn: [state.drawn],
                 seconds: [el]};
  }
}
requestAnimationFrame(step);
"""

DRAG_START_JS = "drag._zoo_start = [cb_obj.x, cb_obj.y];"
DRAG_MOVE_JS = """
const get = (s, k) => (s.data instanceof Map ? s.data.get(k) : s.data[k]);
const st = drag._zoo_start, lx = get(launch, 'x');
if (!st || !lx || lx.length == 0 || get(launch, 'preview')[0] == 0) { return; }
const x0 = lx[0], y0 = get(launch, 'y')[0];
get(drag, 'x0')[0] = x0; get(drag, 'y0')[0] = y0;
get(drag, 'x1')[0] = x0 + cb_obj.x - st[0]; get(drag, 'y1')[0] = y0 + cb_obj.y - st[1];
drag.change.emit();
"""
DRAG_END_JS = """
const get = (s, k) => (s.data instanceof Map ? s.data.get(k) : s.data[k]);
for (const k of ['x0', 'y0', 'x1', 'y1']) { get(drag, k)[0] = NaN; }
drag._zoo_start = null;
drag.change.emit();
"""


def _box(title: str, *objects: Any, **kwargs: Any) -> pn.Column:
    return pn.Column(pn.pane.Markdown(f"### {title}", margin=(0, 0, -8, 0)), *objects, styles=BOX, margin=(6, 6),
                     **kwargs)


def _pct(p: float) -> str:
    return f"{100 * p:.1f}%"


# --- pure views ----------------------------------------------------------------------------------------------

def status_html(session: ZooSession) -> str:
    """Battle, round, score, what decides the round now (animals still fighting in a Cage Battle, points on
    the table in a Points Battle), and whose turn it is."""
    s = session.state
    g = s.game
    if g.mode == "cage" and not g.multiplayer:
        score = " · ".join(f"{g.player_name(q)}: {s.wins[q]} round(s) won" for q in range(g.players))
    elif g.mode == "cage":
        score = " · ".join(f"{g.player_name(q)}: {'out' if s.eliminated[q] else 'in play'}"
                           for q in range(g.players))
    else:
        score = " · ".join(f"{g.player_name(q)}: {s.points[q]} points" for q in range(g.players))
    if g.mode == "cage":  # what decides a Cage Battle round: the animals left to fight
        label, css = "Animals still fighting", "fighting"
        now = " · ".join(f"{g.player_name(q)} {'out' if s.eliminated[q] else s.still_fighting(q)}"
                         for q in range(g.players))
    else:
        label, css = "Points on the table now", "table-points"
        now = " · ".join(f"{g.player_name(q)} {s.round_score(q)}" for q in range(g.players))
    prompt = session._prompt()
    return (f"<div class='status'><b>{html.escape(g.title())}, round {s.round_no}</b> · <span class='score'>"
            f"{html.escape(score)}</span><br><span style='color:#6b7280'>{label}: "
            f"<span class='{css}'>{html.escape(now)}</span></span><br><b class='prompt'>"
            f"{html.escape(prompt)}</b></div>")


def odds_html(odds: FlickOdds | None, busy: bool, preview: bool, has_aim: bool, points: bool = True) -> str:
    """The odds of the aimed flick with 95% intervals (or why there are none yet); the expected points only when
    ``points`` count (a Points Battle): in a Cage Battle they decide nothing and would only distract."""
    if not preview:
        return "<p><b>Eyes closed</b> (Dust Kick): no aim preview and no odds for this flick.</p>"
    if odds is None:
        return ("<p>Estimating the odds…</p>" if busy and has_aim else
                "<p style='color:#6b7280'>Aim a flick (drag on the arena) to see its odds.</p>")

    def row(name: str, p: Any, cls: str) -> str:
        return (f"<tr><td>{name}</td><td class='{cls}' style='font-weight:700'>{_pct(p.value)}</td>"
                f"<td style='color:#6b7280'>{_pct(p.low)} – {_pct(p.high)}</td></tr>")

    points_row = (f"<tr><td>Expected points</td><td class='p-points' style='font-weight:700'>{odds.points_mean:+.2f}"
                  f"</td><td style='color:#6b7280'>{odds.points_low:+.2f} to {odds.points_high:+.2f}</td></tr>"
                  if points else "")
    faces = "".join(f"<td style='padding:0 6px'>{k}<br><b>{_pct(odds.outcomes[k].value)}</b><br>"
                    f"<span style='color:#6b7280;font-size:11px'>{_pct(odds.outcomes[k].low)}–"
                    f"{_pct(odds.outcomes[k].high)}</span></td>" for k in OUTCOMES)
    return (f"<table class='odds'><tr><th></th><th>chance</th><th>95% interval</th></tr>"
            f"{row('Cage an opponent', odds.cage_opponent, 'p-cage')}"
            f"{row('Lose your own animal', odds.lose_own, 'p-lose')}"
            f"{row('Extra flick', odds.extra_flick, 'p-extra')}"
            f"{row('Foul', odds.foul, 'p-foul')}{points_row}</table>"
            f"<div style='margin-top:4px'>Where the flicked animal ends:</div>"
            f"<table style='font-size:12px;text-align:center'><tr>{faces}</tr></table>"
            f"<div class='odds-n' style='color:#6b7280;font-size:12px'>{odds.samples} simulated flicks, aim noise "
            f"{odds.noise.angle_sd:g}° and {100 * odds.noise.speed_sd:g}% of the speed"
            f"{' · refining…' if busy else ''}</div>")


def heat_title(grid: pd.DataFrame | None, aimed: bool) -> str:
    """The heat map's title says what was measured: a cell is a few simulated flicks, so a map with no caging
    is "none in N flicks each", never "no aim cages here" (0 of 18 still leaves up to 18% at 95%)."""
    if grid is None or len(grid) == 0:
        return "Caging odds by aim: mapping…" if aimed else "Caging odds by aim"
    n = int(grid["samples"].min())
    each = f"{n} flicks" if n == int(grid["samples"].max()) else f"{n}+ flicks"
    if float(grid["p_cage_opponent"].max()) == 0.0:
        return f"Caging odds by aim: no cell caged in {each} each"
    return f"Caging odds by aim, % of {each} a cell: click to aim"


def cards_html(session: ZooSession) -> str:
    out = []
    s = session.state
    for c in session.cards():
        colour = za.TEAM_COLOURS[c["team"]]
        state = ("not in play (Points Battle)" if not c["in_play"] else ("spent this round" if c["spent"]
                                                                          else "ready"))
        mine = " (to move)" if s.phase != "over" and c["player"] == s.to_move else ""
        out.append(f"<div style='border-left:6px solid {colour};padding:2px 8px;margin:4px 0'><b>"
                   f"{html.escape(s.game.player_name(c['player']))}{mine}: {html.escape(c['ability'])}</b> · "
                   f"<i>{state}</i><br>"
                   f"<span style='font-size:12px'>{html.escape(c['text'])}</span></div>")
    return "".join(out)


def log_frame(session: ZooSession) -> pd.DataFrame:
    """Every move, newest first, with the odds shown for it when it was a person's aimed flick."""
    rows = []
    g = session.state.game
    for e in reversed(session.log):
        o = e.get("odds")
        points = f", points {o['points']:+.2f}" if o and g.mode == "points" else ""  # points count in no Cage Battle
        odds = "" if not o else (f"cage {_pct(o['cage_opponent'])} ({_pct(o['cage_low'])}–{_pct(o['cage_high'])}), "
                                 f"lose own {_pct(o['lose_own'])}{points} (n={o['samples']})")
        who = "" if e.get("player") is None else g.player_name(e["player"])
        rows.append({"#": e["move"], "player": who, "move": e["text"], "what happened": "; ".join(e["events"]),
                     "odds shown": odds})
    return pd.DataFrame(rows, columns=["#", "player", "move", "what happened", "odds shown"])


def alert_type(message: str) -> str:
    low = message.lower()
    if low.startswith("could not") or "refused" in low:
        return "danger"
    if "caged" in low or "fell into" in low or "won" in low:
        return "success"
    if "foul" in low or "out for" in low or "not yet playable" in low:
        return "warning"
    return "info"


class ZooDashboard(param.Parameterized):
    """The page for one session: the arena and its gestures, the odds, the animation, the controls."""

    session = param.ClassSelector(class_=ZooSession, doc="The battle this page plays.")
    odds = param.Parameter(default=None, doc="FlickOdds of the aimed flick (possibly a first estimate).")
    odds_busy = param.Boolean(default=False, doc="The odds are being estimated or refined.")
    odds_progress = param.Integer(default=0, doc="Simulated flicks of the current estimate so far.")
    grid = param.Parameter(default=None, doc="DataFrame of caging odds over direction x speed.")
    animating = param.Boolean(default=False, doc="A flick is playing out in the browser.")
    shown = param.Integer(default=-1, doc="The session version the page shows (held back while animating).")
    last_fps = param.Number(default=None, allow_None=True, doc="Frame rate of the last animation in the browser.")
    background = param.Boolean(default=True, doc="Odds, heat map and bots on a worker thread (off: benchmarks).")
    bots = param.Boolean(default=True, doc="Let the bots play their seats automatically.")

    def __init__(self, **params: Any) -> None:
        if params.get("session") is None:
            params["session"] = ZooSession(seats=["person", "bot"], odds_workers=1)
        super().__init__(**params)
        self.session.odds_workers = 1  # never fork from the server's threads
        self._doc = page_document()
        self._served = self._live()  # on a server (else a notebook or a test: no event loop to hand work to)
        self._worker = BackgroundWorker(self._background, name="zoo-worker")
        self._aim_seq = 0
        self._syncing = False
        self._job: dict[str, Any] | None = None  # the latest job for the worker, taken on the page's loop
        self._odds_done = -1  # the aim whose odds are complete
        self._anim_seq = 0
        self._grid_key: Any = None
        self._grid_rows: tuple[Any, list[pd.DataFrame]] = (None, [])
        self._pan_start: tuple[float, float] | None = None
        self._anim_started = 0.0
        self.fps_log: list[dict[str, float]] = []
        self._build_figures()
        self._build_controls()
        self.layout = self._build_layout()
        s = self.session
        s.param.watch(self._on_version, ["version"])
        s.param.watch(self._on_proposal, ["die", "spot", "face", "direction", "speed", "use_ability_flag",
                                          "aim_angle_sd", "aim_speed_sd"])
        s.param.watch(self._on_message, ["message"])
        self._show()
        if self.background:
            pn.state.onload(self._worker.request)

    # --- figures ----------------------------------------------------------------------------------------------
    def _build_figures(self) -> None:
        a = arena()
        size, w = a.size, a.rail_width
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
        dots = {"x": [size / 2, size / 2, -w / 2, size + w / 2], "y": [-w / 2, size + w / 2, size / 2, size / 2]}
        fig.scatter(x=dots["x"], y=dots["y"], size=7, fill_color="#fef3c7", line_color="#111827")
        self._src = {k: ColumnDataSource(v) for k, v in {
            "bands": {"left": [], "right": [], "bottom": [], "top": []},
            "dots": {"x": [], "y": []},
            "dice": za.dice_data(self.session),
            "labels": za.bench_labels(self.session),
            "sel": {"x": [], "y": [], "angle": []},
            "launch": {"x": [], "y": [], "angle": [], "face": [], "preview": []},
            "aim": {k: [] for k in ("x0", "y0", "x1", "y1", "x2", "y2", "angle")},
            "drag": {k: [float("nan")] for k in ("x0", "y0", "x1", "y1")},
            "anim": {k: [] for k in ("id", "x", "y", "angle", "face", "fill", "alpha")},
            "frames": {k: [] for k in ("t", "x", "y", "angle", "face", "shown", "seq")},
            "done": {"seq": [], "fps": [], "drawn": [], "seconds": []},
        }.items()}
        src = self._src
        e = za.edge()
        fig.quad(left="left", right="right", bottom="bottom", top="top", source=src["bands"], fill_color="#22c55e",
                 fill_alpha=0.35, line_color=None)
        fig.scatter(x="x", y="y", source=src["dots"], size=16, fill_color="#22c55e", fill_alpha=0.6,
                    line_color="#14532d", line_width=2)
        fig.text(x="x", y="y", text="text", source=src["labels"], text_color="colour", text_align="center",
                 text_baseline="middle", text_font_size="11px", text_font_style="bold")
        fig.rect(x="x", y="y", width=e, height=e, angle="angle", source=src["dice"], fill_color="fill",
                                line_color="line", line_width="width", hatch_pattern="hatch", hatch_color="#fecaca",
                                hatch_alpha=0.8, fill_alpha="alpha", line_alpha="alpha")
        fig.text(x="x", y="y", text="face", source=src["dice"], text_color="#ffffff",
                                 text_align="center", text_baseline="middle", text_font_size="13px",
                                 text_font_style="bold", text_alpha="alpha")
        fig.text(x="x", y="ly", text="label", source=src["dice"], text_color="#111827",
                               text_align="center", text_baseline="middle", text_font_size="9px", text_alpha="alpha")
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
        # The moving dice (and the live drag arrow) are overlays: each animation frame repaints only that layer.
        self._anim_r = [
            fig.rect(x="x", y="y", width=e, height=e, angle="angle", source=src["anim"], fill_color="fill",
                     line_color="#111827", fill_alpha="alpha", line_alpha="alpha", level="overlay"),
            fig.text(x="x", y="y", text="face", source=src["anim"], text_color="#ffffff", text_align="center",
                     text_baseline="middle", text_font_size="13px", text_font_style="bold", text_alpha="alpha",
                     level="overlay"),
        ]
        src["frames"].js_on_change("data", CustomJS(args={"frames": src["frames"], "anim": src["anim"],
                                                          "done": src["done"]}, code=ANIMATE_JS))
        src["done"].on_change("data", self._on_done)
        # The frames and the report of the animation hang off the figure through this callback's arguments, so
        # that they are part of the page's document.
        fig.js_on_event("panstart", CustomJS(args={"drag": src["drag"], "frames": src["frames"], "done": src["done"]},
                                             code=DRAG_START_JS))
        fig.js_on_event("pan", CustomJS(args={"drag": src["drag"], "launch": src["launch"]}, code=DRAG_MOVE_JS))
        fig.js_on_event("panend", CustomJS(args={"drag": src["drag"]}, code=DRAG_END_JS))
        fig.on_event(Tap, lambda ev: self.tap(ev.x, ev.y))
        fig.on_event(DoubleTap, lambda ev: self.tap(ev.x, ev.y))  # two quick clicks arrive as one double tap
        fig.on_event(PanStart, lambda ev: self.pan_start(ev.x, ev.y))
        fig.on_event(PanEnd, lambda ev: self.pan_end(ev.x, ev.y))
        self._fig = fig

        heat = figure(width=420, height=260, x_range=(-82.5, 82.5), y_range=(0.2, 2.6), tools="",
                      toolbar_location=None, name="heatmap", x_axis_label="direction (degrees from straight in)",
                      y_axis_label="speed (m/s)", title="Chance of caging an opponent: click a cell to aim there")
        self._heat_src = ColumnDataSource(za.heat_data(None))
        self._heat_mark = ColumnDataSource({"x": [], "y": []})
        mapper = LinearColorMapper(palette="Viridis256", low=0, high=1)
        cells = heat.rect(x="direction", y="speed", width="w", height="h", source=self._heat_src,
                          fill_color={"field": "p", "transform": mapper}, line_color="#ffffff")
        heat.add_tools(HoverTool(renderers=[cells], tooltips=[("aim", "@aim"), ("caging", "@tip"),
                                                                  ("simulated", "@count")]))
        heat.text(x="direction", y="speed", text="text", source=self._heat_src, text_align="center",
                  text_baseline="middle", text_font_size="9px", text_color="#f9fafb")
        heat.scatter(x="x", y="y", source=self._heat_mark, marker="x", size=16, line_color="#dc2626", line_width=3)
        heat.grid.visible = False
        heat.on_event(Tap, lambda ev: self.heat_tap(ev.x, ev.y))
        heat.on_event(DoubleTap, lambda ev: self.heat_tap(ev.x, ev.y))
        self._heat = heat

    # --- controls ---------------------------------------------------------------------------------------------
    def _build_controls(self) -> None:
        s = self.session
        self._die_w = pn.widgets.Select(label="Animal", options=[], width=110)
        self._spot_w = pn.widgets.Select(label="Launch spot", options=[], width=140)
        self._face_w = pn.widgets.RadioButtonGroup(label="Face set up", options=list(FACE_NAMES), value=s.face,
                                                   margin=(22, 6, 4, 6))
        self._dir_w = pn.widgets.FloatInput(label="Direction (°)", value=s.direction, step=1.0, width=110)
        self._speed_w = pn.widgets.FloatInput(label="Speed (m/s)", value=s.speed, step=0.05, start=0.2, end=2.5,
                                              width=110)
        self._die_w.param.watch(lambda e: self._widget(lambda: e.new and e.new != self.session.die
                                                        and self.session.choose_die(e.new)), "value")
        self._spot_w.param.watch(lambda e: self._widget(lambda: e.new and e.new != self.session.spot
                                                         and self.choose_spot(e.new)), "value")
        self._face_w.param.watch(lambda e: self._widget(lambda: e.new != self.session.face
                                                         and self.session.set_face(e.new)), "value")
        self._dir_w.param.watch(lambda e: self._widget(self._typed_aim), "value")
        self._speed_w.param.watch(lambda e: self._widget(self._typed_aim), "value")
        self._commit = pn.widgets.Button(label="Commit flick", color="primary", width=130, margin=(22, 6, 4, 6))
        self._commit.on_click(page_command(lambda _e: self.commit()))
        self._pass = pn.widgets.Button(label="Pass the extra flick", width=160, margin=(22, 6, 4, 6))
        self._pass.on_click(page_command(lambda _e: self.session.pass_extra()))
        self._first = pn.Row(margin=0)
        self._ability_target = pn.widgets.Select(label="Target", options=[], width=120)
        self._ability_btn = pn.widgets.Button(label="Use ability", color="success", margin=(22, 6, 4, 6))
        self._ability_btn.on_click(page_command(lambda _e: self.use_ability()))
        self._cards = pn.pane.HTML("", sizing_mode="stretch_width", margin=0)
        # Game control
        self._mode_w = pn.widgets.Select(label="Mode", options=list(MODES), value="Cage Battle", width=190)
        self._players_w = pn.widgets.IntInput(label="Players", value=s.players, start=2, end=4, width=80)
        self._team_w = [pn.widgets.Select(label=f"P{q + 1} team", options=list(TEAMS), value=TEAMS[q], width=105)
                        for q in range(4)]
        self._seat_w = [pn.widgets.Select(label=f"P{q + 1} seat", options=["person", "bot"],
                                          value=(["person", "bot", "bot", "bot"][q]), width=105) for q in range(4)]
        self._seed_w = pn.widgets.IntInput(label="Seed", value=s.seed, start=0, width=100)
        self._players_w.param.watch(lambda e: self._sync_seat_widgets(), "value")
        self._new = pn.widgets.Button(label="New game", color="primary", margin=(22, 6, 4, 6))
        self._new.on_click(page_command(lambda _e: self.new_game()))
        self._angle_sd = pn.widgets.FloatInput(label="Aim noise: angle sd (°)", value=s.aim_angle_sd, start=0, end=90,
                                               step=0.5, width=170)
        self._speed_sd = pn.widgets.FloatInput(label="Aim noise: speed sd (fraction)", value=s.aim_speed_sd, start=0,
                                               end=1, step=0.01, width=190)
        self._angle_sd.param.watch(lambda e: self._widget(self._set_noise), "value")
        self._speed_sd.param.watch(lambda e: self._widget(self._set_noise), "value")
        self._files = GameFiles("zoo", "kung-fu-zoo.json", self.session, self.load_text, self._served,
                                refuse=self.refuse_file)
        self._sync_seat_widgets()

    def _widget(self, fn: Callable[[], Any]) -> None:
        """A player changed a widget: act on it (but not when the page itself is setting widgets to match the
        session, which would turn a display update into a command)."""
        if not self._syncing:
            fn()

    def _sync_seat_widgets(self) -> None:
        n = self._players_w.value or 2
        for q in range(4):
            self._team_w[q].visible = self._seat_w[q].visible = q < n

    def _build_layout(self) -> pn.viewable.Viewable:
        s = self.session
        self._status = pn.pane.HTML("", sizing_mode="stretch_width", margin=(0, 10))
        self._alert = pn.pane.Alert(s.message, alert_type=alert_type(s.message), sizing_mode="stretch_width",
                                    margin=(0, 10), renderer_options=NO_HTML)
        self._odds_pane = pn.pane.HTML("", sizing_mode="stretch_width", margin=(0, 4), name="odds")
        self._progress = pn.indicators.Progress(value=0, max=sum(ODDS_CHUNKS), active=False, height=12,
                                                sizing_mode="stretch_width", margin=(0, 4))
        self._log = pn.pane.DataFrame(log_frame(s), index=False, sizing_mode="stretch_width", max_height=300,
                                      stylesheets=[LEFT_TABLE], styles={"overflow-y": "auto"})
        help_text = pn.pane.Markdown(
            "**Click** one of your dice (yellow frame: may be flicked) or a green spot on a rail; **drag** on the "
            "arena in the direction of the flick (the length sets the speed: 10 cm a metre a second), then "
            "**Commit**. Letters: **H**ead (face-up) **B**ack **L**eft/**R**ight side **T**ail **F**eet "
            "(stunned, hatched red). To place an ejected die, click where it goes. *Dimensions, physics and two "
            "abilities are our design (see Game).*",
            styles={"font-size": "12px"}, margin=(0, 6), sizing_mode="stretch_width")
        arena_box = _box("The arena (top view, to scale)", pn.pane.Bokeh(self._fig), help_text,
                         pn.Row(self._die_w, self._spot_w, self._dir_w, self._speed_w),
                         pn.Row(self._face_w), pn.Row(self._commit, self._pass, self._first), width=FIG_W + 60)
        odds_box = _box("Odds of the aimed flick", self._progress, self._odds_pane, pn.pane.Bokeh(self._heat),
                        sizing_mode="stretch_width")
        cards_box = _box("Team abilities (once per round, Cage Battle)", self._cards,
                         pn.Row(self._ability_target, self._ability_btn), sizing_mode="stretch_width")
        control_box = _box(
            "Game", pn.Row(self._mode_w, self._players_w, self._seed_w, self._new),
            pn.Row(*self._team_w), pn.Row(*self._seat_w), pn.Row(self._angle_sd, self._speed_sd),
            self._files.row(with_warning=False),
            pn.pane.Markdown(f"*{DESIGN_NOTE}*", styles={"font-size": "12px", "color": "#6b7280"}),
            sizing_mode="stretch_width")
        header = pn.Row(pn.pane.Markdown(f"# {TITLE}", margin=(0, 10)), self._status, sizing_mode="stretch_width")
        return pn.Column(
            header, self._alert, *([self._files.warning] if self._files.warning else []),
            pn.Row(arena_box, pn.Column(odds_box, cards_box, sizing_mode="stretch_width"),
                   sizing_mode="stretch_width"),
            pn.Row(_box("Battle log", self._log, sizing_mode="stretch_width"), control_box,
                   sizing_mode="stretch_width"),
            sizing_mode="stretch_width", styles={"background": "#f3f4f6", "max-width": "1400px", "margin": "0 auto"},
            name="zoo")

    # --- gestures and commands --------------------------------------------------------------------------------
    def tap(self, x: float, y: float) -> bool:
        """A click on the arena: place an ejected die, choose a die, or choose a launch spot on a rail."""
        s = self.session
        if self.animating:
            return False
        st = s.state
        size = arena().size
        if st.phase == "place":
            _owner, die, rule = st.pending[0]
            face = "head" if rule == "head" else s.face
            return s.place(die, round(x, 1), round(y, 1), face)
        data = za.dice_data(s)
        near = [(abs(x - dx) + abs(y - dy), d) for d, dx, dy in zip(data["id"], data["x"], data["y"], strict=True)
                if abs(x - dx) <= za.edge() * 0.75 and abs(y - dy) <= za.edge() * 0.75]
        if near:
            return s.choose_die(min(near)[1])
        spot = s.spot_at(x, y)
        if spot is not None:
            return self.choose_spot(spot)
        if 0 <= x <= size and 0 <= y <= size:
            s.message = "Click one of your dice, or a green spot on a rail; drag to aim."
        return False

    def choose_spot(self, spot: str) -> bool:
        """Launch from ``spot``; off the dot it takes the Ambush when only the ability allows it."""
        s = self.session
        if spot.endswith("-dot") or spot == "here":
            return s.launch_spot(spot)
        opts = s.spot_options()
        with param.parameterized.batch_call_watchers(s):
            if opts["anywhere_needs_ability"]:
                s.use_ability_flag = True
            elif opts["anywhere"]:
                s.use_ability_flag = False
            ok = s.launch_spot(spot)
            if not ok:
                s.use_ability_flag = False
        return ok

    def pan_start(self, x: float, y: float) -> None:
        self._pan_start = (x, y)

    def pan_end(self, x: float, y: float) -> bool:
        """Releasing a drag proposes the flick it draws."""
        start, self._pan_start = self._pan_start, None
        if start is None or self.animating:
            return False
        return self.session.propose_vector(x - start[0], y - start[1])

    def heat_tap(self, x: float, y: float) -> bool:
        """Aim at the heat-map cell clicked."""
        grid = self.grid
        if grid is None or len(grid) == 0 or self.animating:
            return False
        k = int(((grid["direction"] - x) ** 2 / 100.0 + (grid["speed"] - y) ** 2 / 0.04).idxmin())
        return self.session.propose_flick(float(grid["direction"][k]), float(grid["speed"][k]))

    def _typed_aim(self) -> None:
        s = self.session
        d, v = self._dir_w.value, self._speed_w.value
        if d is None or v is None or (d, v) == (s.direction, s.speed):
            return
        if not s.propose_flick(d, v):
            self._dir_w.value, self._speed_w.value = s.direction, s.speed

    def _set_noise(self) -> None:
        s = self.session
        try:
            s.param.update(aim_angle_sd=float(self._angle_sd.value), aim_speed_sd=float(self._speed_sd.value))
        except (TypeError, ValueError) as exc:
            s.message = f"Aim noise: {exc}"
            self._angle_sd.value, self._speed_sd.value = s.aim_angle_sd, s.aim_speed_sd

    def commit(self) -> bool:
        """Play the proposed flick and animate it."""
        s = self.session
        if self.animating:
            s.message = "Wait for the flick to finish rolling."
            return False
        odds = self.odds
        if odds is not None and odds.flick == str(s.proposed_flick()):
            s.note_odds(odds)
        return self._play(s.commit_flick)

    def _play(self, move: Callable[[], list[dict[str, Any]] | None]) -> bool:
        """Make a flick (a person's or a bot's) and animate it: the page holds the board, the score and the turn
        as they were until the browser has played the flick out."""
        before = za.dice_data(self.session)
        self.animating = True
        frames = move()
        if not frames:
            self.animating = False
            self._show()
            self._request()
            return frames is not None
        self._animate(frames, before)
        return True

    def use_ability(self) -> bool:
        """The button on the card of the player to move: Chest Pound / Dust Kick on the chosen target; Ambush
        and Trunk Shot set up the flick that uses them."""
        s = self.session
        st = s.state
        if st.phase not in ("flick", "extra"):
            s.message = "An ability is used on your own turn, before you flick."
            return False
        key = abilities()[st.team(st.to_move)].key
        if key == "trunk-shot":
            return self.choose_spot("here")
        if key == "ambush":
            if s.use_ability_flag:
                s.message = "Ambush is set: click anywhere on a rail (away from the corners) to flick from there."
                return True
            if not st.ability_ready(st.to_move):
                s.message = "Ambush is already used this round" if st.game.abilities else "Abilities are not in play."
                return False
            s.use_ability_flag = True
            s.message = "Ambush: click anywhere on a rail (away from the corners) to flick from there."
            return True
        return s.use_ability(self._ability_target.value or "")

    def new_game(self) -> bool:
        s = self.session
        mode, valley = MODES[self._mode_w.value]
        n = int(self._players_w.value or 2)
        seed = self._seed_w.value
        if seed is None or seed < 0:
            s.message = "Enter a seed: a whole number from 0."
            return False
        teams = [w.value for w in self._team_w[:n]]
        if len(set(teams)) != n:
            s.message = "Each player needs a different team."
            return False
        old = {k: getattr(s, k) for k in ("mode", "players", "teams", "seats", "all_valley")}
        with param.parameterized.batch_call_watchers(s):
            s.param.update(mode=mode, players=n, teams=teams, seats=[w.value for w in self._seat_w[:n]],
                           all_valley=valley)
            ok = s.new_game(int(seed))
            if not ok:
                s.param.update(**old)
        return ok

    def refuse_file(self, reason: str) -> None:
        """A file the page would not even read (too big, unreadable): said like every other refusal."""
        self.session.message = f"Could not load: {reason}. Your battle goes on."

    def load_text(self, text: str | bytes) -> bool:
        """Load a saved battle (a file's text, or the autosave); a bad one leaves the battle as it was."""
        if not self.session.load(text):
            return False
        self._sync_game_widgets()
        return True

    def _sync_game_widgets(self) -> None:
        self._syncing = True
        try:
            self._set_game_widgets()
        finally:
            self._syncing = False

    def _set_game_widgets(self) -> None:
        s = self.session
        g = s.state.game
        self._mode_w.value = next(k for k, (m, v) in MODES.items() if m == g.mode and v == (g.all_valley and
                                                                                            g.players == 2))
        self._players_w.value = g.players
        self._seed_w.value = s.seed
        for q in range(g.players):
            self._team_w[q].value = g.teams[q]
            self._seat_w[q].value = s.seats[q]
        self._angle_sd.value, self._speed_sd.value = s.aim_angle_sd, s.aim_speed_sd

    # --- animation --------------------------------------------------------------------------------------------
    @changes_bokeh_models
    def _animate(self, frames: list[dict[str, Any]], before: dict[str, list[Any]]) -> None:
        """Send the frames to the browser, which plays them and reports back (``_on_done``); the dice that
        move are drawn by the animation, the others stay where they were."""
        self._anim_seq += 1
        if not self._live():
            self._finish(None)
            return
        first, rows = za.animation_data(self.session, frames, self._anim_seq)
        moving = set(first["id"])
        before["alpha"] = [0.0 if d in moving else a for d, a in zip(before["id"], before["alpha"], strict=True)]
        self._anim_started = time.perf_counter()
        self._src["dice"].data = before
        self._src["anim"].data = first
        for k in ("aim", "sel", "launch", "dots", "bands"):
            self._src[k].data = {c: [] for c in self._src[k].data}
        self._odds_pane.object = "<p style='color:#6b7280'>The flick is playing out…</p>"
        self._progress.param.update(value=0, active=False)
        self._src["frames"].data = rows
        seq = self._anim_seq
        duration = float(frames[-1]["t"])
        try:  # if the browser never reports (a hidden tab pauses animation frames), finish anyway
            pn.state.add_periodic_callback(lambda: self._finish(None) if self._anim_seq == seq and self.animating
                                           else None, period=int(1000 * duration) + 4000, count=1)
        except Exception:
            pass

    def _on_done(self, _attr: str, _old: Any, new: Any) -> None:
        seq = list(new.get("seq", []))
        if seq and int(seq[0]) == self._anim_seq and self.animating:
            info = {"fps": float(new["fps"][0]), "drawn": float(new["drawn"][0]), "seconds": float(new["seconds"][0])}
            self.fps_log.append(info)
            self._finish(info["fps"])

    @changes_bokeh_models
    def _finish(self, fps: float | None) -> None:
        with param.parameterized.batch_call_watchers(self):
            self.last_fps = fps if fps is not None else self.last_fps
            self._src["anim"].data = {k: [] for k in self._src["anim"].data}
            self.animating = False
        self._show()
        self._request()

    def _live(self) -> bool:
        doc = self._doc
        return doc is not None and doc.session_context is not None

    # --- keeping the page in step -----------------------------------------------------------------------------
    def _on_version(self, *_events: Any) -> None:
        self.grid = None
        if not self.animating:
            self._show()
        self._request()

    def _grid_base(self) -> Any:
        """What the heat map depends on: the battle, the die, its spot and face, the aim noise (not the aim)."""
        s = self.session
        flick = s.proposed_flick()
        if flick is None:
            return None
        return (s.version, flick.die, flick.rail, flick.along, flick.face, flick.ability, s.aim_angle_sd,
                s.aim_speed_sd)

    def _on_proposal(self, *_events: Any) -> None:
        self._aim_seq += 1
        self.odds, self.odds_progress = None, 0
        if self.grid is not None and self._grid_key != self._grid_base():
            self.grid = None
        if not self.animating:
            self._show_proposal()
        self._request()

    def _on_message(self, *_events: Any) -> None:
        if not self.animating:
            m = self.session.message
            self._alert.param.update(object=m, alert_type=alert_type(m))

    @changes_bokeh_models
    def _show(self) -> None:
        """Everything that follows the battle (board, score, turn, cards, log, controls)."""
        s = self.session
        self.shown = s.version
        self._src["dice"].data = za.dice_data(s)
        self._src["labels"].data = za.bench_labels(s)
        self._status.object = status_html(s)
        self._cards.object = cards_html(s)
        self._log.object = log_frame(s)
        m = s.message
        self._alert.param.update(object=m, alert_type=alert_type(m))
        st = s.state
        person = st.phase != "over" and s.seats[st.to_move] == "person"
        self._pass.visible = st.phase == "extra" and person
        buttons = []
        if st.phase == "first" and person:
            for q in range(st.game.players):
                if not st.eliminated[q]:
                    b = pn.widgets.Button(label=f"{st.game.player_name(q)} starts", margin=(22, 4, 4, 4))
                    b.on_click(page_command(lambda _e, q=q: self.session.choose_first(q)))
                    buttons.append(b)
        self._first.objects = buttons
        targets: list[str] = []
        ready = st.phase in ("flick", "extra") and person and st.ability_ready(st.to_move)
        if ready:
            ab = abilities()[st.team(st.to_move)]
            if ab.key == "dust-kick":
                targets = [f"P{q + 1}" for q in range(st.game.players) if q != st.to_move and not st.eliminated[q]]
            elif ab.key == "chest-pound":
                targets = [d for d in st.dice_of(st.to_move, "arena") if st.dice[d].face == "feet"]
            self._ability_btn.label = f"Use {ab.name}"
            self._ability_btn.disabled = ab.key in ("dust-kick", "chest-pound") and not targets
        else:
            self._ability_btn.label = "Use ability"
            self._ability_btn.disabled = True
        self._ability_target.options = targets
        self._ability_target.visible = bool(targets)
        self._show_proposal()

    @changes_bokeh_models
    def _show_proposal(self) -> None:
        """The chosen die, its spot, the aim and the widgets that mirror them."""
        s = self.session
        st = s.state
        self._src["sel"].data = za.selection_data(s)
        spots = za.spots_data(s)
        self._src["dots"].data = spots["dots"]
        self._src["bands"].data = spots["bands"]
        self._src["launch"].data = za.launch_data(s)
        self._src["aim"].data = za.aim_data(s)
        flickable = st.flickable() if st.phase in ("flick", "extra") else []
        person = st.phase != "over" and s.seats[st.to_move] == "person"
        self._syncing = True
        try:
            self._sync_proposal_widgets(flickable)
        finally:
            self._syncing = False
        playable = person and st.phase in ("flick", "extra") and s.proposal_problem() is None
        self._commit.disabled = not playable
        self._heat_mark.data = {"x": [s.direction], "y": [s.speed]} if playable and s.spot != "here" else {
            "x": [], "y": []}
        self._show_odds()

    def _sync_proposal_widgets(self, flickable: list[str]) -> None:
        s = self.session
        self._die_w.options = flickable
        if s.die in flickable:
            self._die_w.value = s.die
        opts = s.spot_options()
        spot_opts = list(opts["dots"]) + (["here"] if opts["here"] else [])
        if s.spot not in spot_opts and s.proposed_flick() is not None and s.spot != "here":
            spot_opts.append(s.spot)
        self._spot_w.options = spot_opts
        if s.spot in spot_opts:
            self._spot_w.value = s.spot
        self._face_w.value = s.face
        self._face_w.disabled = s.spot == "here"
        if (self._dir_w.value, self._speed_w.value) != (s.direction, s.speed):
            self._dir_w.value, self._speed_w.value = s.direction, s.speed

    @changes_bokeh_models
    def _show_odds(self) -> None:
        s = self.session
        has_aim = s.proposal_problem() is None
        self._odds_pane.object = odds_html(self.odds, self.odds_busy, s.aim_preview(), has_aim,
                                           points=s.state.game.mode == "points")
        self._progress.value = self.odds_progress
        self._progress.active = self.odds_busy
        self._heat_src.data = za.heat_data(self.grid)
        self._heat.title.text = heat_title(self.grid, s.proposed_flick() is not None)
        if s.spot == "here":
            self._heat.x_range.update(start=-15, end=345)
            self._heat.xaxis.axis_label = "heading (degrees, 0 = east)"
        else:
            self._heat.x_range.update(start=-82.5, end=82.5)
            self._heat.xaxis.axis_label = "direction (degrees from straight in)"

    # --- background: odds, heat map, bots ---------------------------------------------------------------------
    def _request(self, snapshot: bool = True) -> None:
        """Ask the worker to (re)consider the battle; on the page's loop the job is taken here and now, which
        spares the worker a round trip through a loop busy sending the page its updates."""
        if self.background:
            if snapshot:
                self._job = self._snapshot()
            self._worker.request()

    def _snapshot(self) -> dict[str, Any]:
        s = self.session
        st = s.state
        flick = s.proposed_flick()
        ok = flick is not None and s.proposal_problem() is None and s.aim_preview() and s.seats[st.to_move] == "person"
        person_turn = st.phase in ("flick", "extra") and st.phase != "over" and s.seats[st.to_move] == "person"
        base = None
        if person_turn and flick is not None and s.aim_preview() and s.proposal_problem(ignore_aim=True) is None:
            base = self._grid_base()
        return {"aim_seq": self._aim_seq, "version": s.version, "state": st.clone(), "flick": flick if ok else None,
                "base_flick": flick, "base": base, "noise": s.noise(), "bot": s.bot_to_move() and self.bots,
                "animating": self.animating}

    def _background(self) -> None:
        job, self._job = self._job, None
        if job is None:
            box: list[dict[str, Any]] = []
            self._on_loop(lambda: box.append(self._snapshot()), wait=True)
            if not box:
                return
            job = box[0]
        if job["animating"]:
            return
        if job["bot"]:
            time.sleep(0.3)  # let a person see the board before the computer flicks
            choice = self.session.think_bot()
            if choice is not None:
                self._on_loop(lambda: self._play_bot(choice))
            return
        if job["flick"] is not None and job["aim_seq"] != self._odds_done:
            self._estimate(job)
        if job["base"] is not None and job["base"] != self._grid_key and self._aim_seq == job["aim_seq"]:
            self._map(job)

    def _estimate(self, job: dict[str, Any]) -> None:
        flick, noise, state = job["flick"], job["noise"], job["state"]
        jobs = noisy_jobs(flick, noise, sum(ODDS_CHUNKS), make_rng(0))
        samples: list[Any] = []
        self._on_loop(lambda: self._apply_odds(job, None, 0, True))
        start = 0
        for k, n in enumerate(ODDS_CHUNKS):
            if self._aim_seq != job["aim_seq"] or self.animating:  # stale, or the browser needs the CPU
                return
            samples += run_samples(state, jobs[start:start + n], workers=1)
            start += n
            odds = summarise(flick, noise, samples)
            last = k == len(ODDS_CHUNKS) - 1
            done = len(samples)
            self._on_loop(lambda odds=odds, last=last, done=done: self._apply_odds(job, odds, done, not last))
        self._odds_done = job["aim_seq"]

    def _map(self, job: dict[str, Any]) -> None:
        flick = job["base_flick"]
        dirs = GRID_HEADINGS if flick.rail == "here" else GRID_DIRECTIONS
        base = job["base"]
        if self._grid_rows[0] != base:
            self._grid_rows = (base, [])
        rows = self._grid_rows[1]
        step = max(1, MAP_PIECE_FLICKS // GRID_SAMPLES)
        pieces = [(speed, dirs[i:i + step]) for speed in GRID_SPEEDS for i in range(0, len(dirs), step)]
        for k, (speed, part) in enumerate(pieces):  # small pieces: a new aim's odds come first, then it resumes
            if k < len(rows):
                continue
            if self.session.version != job["version"] or self.animating or self._aim_seq != job["aim_seq"]:
                self._request(snapshot=False)  # the change that stopped this asked for a new job already
                return
            try:
                rows.append(odds_grid(job["state"], flick.with_aim(part[0], speed), list(part), [speed],
                                      noise=job["noise"], samples=GRID_SAMPLES, seed=k, workers=1))
            except ValueError:
                return
        grid = pd.concat(rows, ignore_index=True)
        self._on_loop(lambda: self._apply_grid(job, grid))

    def _apply_odds(self, job: dict[str, Any], odds: FlickOdds | None, n: int, busy: bool) -> None:
        if self._aim_seq != job["aim_seq"] or self.session.version != job["version"]:
            return
        with param.parameterized.batch_call_watchers(self):
            self.odds, self.odds_progress, self.odds_busy = odds, n, busy
        if not self.animating:
            self._show_odds()

    def _apply_grid(self, job: dict[str, Any], grid: pd.DataFrame) -> None:
        if self.session.version != job["version"]:
            return
        self._grid_key = job["base"]
        self.grid = grid
        if not self.animating:
            self._show_odds()

    def _play_bot(self, choice: tuple[int, Any]) -> None:
        if not self.animating:
            self._play(lambda: self.session.play_bot(choice))

    def _on_loop(self, fn: Callable[[], Any], wait: bool = False) -> None:
        """Run ``fn`` on the page's event loop (see :func:`apps._background.run_on_page_loop`)."""
        run_on_page_loop(self._doc, fn, served=self._served, wait=wait)

    def wait_idle(self, timeout: float = 60.0) -> bool:
        """Wait until the background work is done (for tests and notebooks)."""
        return self._worker.idle.wait(timeout)


def create_app() -> pn.viewable.Viewable:
    """A new session and page (one per browser tab); the page's ``dashboard`` attribute is its model."""
    dashboard = ZooDashboard()
    page = dashboard.layout
    page.dashboard = dashboard
    return page


def _time_odds(dash: ZooDashboard, job: dict[str, Any], t0: float) -> list[float]:
    """Seconds from ``t0`` to each estimate of the aimed flick's odds, run as the worker runs it."""
    seen: list[float] = []
    orig = dash._apply_odds

    def note(job: Any, odds: Any, n: int, busy: bool) -> None:
        if odds is not None:
            seen.append(time.perf_counter() - t0)
        orig(job, odds, n, busy)

    dash._apply_odds = note  # type: ignore[method-assign]
    try:
        dash._estimate(job)
    finally:
        dash._apply_odds = orig  # type: ignore[method-assign]
    return seen


def benchmark(browser: bool = True, repeats: int = 5) -> list[tuple[str, float]]:
    """Print the figures: how soon the odds of an aimed flick appear (first estimate and all 500 flicks) on
    the dashboard's worker path, also when the player re-aims while the worker maps the heat map (it finishes
    its piece of the map first), how long the whole map takes, the server time of a commit, and (``browser``)
    the animation's frame rate in headless Chromium with the app served in this process."""
    s = ZooSession(seed=3, seats=["person", "person"], odds_workers=1)
    dash = ZooDashboard(session=s, background=False)
    rows: list[tuple[str, float]] = []
    first, full, commits, maps, reaim = [], [], [], [], []
    for k in range(repeats):
        s.new_game(3 + k)
        s.choose_die(s.state.flickable()[0])
        s.propose_flick(5.0 * k - 10.0, 1.2 + 0.1 * k)
        seen = _time_odds(dash, dash._snapshot(), time.perf_counter())
        first.append(seen[0])
        full.append(seen[-1])
        job = dash._snapshot()
        t0 = time.perf_counter()
        dash._map(job)
        maps.append(time.perf_counter() - t0)
        # Re-aim part-way through a new map: the worker ends the piece it is on, then estimates the new aim.
        dash._grid_key, dash._grid_rows = None, (None, [])
        mapping = threading.Thread(target=dash._map, args=(dash._snapshot(),))
        mapping.start()
        time.sleep(maps[-1] * (k + 1) / (repeats + 2))
        t0 = time.perf_counter()
        s.propose_flick(5.0 * k - 5.0, 1.0 + 0.1 * k)
        mapping.join()
        reaim.append(_time_odds(dash, dash._snapshot(), t0)[0])
        t0 = time.perf_counter()
        s.commit_flick()
        commits.append(time.perf_counter() - t0)
    for name, xs in (("odds, first estimate (50 flicks)", first), ("odds, all 500 flicks", full),
                     ("odds after re-aiming while the heat map is mapped, first estimate", reaim),
                     (f"heat map, all cells ({GRID_SAMPLES} flicks a cell)", maps),
                     ("commit (simulate with frames)", commits)):
        xs.sort()
        rows.append((f"zoo {name}, median s", xs[len(xs) // 2]))
        rows.append((f"zoo {name}, worst s", xs[-1]))
    if browser:
        rows += _browser_fps()
    for name, v in rows:
        print(f"{name}: {v:.3f}")
    return rows


def _browser_fps(flicks: int = 5) -> list[tuple[str, float]]:
    """Serve the app here, open it in headless Chromium, play flicks and read back the animation frame rate."""
    from playwright.sync_api import sync_playwright

    pages: list[Any] = []

    def factory() -> Any:
        page = create_app()
        pages.append(page)
        return page

    port = _free_port()
    pn.serve(factory, port=port, address="127.0.0.1", threaded=True, show=False, verbose=False)
    try:
        with sync_playwright() as p:
            b = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                  args=["--no-sandbox", "--disable-gpu", "--no-first-run"])
            page = b.new_page(viewport={"width": 1280, "height": 1000})
            page.goto(f"http://127.0.0.1:{port}/")
            page.wait_for_function("() => window.Bokeh && [...Bokeh.index.all_views()].some("
                                   "v => v.model.name === 'arena' && v.frame && v.is_idle)", timeout=30_000)
            deadline = time.time() + 20
            while not pages and time.time() < deadline:
                page.wait_for_timeout(50)
            dash = pages[0].dashboard
            dash.bots = False
            s = dash.session
            s.seats = ["person", "person"]
            first_odds, all_odds = [], []
            for k in range(flicks):
                done = len(dash.fps_log)
                t0 = time.perf_counter()

                def aim(k: int = k) -> None:
                    s.choose_die(s.state.flickable()[0])
                    s.launch_spot("S-dot")
                    s.propose_flick(-20.0 + 20 * k, 2.0)

                dash._on_loop(aim)
                _wait(page, lambda: dash.odds is not None)
                first_odds.append(time.perf_counter() - t0)
                _wait(page, lambda: dash.odds is not None and dash.odds.samples == sum(ODDS_CHUNKS))
                all_odds.append(time.perf_counter() - t0)
                dash.wait_idle(30)  # as a player would: the odds and the heat map are in before committing
                dash._on_loop(dash.commit)
                _wait(page, lambda done=done: len(dash.fps_log) > done)
            b.close()
        fps = [e["fps"] for e in dash.fps_log]
        secs = [e["seconds"] for e in dash.fps_log]
        first_odds.sort()
        all_odds.sort()
        mid = len(first_odds) // 2
        return [("zoo odds in the served page, first estimate after the aim, median s", first_odds[mid]),
                ("zoo odds in the served page, first estimate after the aim, worst s", first_odds[-1]),
                ("zoo odds in the served page, all 500 flicks after the aim, median s", all_odds[mid]),
                ("zoo odds in the served page, all 500 flicks after the aim, worst s", all_odds[-1]),
                ("zoo animation in Chromium, frames per second (lowest)", min(fps) if fps else float("nan")),
                ("zoo animation in Chromium, frames per second (mean)", float(np.mean(fps)) if fps else float("nan")),
                ("zoo animation length, mean s", float(np.mean(secs)) if secs else float("nan"))]
    finally:
        pn.state.kill_all_servers()


def _wait(page: Any, cond: Callable[[], bool], timeout: float = 30.0) -> None:
    end = time.time() + timeout
    while not cond():
        if time.time() > end:
            raise TimeoutError("the page did not get there in time")
        page.wait_for_timeout(20)


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


if __name__.startswith("bokeh"):
    create_app().servable(title=TITLE)
