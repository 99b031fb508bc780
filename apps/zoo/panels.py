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
from bokeh.events import DoubleTap, Tap
from bokeh.models import ColumnDataSource, HoverTool, LinearColorMapper
from bokeh.plotting import figure

from apps.commands import on_page
from apps.zoo import views
from apps.zoo.arena import PROPOSAL, Arena
from engine.core.rng import make_rng
from engine.zoo.odds import FlickOdds, noisy_jobs, odds_grid, run_samples, summarise
from engine.zoo.session import ZooSession

ODDS_CHUNKS = (50, 90, 90, 90, 90, 90)
"""A first estimate from 50 flicks, refined to 500."""
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
    caging odds over direction x speed, which aims the flick at the cell clicked."""

    session = param.ClassSelector(class_=ZooSession)
    arena = param.ClassSelector(class_=Arena)
    odds = param.Parameter(default=None, doc="FlickOdds of the aimed flick (possibly a first estimate).")
    busy = param.Boolean(default=False, doc="The odds are being estimated or refined.")
    grid = param.Parameter(default=None, doc="DataFrame of caging odds over direction x speed, as far as mapped.")
    mapped = param.Integer(default=0, doc="Cells of the heat map worked out so far.")
    cells = param.Integer(default=0, doc="Cells of the heat map being worked out (0: no map now).")
    why_not = param.String(default="", doc="Why there is no heat map now ('' when there is one).")
    background = param.Boolean(default=True, doc="Work out the odds and the map as the aim changes (off: tests "
                               "and benchmarks run ``_estimate`` and ``_map`` themselves).")

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        s, a = self.session, self.arena
        deps = [s.param.version, *(s.param[k] for k in PROPOSAL), s.param.aim_angle_sd, s.param.aim_speed_sd,
                s.param.round_result, s.param.seats, a.param.animating]
        base = [d for d in deps if d not in (s.param.direction, s.param.speed)]  # a re-aim keeps the map
        if self.background:
            self._odds_view = pn.panel(pn.bind(self._estimate, *deps), defer_load=True, sizing_mode="stretch_width",
                                       name="odds")
            self._map_work = pn.panel(pn.bind(self._map, *base), defer_load=True, sizing_mode="stretch_width")
        else:
            self._odds_view = pn.pane.HTML("", sizing_mode="stretch_width", name="odds")
            self._map_work = pn.pane.HTML("")
        self._build_heat()
        self.param.watch(lambda *_e: pn.state.execute(self.draw_heat), ["grid", "mapped", "cells", "why_not"])
        s.param.watch(lambda *_e: pn.state.execute(self.draw_mark), ["direction", "speed", "spot", "version"])

    # --- the odds ---------------------------------------------------------------------------------------------
    async def _estimate(self, *_deps: Any) -> AsyncIterator[Any]:
        s = self.session
        why = views.why_no_odds(s, self.arena.animating)
        points = s.state.game.mode == "points"
        if why:
            self.param.update(odds=None, busy=False)
            yield pn.pane.HTML(views.odds_html(None, False, why), sizing_mode="stretch_width")
            return
        flick, noise, state = s.proposed_flick(), s.noise(), s.state.clone()
        assert flick is not None
        self.param.update(odds=None, busy=True)
        yield pn.pane.HTML(views.odds_html(None, True, ""), sizing_mode="stretch_width")
        jobs = noisy_jobs(flick, noise, sum(ODDS_CHUNKS), make_rng(0))
        samples: list[Any] = []
        start = 0
        try:
            for k, n in enumerate(ODDS_CHUNKS):
                samples += await asyncio.to_thread(run_samples, state, jobs[start:start + n], 1)
                start += n
                odds = summarise(flick, noise, samples)
                last = k == len(ODDS_CHUNKS) - 1
                self.param.update(odds=odds, busy=not last)
                yield pn.Column(
                    pn.indicators.Progress(value=len(samples), max=sum(ODDS_CHUNKS), active=not last, height=12,
                                           sizing_mode="stretch_width", margin=(0, 4), visible=not last),
                    pn.pane.HTML(views.odds_html(odds, not last, "", points), sizing_mode="stretch_width"),
                    sizing_mode="stretch_width")
        except Exception as exc:  # the page must hear of it: a silent "estimating" would never end
            self.busy = False
            yield pn.pane.HTML(f"<p>The odds failed: {html.escape(repr(exc))}</p>", styles={"color": "#b91c1c"})

    def odds_for(self, flick_text: str) -> FlickOdds | None:
        """The odds shown, when they are for that very flick."""
        odds = self.odds
        return odds if isinstance(odds, FlickOdds) and odds.flick == flick_text else None

    # --- the heat map -----------------------------------------------------------------------------------------
    async def _map(self, *_deps: Any) -> AsyncIterator[Any]:
        s = self.session
        why = views.why_no_odds(s, self.arena.animating)
        flick = s.proposed_flick()
        if not why and (flick is None or s.proposal_problem(ignore_aim=True) is not None):
            why = views.why_no_odds(s, False) or "Choose where to flick from."
        if why:
            self.param.update(grid=None, mapped=0, cells=0, why_not=why)
            yield pn.pane.HTML("")
            return
        assert flick is not None
        dirs = GRID_HEADINGS if flick.rail == "here" else GRID_DIRECTIONS
        pieces = [(v, list(dirs[i:i + MAP_PIECE_CELLS])) for v in GRID_SPEEDS for i in range(0, len(dirs),
                                                                                        MAP_PIECE_CELLS)]
        cells = len(GRID_SPEEDS) * len(dirs)
        state, noise = s.state.clone(), s.noise()
        self.param.update(grid=None, mapped=0, cells=cells, why_not="")
        rows: list[pd.DataFrame] = []
        try:
            for k, (speed, part) in enumerate(pieces):
                rows.append(await asyncio.to_thread(odds_grid, state, flick.with_aim(part[0], speed), part, [speed],
                                                    noise, GRID_SAMPLES, k, 1))
                self.param.update(grid=pd.concat(rows, ignore_index=True), mapped=sum(len(r) for r in rows))
        except ValueError as exc:
            self.param.update(grid=None, cells=0, why_not=f"This flick cannot be mapped: {exc}.")
        yield pn.pane.HTML("")

    def _build_heat(self) -> None:
        heat = figure(width=420, height=260, x_range=(-82.5, 82.5), y_range=(0.2, 2.6), tools="",
                      toolbar_location=None, name="heatmap", x_axis_label="direction (degrees from straight in)",
                      y_axis_label="speed (m/s)", title="Caging odds by aim")
        self._heat_src = ColumnDataSource(views.heat_data(None))
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
        s = self.session
        heat.on_event(Tap, lambda ev: on_page(partial(self.heat_tap, ev.x, ev.y), s)(ev))
        heat.on_event(DoubleTap, lambda ev: on_page(partial(self.heat_tap, ev.x, ev.y), s)(ev))
        self.heat = heat
        self._heat_pane = pn.pane.Bokeh(heat)

    def draw_heat(self) -> None:
        s = self.session
        here = s.spot == "here"
        self._heat_src.data = views.heat_data(self.grid, 30.0 if here else 15.0)
        self.heat.title.text = views.heat_title(self.grid, self.why_not, self.mapped, self.cells)
        self.heat.x_range.update(start=-15, end=345) if here else self.heat.x_range.update(start=-82.5, end=82.5)
        self.heat.xaxis.axis_label = "heading (degrees, 0 = east)" if here else "direction (degrees from straight in)"
        self.draw_mark()

    def draw_mark(self) -> None:
        s = self.session
        aimed = self.grid is not None and s.proposal_problem() is None and s.spot != "here"
        self._heat_mark.data = {"x": [s.direction], "y": [s.speed]} if aimed else {"x": [], "y": []}

    def heat_tap(self, x: float, y: float) -> bool:
        """Aim at the heat-map cell clicked."""
        grid = self.grid
        if grid is None or len(grid) == 0 or self.arena.animating:
            return False
        k = int(((grid["direction"] - x) ** 2 / 100.0 + (grid["speed"] - y) ** 2 / 0.04).idxmin())
        return self.session.propose_flick(float(grid["direction"][k]), float(grid["speed"][k]))

    def __panel__(self) -> pn.viewable.Viewable:
        return pn.Column(self._odds_view, self._heat_pane, self._map_work, sizing_mode="stretch_width")


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
        s = self.session
        self._view = pn.panel(pn.bind(self._turn, s.param.version, s.param.seats, s.param.round_result,
                                      self.arena.param.animating, self.param.active), defer_load=True
                              ) if self.background else pn.pane.HTML("")

    async def _turn(self, version: int, *_deps: Any) -> AsyncIterator[Any]:
        s = self.session
        if not (self.active and s.bot_to_move()) or self.arena.animating or s.round_result is not None:
            yield pn.pane.HTML("")
            return
        who = s.state.describe_player()
        yield pn.pane.HTML(f"<p>{html.escape(who)} (the computer) is thinking…</p>", styles=MUTED)
        self.thinking = True
        try:
            await asyncio.sleep(BOT_PAUSE_S)
            state, rng, bot = s.state.clone(), s.rng, s.new_bot()
            choice = await asyncio.to_thread(s.think, state, version, rng, bot)
        except Exception as exc:
            self.error = f"The computer player failed: {exc!r}"
            yield pn.pane.HTML(html.escape(self.error), styles={"color": "#b91c1c"})
            return
        finally:
            self.thinking = False
        if s.version == version:
            pn.state.execute(partial(s.play_bot, choice), schedule=True)
        yield pn.pane.HTML("")

    def __panel__(self) -> pn.viewable.Viewable:
        return self._view
