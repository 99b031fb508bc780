"""The Kung-Fu Zoo page's background work: the odds of the aimed flick, the heat map, and the bots' turns.

Each is an async function bound with ``pn.bind`` to the session parameters it depends on: Panel runs it on
the page's event loop (or the notebook kernel's), starts the first once the page is loaded (``defer_load``),
cancels the run a newer one supersedes and cancels it when the tab closes. The simulations run in
``asyncio.to_thread`` over a copy of the battle taken on the loop, in pieces short enough that a superseded
run stops within one piece, and the results come back to the loop before any parameter changes, so no
thread writes to a page. When there is nothing to work out (Dust Kick, a bot's turn, the round over), each
says why instead of waiting.
"""

from __future__ import annotations

import asyncio
import html
from collections.abc import AsyncIterator
from functools import partial
from typing import Any

import pandas as pd
import panel as pn
import param
from bokeh.models import ColumnDataSource, HoverTool, LinearColorMapper
from bokeh.palettes import RdBu11, Viridis256
from bokeh.plotting import figure

from apps.commands import on_page
from apps.gestures import gesture_source, take_clicks
from apps.live import in_turn
from apps.zoo import views
from apps.zoo.arena import PROPOSAL, Arena
from apps.zoo.work import SharedWork, Superseding
from engine.core.distributed import RunStopped
from engine.core.rng import make_rng
from engine.zoo.odds import FlickOdds, noisy_jobs, odds_grid, run_samples, summarise
from engine.zoo.session import ZooSession

ODDS_CHUNKS = (50, 90, 90, 90, 90, 90)
"""A first estimate from 50 flicks, refined to 500."""
TOOLTIPS = {"caging": [("aim", "@aim"), ("caging", "@tip"), ("simulated", "@count")],
            "points": [("aim", "@aim"), ("expected points", "@tip"), ("simulated", "@count")]}
PALETTES = {"caging": tuple(Viridis256), "points": tuple(reversed(RdBu11))}  # points: red a loss, blue a gain


def set_props(model: Any, **values: Any) -> None:
    """Set a Bokeh model's properties that differ (each set is a message to the page)."""
    changed = {k: v for k, v in values.items() if getattr(model, k) != v}
    if changed:
        model.update(**changed)


GRID_SAMPLES = 18
"""Simulated flicks per heat-map cell (each cell shows its count and 95% interval on hover)."""
MAP_PIECE_CELLS = 2
"""Cells worked out per step of the map: a superseded map stops after at most this many cells (36 flicks)."""
GRID_SPEEDS = (0.4, 0.8, 1.2, 1.6, 2.0, 2.4)
GRID_DIRECTIONS = tuple(float(d) for d in range(-75, 76, 15))
GRID_HEADINGS = tuple(float(d) for d in range(0, 360, 30))
MUTED = {"color": "#6b7280", "font-size": "12px"}
BOT_PAUSE_S = 0.3
"""A person sees the board before the computer flicks."""


