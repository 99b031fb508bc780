"""Kung Fu 2100 in the browser: the lair on a clickable board, hot-seat or against the bot, with the odds.

``create_app()`` builds a new :class:`~engine.kf2100.session.KungFuSession` and a :class:`KungFuDashboard`
on it for every browser tab. Clicks on the board become session commands (select, move, place, activate,
attack); refused clicks leave the reason in the status line and change nothing. In a served page the
session is paced: a periodic callback plays one bot or dice action per tick, so the bot's turn unfolds
step by step. The whole-combat outlook is computed on a worker thread and handed back to the page's
event loop.
"""

from __future__ import annotations

import html
import time
import weakref
from collections.abc import Callable
from functools import partial
from typing import Any

import holoviews as hv
import pandas as pd
import panel as pn
import param
from bokeh.models import ColumnDataSource, HoverTool, LinearColorMapper, NumeralTickFormatter, Whisker
from bokeh.plotting import figure

from apps._background import (
    BackgroundWorker,
    changes_bokeh_models,
    page_command,
    page_document,
    run_on_page_loop,
)
from apps._files import NO_HTML, GameFiles
from apps._kf2100_board import KIND_COLOURS, KIND_NAMES, NAMES, BoardModel, levels_text
from engine.core import CHANCE, IllegalActionError
from engine.kf2100.bots import HeuristicBot
from engine.kf2100.data import ANSWER_COLUMNS, TECHNIQUES
from engine.kf2100.odds import CombatOdds, combat_odds, crt_table, mountain_heart_recovery, p_hit
from engine.kf2100.session import KungFuSession
from engine.kf2100.state import PHASE_TITLES, PLAYER_NAMES

TITLE = "Kung Fu 2100"
DESCRIPTION = ("Terminators storm the Clone Master's lair on a clickable map: hot-seat, against the bot or solo, "
               "with the odds of every chit.")
ORDER = 2

RECONSTRUCTION = ("The map, the Combat Results Table and the unit values are **a reconstruction**: the original "
                  "rules sheet is not available (see `engine/kf2100/data/`).")
BOX = {"background": "#ffffff", "border": "1px solid #e5e7eb", "border-radius": "10px",
       "padding": "4px 12px 10px 12px", "box-shadow": "0 1px 3px rgba(0,0,0,0.06)"}
LEFT_TABLE = ":host table td, :host table th { text-align: left !important; padding: 1px 6px !important; }"
SCALE = 30  # pixels per square
PHASE_ORDER = ("move1", "combat1", "move2", "cm_move", "combat2", "recovery")
ENTRY_LABELS = {"disposal": "the kitchen disposal", "loo": "the loo", "door": "the armored front door"}


def _box(title: str, *objects: Any, **kwargs: Any) -> pn.Column:
    return pn.Column(pn.pane.Markdown(f"### {title}", margin=(0, 0, -8, 0)), *objects, styles=BOX,
                     margin=(6, 6), **kwargs)


def _pct(p: Any) -> str:
    return f"{100 * float(p):.0f}%"


def _frac(p: Any) -> str:
    p = p_hit(p) if isinstance(p, int) else p
    return f"{p.numerator}/{p.denominator}" if hasattr(p, "numerator") and p not in (0, 1) else str(int(p))


def weak_hook(method: Callable[[Any, Any], None]) -> Callable[[Any, Any], None]:
    """A HoloViews plot hook that calls ``method`` while its object lives, without keeping it alive.

    HoloViews keeps an element's options (hooks included) in its global option store, and drops them only
    when the element is collected: a hook bound to the dashboard kept the dashboard, its board and through
    them the element itself, so no closed tab was ever freed (issue 18, point 3)."""
    ref = weakref.WeakMethod(method)

    def hook(plot: Any, element: Any) -> None:
        bound = ref()
        if bound is not None:
            bound(plot, element)

    return hook


# --- pure views of the session ---------------------------------------------------------------------

def side_markdown(s: KungFuSession) -> str:
    """Turn and phase, scenario clock, seats, victory status."""
    st = s.state
    sc = s.game.scenario
    turns = sc.turns
    phases = " → ".join(f"**{PHASE_TITLES[p]}**" if p == st.phase else PHASE_TITLES[p] for p in PHASE_ORDER)
    seats = f"Terminators: {s.seat(0)} · Clone Master: {s.seat(1)}" + (" (hot-seat)" if s.hot_seat() else "")
    lines = [f"**{sc.title} scenario · turn {min(st.turn, turns)} of {turns}** ({max(0, turns - st.turn)} after "
             f"this) · seed {s.seed}", f"Phase: {PHASE_TITLES[st.phase]}" if st.phase in ("setup", "entry", "over")
             else phases, seats]
    if st.is_terminal():
        lines.append(f"**Result: {st.result.replace('_', ' ')}**")
    else:
        lines.append(f"If the game ended now: *{st.grade().replace('_', ' ')}*")
    if s.game.solo:
        t, cm = st.solo_points()
        lines.append(f"Solo points: Terminator {t}, Clone Master {cm}")
    door = "broken" if st.door_broken else "closed"
    cm = st.figs["CM"]
    cm_text = "dead" if cm.status == "dead" else ("face up" if cm.face_up else "hidden")
    lines.append(f"Armored door: {door} · Clone Master: {cm_text}")
    return "\n\n".join(lines)


def equipment_markdown(s: KungFuSession) -> str:
    lair = s.game.board.lair
    left = sum(s.state.equipment.values())
    rows = [f"**{left} of {len(lair.equipment)} pieces left**", ""]
    for eid, (sq, kind) in lair.equipment.items():
        alive = s.state.equipment[eid]
        room = lair.rooms[s.game.board.cells[sq].room].name
        mark = "" if alive else "~~"
        rows.append(f"- {mark}{eid} {kind.replace('_', ' ')}, {room} ({s.game.board.names[sq]}){mark}"
                    + ("" if alive else " — destroyed"))
    return "\n".join(rows)


def figures_frame(view: dict[str, Any]) -> pd.DataFrame:
    """The figures the screen may show, with their levels left (damage)."""
    rows = []
    for f in view["figures"]:
        if f["status"] in ("unplaced",):
            continue
        where = f["square"] if f["square"] else (f"at the {f['entry']}" if f["entry"] else "")
        rows.append({"figure": f["id"], "what": KIND_NAMES[f["kind"]] + ("" if f["face_up"] or f["kind"] ==
                                                                        "terminator" else " (face down)"),
                     "where": where, "status": f["status"], "levels left": levels_text(f) or "one hit removes"})
    return pd.DataFrame(rows, columns=["figure", "what", "where", "status", "levels left"])


