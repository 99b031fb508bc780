"""Man-Kzin Wars in the browser: the track, the cards in play, the decisions and the odds behind them.

``create_app()`` builds a new :class:`~engine.kzin.session.KzinSession` and a :class:`KzinDashboard`
on it for every browser tab. Text and tables are pure functions of the session's parameters (bound
with ``pn.bind``); the three Bokeh plots (track, force distributions, running odds) are built once
and fed new data from pure functions (``track_data``, ``force_distributions``, ``running_data``), and
the card tiles are updated in place: that keeps a card click under 10 ms on the server (see
:func:`benchmark`). The advisor and the running-odds rollouts run on a worker thread and hand their
results to the page's event loop (``pn.state.execute``), so the page never freezes while numba
compiles or the rollouts run.
"""

from __future__ import annotations

import html
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
import panel as pn
import param
from bokeh.models import BasicTicker, ColumnDataSource, HoverTool, NumeralTickFormatter
from bokeh.plotting import figure

from apps._background import (
    BackgroundWorker,
    changes_bokeh_models,
    page_command,
    page_document,
    run_on_page_loop,
)
from apps._files import GameFiles
from engine.kzin.advisor import Advice, advise
from engine.kzin.cards import CARDS, CONQUEST, HUMAN_FLEET, KZIN_FLEET, SPACES, TACTICS, TECHNOLOGY, TYPE_PHASE
from engine.kzin.rules import RULE_OPTIONS
from engine.kzin.session import CardView, KzinSession

TITLE = "Man-Kzin Wars"
DESCRIPTION = "Hold off the Kzinti from Earth to their Home Worlds, with the exact odds of every battle on screen."
ORDER = 1

COMMANDS = ("defend", "fall back", "attack", "pass")
RUNNING_ODDS_ROLLOUTS = 2000
TYPE_COLOURS = {HUMAN_FLEET: "#2563eb", TACTICS: "#059669", TECHNOLOGY: "#7c3aed", CONQUEST: "#dc2626",
                KZIN_FLEET: "#b45309"}
HUMAN_COLOUR, KZIN_COLOUR = "#2563eb", "#dc2626"
D10 = np.full(10, 0.1)
RULE_LABELS = {
    "reshuffle": "Reshuffle the discards when the deck runs out",
    "kzin_fleet_force": "The invading Kzin Fleet's own force counts",
    "fallback_discards_conquest": "Falling back discards the Conquest cards",
    "kzin_base_force": "Kzin base force",
    "start_space": "Marker starts on space",
}
LEFT_TABLE = ":host table td, :host table th { text-align: left !important; }"
BOX = {"background": "#ffffff", "border": "1px solid #e5e7eb", "border-radius": "10px",
       "padding": "4px 12px 10px 12px", "box-shadow": "0 1px 3px rgba(0,0,0,0.06)"}
TILE_CSS = """
:host .bk-btn {{ height: 84px; width: 178px; white-space: pre-line; text-align: left; line-height: 1.3;
  font-size: 13px; border: 1px solid #d1d5db; border-left: 7px solid {colour}; padding: 6px 10px;
  background: #ffffff; color: #111827; }}
:host(.selected) .bk-btn {{ background: {colour} !important; color: #ffffff !important;
  border-color: {colour}; box-shadow: 0 0 0 2px #111827; }}
:host .bk-btn:disabled {{ opacity: 0.55; background: #f3f4f6; }}
"""
CHIP = ("<div style='display:inline-block;width:178px;min-height:58px;margin:4px;padding:6px 10px;"
        "border:1px solid #e5e7eb;border-left:7px solid {colour};border-radius:6px;background:{bg};"
        "font-size:13px;line-height:1.3'><b>{name}</b><br>{line2}<br><span style='color:#6b7280'>{line3}"
        "</span></div>")


def _box(title: str, *objects: Any, **kwargs: Any) -> pn.Column:
    """A white card with a heading."""
    return pn.Column(pn.pane.Markdown(f"### {title}", margin=(0, 0, -8, 0)), *objects, styles=BOX,
                     margin=(6, 6), **kwargs)


def _pct(p: float | None, digits: int = 1) -> str:
    return "—" if p is None or pd.isna(p) else f"{100 * p:.{digits}f}%"


# --- pure views of the session ---------------------------------------------------------------------