class OddsPanel(pn.viewable.Viewer):
    """The odds of the aimed flick (a first estimate, then refined, with progress) and the heat map of the
    caging odds over direction x speed, which aims the flick at the cell clicked.

    One async run per change of the battle or the proposal works out the odds first (a new aim's first
    estimate never waits for the map), then the map, in pieces; a re-aim keeps the cells already mapped for
    the same die, spot, face and aim noise, so the map resumes where it stopped. What is shown is bound to
    this panel's parameters, so a step of the work changes a text or a data source, never a whole pane."""

    session = param.ClassSelector(class_=ZooSession)
    arena = param.ClassSelector(class_=Arena)
    odds = param.Parameter(default=None, doc="FlickOdds of the aimed flick (possibly a first estimate).")
    busy = param.Boolean(default=False, doc="The odds are being estimated or refined.")
    why_no_odds = param.String(default="", doc="Why there are no odds now ('' when there are).")
    grid = param.Parameter(default=None, doc="DataFrame of caging odds over direction x speed, as far as mapped.")
    mapped = param.Integer(default=0, doc="Cells of the heat map worked out so far.")
    cells = param.Integer(default=0, doc="Cells of the heat map being worked out (0: no map now).")
    why_not = param.String(default="", doc="Why there is no heat map now ('' when there is one).")
    measure = param.Selector(default="caging", objects={"Caging odds": "caging", "Expected points": "points"},
                             doc="What the heat map shows in a Points Battle (a Cage Battle shows the caging odds).")
    background = param.Boolean(default=True, doc="Work out the odds and the map as the aim changes (off: tests "
                               "and benchmarks run ``_estimate`` and ``_map`` themselves).")
    shared = param.ClassSelector(class_=SharedWork, doc="Where the work is done once for every page that shows "
                                 "this battle (a table's, for all its pages; by default this page's own).")

    def __init__(self, **params: Any) -> None:
        if params.get("shared") is None:
            params["shared"] = SharedWork()
        super().__init__(**params)
        s, a = self.session, self.arena
        self._rows: tuple[Any, list[pd.DataFrame]] = (None, [])  # the map's pieces so far, for one map key
        self._runs = Superseding()
        self._drawing: set[Any] = set()
        live = a.live
        deps = [a.param.shown, *(live.param[k] for k in PROPOSAL), live.param.aim_angle_sd, live.param.aim_speed_sd,
                live.param.round_result, live.param.seats, a.param.animating]  # a move counts once the arena shows it
        self._work = pn.panel(pn.bind(self._run, *deps), defer_load=True) if self.background else pn.pane.HTML("")
        # Hidden while idle, not removed: to show or remove a pane lays the page out again (~90 ms in the browser).
        self.progress = pn.indicators.Progress(
            value=pn.bind(lambda o: 0 if o is None else o.samples, self.param.odds), max=sum(ODDS_CHUNKS),
            active=self.param.busy, height=12, sizing_mode="stretch_width", margin=(0, 4),
            styles=pn.bind(lambda b: {"visibility": "visible" if b else "hidden"}, self.param.busy))
        self.text = pn.pane.HTML(pn.bind(self._odds_text, self.param.odds, self.param.busy, self.param.why_no_odds),
                                 sizing_mode="stretch_width", margin=(0, 4), name="odds")
        self.measure_choice = pn.widgets.RadioButtonGroup.from_param(
            self.param.measure, label="Heat map", margin=(4, 10),
            visible=pn.bind(lambda *_: self.session.state.game.mode == "points", a.param.shown))
        self._build_heat()
        self.param.watch(lambda *_e: self._on_page(self.draw_heat), ["grid", "mapped", "cells", "why_not", "measure"])
        s.param.watch(lambda *_e: self._on_page(self.draw_mark), ["direction", "speed", "spot", "version"])
        s.param.watch(lambda *_e: self.shared.moved_on((s.game_number, s.version)), ["version"])

    def _on_page(self, fn: Any) -> None:
        """Run ``fn`` under this page's document lock, served on its next tick (results come from async tasks;
        another page's click may set the aim), once for all asks before it runs (a move changes several inputs)."""
        if fn in self._drawing:  # asked for already, not yet run
            return
        self._drawing.add(fn)

        def draw() -> None:
            self._drawing.discard(fn)
            fn()

        in_turn(draw, self.heat.document)

    def _odds_text(self, odds: FlickOdds | None, busy: bool, why: str) -> str:
        return views.odds_html(odds, busy, why, points=self.session.state.game.mode == "points")

    async def _run(self, *_deps: Any) -> AsyncIterator[Any]:
        """The work of one moment of the battle: the odds, then the map (cancelled when superseded)."""
        self._runs.start()
        if self._map_key() != self._rows[0] or self.why_not:  # the map shown is not this moment's: withdrawn
            in_turn(partial(self.param.update, grid=None, mapped=0, cells=0, why_not=""))
        try:
            await self._estimate()
            await self._map()
        except asyncio.CancelledError:
            raise
        except RunStopped:  # a move ended this battle: the run for the next one follows
            return
        except Exception as exc:  # the page must hear of it: a silent "estimating" would never end
            in_turn(partial(self.param.update, busy=False, why_no_odds=f"The odds failed: {exc!r}", cells=0,
                            why_not=f"The map failed: {exc!r}"))
        return
        yield  # an async generator that shows nothing itself: the panes bound to the results do

    # --- the odds ---------------------------------------------------------------------------------------------
    async def _estimate(self) -> None:
        """The odds of the proposed flick, from 50 simulated flicks, refined to 500 (or why there are none)."""
        s = self.session
        why = views.why_no_odds(s, not self.arena.settled())
        if why:
            in_turn(partial(self.param.update, odds=None, busy=False, why_no_odds=why))
            return
        flick, noise, state = s.proposed_flick(), s.noise(), s.state.clone()
        assert flick is not None
        in_turn(partial(self.param.update, odds=None, busy=True, why_no_odds=""))
        jobs = noisy_jobs(flick, noise, sum(ODDS_CHUNKS), make_rng(0))
        samples: list[Any] = []
        start = 0
        battle, key = (s.game_number, s.version), (str(flick), s.aim_angle_sd, s.aim_speed_sd)
        rehearsal = s.rehearsal()
        if rehearsal is not None:  # the flick itself first, once for the table: its commit then needs no physics
            s.rehearse(await self.shared.get(battle, ("rehearsal", str(flick)), s.rehearse, rehearsal))
        try:
            for k, n in enumerate(ODDS_CHUNKS):
                samples += await self.shared.get(battle, ("odds", *key, k), run_samples, state,
                                                 jobs[start:start + n], 1, self.shared.stop_of(battle))
                start += n
                in_turn(partial(self.param.update, odds=summarise(flick, noise, samples),
                                busy=k < len(ODDS_CHUNKS) - 1))
        finally:
            if self._runs.current():  # a cancelled run's end must not stop the spinner of the run after it
                in_turn(partial(setattr, self, "busy", False))

    def odds_for(self, flick_text: str) -> FlickOdds | None:
        """The odds shown, when they are for that very flick."""
        odds = self.odds
        return odds if isinstance(odds, FlickOdds) and odds.flick == flick_text else None

    # --- the heat map -----------------------------------------------------------------------------------------
    def _map_key(self) -> Any:
        """What the map depends on: the battle, the die, its spot, face, strike and ability, the aim noise (not the
        aim)."""
        s = self.session
        f = s.proposed_flick()
        return None if f is None else (s.game_number, s.version, f.die, f.rail, f.along, f.face, f.ability,
                                       f.strike, s.aim_angle_sd, s.aim_speed_sd)

    async def _map(self) -> None:
        """The caging odds of the proposed flick re-aimed over the grid, a piece at a time (or why there are none)."""
        s = self.session
        why = views.why_no_odds(s, not self.arena.settled())
        flick = s.proposed_flick()
        if not why and (flick is None or s.proposal_problem(ignore_aim=True) is not None):
            why = views.why_no_odds(s, False) or "Choose where to flick from."
        if why:
            in_turn(partial(self.param.update, grid=None, mapped=0, cells=0, why_not=why))
            return
        assert flick is not None
        dirs = GRID_HEADINGS if flick.rail == "here" else GRID_DIRECTIONS
        pieces = [(v, list(dirs[i:i + MAP_PIECE_CELLS])) for v in GRID_SPEEDS
                  for i in range(0, len(dirs), MAP_PIECE_CELLS)]
        key = self._map_key()
        battle = key[:2]  # the game's number and version, as _map_key begins: what the shared work keeps pieces of
        if self._rows[0] != key:
            self._rows = (key, [])
        rows = self._rows[1]
        state, noise = s.state.clone(), s.noise()
        done = sum(len(r) for r in rows)
        in_turn(partial(self.param.update, grid=pd.concat(rows, ignore_index=True) if rows else None, mapped=done,
                        cells=len(GRID_SPEEDS) * len(dirs), why_not=""))
        try:
            for k, (speed, part) in enumerate(pieces):
                if k < len(rows):
                    continue  # mapped before a re-aim stopped the map
                piece = await self.shared.get(battle, ("map", key, k), odds_grid, state, flick.with_aim(part[0], speed),
                                              part, [speed], noise, GRID_SAMPLES, k, 1, self.shared.stop_of(battle))
                if self._rows[1] is not rows or len(rows) != k:
                    return  # another run took the map over meanwhile
                rows.append(piece)
                in_turn(partial(self.param.update, grid=pd.concat(rows, ignore_index=True),
                                mapped=sum(len(r) for r in rows)))
        except ValueError as exc:
            in_turn(partial(self.param.update, grid=None, cells=0, why_not=f"This flick cannot be mapped: {exc}."))

    def _build_heat(self) -> None:
        heat = figure(width=420, height=260, x_range=(-82.5, 82.5), y_range=(0.2, 2.6), tools="",
                      toolbar_location=None, name="heatmap", x_axis_label="direction (degrees from straight in)",
                      y_axis_label="speed (m/s)", title="Caging odds by aim")
        self._heat_src = ColumnDataSource(views.heat_data(None))
        self._heat_mark = ColumnDataSource({"x": [], "y": []})
        self.mapper = LinearColorMapper(palette=PALETTES["caging"], low=0, high=1)
        cells = heat.rect(x="direction", y="speed", width="w", height="h", source=self._heat_src,
                          fill_color={"field": "p", "transform": self.mapper}, line_color="#ffffff",
                          name="heatmap_cells")
        self.hover = HoverTool(renderers=[cells], tooltips=TOOLTIPS["caging"])
        heat.add_tools(self.hover)
        heat.text(x="direction", y="speed", text="text", source=self._heat_src, text_align="center",
                  text_baseline="middle", text_font_size="9px", text_color="tc")
        heat.scatter(x="x", y="y", source=self._heat_mark, marker="x", size=16, line_color="#dc2626", line_width=3)
        heat.grid.visible = False
        # A click reaches Python as a change of a source the browser writes, as the arena's do (apps.gestures): in
        # a notebook a Python callback of a Bokeh event drops the widget changes sent in the same message.
        self.heat_click = gesture_source()
        take_clicks(heat, self.heat_click, self._on_heat_click)
        # The title is shown by a caption above the map, which wraps: a Bokeh title is one line, and the long ones
        # (how far the mapping is, why there is no map) were cut off at the figure's edge. The figure keeps its
        # title's text (what the map is, for a reader of the model) but does not draw it.
        heat.title.visible = False
        self.heat = heat
        self.heat_caption = pn.pane.HTML(heat_caption(heat.title.text), width=heat.width, margin=(6, 5, 0, 5),
                                         name="heat-title")
        self._heat_pane = pn.pane.Bokeh(heat)

    def shown_measure(self) -> str:
        """What the heat map shows: the choice in a Points Battle; the caging odds where points do not count."""
        return self.measure if self.session.state.game.mode == "points" else "caging"

    def draw_heat(self) -> None:
        s = self.session
        here = s.spot == "here"
        measure = self.shown_measure()
        low, high = views.heat_scale(self.grid, measure)
        set_props(self.mapper, palette=PALETTES[measure], low=low, high=high)
        set_props(self.hover, tooltips=TOOLTIPS[measure])
        self._heat_src.data = views.heat_data(self.grid, 30.0 if here else 15.0, measure=measure)
        title = views.heat_title(self.grid, self.why_not, self.mapped, self.cells, measure)
        if title != self.heat.title.text:
            self.heat.title.text = title
            self.heat_caption.object = heat_caption(title)
        self.heat.x_range.update(start=-15, end=345) if here else self.heat.x_range.update(start=-82.5, end=82.5)
        self.heat.xaxis.axis_label = "heading (degrees, 0 = east)" if here else "direction (degrees from straight in)"
        self.draw_mark()

    def draw_mark(self) -> None:
        s = self.session
        aimed = self.grid is not None and s.proposal_problem() is None and s.spot != "here"
        self._heat_mark.data = {"x": [s.direction], "y": [s.speed]} if aimed else {"x": [], "y": []}

    def _on_heat_click(self, _kind: str, x: float, y: float, *_end: float) -> None:
        """A click on the map the browser wrote into ``heat_click``: aim there, as a click on the page."""
        on_page(partial(self.heat_tap, x, y), self.session)(None)

    def heat_tap(self, x: float, y: float) -> bool:
        """Aim at the heat-map cell clicked."""
        grid = self.grid
        if grid is None or len(grid) == 0 or not self.arena.settled():
            return False
        if self.arena.may_act is not None and not self.arena.may_act():
            return False
        k = int(((grid["direction"] - x) ** 2 / 100.0 + (grid["speed"] - y) ** 2 / 0.04).idxmin())
        return self.session.propose_flick(float(grid["direction"][k]), float(grid["speed"][k]))

    def __panel__(self) -> pn.viewable.Viewable:
        return pn.Column(self.progress, self.text, self.measure_choice, self.heat_caption, self._heat_pane, self._work,
                         sizing_mode="stretch_width")