def heart_markdown(s: KungFuSession, view: dict[str, Any]) -> str:
    """Mountain Heart: who is down, the chance to recover next turn and by the end, and the rolls made."""
    turns_left = max(0, s.game.scenario.turns - s.state.turn + 1)
    p = p_hit(s.game.book.units.rules["recovery_at_most"])
    lines = [f"Each Recovery phase a d6 of 1-{s.game.book.units.rules['recovery_at_most']} ({_frac(p)}) "
             "regains one level of Mountain Heart."]
    for f in view["figures"]:
        h = TECHNIQUES.index("heart")
        if not f["start"][h] or f["status"] in ("dead", "escaped", "unplaced"):
            continue
        lost = f["start"][h] - f["levels"][h]
        if lost:
            dist = mountain_heart_recovery(lost, turns_left)
            back = 1 - dist.get(0, 0)
            lines.append(f"- **{f['id']}** Heart {f['levels'][h]}/{f['start'][h]}: next roll {_pct(p)}, at least "
                         f"one level back in {turns_left} turn(s) {_pct(back)}")
        else:
            lines.append(f"- {f['id']} Heart {f['levels'][h]}/{f['start'][h]} (nothing to recover)")
    rolls = [e for e in s.log if "Mountain Heart" in e["what"]]
    for e in rolls[-6:]:
        lines.append(f"- turn {e['turn']}: {e['what']}: rolled {e['roll']} (chance {e['p']}) → {e['result']}")
    return "\n".join(lines)


def log_frame(s: KungFuSession) -> pd.DataFrame:
    """Every d6 rolled, newest first, with the chance it had of succeeding."""
    rows = [{"turn": e["turn"], "phase": PHASE_TITLES.get(e["phase"], e["phase"]), "roll": e["what"],
             "d6": e["roll"], "needed": f"≤ {e['need']}", "chance it had": f"{e['p']} ({_pct(_fraction(e['p']))})",
             "result": e["result"]} for e in reversed(s.log)]
    return pd.DataFrame(rows, columns=["turn", "phase", "roll", "d6", "needed", "chance it had", "result"])


def _fraction(text: str) -> float:
    num, _, den = str(text).partition("/")
    return float(num) / float(den or 1)


def hits_data(outlook: CombatOdds | None) -> dict[str, list]:
    """Bars of P(hits) for each side in the whole combat, with the 95% interval of each bar (zero width when
    the outlook is exact)."""
    out: dict[str, list] = {"x": [], "p": [], "low": [], "high": [], "colour": [], "label": []}
    if outlook is None:
        return out
    for side, colour, offset in ((0, KIND_COLOURS["terminator"], -0.18), (1, KIND_COLOURS["jelly"], 0.18)):
        intervals = outlook.marginal_intervals(side)
        for k, p in outlook.marginal(side).items():
            low, high = intervals[k]
            out["x"].append(k + offset)
            out["p"].append(float(p))
            out["low"].append(low)
            out["high"].append(high)
            out["colour"].append(colour)
            extent = "exact" if outlook.exact else f"95% interval {100 * low:.1f}-{100 * high:.1f}%"
            out["label"].append(f"{PLAYER_NAMES[side]} take {k} hit(s): {100 * float(p):.1f}% ({extent})")
    return out


def hits_figure() -> tuple[figure, ColumnDataSource, Whisker]:
    """The bars of the whole-combat outlook, and error bars shown only when it is simulated."""
    fig = figure(height=210, width=420, toolbar_location=None, tools="", name="hits",
                 title="Hits in the whole combat", x_axis_label="hits taken",
                 y_axis_label="P")
    fig.title.text_font_size = "10.5pt"  # "… (300 simulated combats)" fits the figure's width
    src = ColumnDataSource(hits_data(None))
    bars = fig.vbar(x="x", top="p", width=0.34, color="colour", source=src)
    whisker = Whisker(base="x", lower="low", upper="high", source=src, line_color="#111827", visible=False,
                      name="hits_intervals")
    whisker.upper_head.size = whisker.lower_head.size = 6
    fig.add_layout(whisker)
    fig.add_tools(HoverTool(renderers=[bars], tooltips=[("", "@label")]))
    fig.yaxis.formatter = NumeralTickFormatter(format="0%")
    fig.y_range.start = 0
    fig.xaxis.ticker.desired_num_ticks = 6
    fig.outline_line_color = None
    return fig, src, whisker


def outlook_note(outlook: CombatOdds) -> str:
    """The mean hits of each side: exact, or simulated with its 95% interval and the number of combats."""
    parts = []
    for side, colour, who in ((0, KIND_COLOURS["terminator"], "Terminators take"),
                              (1, KIND_COLOURS["jelly"], "the Clone Master's side")):
        mean = outlook.expected(side)
        if outlook.exact:
            text = f"{mean:.2f}"
        else:
            low, high = outlook.expected_interval(side)
            text = f"{mean:.2f} (95% interval {low:.2f}-{high:.2f})"
        parts.append(f"<span style='color:{colour}'>■</span> {who} {text}")
    how = ("exact" if outlook.exact else f"simulated over {outlook.games} combats; bars show 95% Wilson intervals")
    return (f"{parts[0]} on average, {parts[1]}; both sides played as the bots would ({how}).")


def crt_figure() -> tuple[figure, ColumnDataSource]:
    """The CRT as a heat map of hit chances, with the attack about to be played outlined."""
    table = crt_table()
    attacks = list(table.index)
    cols = list(ANSWER_COLUMNS)
    data: dict[str, list] = {"attack": [], "answer": [], "p": [], "text": []}
    for a in attacks:
        for c in cols:
            p = table.loc[a, c]
            data["attack"].append(a)
            data["answer"].append(c)
            data["p"].append(float(p))
            data["text"].append(f"{p.numerator}/{p.denominator}" if p not in (0, 1) else str(int(p)))
    fig = figure(height=250, width=420, x_range=cols, y_range=list(reversed(attacks)), toolbar_location=None,
                 tools="", name="crt", title="CRT: chance of a hit (attack ↓, answer →)")
    mapper = LinearColorMapper(palette="YlOrRd9", low=1, high=0)
    fig.rect(x="answer", y="attack", width=1, height=1, source=ColumnDataSource(data),
             fill_color={"field": "p", "transform": mapper}, line_color="#ffffff")
    fig.text(x="answer", y="attack", text="text", source=ColumnDataSource(data), text_align="center",
             text_baseline="middle", text_font_size="11px")
    mark = ColumnDataSource({"attack": [], "answer": []})
    fig.rect(x="answer", y="attack", width=1, height=1, source=mark, fill_alpha=0, line_color="#2563eb",
             line_width=3)
    fig.axis.major_tick_line_color = None
    fig.axis.axis_line_color = None
    fig.grid.visible = False
    fig.outline_line_color = None
    return fig, mark


