"""The experiments a view sets up: settings checked before any game, rows handed over as cells finish, the
plot's points read from the engine's own tables, and the page running one off its event loop."""

from __future__ import annotations

import asyncio
import threading

import pandas as pd
import pytest

from apps.experiments.page import ExperimentsPage, points_plot
from engine.core import wilson_interval
from engine.core.distributed import RunStopped
from engine.experiments import EXPERIMENTS, KF2100Tournament, KzinRulings, Run, ZooOddsMap
from engine.kzin.sweep import grid


@pytest.mark.parametrize("make, reason", [
    (lambda: KzinRulings(()), "at least one ruling"),
    (lambda: KzinRulings(("start_space",)), "unknown ruling 'start_space'"),
    (lambda: KzinRulings(("reshuffle", "reshuffle")), "chosen twice"),
    (lambda: KzinRulings(policies=("cheat",)), "unknown policy 'cheat'"),
    (lambda: KzinRulings(games=10), "games must be a whole number from 100"),
    (lambda: KzinRulings(games=2.5e4), "games must be a whole number"),
    (lambda: KF2100Tournament(("moon",)), "moon"),
    (lambda: KF2100Tournament(terminators=()), "one bot for each side"),
    (lambda: KF2100Tournament(clone_masters=("oracle",)), "unknown bot 'oracle'"),
    (lambda: ZooOddsMap(map="heat"), "unknown map 'heat'"),
    (lambda: ZooOddsMap(speeds=(float("nan"),)), "not a number"),
    (lambda: ZooOddsMap(directions=tuple(range(30)), speeds=tuple(range(1, 30))), "at most 400 cells"),
    (lambda: ZooOddsMap(samples=0), "samples must be"),
])
def test_a_bad_setting_is_refused_with_its_reason_before_any_game(make, reason):
    with pytest.raises(ValueError, match=reason):
        make()


def test_the_rulings_grid_hands_over_every_cell_and_its_points_are_the_grids_own_figures():
    experiment = KzinRulings(("reshuffle", "fallback_discards_conquest"), ("all-in",), games=3000, seed=4)
    rows: list[dict] = []
    progress: list[tuple[int, int]] = []
    frame = experiment.run(Run(on_rows=rows.extend, progress=lambda d, t: progress.append((d, t))))
    assert len(rows) == experiment.cells == 4 and progress[-1] == (12_000, 12_000)
    # The same cells from the engine's own grid, called directly: the experiment adds nothing of its own.
    direct = grid({"reshuffle": (False, True), "fallback_discards_conquest": (False, True)}, ("all-in",),
                  games=3000, seed=4)
    pd.testing.assert_frame_equal(frame.drop(columns="seconds", errors="ignore"),
                                  direct.drop(columns="seconds", errors="ignore"))
    points = experiment.points(rows).set_index("label")
    for _, row in frame.iterrows():
        label = (f"reshuffle {'on' if row['reshuffle'] else 'off'}, "
                 f"fallback discards conquest {'on' if row['fallback_discards_conquest'] else 'off'}")
        low, high = wilson_interval(int(row["wins"]), 3000)
        assert points.loc[label, "estimate"] == row["wins"] / 3000
        assert (points.loc[label, "low"], points.loc[label, "high"]) == pytest.approx((low, high))


def test_a_tournaments_points_are_each_sides_win_rate():
    experiment = KF2100Tournament(games=3, seed=2)
    rows: list[dict] = []
    frame = experiment.run(Run(on_rows=rows.extend))
    points = experiment.points(rows)
    assert list(points["series"]) == list(frame["side"]) and len(points) == experiment.cells == 2
    assert list(points["estimate"]) == list(frame["wins"] / 3)


def test_a_stopped_experiment_stops():
    stop = threading.Event()
    stop.set()
    with pytest.raises(RunStopped):
        KzinRulings(games=100).run(Run(stop=stop))


def test_every_experiment_has_a_default_that_checks_and_a_plot_of_no_rows():
    for kind, cls in EXPERIMENTS.items():
        experiment = cls()
        assert experiment.kind == kind and experiment.cells >= 1
        points_plot(experiment.points([]), experiment.measure)


@pytest.mark.no_event_loop  # asyncio.run needs a thread without Playwright's running loop
def test_the_page_runs_an_experiment_and_keeps_its_table_and_says_why_it_would_not_start():
    page = ExperimentsPage()
    page.__panel__()
    page._settings["kzin-rulings"]["games"].value = 500
    asyncio.run(page._start())
    assert page.status == "Done: 8 cells." and len(page.rows) == 8 and page.done == page.total == 4000
    table = pd.read_csv(page._csv())
    assert len(table) == 8 and set(table["policy"]) == {"all-in", "threshold"}
    assert not page.download.disabled and not page.start.disabled and page.stop.disabled
    page.experiment = "zoo-odds-map"
    page._settings["zoo-odds-map"]["speeds"].value = "1.2, fast"
    asyncio.run(page._start())
    assert page.notice.visible and "Speeds: give numbers" in page.notice.object and not page.running