def track_data(session: KzinSession) -> dict[str, dict[str, list]]:
    """What moves on the track: the marker, and the last move (an arrow from the space it left)."""
    kem = session.state.kem
    marker = {"space": [kem], "y": [0.2], "marker": ["Expansion Marker"]}
    move: dict[str, list] = {k: [] for k in ("x0", "x1", "y", "angle", "lx", "ly", "label", "left", "right")}
    if session.last_move:
        start, end = session.last_move
        move = {"x0": [start], "x1": [end], "y": [1.18], "angle": [math.pi / 2 if end < start else -math.pi / 2],
                "lx": [(start + end) / 2], "ly": [1.3], "label": [f"last move {start} → {end}"],
                "left": [start - 0.47], "right": [start + 0.47]}
    return {"marker": marker, "move": move}


def track_figure() -> tuple[figure, dict[str, ColumnDataSource]]:
    """The 12 spaces from Earth to the Kzin Home Worlds, Human and Kzinti spaces told apart."""
    fig = figure(height=190, x_range=(0.4, 12.6), y_range=(-0.35, 1.6), tools="", toolbar_location=None,
                 sizing_mode="stretch_width", min_width=600, name="track")
    fig.axis.visible = False
    fig.grid.visible = False
    fig.outline_line_color = None
    spaces = [int(s["space"]) for s in SPACES]
    fig.quad(left=[s - 0.47 for s in spaces], right=[s + 0.47 for s in spaces], bottom=0, top=1,
             fill_color=["#dbeafe" if s["side"] == "Human" else "#fee2e2" for s in SPACES], line_color="#9ca3af")
    fig.text(x=spaces, y=[0.8] * 12, text=[str(s) for s in spaces], text_align="center", text_baseline="middle",
             text_font_size="13px", text_font_style="bold", text_color="#374151")
    fig.text(x=spaces, y=[0.5] * 12, text=[s["location"].replace(" ", "\n") for s in SPACES], text_align="center",
             text_baseline="middle", text_font_size="10px", text_color="#374151")
    fig.text(x=[1, 12], y=[-0.2, -0.2], text=["Kzinti win", "Humans win"], text_align="center",
             text_baseline="middle", text_font_size="10px", text_color="#6b7280")
    sources = {"marker": ColumnDataSource({"space": [], "y": [], "marker": []}),
               "move": ColumnDataSource({k: [] for k in ("x0", "x1", "y", "angle", "lx", "ly", "label", "left",
                                                         "right")})}
    move = sources["move"]
    fig.quad(left="left", right="right", bottom=0, top=1, fill_alpha=0, line_dash="dashed", line_color="#111827",
             line_width=2, source=move)
    fig.segment(x0="x0", y0="y", x1="x1", y1="y", line_color="#111827", line_width=3, source=move)
    fig.scatter(x="x1", y="y", angle="angle", marker="triangle", size=14, color="#111827", source=move)
    fig.text(x="lx", y="ly", text="label", text_align="center", text_font_size="11px", source=move)
    marker = fig.scatter(x="space", y="y", marker="diamond", size=26, fill_color="#f59e0b", line_color="#111827",
                         line_width=2, source=sources["marker"])
    fig.add_tools(HoverTool(renderers=[marker], tooltips=[("", "@marker on space @space")]))
    return fig, sources


def force_distributions(session: KzinSession) -> dict[str, dict[str, list[float]]]:
    """P(force = x) for each side of the current battle, as quad data (Kzinti alone until a Fleet is chosen)."""
    s = session.state
    out = {}
    battle = session.battle()
    if session.decision() is None:
        sides = {}
    elif battle is None:
        sides = {"Kzinti": (1 + sum(c.dice for c in s.conquest_in_play()), s.kzin_const())}
    else:
        sides = {"Humans": (battle.human_dice(), battle.human_const()),
                 "Kzinti": (battle.kzin_dice(), battle.kzin_const())}
    for side in ("Humans", "Kzinti"):
        if side not in sides:
            out[side] = {"left": [], "right": [], "top": []}
            continue
        dice, const = sides[side]
        p = np.ones(1)
        for _ in range(dice):
            p = np.convolve(p, D10)
        force = np.arange(dice, 10 * dice + 1) + const
        out[side] = {"left": list(force - 0.5), "right": list(force + 0.5), "top": list(p)}
    return out


def force_figure() -> tuple[figure, dict[str, ColumnDataSource]]:
    """The Bokeh figure of the two force distributions, with a data source per side."""
    fig = figure(height=230, sizing_mode="stretch_width", min_width=300, toolbar_location=None, tools="",
                 title="Force distributions", x_axis_label="force", y_axis_label="P(force)", name="forces")
    sources = {}
    for side, colour in (("Humans", HUMAN_COLOUR), ("Kzinti", KZIN_COLOUR)):
        src = ColumnDataSource({"left": [], "right": [], "top": []})
        fig.quad(left="left", right="right", top="top", bottom=0, source=src, fill_color=colour, fill_alpha=0.45,
                 line_color=colour, legend_label=side)
        sources[side] = src
    fig.yaxis.formatter = NumeralTickFormatter(format="0%")
    fig.y_range.start = 0
    _legend_above(fig)
    return fig, sources


