"""The Experiments page in headless Chromium: a small rulings grid started from the page fills in its progress
and its plot, and is downloaded; a run stopped from the page stops."""

from __future__ import annotations

import pytest
from browser_helpers import serve_pages, wait_for
from playwright.sync_api import expect

from apps.experiments import ExperimentsPage

pytestmark = pytest.mark.browser

WAIT = 60_000
POINTS = """(name) => {
  const v = [...Bokeh.index.all_views()].find(v => v.model.name === name && v.frame);
  if (!v) return 0;
  let n = 0;
  for (const r of v.model.renderers) {
    const d = r.data_source ? r.data_source.data : null;
    const get = (k) => d instanceof Map ? d.get(k) : (d ? d[k] : undefined);
    const xs = get("estimate");
    if (xs !== undefined) n += xs.length;
  }
  return n;
}"""


def test_a_small_sweep_fills_in_its_progress_and_plot_and_downloads(page, serve_app, console_errors, server_errors,
                                                                   tmp_path):
    url, pages = serve_pages(serve_app, ExperimentsPage, game=False)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(url)
    expect(page.get_by_role("button", name="Start")).to_be_visible(timeout=WAIT)
    wait_for(lambda: pages, page)
    view = pages[0]
    box = page.get_by_label("Games a cell")
    box.fill("2000")
    box.press("Enter")
    wait_for(lambda: view._settings["kzin-rulings"]["games"].value == 2000, page, timeout=WAIT / 1000)
    page.get_by_role("button", name="Start").click()
    expect(page.get_by_text("Done: 8 cells.")).to_be_visible(timeout=WAIT)
    expect(page.get_by_text("16,000 of 16,000 games")).to_be_visible(timeout=WAIT)
    # The plot holds a point for each of the 8 cells (a layer for each policy).
    page.wait_for_function(f"() => ({POINTS})('experiment-plot') == 8", timeout=WAIT)
    assert len(view.rows) == 8
    with page.expect_download() as download:
        page.get_by_role("button", name="Download the table").click()
    saved = tmp_path / "table.csv"
    download.value.save_as(saved)
    assert len(saved.read_text().strip().splitlines()) == 1 + 8
    page.screenshot(path=str(tmp_path / "experiments.png"), full_page=True)
    assert console_errors == [] and server_errors == []


def test_a_run_stopped_from_the_page_stops(page, serve_app, console_errors, server_errors):
    url, pages = serve_pages(serve_app, ExperimentsPage, game=False)
    page.goto(url)
    expect(page.get_by_role("button", name="Start")).to_be_visible(timeout=WAIT)
    wait_for(lambda: pages, page)
    view = pages[0]
    box = page.get_by_label("Games a cell")
    box.fill("5000000")
    box.press("Enter")
    wait_for(lambda: view._settings["kzin-rulings"]["games"].value == 5_000_000, page, timeout=WAIT / 1000)
    page.get_by_role("button", name="Start").click()
    wait_for(lambda: view.running, page, timeout=WAIT / 1000)
    page.get_by_role("button", name="Stop").click()
    expect(page.get_by_text("Stopped after")).to_be_visible(timeout=WAIT)
    wait_for(lambda: not view.running, page, timeout=WAIT / 1000)
    assert len(view.rows) < 8
    assert console_errors == [] and server_errors == []


def test_the_man_kzin_wars_page_links_the_rulings_and_the_address_picks_the_run(page, serve_app, console_errors):
    from apps import discover_games, server

    games = discover_games()
    url = serve_app(server.routes(games), title=server.titles(games))
    page.goto(url + "kzin")
    link = page.get_by_role("link", name="Compare the rulings' win rates")
    expect(link).to_have_attribute("href", "/experiments?run=kzin-rulings", timeout=WAIT)
    link.click()
    expect(page.get_by_label("Games a cell")).to_be_visible(timeout=WAIT)
    page.goto(url + "experiments?run=zoo-odds-map")
    expect(page.get_by_label("Flicks a cell")).to_be_visible(timeout=WAIT)
    assert console_errors == []