class KungFuDashboard(param.Parameterized):
    """The page for one session: the board, the decisions, the combat panel and the side panels."""

    session = param.ClassSelector(class_=KungFuSession, doc="The game this page plays.")
    armed = param.Tuple(default=None, length=2, allow_None=True, doc="(figure, chit) about to be played")
    tick = param.Integer(default=0, doc="Bumped when the board must be redrawn")
    outlook = param.Parameter(default=None, doc="(combat key, CombatOdds) from the worker")
    bot_delay = param.Integer(default=350, bounds=(20, 3000), doc="Milliseconds between bot steps")

    def __init__(self, **params: Any) -> None:
        if params.get("session") is None:
            params["session"] = KungFuSession(hand_over=True)
        super().__init__(**params)
        self._doc = page_document()
        self._served = served = self._doc is not None and self._doc.session_context is not None
        self.session.pace = served  # in a notebook the bots play at once
        self._worker = BackgroundWorker(self._background, name="kf2100-worker")
        self._callback: Any = None
        self._combat_key: tuple | None = None
        self._combat_log_start = 0
        self.model = BoardModel(self.session.map_layout(), self.session.game.board)
        self._frames: dict[str, dict[str, list]] = {}
        self._hooked: set[str] = set()
        self._decision_shown: tuple | None = None
        self._buttons_shown: dict[tuple, pn.widgets.Button] = {}
        self._buttons_next: dict[tuple, pn.widgets.Button] = {}
        self._log_rows, self._log_last = -1, []
        self._sources: list[dict[str, ColumnDataSource]] = []
        self._compute_frames()
        self._hits_fig, self._hits_src, self._hits_whisker = hits_figure()
        self._crt_fig, self._crt_mark = crt_figure()
        self._build_controls()
        self._decide = pn.Column(sizing_mode="stretch_width", margin=0)
        self.layout = self._build_layout()
        self.session.param.watch(self._on_version, ["version"])
        self.param.watch(self._on_armed, ["armed"])
        self.param.watch(lambda e: self._sync_outlook(), ["outlook"])
        self.param.watch(self._on_delay, ["bot_delay"])
        self._on_version()
        if served:
            pn.state.onload(self._start_ticker)

    # --- the ticker: one bot or dice step per tick ------------------------------------------------------
    def _start_ticker(self) -> None:
        self._callback = pn.state.add_periodic_callback(self._tick, period=self.bot_delay)

    def _on_delay(self, event: Any) -> None:
        if self._callback is not None:
            self._callback.period = event.new

    def _tick(self) -> None:
        s = self.session
        if s.pending:
            try:
                s.step()
            except Exception as exc:  # show it, and stop hammering the same error
                s.status = f"The bot failed: {exc!r}"
                if self._callback is not None:
                    self._callback.stop()

    def play_bots(self) -> None:
        """Play every pending bot and dice step now (tests, notebooks, the benchmark)."""
        while self.session.pending:
            self.session.step()

    # --- commands from the page -----------------------------------------------------------------------
    def _try(self, fn: Callable[..., Any], *args: Any) -> bool:
        try:
            fn(*args)
            return True
        except IllegalActionError:
            return False  # the session put the reason in its status and changed nothing

    def click(self, x: float, y: float) -> bool:
        """A click on the board at plot coordinates (x, y)."""
        s = self.session
        st = s.state
        if s.handover is not None:
            return self._try(s.refuse, f"hand the screen to the {PLAYER_NAMES[s.handover]} first")
        player = s.human_player()
        if player is None:
            why = "the game is over" if st.is_terminal() else "wait: the bot or the dice are playing"
            return self._try(s.refuse, why)
        square = self.model.square_at(x, y)
        col, row = self.model.cell_of(x, y)
        fid = self._figure_at(col, row)
        if st.phase == "setup":
            if square is None:
                return self._try(s.refuse, "click a square inside the lair")
            return self._try(s.place, st.queue[0], square)
        if st.phase == "entry":
            entry = self._entry_at(square, col, row)
            if entry is None:
                return self._try(s.refuse, f"click where {st.queue[0]} waits: the kitchen disposal, the loo or "
                                           "the armored front door")
            return self._try(s.wait_at, st.queue[0], entry)
        c = st.combat
        if st.bonus_mp > 0:
            if fid == "CM":
                return self._try(s.refuse, "click a highlighted square for the bonus move, or end it")
            if square is None:
                return self._try(s.refuse, "click a square inside the lair")
            return self._try(s.move, square, "CM")
        if st.cm_window:
            if fid == "CM":
                return self._try(s.activate, "CM")
            return self._try(s.refuse, "the Clone Master may reveal himself now: click him, or stay hidden")
        if st.door_step:
            return self._try(s.refuse, "choose a door attack in the panel, or stop attacking the door")
        if c is not None:
            target = fid or (self.model.equipment_at.get(square) if square else None)
            if c.step in ("attack", "aim"):
                if self.armed is None:
                    return self._try(s.refuse, "pick the chit to play in the combat panel, then click its target")
                if target is None:
                    return self._try(s.refuse, "click a figure or a piece of equipment in this combat")
                return self._try(s.attack, self.armed[0], self.armed[1], target)
            return self._try(s.refuse, "choose in the combat panel")
        if fid is not None and self._owned(fid, player):
            f = st.figs[fid]
            if player == 1 and not f.face_up and st.phase == "cm_move":
                return self._try(s.activate, fid)
            return self._try(s.select, fid)
        if fid is not None and square is None:
            return self._try(s.refuse, f"{fid} is not one of your figures")
        if not s.selected:
            return self._try(s.refuse, "click one of your figures first")
        if square is None:
            return self._try(s.refuse, "click a square inside the lair")
        return self._try(s.move, square)

    def _owned(self, fid: str, player: int) -> bool:
        f = self.session.state.figs.get(fid)
        return f is not None and f.side == player

    def _figure_at(self, col: int, row: int) -> str | None:
        for fid, where in self._frames.get("where", {}).items():
            if where == (col, row):
                return fid
        return None

    def _entry_at(self, square: str | None, col: int, row: int) -> str | None:
        for entry, sq in self.model.entry_square.items():
            if square == sq:
                return entry
            ec, er = self.model.col_row(sq)
            if entry == "door" and row == -1 and abs(col - ec) <= 3:
                return entry
            if entry != "door" and row == er and col < 0:
                return entry
        return None

    def act(self, text: str) -> bool:
        """Play a decision button's action (its text notation)."""
        return self._try(self.session.act, text)

    def arm(self, figure: str, chit: str) -> None:
        """Choose the chit about to be played; its targets light up on the board."""
        self.armed = (figure, chit)

    def take_screen(self, player: int) -> bool:
        return self._try(self.session.take_screen, player)

    def auto_setup(self) -> bool:
        return self._try(self.session.auto_setup)

    def new_game(self, _event: Any = None) -> None:
        """Start a new game with the scenario, seats and seed in the controls."""
        s = self.session
        seed = self._seed.value
        if seed is None or seed < 0:
            s.status = "Refused: enter a seed, a whole number from 0"
            return
        with param.parameterized.discard_events(s):
            s.param.update(scenario=self._scenario.value, terminators=self._seats[0].value,
                           clone_master=self._seats[1].value, seed=int(seed), terminator_levels={})
        s.new_game()
        self.outlook = None

    def refuse_file(self, reason: str) -> None:
        """A file the page would not even read (too big, unreadable): said like every other refusal."""
        self.session.status = f"Could not load the file: {reason}."

    def load_text(self, text: str | bytes) -> bool:
        """Load a saved game (a file's text, or the autosave); a bad one leaves the game as it was."""
        try:
            self.session.load(text)
        except IllegalActionError:
            self.session.status = f"Could not load the file: {self.session.status.removeprefix('Refused: ')}"
            return False
        s = self.session
        self._scenario.value = s.scenario
        self._seats[0].value, self._seats[1].value, self._seed.value = s.terminators, s.clone_master, s.seed
        self.session.status = "Game loaded. " + self.session.status
        return True

    # --- keeping the page in step ----------------------------------------------------------------------
    def _on_version(self, *_events: Any) -> None:
        s = self.session
        st = s.state
        c = st.combat
        if c is None:
            self._combat_key = None
        else:
            key = (st.turn, st.phase, tuple(c.members))
            if key != self._combat_key:
                self._combat_key = key
                self._combat_log_start = len(st.log)
        player = s.human_player()
        armed = self.armed
        if c is not None and player is not None and s.handover is None and c.step == "aim" and c.answer:
            armed = (c.answer[0], c.answer[1])
        elif c is not None and player is not None and s.handover is None and c.step == "attack":
            options = {(a.split()[1], a.split()[2]) for a in s.legal() if a.startswith("attack")}
            if armed not in options:
                armed = next(iter(options)) if len(options) == 1 else None
        else:
            armed = None
        with param.parameterized.discard_events(self):
            self.armed = armed
        self._refresh()
        if c is not None and c.step == "pick" and not c.chits and (self.outlook is None
                                                                      or self.outlook[0] != self._combat_key):
            self._worker.request()

    def _on_armed(self, *_events: Any) -> None:
        self._refresh()

    def _refresh(self) -> None:
        self._compute_frames()
        self._push_layers()
        self.tick += 1
        self._sync_panels()

    def _compute_frames(self) -> None:
        """Everything the board's dynamic layers draw, from the screen's view of the game."""
        s = self.session
        st = s.state
        view = s.screen_view()
        self._view = view
        selected = s.selected if s.handover is None else ""
        rects, labels, where = self.model.counters(view, selected)
        marks: dict[str, list] = {k: [] for k in ("x0", "y0", "x1", "y1", "fill", "line", "alpha", "lw")}
        costs: dict[str, list] = {"x": [], "y": [], "text": []}

        def mark(col: int, row: int, fill: str, line: str, alpha: float, lw: float) -> None:
            for k, v in zip(("x0", "y0", "x1", "y1"), self.model.rect(col, row), strict=True):
                marks[k].append(v)
            marks["fill"].append(fill)
            marks["line"].append(line)
            marks["alpha"].append(alpha)
            marks["lw"].append(lw)

        player = s.human_player() if s.handover is None else None
        if player is not None:
            reach: dict[str, int] = {}
            if st.bonus_mp > 0:
                reach = s.reachable("CM")
            elif selected and st.combat is None and not st.door_step and not st.cm_window:
                reach = s.reachable(selected)
            for sq, cost in reach.items():
                col, row = self.model.col_row(sq)
                mark(col, row, "#22c55e", "#15803d", 0.45, 1.0)
                x, y = self.model.centre(col, row)
                costs["x"].append(x)
                costs["y"].append(y - 0.3)
                costs["text"].append(str(cost))
            if st.phase == "setup" and st.queue:
                for a in s.legal():
                    col, row = self.model.col_row(a.split()[-1])
                    mark(col, row, "#a855f7", "#a855f7", 0.18, 0.5)
            if st.phase == "entry":
                for sq in self.model.entry_square.values():
                    col, row = self.model.col_row(sq)
                    mark(col, row, "#22c55e", "#15803d", 0.5, 2.0)
            if st.phase == "cm_move" and player == 1:
                for fid in st.activatable():
                    if st.figs[fid].pos >= 0:
                        col, row = self.model.col_row(st.name(st.figs[fid].pos))
                        mark(col, row, "#f97316", "#ea580c", 0.35, 2.0)
            if self.armed is not None and st.combat is not None:
                fid, chit = self.armed
                for a in s.legal():
                    parts = a.split()
                    if parts[0] == "attack" and parts[1] == fid and parts[2] == chit:
                        t = parts[3]
                        sq = self.model.equipment_square.get(t) or st.name(st.figs[t].pos)
                        col, row = self.model.col_row(sq)
                        mark(col, row, "#ef4444", "#b91c1c", 0.35, 3.0)
        if st.combat is not None:  # the figures in the combat, outlined for everyone
            for m in st.combat.members:
                sq = self.model.equipment_square.get(m)
                if sq is None and st.figs[m].pos >= 0 and m in where:
                    sq = st.name(st.figs[m].pos)
                if sq is not None:
                    col, row = self.model.col_row(sq)
                    mark(col, row, "#fde047", "#ca8a04", 0.0, 2.5)
        trail: dict[str, list] = {"x0": [], "y0": [], "x1": [], "y1": []}
        for fid, start, end in s.moves:
            if fid not in where:
                continue
            if start in self.model.entry_square and start not in self.model.by_name:
                c0 = self.model.slot(start, 0)
            else:
                c0 = self.model.col_row(start) if start in self.model.by_name else None
            if c0 is None or end not in self.model.by_name:
                continue
            (x0, y0), (x1, y1) = self.model.centre(*c0), self.model.centre(*self.model.col_row(end))
            for k, v in zip(("x0", "y0", "x1", "y1"), (x0, y0, x1, y1), strict=True):
                trail[k].append(v)
        for sq in [st.name(e[0]) for e in st.game.board.lair.equipment.values()]:
            eid = self.model.equipment_at[sq]
            if not st.equipment[eid]:
                col, row = self.model.col_row(sq)
                mark(col, row, "#111827", "#111827", 0.85, 1.0)
        self._frames = {"counters": rects, "labels": labels, "where": where, "marks": marks, "costs": costs,
                        "trail": trail}

    # --- the board (HoloViews) -----------------------------------------------------------------------------
    def board(self) -> pn.pane.HoloViews:
        m = self.model
        w, h = m.width, m.height
        xlim, ylim = (-4.3, w + 0.1), (-1.0, h + 1.15)
        fw = round((xlim[1] - xlim[0]) * SCALE)
        fh = round((ylim[1] - ylim[0]) * SCALE)
        base = hv.Rectangles(m.base(), kdims=["x0", "y0", "x1", "y1"], vdims=["colour", "square", "what"]).opts(
            color="colour", line_color="#cbd5e1", line_width=0.5, xlim=xlim, ylim=ylim, width=fw,
            height=fh, xaxis=None, yaxis=None, default_tools=[], tools=[], toolbar=None, border=0,
            show_frame=False, bgcolor="#f8fafc", backend_opts={"plot.name": "board"})
        fixed = hv.Labels(m.fixed_labels(), kdims=["x", "y"], vdims=["text", "colour"]).opts(
            text_font_size="8pt", text_color="colour", default_tools=[])
        edge = hv.Segments(m.elevation_edges(), kdims=["x0", "y0", "x1", "y1"]).opts(
            color="#ea580c", line_width=3.5, line_dash="dashed", default_tools=[])
        hv.streams.Tap(source=base, transient=True).add_subscriber(self._on_tap)
        overlay = (base * edge * fixed).opts(hooks=[weak_hook(self._add_layers)])
        return pn.pane.HoloViews(overlay, linked_axes=False, name="board", margin=0)

    LAYERS = ("marks", "costs", "trail", "counters", "labels")

    def _add_layers(self, plot: Any, element: Any) -> None:
        """HoloViews hook: add the moving layers as plain Bokeh glyphs on their own data sources, once per
        figure (hooks run on every update). Redrawing is then a data-source update, not a HoloViews replot:
        measured 530 ms a click with five DynamicMaps on this board, against a few ms this way."""
        fig = plot.state
        if fig.id in self._hooked:
            return
        self._hooked.add(fig.id)
        src = {name: ColumnDataSource(self._frames[name]) for name in self.LAYERS}
        fig.quad(left="x0", bottom="y0", right="x1", top="y1", source=src["marks"], fill_color="fill",
                 line_color="line", fill_alpha="alpha", line_width="lw")
        fig.text(x="x", y="y", text="text", source=src["costs"], text_font_size="7pt", text_color="#14532d",
                 text_align="center", text_baseline="middle")
        fig.segment(x0="x0", y0="y0", x1="x1", y1="y1", source=src["trail"], line_color="#2563eb", line_width=3,
                    line_alpha=0.7)
        counters = fig.quad(left="x0", bottom="y0", right="x1", top="y1", source=src["counters"],
                            fill_color="fill", line_color="line", line_width="lw")
        fig.text(x="x", y="y", text="text", source=src["labels"], text_font_size="7pt", text_color="tcolour",
                 text_font_style="bold", text_align="center", text_baseline="bottom", y_offset=1)
        fig.text(x="x", y="y", text="levels", source=src["labels"], text_font_size="6.5pt", text_color="tcolour",
                 text_align="center", text_baseline="top", y_offset=1)
        fig.text(x="x", y="y", text="text", angle="angle", angle_units="deg", source=ColumnDataSource(
            self.model.room_labels()), text_font_size="7pt", text_color="#334155", text_font_style="italic",
            text_align="center", text_baseline="middle", background_fill_color="#f8fafc", background_fill_alpha=0.85,
            padding=1, border_radius=2)
        fig.add_tools(HoverTool(renderers=[counters], tooltips=[("", "@detail")]))
        self._sources.append(src)

    @changes_bokeh_models
    def _push_layers(self) -> None:
        for src in self._sources:
            for name in self.LAYERS:
                src[name].data = self._frames[name]

    def _on_tap(self, x: float | None, y: float | None) -> None:
        """HoloViews delivers the tap outside the document lock: play the click on the next tick, under the
        lock, so the board's data sources may change with the rest of the page."""
        if x is None or y is None:
            return
        doc = self._doc
        if doc is not None and doc.session_context is not None:
            doc.add_next_tick_callback(partial(self.click, x, y))
        else:
            self.click(x, y)

    # --- panels ----------------------------------------------------------------------------------------------
    def _button(self, label: str, fn: Callable[[], Any], color: str = "default",
                key: Any = None) -> pn.widgets.Button:
        """A decision button, reused when the same one was shown before, so that a click on it that is
        already on its way still lands when the panel is rebuilt around it."""
        key = (label, color, key)
        b = self._buttons_shown.get(key)
        if b is None:
            b = pn.widgets.Button(label=label, color=color, margin=(3, 4))
            b.on_click(page_command(lambda _e: fn()))
        self._buttons_next[key] = b
        return b

    def _act_button(self, label: str, action: str, color: str = "default") -> pn.widgets.Button:
        return self._button(label, partial(self.act, action), color, key=action)

    @changes_bokeh_models
    def _sync_panels(self) -> None:
        """Bring the panels in step; each pane is touched only when what it shows has changed."""
        s = self.session
        st = s.state
        key = self._decision_key()
        if key != self._decision_shown:
            self._decision_shown = key
            self._buttons_next = {}
            self._decide.objects = self._decision_widgets()
            self._buttons_shown = self._buttons_next
        self._set(self._side, side_markdown(s))
        self._set(self._equipment, equipment_markdown(s))
        self._set(self._heart, heart_markdown(s, self._view))
        self._set(self._combat_html, self._combat_markdown())
        self._set(self._odds_html, self._odds_table())
        figures = figures_frame(self._view)
        if not figures.equals(self._figures.object):
            self._figures.object = figures
        if len(s.log) != self._log_rows or s.log[-1:] != self._log_last:
            self._log_rows, self._log_last = len(s.log), s.log[-1:]
            self._log.object = log_frame(s)
        visible = st.combat is not None or st.door_step
        if self._combat_box.visible != visible:
            self._combat_box.visible = visible
        name = f"kung-fu-2100-{s.scenario}-seed{s.seed}-turn{st.turn}.json"
        if self._files.download.filename != name:
            self._files.download.filename = name
        a = self._crt_target()
        if a is None:
            mark: dict[str, list] = {"attack": [], "answer": []}
        elif a[1] == "*":  # a chit about to be played: its whole row
            mark = {"attack": [a[0]] * len(ANSWER_COLUMNS), "answer": list(ANSWER_COLUMNS)}
        else:
            mark = {"attack": [a[0]], "answer": [a[1]]}
        if mark != dict(self._crt_mark.data):
            self._crt_mark.data = mark
        self._sync_outlook()

    @staticmethod
    def _set(pane: Any, text: str) -> None:
        if pane.object != text:
            pane.object = text

    def _decision_key(self) -> tuple:
        """What the decision panel depends on (moves are clicks on the board, so they are left out)."""
        s = self.session
        st = s.state
        c = st.combat
        return (s.handover, s.human_player(), st.current_player(), st.phase, st.turn, st.is_terminal(),
                tuple(a for a in s.legal() if not a.startswith("move")), self.armed, st.bonus_mp, st.cm_window,
                st.door_step, tuple(st.queue[:1]), len(st.queue), c.step if c else None,
                tuple(c.attack) if c and c.attack else None, c.pending_loss if c else None, self.bot_delay)

    def _crt_target(self) -> tuple[str, str] | None:
        c = self.session.state.combat
        if c is None:
            return None
        if c.attack is not None and c.step in ("answer", "roll"):
            col = "none"
            if c.answer and c.answer[0] == c.attack[2]:
                col = c.answer[1] if c.answer[1] in ("fist", "kick", "mist", "monkey") else "weapon"
            return c.attack[1], col
        if self.armed is not None:
            return self.armed[1], "*"
        return None

    @changes_bokeh_models
    def _sync_outlook(self) -> None:
        o = self.outlook
        ok = o is not None and o[0] == self._combat_key
        self._hits_src.data = hits_data(o[1] if ok else None)
        simulated = ok and not o[1].exact
        if self._hits_whisker.visible != simulated:
            self._hits_whisker.visible = simulated
        if self._combat_key is None:
            title, note = "Hits in the whole combat", "No combat now."
        elif not ok:
            title, note = "Hits in the whole combat", "Working it out…"
        else:
            title = f"Hits in the whole combat ({o[1].source})"
            note = outlook_note(o[1])
        if self._hits_fig.title.text != title:
            self._hits_fig.title.text = title
        self._set(self._hits_note, note)

    def _decision_widgets(self) -> list[Any]:
        """What the player to act may do now, as buttons (the board takes the clicks)."""
        s = self.session
        st = s.state
        note = partial(pn.pane.Markdown, margin=(0, 6), renderer_options=NO_HTML)
        if st.is_terminal():
            return [note(f"**Game over: {st.result.replace('_', ' ')}.** Start a new game below.")]
        if s.handover is not None:
            who = PLAYER_NAMES[s.handover]
            other = PLAYER_NAMES[1 - s.handover]
            return [pn.pane.Alert(f"**Hand the screen to the {who}.** {other}: look away. The {who}"
                                  f"{chr(39) if who.endswith('s') else chr(39) + 's'} secrets "
                                  "stay hidden until they press the button.", alert_type="warning", margin=(0, 6)),
                    self._button(f"I am the {who}: show my side", partial(self.take_screen, s.handover), "primary")]
        player = s.human_player()
        if player is None:
            who = "the dice" if st.current_player() == CHANCE else f"the {PLAYER_NAMES[st.current_player()]} (bot)"
            return [pn.Row(pn.indicators.LoadingSpinner(value=True, size=18, margin=(6, 6)),
                           note(f"Waiting for {who}… (one step every {self.bot_delay} ms)"))]
        legal = s.legal()
        out: list[Any] = [note(f"**{PLAYER_NAMES[player]} to act.**")]
        c = st.combat
        if st.phase == "setup":
            f = st.figs[st.queue[0]]
            out += [note(f"Click a highlighted square to place **{f.id}** ({KIND_NAMES[f.kind]}), face down. "
                         f"{len(st.queue)} counters left."),
                    self._button("Place the rest automatically", self.auto_setup, "primary")]
            return out
        if st.phase == "entry":
            fid = st.queue[0]
            out.append(note(f"Where does **{fid}** wait to enter? Click the disposal, the loo or the door, or:"))
            out.append(pn.Row(*[self._act_button(f"{fid} at the {e}", f"{fid} waits at {e}")
                                for e in ("disposal", "loo", "door")], margin=0))
            return out
        if st.bonus_mp > 0:
            out += [note(f"The Clone Master's bonus move of up to {st.bonus_mp}: click a green square."),
                    self._act_button("No bonus move", "end")]
            return out
        if st.cm_window:
            out += [note("The Clone Master may reveal himself now (and make a bonus move)."),
                    pn.Row(self._act_button("Reveal the Clone Master", "activate CM", "primary"),
                           self._act_button("Stay hidden", "end"), margin=0)]
            return out
        if st.door_step:
            out.append(note("Terminators at the armored door may spend a chit on it (it breaks on 1-2, 33%)."))
            out += [self._act_button(a.replace("door ", "").replace(" fist", ": punch the door").replace(
                " kick", ": kick the door"), a) for a in legal if a.startswith("door")]
            out.append(self._act_button("Leave the door", "end"))
            return out
        if c is None:
            phase = PHASE_TITLES[st.phase]
            if player == 1:
                out.append(note("Click a face-up figure, then a green square (the number is its cost). Click a "
                                "face-down counter (orange) to activate it: one Jelly, Servant and Technician a move."))
            else:
                out.append(note("Click a Terminator (waiting ones sit by their entry), then a green square "
                                "(the number is its movement cost)."))
            for a in legal:
                if a.startswith("exit"):
                    out.append(self._act_button(f"{a.split()[1]} leaves the lair", a))
            out.append(self._act_button(f"End {phase}", "end", "primary"))
            return out
        return out + self._combat_widgets(legal)

    def _combat_widgets(self, legal: list[str]) -> list[Any]:
        st = self.session.state
        c = st.combat
        note = partial(pn.pane.Markdown, margin=(0, 6), renderer_options=NO_HTML)
        out: list[Any] = []
        if c.step == "pick":
            fid = c.to_pick[0]
            _, n = st.chit_options(st.figs[fid])
            out.append(note(f"Pick **{fid}**'s {n} secret chits ({levels_text(st.figs[fid].to_dict())}):"))
            out.append(pn.FlexBox(*[self._act_button(" + ".join(a.split()[2].split("+")), a) for a in legal],
                                  margin=0))
        elif c.step == "lead":
            out.append(note("Who plays the first chit?"))
            out.append(pn.Row(self._act_button("Terminators lead", "lead terminators", "primary"),
                              self._act_button("Clone Master leads", "lead clone master"), margin=0))
        elif c.step in ("attack", "aim"):
            options = sorted({(a.split()[1], a.split()[2]) for a in legal if a.startswith("attack")})
            if c.step == "aim":
                out.append(note(f"**{c.answer[0]}**'s answering {c.answer[1]} becomes the attack: click a red "
                                "target on the board."))
            else:
                out.append(note("Pick the chit to play, then click its target (red) on the board:"))
                out.append(pn.FlexBox(*[self._button(f"{f}: {NAMES[ch]}", partial(self.arm, f, ch),
                                                     "primary" if self.armed == (f, ch) else "default")
                                        for f, ch in options], margin=0))
        elif c.step == "answer":
            fid, chit, target = c.attack
            out.append(note(f"**{fid}** plays {NAMES[chit]} on **{target}**. Answer with:"))
            odds = {d["action"]: d for d in self.session.decision_odds()}
            out.append(pn.FlexBox(*[self._act_button(
                f"{a.split()[1]} {a.split()[2]} (hit {_frac(odds[a]['p_hit'])})" if a in odds else a, a)
                for a in legal], margin=0))
        elif c.step == "loss":
            out.append(note(f"**{c.pending_loss}** is hit: choose the level to lose."))
            out.append(pn.Row(*[self._act_button(f"Lose {NAMES[a.split()[2]]}", a) for a in legal], margin=0))
        return out

    def _combat_markdown(self) -> str:
        """The figures in the combat, the chits each side holds, and the exchange so far."""
        s = self.session
        st = s.state
        view = self._view
        c = view["combat"]
        if c is None:
            return "No combat now." if not st.door_step else "The Terminators at the armored door decide."
        figs = {f["id"]: f for f in view["figures"]}
        rows = ["| figure | levels left | chits |", "|---|---|---|"]
        for m in c["members"]:
            if m.startswith("E"):
                rows.append(f"| {m} (equipment) | one hit destroys | |")
                continue
            f = figs.get(m)
            if f is None:
                continue
            chits = c["chits"].get(m)
            shown = ("—" if chits is None else (f"{chits} hidden" if isinstance(chits, int) else
                                                " ".join(chits) or "none"))
            rows.append(f"| **{m}** {KIND_NAMES[f['kind']]} | {levels_text(f) or 'one hit removes'} | {shown} |")
        step = {"pick": "picking chits", "lead": "choosing who leads", "attack": "a fresh attack",
                "answer": "answering", "roll": "the die rolls", "loss": "a level to lose", "aim": "aiming the answer",
                "untrained": "untrained attacks", "done": "over"}.get(c["step"], c["step"])
        lines = [f"**Combat: {step}** ({view['combats_waiting']} more combat(s) waiting this phase)", "",
                 "\n".join(rows), ""]
        if c["attack"]:
            fid, chit, target = c["attack"]
            answer = f"answered by {c['answer'][0]} {c['answer'][1]}" if c["answer"] else "not answered yet"
            need = f": hits on 1-{c['need']} ({_frac(p_hit(c['need']))})" if c["step"] == "roll" else ""
            lines.append(f"Now: **{fid} {NAMES[chit]} → {target}**, {answer}{need}")
        events = [e for e in view["log"][self._combat_log_start:]]
        if events:
            lines.append("")
            lines.append("**The exchange so far**")
            for e in events[-8:]:
                if "roll" in e:
                    lines.append(f"- {e['what']}: d6 {e['roll']} (needed ≤ {e['need']}, {e['p']}) → **{e['result']}**")
                else:
                    lines.append(f"- {e['event']}")
        return "\n".join(lines)

    def _odds_table(self) -> str:
        """For the chit about to be played: the hit chance against each possible answer."""
        s = self.session
        rows = s.decision_odds() if s.handover is None else []
        attacks = [d for d in rows if d["kind"] == "attack"]
        if self.armed is not None:
            attacks = [d for d in attacks if d["action"].split()[1:3] == list(self.armed)]
        if attacks:
            cols = [c for c in ANSWER_COLUMNS if any(c in d["p_hit"] for d in attacks)]
            head = "".join(f"<th>{html.escape(NAMES[c])}</th>" for c in cols)
            body = ""
            for d in attacks:
                _, fid, chit, target = d["action"].split()
                cells = "".join(f"<td>{_pct(d['p_hit'][c])}</td>" if c in d["p_hit"] else "<td>—</td>" for c in cols)
                body += f"<tr><td>{html.escape(f'{fid} {NAMES[chit]} → {target}')}</td>{cells}</tr>"
            return (f"<b>Chance to hit, by the answer given</b> (None: no answer, or another figure's)"
                    f"<table class='odds'><tr><th>attack</th>{head}</tr>{body}</table>")
        answers = [d for d in rows if d["kind"] == "answer"]
        if answers:
            body = "".join(f"<tr><td>{html.escape(d['action'])}</td><td>{html.escape(NAMES[d['column']])}</td>"
                           f"<td>{_pct(d['p_hit'])}</td></tr>" for d in answers)
            return ("<b>The attack's chance to hit, by your answer</b><table class='odds'><tr><th>answer</th>"
                    f"<th>read on</th><th>hit</th></tr>{body}</table>")
        c = s.state.combat
        if c is not None and c.attack is not None and c.step == "roll":
            return f"<b>The die needs 1-{c.need}: {_pct(p_hit(c.need))}</b>"
        return "<i>The hit chances appear when a chit is about to be played.</i>"

    # --- background: the whole-combat outlook -----------------------------------------------------------------
    def _background(self) -> None:
        box: list[Any] = []
        self._on_loop(lambda: box.append((self._combat_key, self.session.state.clone(), self.session.game.solo,
                                          self.session.seed)), wait=True)
        if not box or box[0][0] is None:
            return
        key, state, solo, seed = box[0]
        c = state.combat
        if c is None or c.step != "pick" or c.chits:
            return
        result = combat_odds(state, [HeuristicBot(0), HeuristicBot(1, solo=solo)], max_nodes=6000, games=400,
                             seed=seed)
        self._on_loop(lambda: self.param.update(outlook=(key, result)))

    def _on_loop(self, fn: Callable[[], Any], wait: bool = False) -> None:
        """Run ``fn`` on the page's event loop (see :func:`apps._background.run_on_page_loop`)."""
        run_on_page_loop(self._doc, fn, served=self._served, wait=wait)

    def wait_idle(self, timeout: float = 60.0) -> bool:
        return self._worker.idle.wait(timeout)

    # --- layout ---------------------------------------------------------------------------------------------------
    def _build_controls(self) -> None:
        s = self.session
        self._scenario = pn.widgets.Select(label="Scenario", value=s.scenario, options=["basic", "advanced", "solo"],
                                           width=110)
        self._seats = [pn.widgets.Select(label=f"{PLAYER_NAMES[p]}", value=s.seat(p), options=["human", "bot"],
                                         width=110) for p in (0, 1)]
        self._seed = pn.widgets.IntInput(label="Seed", value=s.seed, start=0, width=90)
        self._delay = pn.widgets.IntInput(label="Bot step (ms)", value=self.bot_delay, start=20, end=3000, width=100,
                                          css_classes=["bot-delay"])
        self._delay.link(self, value="bot_delay")
        self._new = pn.widgets.Button(label="New game", color="primary", margin=(22, 6, 4, 6))
        self._new.on_click(page_command(self.new_game))
        self._files = GameFiles("kf2100", "kung-fu-2100.json", self.session, self.load_text, self._served,
                                refuse=self.refuse_file)

    def _build_layout(self) -> pn.viewable.Viewable:
        s = self.session
        status = pn.pane.Alert(s.param.status, alert_type=pn.bind(
            lambda t: "danger" if t.startswith(("Refused", "Could not")) else "info", s.param.status),
            sizing_mode="stretch_width", margin=(0, 6), name="status", renderer_options=NO_HTML)
        self._side = pn.pane.Markdown("", margin=(0, 6), sizing_mode="stretch_width", renderer_options=NO_HTML)
        self._equipment = pn.pane.Markdown("", margin=(0, 6), renderer_options=NO_HTML)
        self._figures = pn.pane.DataFrame(pd.DataFrame(), index=False, sizing_mode="stretch_width",
                                          stylesheets=[LEFT_TABLE], max_height=260, styles={"overflow-y": "auto"})
        self._heart = pn.pane.Markdown("", margin=(0, 6), renderer_options=NO_HTML)
        self._log = pn.pane.DataFrame(pd.DataFrame(), index=False, sizing_mode="stretch_width",
                                      stylesheets=[LEFT_TABLE], max_height=300, styles={"overflow-y": "auto"},
                                      name="log")
        self._hits_note = pn.pane.HTML("", width=420, margin=(0, 6), styles={"font-size": "12px"})
        self._combat_html = pn.pane.Markdown("", margin=(0, 6), sizing_mode="stretch_width", name="combat",
                                             renderer_options=NO_HTML)
        self._odds_html = pn.pane.HTML("", margin=(0, 6), sizing_mode="stretch_width", name="odds",
                                       stylesheets=[":host table.odds td, :host table.odds th {padding: 1px 6px;"
                                                    " text-align: left;}"])
        self._combat_box = _box("Combat", pn.Row(
            pn.Column(self._combat_html, self._odds_html, width=440),
            pn.Column(pn.pane.Bokeh(self._hits_fig), self._hits_note, pn.pane.Bokeh(self._crt_fig))),
            sizing_mode="stretch_width")
        legend = pn.pane.HTML(
            "".join(f"<span style='display:inline-block;margin:0 8px 0 0'><span style='display:inline-block;"
                    f"width:11px;height:11px;background:{c};margin-right:3px'></span>{KIND_NAMES[k]}</span>"
                    for k, c in KIND_COLOURS.items())
            + "<span style='display:inline-block'><span style='display:inline-block;width:11px;height:11px;"
              "background:#94a3b8;margin-right:3px'></span>face down</span><br>Counter digits: levels left of "
              "Fist, Kick, Mist, Monkey, Heart. Orange dashes: the change of elevation (+2 movement, free with "
              "Monkey Soul).", styles={"font-size": "11px", "color": "#374151"}, margin=(0, 6))
        board_box = _box("The lair", self.board(), legend)
        right = pn.Column(
            _box("Your move", self._decide, sizing_mode="stretch_width"),
            _box("Game", self._side, sizing_mode="stretch_width"),
            _box("Vital equipment", self._equipment, sizing_mode="stretch_width"),
            width=430)
        controls = _box(
            "New game, save, load",
            pn.Row(self._scenario, *self._seats, self._seed, self._delay, self._new),
            self._files.row(with_warning=False),
            pn.pane.Markdown(RECONSTRUCTION, margin=(0, 6), styles={"color": "#6b7280"}),
            sizing_mode="stretch_width")
        header = pn.Row(pn.pane.Markdown(f"# {TITLE}", margin=(0, 10)),
                        pn.pane.Markdown(RECONSTRUCTION, styles={"color": "#6b7280", "font-size": "12px"},
                                         margin=(14, 10)), align="center")
        return pn.Column(
            header, status, *([self._files.warning] if self._files.warning else []), pn.Row(board_box, right),
            self._combat_box,
            pn.Row(_box("Roll log: every d6 with the chance it had", self._log, width=700),
                   pn.Column(_box("Figures", self._figures, sizing_mode="stretch_width"),
                             _box("Mountain Heart", self._heart, sizing_mode="stretch_width"), width=680)),
            controls, styles={"background": "#f3f4f6"}, name="kf2100", width=1400)