def running_data(running: list[dict]) -> dict[str, list[float]]:
    """The estimated chance of winning the game at the start of every turn, with its 95% interval."""
    rows = sorted(running or [], key=lambda e: e["turn"])
    return {k: [float(e[k]) for e in rows] for k in ("turn", "win", "low", "high")}


def _legend_above(fig: figure) -> None:
    """Move the legend above the plot, in a row, so it never hides the data."""
    legend = fig.legend[0]
    legend.orientation = "horizontal"
    legend.border_line_color = None
    legend.background_fill_alpha = 0
    fig.add_layout(legend, "above")
    fig.outline_line_color = None


def running_figure() -> tuple[figure, ColumnDataSource]:
    fig = figure(height=230, sizing_mode="stretch_width", min_width=300, toolbar_location=None, tools="",
                 title="Chance of winning the game, turn by turn", x_axis_label="turn",
                 y_axis_label="P(win the game)", name="running")
    src = ColumnDataSource({"turn": [], "win": [], "low": [], "high": []})
    fig.varea(x="turn", y1="low", y2="high", source=src, fill_color="#93c5fd", fill_alpha=0.5,
              legend_label="95% interval")
    fig.line(x="turn", y="win", source=src, line_color=HUMAN_COLOUR, line_width=2, legend_label="estimate")
    dots = fig.scatter(x="turn", y="win", source=src, size=6, color=HUMAN_COLOUR)
    fig.add_tools(HoverTool(renderers=[dots], tooltips=[("turn", "@turn"), ("P(win)", "@win{0.0%}"),
                                                        ("95%", "@low{0.0%} – @high{0.0%}")]))
    fig.yaxis.formatter = NumeralTickFormatter(format="0.0%")
    fig.y_range.start = 0
    fig.xaxis.ticker = BasicTicker(min_interval=1)
    fig.xaxis.minor_tick_line_color = None
    _legend_above(fig)
    return fig, src


def status_markdown(session: KzinSession, version: int) -> str:
    s = session.state
    where = SPACES[s.kem - 1]["location"]
    if s.phase == "over":
        return f"**Game over: the {s.winner} won on turn {s.turn}.** Marker on space {s.kem} ({where})."
    return f"**Turn {s.turn}** · Expansion Marker on space **{s.kem}** ({where})"


def drawn_html(session: KzinSession, version: int) -> str:
    """The card drawn this turn and what it does."""
    s = session.state
    if s.drawn is None:
        return "<div style='color:#6b7280'>No card drawn: the game is over.</div>"
    c = CARDS[s.drawn]
    if c.type == KZIN_FLEET:
        kzin = f"Kzin force now: {s.kzin_const():+d} plus {1 + sum(x.dice for x in s.conquest_in_play())}d10"
        what = f"Invasion! {kzin}."
    else:
        what = f"Played in the {TYPE_PHASE[c.type]} phase; it is now in play."
    force = "" if c.type == TECHNOLOGY else f" · force {c.force_text()}"
    return CHIP.format(colour=TYPE_COLOURS[c.type], bg="#fffbeb", name=c.name, line2=f"{c.type_name}{force}",
                       line3=what).replace("width:178px", "width:auto")


def table_html(session: KzinSession, version: int) -> str:
    """Conquest and Technology cards in play (never committed), and the technology count."""
    s = session.state
    tech = s.technology()
    parts = [f"<div style='margin:2px 4px'><b>Technology in play: {tech}</b> "
             f"(every Fleet +{tech})" + (": " + ", ".join(c.name for c in s.cards_in_play()
                                                            if c.type == TECHNOLOGY) if tech else "") + "</div>"]
    conquest = s.conquest_in_play()
    if conquest:
        kc = sum(c.const for c in conquest)
        kd = sum(c.dice for c in conquest)
        parts.append(f"<div style='margin:6px 4px 0 4px'><b>Kzinti Conquest in play:</b> {kc:+d}"
                     + (f" and {kd}d10" if kd else "") + " to every Kzin force</div>")
        for c in conquest:
            extra = f"; {c.bonus:+d} in {c.bonus_phase.capitalize()}" if c.bonus_phase else ""
            parts.append(CHIP.format(colour=TYPE_COLOURS[CONQUEST], bg="#fef2f2", name=c.name,
                                     line2=f"Kzinti Conquest · {c.force_text()}{extra}", line3="never committed"))
    else:
        parts.append("<div style='margin:6px 4px;color:#6b7280'>No Kzinti Conquest card in play.</div>")
    return "".join(parts)