def heat_caption(title: str) -> str:
    """The heat map's title as the caption over it shows it (escaped: it may quote a player's name)."""
    return (f"<div class='heat-title' style='font-weight:600;font-size:13px;line-height:1.3'>{html.escape(title)}"
            "</div>")


class BotPlayer(pn.viewable.Viewer):
    """Plays the bots' seats: when a bot is to move (and no flick is playing out, no result waits to be seen),
    it thinks on a copy of the battle in a worker thread, then plays its move on the page's tick."""

    session = param.ClassSelector(class_=ZooSession)
    arena = param.ClassSelector(class_=Arena)
    active = param.Boolean(default=True, doc="Let the bots play their seats.")
    thinking = param.Boolean(default=False, doc="A bot is working out its move.")
    error = param.String(default="", doc="Why the bot failed, if it did.")
    background = param.Boolean(default=True, doc="Play the bots as the game goes (off: tests run ``_turn``).")

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        a = self.arena
        self._work = pn.panel(pn.bind(self._turn, a.param.shown, a.live.param.seats, a.live.param.round_result,
                                      a.param.animating, self.param.active), defer_load=True
                              ) if self.background else pn.pane.HTML("")
        self._view = pn.pane.HTML(pn.bind(self._said, self.param.thinking, self.param.error), styles=MUTED,
                                  margin=(0, 10))
        self._runs = Superseding()

    def _said(self, thinking: bool, error: str) -> str:
        if error:
            return f"<p style='color:#b91c1c'>{html.escape(error)}</p>"
        return f"<p>{html.escape(self.session.state.describe_player())} (the computer) is thinking…</p>" if thinking \
            else ""

    async def _turn(self, *_deps: Any) -> AsyncIterator[Any]:
        """The bot's move, once the arena shows the battle as it is: thought out in a worker thread, played on
        the page's tick (refused there if the battle moved on meanwhile)."""
        s = self.session
        self._runs.start()
        version = s.version
        if not (self.active and s.bot_to_move()) or not self.arena.settled() or s.round_result is not None:
            return
        in_turn(partial(setattr, self, "thinking", True))
        try:
            await asyncio.sleep(BOT_PAUSE_S)
            state, rng, bot = s.state.clone(), s.rng, s.new_bot()
            choice = await asyncio.to_thread(s.think, state, version, rng, bot)
        except asyncio.CancelledError:
            raise
        except RunStopped:  # a move ended this battle: the run for the next one follows
            return
        except Exception as exc:  # the page must hear of it: a bot that never moves looks like a hang
            in_turn(partial(setattr, self, "error", f"The computer player failed: {exc!r}"))
            return
        finally:
            if self._runs.current():
                in_turn(partial(setattr, self, "thinking", False))
        if s.version == version and self._runs.current():
            in_turn(partial(s.play_bot, choice))
        return
        yield  # an async generator that shows nothing itself: ``thinking`` is shown

    def __panel__(self) -> pn.viewable.Viewable:
        return pn.Column(self._view, self._work, margin=0)
