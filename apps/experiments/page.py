"""The Experiments page: set up one of the large runs, watch it fill in, stop it, download its table.

The run goes to a worker thread with ``asyncio.to_thread`` from an async click handler, which Panel runs on the
page's event loop; the thread hands its rows and progress back through an ``asyncio.Queue`` filled with
``loop.call_soon_threadsafe``, so every change of the page's parameters happens on the page's own loop. A
closed tab stops the run (``pn.state.on_session_destroyed``); a started Dask cluster closes with it.
"""

from __future__ import annotations

import asyncio
import io
import threading
from collections.abc import Callable
from typing import Any

import holoviews as hv
import pandas as pd
import panel as pn
import param

from apps._files import NO_HTML
from apps.plotting import use_bokeh
from engine.core.distributed import RunStopped, default_workers
from engine.experiments import (
    EXPERIMENTS,
    KZIN_RULINGS,
    ZOO_MAPS,
    Experiment,
    KF2100Tournament,
    KzinRulings,
    Run,
    ZooOddsMap,
)

PALETTE = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#4b5563", "#ca8a04"]
KINDS = {cls.title: kind for kind, cls in EXPERIMENTS.items()}


def _numbers(text: str, what: str) -> tuple[float, ...]:
    """``"-0.4, 0, 0.4"`` as numbers; anything else is a ValueError naming the field."""
    try:
        values = tuple(float(t) for t in text.replace(";", ",").split(",") if t.strip())
    except ValueError:
        raise ValueError(f"{what}: give numbers separated by commas, not {text!r}") from None
    if not values:
        raise ValueError(f"{what}: give at least one number")
    return values


def points_plot(points: pd.DataFrame, measure: str) -> hv.Overlay:
    """Each cell's estimate with its 95% interval, one colour a series, the cells along the x axis."""
    use_bokeh()
    layers: list[Any] = []
    series = list(dict.fromkeys(points["series"])) if len(points) else []
    for k, name in enumerate(series):
        part = points[points["series"] == name]
        colour = PALETTE[k % len(PALETTE)]
        bars = pd.DataFrame({"label": part["label"], "estimate": part["estimate"],
                             "below": part["estimate"] - part["low"], "above": part["high"] - part["estimate"]})
        layers.append(hv.ErrorBars(bars, "label", ["estimate", "below", "above"]).opts(color=colour, line_width=2))
        layers.append(hv.Scatter(part, "label", ["estimate", "low", "high", "series"], label=str(name)).opts(
            color=colour, size=9, tools=["hover"]))
    if not layers:
        layers.append(hv.Scatter(pd.DataFrame({"label": ["(no cell yet)"], "estimate": [0.0]}), "label",
                                 "estimate").opts(alpha=0))
    return hv.Overlay(layers).opts(responsive=True, height=380, xrotation=25, ylabel=measure, xlabel="",
                                   legend_position="top_left", show_grid=True, toolbar="above")