def odds_html(session: KzinSession, version: int, selection: list[int]) -> str:
    """The exact chance of winning this battle with the selected cards."""
    phase = session.decision()
    if phase is None:
        return "<p>No battle to decide now.</p>"
    s = session.state
    kd = 1 + sum(c.dice for c in s.conquest_in_play())
    kzin = f"Kzinti force: {kd}d10 {s.kzin_const():+d}"
    battle = session.battle()
    if battle is None:
        hint = ("You have no Fleet in play: you must fall back." if not s.fleets_in_play()
                else "Select at least one Fleet to see your chance of winning.")
        return f"<h4 style='margin:4px 0'>{phase.capitalize()} battle</h4><p>{kzin}.</p><p>{hint}</p>"
    p = battle.win_probability()
    return (f"<h4 style='margin:4px 0'>{phase.capitalize()} battle</h4>"
            f"<p>Chance to win this battle: <span class='win' style='font-size:1.6em;font-weight:700;"
            f"color:{HUMAN_COLOUR}'>{_pct(float(p))}</span> (exactly {p.numerator}/{p.denominator})</p>"
            f"<p>Humans: {battle.human_dice()}d10 {battle.human_const():+d} against {kzin.split(': ')[1]}; "
            f"ties go to the Humans.</p>")


def deck_frame(session: KzinSession, version: int) -> pd.DataFrame:
    t = session.deck_counts()
    if t["left"].sum() == 0:
        empty = ("deck empty: the discards are reshuffled at the end of this turn" if session.state.rules.reshuffle
                 else "deck empty: the game ends this turn (no reshuffle)")
        chances = [empty] * len(t)
    else:
        chances = [f"{100 * p:.1f}% ({e.numerator}/{e.denominator})"
                   for p, e in zip(t["p_next"], t["p_next_exact"], strict=True)]
    return pd.DataFrame({"card type": t["type"], "left in deck": t["left"], "chance next": chances})


def log_frame(session: KzinSession, version: int) -> pd.DataFrame:
    """The game's log, newest first, with each roll's probability."""
    t = session.log_frame().iloc[::-1].reset_index(drop=True)
    t["odds"] = [_pct(p) for p in t["odds"]]
    return t.rename(columns={"odds": "chance it had"})


def alert_type(message: str) -> str:
    if "Game over: the Humans won" in message:
        return "success"
    if message.startswith("Could not") or "Game over" in message:
        return "danger"
    if " and won" in message:
        return "success"
    if " and lost" in message or "invades" in message:
        return "warning"
    return "info"


def advice_frame(advice: Advice) -> pd.DataFrame:
    t = advice.table()
    return pd.DataFrame({
        "": ["★" if r else "" for r in t["recommended"]],
        "option": t["option"],
        "battle": [_pct(p) for p in t["battle_odds"]],
        "game": [_pct(p, 2) for p in t["game_win"]],
        "95% interval": [f"{_pct(lo, 2)} – {_pct(hi, 2)}" for lo, hi in zip(t["game_low"], t["game_high"],
                                                                           strict=True)],
    })


def tile_label(view: CardView) -> str:
    mark = "✓ " if view.selected else ""
    third = view.reason if view.reason else ("selected" if view.selected else "click to commit")
    return f"{mark}{view.name}\n{view.force}\n{third}"


# --- background work -------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Job:
    """A snapshot of what the worker needs, taken on the event loop."""

    version: int
    state: Any
    decision: str | None
    seed: int
    rollouts: int
    log: list
    running: list
    rules: dict