def create_app() -> pn.viewable.Viewable:
    """A new session and page (one per browser tab); the page's ``dashboard`` attribute is its model."""
    if not hv.Store.renderers:
        hv.extension("bokeh", logo=False)
    dashboard = KungFuDashboard()
    page = dashboard.layout
    page.dashboard = dashboard
    return page


def benchmark(repeats: int = 20) -> list[tuple[str, float]]:
    """Server-side time of a board click (select, move) and of a whole bot turn, with every view update (ms)."""
    from bokeh.document import Document

    if not hv.Store.renderers:
        hv.extension("bokeh", logo=False)
    dash = KungFuDashboard(session=KungFuSession(hand_over=True, seed=1))
    dash.layout.get_root(Document())
    s = dash.session
    s.pace = True
    for fid in ("T1", "T2", "T3"):
        s.wait_at(fid, "disposal")
    dash.play_bots()
    m = dash.model
    clicks = []
    rows = []
    for i in range(repeats):
        fid = "T1"
        f = s.state.figs[fid]
        col, row = dash._frames["where"][fid]
        t = time.perf_counter()
        dash.click(*m.centre(col, row))
        clicks.append(1000 * (time.perf_counter() - t))
        reach = sorted(s.reachable(fid))
        if not reach or f.mp <= 0:
            break
        target = reach[i % len(reach)]
        t = time.perf_counter()
        dash.click(*m.centre(*m.col_row(target)))
        clicks.append(1000 * (time.perf_counter() - t))
        dash.play_bots()
        if s.state.phase not in ("move1", "move2"):
            break
    clicks.sort()
    rows.append(("kf2100 board click + views, median", clicks[len(clicks) // 2]))
    rows.append(("kf2100 board click + views, worst", clicks[-1]))
    # Bot turns: the human's decisions made by the heuristic bot, every stretch of bot and dice steps timed
    # with the page's updates (the display delay between steps left out).
    helper = HeuristicBot(0)
    turns: list[tuple[float, int]] = []
    while not s.state.is_terminal() and s.state.turn <= 6:
        if s.pending:
            t, n = time.perf_counter(), 0
            while s.pending:
                s.step()
                n += 1
            turns.append((1000 * (time.perf_counter() - t), n))
        elif s.human_player() is not None:
            s.act(helper.choose(s.state, None))
    turns.sort()
    worst = turns[-1]
    rows.append(("kf2100 bot turn + views, median", turns[len(turns) // 2][0]))
    rows.append((f"kf2100 bot turn + views, worst ({worst[1]} steps)", worst[0]))
    for name, ms in rows:
        print(f"{name}: {ms:.1f} ms")
    return rows


if __name__.startswith("bokeh"):
    create_app().servable(title=TITLE)