class ExperimentsPage(pn.viewable.Viewer):
    """One experiment at a time: its settings, Start and Stop, the progress, the plot, the table, the download."""

    experiment = param.Selector(objects=list(EXPERIMENTS), default=KzinRulings.kind)
    running = param.Boolean(default=False)
    rows = param.List(default=[], doc="The finished cells' rows so far (the engine's tidy rows).")
    done = param.Integer(default=0)
    total = param.Integer(default=1)
    status = param.String(default="")
    dashboard_link = param.String(default="")

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self._stop: threading.Event | None = None
        self._running: Experiment | None = None
        self._frame: pd.DataFrame | None = None
        self.chooser = pn.widgets.RadioButtonGroup(options=KINDS, value=self.experiment, button_type="light",
                                                   name="experiment")
        self.chooser.link(self, value="experiment")
        self.workers = pn.widgets.IntInput(name="Worker processes (1: this process)", value=1, start=1,
                                           end=max(1, default_workers()), width=200)
        self.scheduler = pn.widgets.TextInput(name="Dask scheduler (optional)", placeholder="tcp://host:8786",
                                              width=220)
        self._settings: dict[str, dict[str, pn.widgets.Widget]] = {
            KzinRulings.kind: {
                "rulings": pn.widgets.MultiChoice(name="Rulings to compare (each on and off)",
                                                  options=list(KZIN_RULINGS),
                                                  value=["reshuffle", "fallback_discards_conquest"], width=420),
                "policies": pn.widgets.MultiChoice(name="Policies", options=["all-in", "defend-only", "never-fight",
                                                                             "threshold", "expert"],
                                                   value=["all-in", "threshold"], width=420),
                "games": pn.widgets.IntInput(name="Games a cell", value=20_000, start=100, end=10_000_000, step=10_000,
                                             width=160),
                "seed": pn.widgets.IntInput(name="Seed", value=0, start=0, width=120)},
            KF2100Tournament.kind: {
                "scenarios": pn.widgets.MultiChoice(name="Scenarios", options=["basic", "advanced", "solo"],
                                                    value=["basic"], width=300),
                "terminators": pn.widgets.MultiChoice(name="Terminator bots", options=self._kf2100_bots(),
                                                      value=["heuristic"], width=300),
                "clone_masters": pn.widgets.MultiChoice(name="Clone Master bots", options=self._kf2100_bots(),
                                                        value=["heuristic", "random"], width=300),
                "games": pn.widgets.IntInput(name="Games a pairing", value=20, start=1, end=100_000, width=160),
                "seed": pn.widgets.IntInput(name="Seed", value=0, start=0, width=120)},
            ZooOddsMap.kind: {
                "map": pn.widgets.Select(name="Map", options=list(ZOO_MAPS), value="cage", width=140),
                "directions": pn.widgets.TextInput(name="Directions (radians)", value="-0.4, -0.2, 0, 0.2, 0.4",
                                                   width=260),
                "speeds": pn.widgets.TextInput(name="Speeds (m/s)", value="0.8, 1.2, 1.6", width=200),
                "samples": pn.widgets.IntInput(name="Flicks a cell", value=30, start=1, end=100_000, width=140),
                "seed": pn.widgets.IntInput(name="Seed (the position and the flicks)", value=3, start=0, width=200)},
        }
        self.start = pn.widgets.Button(name="Start", button_type="primary", width=110)
        self.stop = pn.widgets.Button(name="Stop", button_type="warning", width=110, disabled=True)
        self.start.on_click(self._start)
        self.stop.on_click(self._ask_stop)
        self.download = pn.widgets.FileDownload(callback=self._csv, filename="experiment.csv",
                                                label="Download the table", embed=False, disabled=True, width=200)
        self.progress = pn.indicators.Progress(name="progress", value=0, max=1, width=420, bar_color="primary")
        self.notice = pn.pane.Alert("", alert_type="info", visible=False, renderer_options=NO_HTML,
                                    sizing_mode="stretch_width")
        # A new chart for each row that comes in (a grid has at most a few hundred cells): its categorical axis
        # and its ranges are drawn from the rows it shows, which a DynamicMap started empty would keep.
        self.plot = pn.pane.HoloViews(pn.bind(self._plot, self.param.rows), sizing_mode="stretch_width",
                                      name="experiment-plot")
        # A plain HTML table (pandas escapes every cell): it has no widget of its own to race a fast-filling run.
        self.table = pn.pane.DataFrame(pd.DataFrame(), index=False, max_rows=400, float_format="{:.4g}".format,
                                       sizing_mode="stretch_width", name="experiment-table",
                                       styles={"overflow-x": "auto", "font-size": "13px"})
        if pn.state.curdoc is not None and pn.state.curdoc.session_context is not None:
            pn.state.on_session_destroyed(self._tab_closed)

    @staticmethod
    def _kf2100_bots() -> list[str]:
        from engine.kf2100.tournament import BOTS

        return list(BOTS)

    # --- what the page shows ------------------------------------------------------------------------
    def _plot(self, rows: list[dict[str, Any]]) -> hv.Overlay:
        experiment = self._running or EXPERIMENTS[self.experiment]()
        return points_plot(experiment.points(rows), experiment.measure)

    @param.depends("experiment", "running")
    def _settings_view(self) -> pn.Column:
        widgets = self._settings[self.experiment]
        for w in (*widgets.values(), self.workers, self.scheduler):
            w.disabled = self.running
        doc = (EXPERIMENTS[self.experiment].__doc__ or "").split("\n\n")[0]
        return pn.Column(pn.pane.Markdown(" ".join(doc.split()), margin=(0, 6)),
                         pn.FlexBox(*widgets.values(), self.workers, self.scheduler))

    @param.depends("done", "total", "status", "dashboard_link", "running")
    def _status_view(self) -> pn.Column:
        top = max(self.total, 1)
        if self.progress.max != top:  # the value's bounds follow max: set it first
            self.progress.param.update(value=0, max=top)
        self.progress.param.update(value=min(self.done, top), active=self.running and self.done == 0)
        unit = (self._running or EXPERIMENTS[self.experiment]()).unit
        parts = [pn.Row(self.progress, pn.pane.Str(f"{self.done:,} of {self.total:,} {unit}" if self.total > 1 else "",
                                                     name="progress-text"))]
        if self.status:
            parts.append(pn.pane.Str(self.status, name="status"))
        if self.dashboard_link:
            parts.append(pn.pane.HTML(f'<a href="{_attr(self.dashboard_link)}" target="_blank" rel="noopener">'
                                      "The Dask dashboard of this run</a>"))
        return pn.Column(*parts)

    def __panel__(self) -> pn.viewable.Viewable:
        return pn.Column(
            pn.pane.Markdown("## Experiments\nLarge runs of the three games on Dask (this process, a local cluster "
                             "or a running scheduler), plotted with their 95% intervals as they come in."),
            self.chooser, self._settings_view, pn.Row(self.start, self.stop, self.download), self.notice,
            self._status_view, self.plot, self.table, sizing_mode="stretch_width", name="experiments")

    # --- running ---------------------------------------------------------------------------------------
    def build(self) -> Experiment:
        """The chosen experiment from the settings; a bad setting is a ValueError with its reason."""
        w = {k: v.value for k, v in self._settings[self.experiment].items()}
        if self.experiment == KzinRulings.kind:
            return KzinRulings(tuple(w["rulings"]), tuple(w["policies"]), games=w["games"], seed=w["seed"])
        if self.experiment == KF2100Tournament.kind:
            return KF2100Tournament(tuple(w["scenarios"]), tuple(w["terminators"]), tuple(w["clone_masters"]),
                                    games=w["games"], seed=w["seed"])
        return ZooOddsMap(_numbers(w["directions"], "Directions"), _numbers(w["speeds"], "Speeds"), map=w["map"],
                          samples=w["samples"], seed=w["seed"])

    def _say(self, text: str, level: str = "info") -> None:
        self.notice.param.update(object=text, alert_type=level, visible=bool(text))

    async def _start(self, _event: Any = None) -> None:
        if self.running:
            return
        try:
            experiment = self.build()
        except (ValueError, TypeError) as exc:
            self._say(f"Not started: {exc}.", "warning")
            return
        await self.play(experiment)

    async def play(self, experiment: Experiment) -> pd.DataFrame | None:
        """Run ``experiment`` off the event loop, showing its rows and progress as they come; its table, or None
        when it was stopped or failed (the notice says which)."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

        def push(kind: str) -> Callable[..., None]:
            return lambda *payload: loop.call_soon_threadsafe(queue.put_nowait, (kind, payload))

        self._stop = stop = threading.Event()
        self._running, self._frame = experiment, None
        workers = self.workers.value if isinstance(self.workers.value, int) else 1
        how = Run(workers=workers, scheduler=self.scheduler.value.strip() or None, stop=stop,
                  on_rows=push("rows"), progress=push("progress"), dashboard=push("dashboard"))
        self.param.update(running=True, rows=[], done=0, total=1, dashboard_link="",
                          status=f"Running {experiment.title.lower()}...")
        self.start.disabled, self.stop.disabled, self.download.disabled = True, False, True
        self._say("")
        self.table.object = pd.DataFrame()
        task = asyncio.ensure_future(asyncio.to_thread(experiment.run, how))
        try:
            while not task.done() or not queue.empty():
                getter = asyncio.ensure_future(queue.get())
                await asyncio.wait({task, getter}, return_when=asyncio.FIRST_COMPLETED)
                if not getter.done():
                    getter.cancel()
                    continue
                self._arrived(*getter.result())
            frame = task.result()
        except RunStopped:
            self._say(f"Stopped after {len(experiment.points(self.rows))} of {experiment.cells} cells: the table "
                      "holds the cells that finished.", "warning")
            frame = None
        except Exception as exc:  # the run's own failure: shown, and the page stays usable
            self._say(f"The run failed: {type(exc).__name__}: {exc}", "danger")
            frame = None
        finally:
            self._stop = None
            self.start.disabled, self.stop.disabled = False, True
        if frame is not None:
            self._frame = frame
            self.table.object = frame
            self.param.update(running=False, status=f"Done: {experiment.cells} cells.")
        else:
            self._frame = pd.DataFrame(self.rows)
            self.param.update(running=False, status="")
        self.download.disabled = self._frame is None or self._frame.empty
        return frame

    def _arrived(self, kind: str, payload: tuple[Any, ...]) -> None:
        if kind == "rows":
            self.rows = [*self.rows, *payload[0]]
            self.table.object = pd.DataFrame(self.rows)
        elif kind == "progress":
            self.param.update(done=int(payload[0]), total=int(payload[1]))
        elif kind == "dashboard":
            self.dashboard_link = str(payload[0])

    def _ask_stop(self, _event: Any = None) -> None:
        if self._stop is not None:
            self._stop.set()
            self.status = "Stopping..."

    def _tab_closed(self, _context: Any) -> None:
        if self._stop is not None:
            self._stop.set()

    def _csv(self) -> io.StringIO:
        return io.StringIO("" if self._frame is None else self._frame.to_csv(index=False))


def _attr(text: str) -> str:
    """A URL for an href attribute: only http(s), escaped."""
    import html

    return html.escape(text, quote=True) if text.startswith(("http://", "https://")) else "#"