class KzinDashboard(param.Parameterized):
    """The page for one session: views bound to the session, the player's commands, background odds."""

    session = param.ClassSelector(class_=KzinSession, doc="The game this page plays.")
    advice = param.Parameter(default=None, doc="(version, Advice) from the background worker.")
    busy = param.Boolean(default=False, doc="Background work is running.")
    running_rollouts = param.Integer(default=RUNNING_ODDS_ROLLOUTS, bounds=(100, None),
                                     doc="Rollouts per turn for the running odds.")
    background = param.Boolean(default=True, doc="Run the advisor and the running odds (off: benchmarks).")
    error = param.String(default="", doc="Why the background work failed, if it did.")

    def __init__(self, **params: Any) -> None:
        if params.get("session") is None:
            params["session"] = KzinSession()
        super().__init__(**params)
        self._doc = page_document()
        self._served = self._doc is not None and self._doc.session_context is not None  # else a notebook
        self._worker = BackgroundWorker(self._background, name="kzin-worker", on_error=lambda exc: self._on_loop(
            lambda: self.param.update(busy=False, error=f"The background odds failed: {exc!r}")))
        s = self.session
        self._tiles = pn.FlexBox(margin=0)
        self._tile_keys: list[tuple[int, int]] = []
        self._buttons = {c: pn.widgets.Button(label=c.capitalize(), color="primary" if c in ("defend", "attack")
                                              else "default", width=110, margin=(4, 6)) for c in COMMANDS}
        for command, button in self._buttons.items():
            button.on_click(page_command(lambda _e, c=command: self.command(c)))
        self._reasons = pn.pane.HTML("", styles={"color": "#6b7280", "font-size": "13px"}, margin=(0, 8))
        self._follow = pn.widgets.Button(label="Follow the advice", color="success", margin=(4, 6),
                                         disabled=pn.bind(lambda version, advice: self._advice_ready(version, advice)
                                                          is None, self.session.param.version, self.param.advice),
                                         visible=pn.bind(lambda version: self.session.decision() is not None,
                                                         self.session.param.version))
        self._follow.on_click(page_command(lambda _e: self.follow_advice()))
        self._build_controls()
        self._force_fig, self._force_sources = force_figure()
        self._track_fig, self._track_sources = track_figure()
        self._running_fig, self._running_source = running_figure()
        s.param.watch(self._sync_running, ["running_odds"])
        s.param.watch(self._sync_table, ["version", "selection"])
        s.param.watch(self._on_version, ["version"])
        self.layout = self._build_layout()
        self._sync_table()
        self._sync_running()
        self._on_version(start=False)
        if self.background:
            pn.state.onload(self._worker.request)

    # --- commands (effects) -----------------------------------------------------------------------
    def command(self, name: str) -> bool:
        """Play one decision button."""
        s = self.session
        return {"defend": s.defend, "fall back": s.fall_back, "attack": s.attack, "pass": s.pass_turn}[name]()

    def click_tile(self, kind: int, copy: int) -> bool:
        """Select or unselect one copy of a card in play."""
        s = self.session
        view = next((v for v in s.table() if (v.kind, v.copy) == (kind, copy)), None)
        if view is None:
            s.message = "that card is no longer in play"
            return False
        kinds = list(s.selection)
        if view.selected:
            kinds.remove(kind)
        else:
            kinds.append(kind)
        return s.select(kinds)

    def follow_advice(self) -> bool:
        return self.session.follow_advice()

    def new_game(self, _event: Any = None) -> None:
        """Start a new game with the seed and rule options in the controls."""
        s = self.session
        options = {k: w.value for k, w in self._rule_widgets.items()}
        seed = self._seed.value
        if seed is None or seed < 0:
            s.message = "Enter a seed: a whole number from 0."
            return
        for k, value in options.items():  # checked before anything changes: a refused option keeps the game
            bounds = getattr(s.param[k], "bounds", None)
            if bounds is not None and (value is None or not bounds[0] <= value <= bounds[1]):
                s.message = f"Enter {RULE_LABELS[k]}: a whole number from {bounds[0]} to {bounds[1]}."
                return
        with param.parameterized.batch_call_watchers(s):
            s.param.update(**options)
            s.new_game(int(seed))

    def load_text(self, text: str | bytes) -> bool:
        """Load a saved game (a file's text, or the autosave); a bad one leaves the game as it was."""
        if not self.session.load(text):
            return False
        self._sync_controls()
        return True

    # --- keeping the page in step ------------------------------------------------------------------
    @changes_bokeh_models
    def _sync_table(self, *_events: Any) -> None:
        """Card tiles and decision buttons follow the table and the selection (buttons reused in place)."""
        s = self.session
        views = [v for v in s.table() if v.type in (HUMAN_FLEET, TACTICS)]
        keys = [(v.kind, v.copy) for v in views]
        if keys != self._tile_keys:
            tiles = []
            for v in views:
                b = pn.widgets.Button(stylesheets=[TILE_CSS.format(colour=TYPE_COLOURS[v.type])], margin=4)
                b.on_click(page_command(lambda _e, k=v.kind, c=v.copy: self.click_tile(k, c)))
                tiles.append(b)
            self._tile_keys = keys
            self._set_tiles(tiles, views)
            self._tiles.objects = tiles or [pn.pane.Markdown("No Human Fleet or Tactics card in play.",
                                                             styles={"color": "#6b7280"})]
        else:
            self._set_tiles(self._tiles.objects, views)
        reasons = []
        phase = s.decision()
        for command, button in self._buttons.items():
            ok, reason = s.can(command)
            button.disabled = not ok
            if not ok and (phase is None or command in (("defend", "fall back") if phase == "invasion"
                                                         else ("attack", "pass"))):
                reasons.append(f"{command.capitalize()}: {reason}")
            button.visible = phase is not None and command in (("defend", "fall back") if phase == "invasion"
                                                                else ("attack", "pass"))
        if s.state.phase == "over":
            reasons = ["The game is over: start a new game below."]
        self._reasons.object = "<br>".join(html.escape(r) for r in reasons)
        for side, data in force_distributions(s).items():
            self._force_sources[side].data = data
        p = s.win_probability()
        self._force_fig.title.text = "Force distributions" + ("" if p is None else f": you win {_pct(float(p))}")

    @staticmethod
    def _set_tiles(tiles: list, views: list[CardView]) -> None:
        for b, v in zip(tiles, views, strict=True):
            new = {"label": tile_label(v), "disabled": not v.selectable,
                   "css_classes": ["tile", "selected"] if v.selected else ["tile"]}
            changed = {k: x for k, x in new.items() if getattr(b, k) != x}
            if changed:
                b.param.update(**changed)

    @changes_bokeh_models
    def _on_version(self, *_events: Any, start: bool = True) -> None:
        s = self.session
        for name, data in track_data(s).items():
            self._track_sources[name].data = data
        self._files.download.filename = f"man-kzin-wars-seed{s.seed}-turn{s.state.turn}.json"
        if start and self.background:
            self._worker.request()

    @changes_bokeh_models
    def _sync_running(self, *_events: Any) -> None:
        self._running_source.data = running_data(self.session.running_odds)

    # --- background: the advisor and the running odds -----------------------------------------------
    def _snapshot(self) -> _Job:
        s = self.session
        return _Job(s.version, s.state.clone(), s.decision(), s.seed, s.advisor_rollouts, list(s.log),
                    list(s.running_odds), {k: getattr(s.state.rules, k) for k in RULE_OPTIONS})

    def _background(self) -> None:
        """Advice for the current decision, then rollouts for the turns without an estimate."""
        job_box: list[_Job] = []
        self._on_loop(lambda: job_box.append(self._snapshot()), wait=True)
        if not job_box:
            return
        job = job_box[0]
        if job.decision is not None:
            advice = advise(job.state, rollouts=job.rollouts, seed=job.seed + job.state.turn)
            self._on_loop(lambda: self._apply_advice(job, advice))
        done = {e["turn"] for e in job.running}
        todo = {e["turn"] for e in job.log if e.get("event") == "turn start"} - done
        if not todo:
            return
        many = len(todo) > 1  # one turn takes milliseconds: no progress bar for it
        if many:
            self._on_loop(lambda: self._apply_progress(job, 0.0, busy=True))
        shadow = KzinSession(seed=job.seed, **job.rules)
        shadow.log, shadow.running_odds, shadow.state = job.log, job.running, job.state

        def progress(p: float) -> None:
            if many and p < 1:
                self._on_loop(lambda: self._apply_progress(job, p, busy=True))

        shadow.estimate_running_odds(self.running_rollouts, on_progress=progress)
        results = shadow.running_odds
        self._on_loop(lambda: self._apply_running(job, results))

    def _same_game(self, job: _Job) -> bool:
        log = self.session.log
        return len(log) >= len(job.log) and all(a is b for a, b in zip(log, job.log, strict=False))

    def _apply_advice(self, job: _Job, advice: Advice) -> None:
        self.error = ""
        if self.session.version == job.version:
            self.advice = (job.version, advice)

    def _apply_progress(self, job: _Job, p: float, busy: bool) -> None:
        if self._same_game(job):
            with param.parameterized.batch_call_watchers(self.session):
                self.session.progress = p
                self.busy = busy

    def _apply_running(self, job: _Job, results: list[dict]) -> None:
        self.busy = False
        if not self._same_game(job):
            return
        have = {e["turn"] for e in self.session.running_odds}
        merged = [*self.session.running_odds, *(e for e in results if e["turn"] not in have)]
        self.session.running_odds = sorted(merged, key=lambda e: e["turn"])
        self.session.progress = 1.0

    def _on_loop(self, fn: Callable[[], Any], wait: bool = False) -> None:
        """Run ``fn`` on the page's event loop (see :func:`apps._background.run_on_page_loop`)."""
        run_on_page_loop(self._doc, fn, served=self._served, wait=wait)

    def wait_idle(self, timeout: float = 60.0) -> bool:
        """Wait until the background work is done (for tests and notebooks)."""
        return self._worker.idle.wait(timeout)

    # --- layout ---------------------------------------------------------------------------------------
    def _build_controls(self) -> None:
        s = self.session
        self._seed = pn.widgets.IntInput(label="Seed", value=s.seed, start=0, width=110)
        self._rule_widgets: dict[str, Any] = {}
        for k in RULE_OPTIONS:
            p = s.param[k]
            if isinstance(p, param.Boolean):
                w = pn.widgets.Checkbox(label=RULE_LABELS[k], value=getattr(s, k))
            else:
                w = pn.widgets.IntInput(label=RULE_LABELS[k], value=getattr(s, k), start=p.bounds[0], end=p.bounds[1],
                                        width=150)
            self._rule_widgets[k] = w
        self._new = pn.widgets.Button(label="New game", color="primary", margin=(22, 6, 4, 6))
        self._new.on_click(page_command(self.new_game))
        self._files = GameFiles("kzin", "man-kzin-wars.json", self.session, self.load_text, self._served)

    def _sync_controls(self) -> None:
        s = self.session
        self._seed.value = s.seed
        for k, w in self._rule_widgets.items():
            w.value = getattr(s, k)

    def _build_layout(self) -> pn.viewable.Viewable:
        s = self.session
        v, sel = s.param.version, s.param.selection
        track = pn.pane.Bokeh(self._track_fig, sizing_mode="stretch_width", name="track")
        status = pn.pane.Markdown(pn.bind(partial(status_markdown, s), v), margin=(0, 10))
        alert = pn.pane.Alert(s.param.message, alert_type=pn.bind(alert_type, s.param.message),
                              sizing_mode="stretch_width", margin=(0, 10))
        drawn = pn.pane.HTML(pn.bind(partial(drawn_html, s), v), margin=0)
        others = pn.pane.HTML(pn.bind(partial(table_html, s), v), margin=0, sizing_mode="stretch_width")
        table_box = _box("The table", pn.pane.Markdown("**Drawn this turn**", margin=(0, 4)), drawn,
                         pn.pane.Markdown("**Your Fleets and Tactics** (click to select for the commitment)",
                                          margin=(0, 4)),
                         self._tiles, pn.Row(*self._buttons.values(), margin=(4, 0)), self._reasons, others,
                         sizing_mode="stretch_width")
        odds = pn.pane.HTML(pn.bind(partial(odds_html, s), v, sel), margin=(0, 4), name="odds",
                            sizing_mode="stretch_width")
        forces = pn.pane.Bokeh(self._force_fig, sizing_mode="stretch_width",
                               visible=pn.bind(lambda version: s.decision() is not None, v))
        adv = self.param.advice
        pending = pn.bind(lambda version, advice: self.session.decision() is not None
                          and self._advice_ready(version, advice) is None, v, adv)
        advisor = pn.Column(
            pn.Row(pn.indicators.LoadingSpinner(value=True, size=20, margin=(8, 6), visible=pending),
                   pn.pane.HTML(pn.bind(self._advice_html, v, adv), margin=(0, 4), sizing_mode="stretch_width"),
                   sizing_mode="stretch_width"),
            pn.pane.DataFrame(pn.bind(self._advice_table, v, adv), index=False, sizing_mode="stretch_width",
                              stylesheets=[LEFT_TABLE],
                              visible=pn.bind(lambda version, advice: self._advice_ready(version, advice) is not None,
                                              v, adv)),
            self._follow, sizing_mode="stretch_width")
        odds_box = _box("Live odds", odds, forces, pn.pane.Markdown("#### The advisor", margin=(0, 4)), advisor,
                        sizing_mode="stretch_width")
        running = pn.pane.Bokeh(self._running_fig, sizing_mode="stretch_width")
        progress = pn.indicators.Progress(value=pn.bind(lambda p: round(100 * p), s.param.progress),
                                          max=100, active=self.param.busy, sizing_mode="stretch_width",
                                          height=14, margin=(0, 10))
        progress_text = pn.pane.Markdown(pn.bind(self._progress_text, s.param.progress, self.param.busy,
                                                 s.param.running_odds, self.param.error),
                                         styles={"color": "#6b7280", "font-size": "12px"}, margin=(0, 10))
        running_box = _box("Running odds", running, progress, progress_text, sizing_mode="stretch_width")
        deck = pn.pane.DataFrame(pn.bind(partial(deck_frame, s), v), index=False, sizing_mode="stretch_width")
        deck_box = _box("The deck (order hidden)", deck, sizing_mode="stretch_width")
        log = pn.pane.DataFrame(pn.bind(partial(log_frame, s), v), index=False, sizing_mode="stretch_width",
                                stylesheets=[LEFT_TABLE],
                                max_height=320, styles={"overflow-y": "auto"})
        log_box = _box("Game log", log, sizing_mode="stretch_width")
        rules = [self._rule_widgets[k] for k in RULE_OPTIONS]
        control_box = _box(
            "Game",
            pn.Row(self._seed, *[w for w in rules if isinstance(w, pn.widgets.IntInput)], self._new),
            *[w for w in rules if isinstance(w, pn.widgets.Checkbox)],
            self._files.row(),
            sizing_mode="stretch_width",
        )
        header = pn.Row(pn.pane.Markdown(f"# {TITLE}", margin=(0, 10)), status, align="center")
        return pn.Column(
            header, alert, _box("The track: Earth (1) to the Kzin Home Worlds (12)", track,
                                sizing_mode="stretch_width"),
            pn.Row(table_box, odds_box, sizing_mode="stretch_width"),
            pn.Row(running_box, deck_box, sizing_mode="stretch_width"),
            pn.Row(log_box, control_box, sizing_mode="stretch_width"),
            sizing_mode="stretch_width", styles={"background": "#f3f4f6", "max-width": "1400px",
                                                 "margin": "0 auto"}, name="kzin",
        )

    def _advice_ready(self, version: int, advice: tuple[int, Advice] | None) -> Advice | None:
        return advice[1] if advice is not None and advice[0] == version and self.session.decision() else None

    def _advice_html(self, version: int, advice: tuple[int, Advice] | None) -> str:
        a = self._advice_ready(version, advice)
        if self.session.decision() is None:
            return "<p>No decision to advise on.</p>"
        if a is None:
            return "<p>The advisor is playing out the options in the background…</p>"
        rec = a.recommended
        battle = "" if rec.battle_odds is None else f"battle {_pct(float(rec.battle_odds))}, "
        notes = f" <i>{html.escape('; '.join(a.notes))}</i>." if a.notes else ""
        return (f"<p class='advice'>Recommended: <b>{html.escape(rec.describe())}</b>: {battle}game "
                f"{_pct(rec.game_win, 2)} ({_pct(rec.game_low, 2)} – {_pct(rec.game_high, 2)}), by "
                f"{a.rollouts_per_state} rollouts a state.{notes}</p>")

    def _advice_table(self, version: int, advice: tuple[int, Advice] | None) -> pd.DataFrame:
        a = self._advice_ready(version, advice)
        return advice_frame(a) if a is not None else pd.DataFrame()

    def _progress_text(self, progress: float, busy: bool, running: list[dict], error: str) -> str:
        if error:
            return error
        n = len(running)
        if busy:
            return f"Estimating by rollouts in the background… {progress:.0%}"
        return f"{n} turn(s) estimated by {self.running_rollouts} rollouts each (threshold policy)."


def create_app() -> pn.viewable.Viewable:
    """A new session and page (one per browser tab); the page's ``dashboard`` attribute is its model."""
    dashboard = KzinDashboard()
    page = dashboard.layout
    page.dashboard = dashboard
    return page


def benchmark(repeats: int = 30) -> list[tuple[str, float]]:
    """Server-side milliseconds of a card click, and of a decision, with every view that follows (printed).

    The page is rendered to Bokeh models first, so each update goes all the way to the models a browser
    would be sent. Background work is off: it runs on its own thread and is not part of a click.
    """
    from bokeh.document import Document

    for seed in range(1, 200):
        s = KzinSession(seed=seed)
        while s.decision() and not s.state.fleets_in_play():
            s.fall_back() if s.decision() == "invasion" else s.pass_turn()
        if s.decision() and len([v for v in s.table() if v.selectable]) >= 2:
            break
    dash = KzinDashboard(session=s, background=False)
    dash.layout.get_root(Document())
    tiles = [v for v in s.table() if v.selectable]
    clicks = []
    for i in range(repeats):
        v = tiles[i % len(tiles)]
        t = time.perf_counter()
        dash.click_tile(v.kind, v.copy)
        clicks.append(1000 * (time.perf_counter() - t))
    decisions = []
    for _ in range(repeats):
        if s.decision() is None:
            s.new_game(s.seed + 1)
        t = time.perf_counter()
        dash.command("fall back" if s.decision() == "invasion" else "pass")
        decisions.append(1000 * (time.perf_counter() - t))
    rows = []
    for what, times in (("card click", clicks), ("decision", decisions)):
        times.sort()
        rows.append((f"kzin {what} + derived views, median", times[len(times) // 2]))
        rows.append((f"kzin {what} + derived views, worst", times[-1]))
    for name, ms in rows:
        print(f"{name}: {ms:.1f} ms")
    return rows


if __name__.startswith("bokeh"):
    create_app().servable(title=TITLE)
