"""The three dashboards live in a notebook: a real JupyterLab (``dojo lab``'s command line) runs
``tests/notebooks/live_dashboards.ipynb`` in headless Chromium, with every host but 127.0.0.1 blocked, and the
tests click a Man-Kzin Wars card and decision, a Kung Fu 2100 figure and a Kung-Fu Zoo flick, then check that
each chart and board the click concerns changes in the browser.

The game runs in the notebook's kernel, not in the test process, so every check reads the page: the text
Panel shows and the data of the Bokeh figures in the browser (``Bokeh.index``), found by figure name. A
screenshot of the notebook after each dashboard's test goes to ``/tmp/jupyter_shots/``.
"""

from __future__ import annotations

import math
import re
import time
from pathlib import Path

import pytest
from browser_helpers import BOARD_READY, block_other_hosts, drag_data, to_page
from playwright.sync_api import expect

from apps.zoo import adapter as za
from engine.zoo.session import DRAG_MM_PER_M_S

pytestmark = pytest.mark.browser

NOTEBOOK = "live_dashboards.ipynb"
CELL = {"kzin": 1, "kf2100": 2, "zoo": 3}  # the notebook's cell that shows each dashboard
WAIT = 30_000  # ms: the machine is shared and a notebook's kernel does the dashboards' background work too
SHOTS = Path("/tmp/jupyter_shots")

FIGURE_DATA = """(name) => {
  const v = [...Bokeh.index.all_views()].find(v => v.model.name === name && v.frame);
  if (!v) return null;
  const data = v.model.renderers.filter(r => r.data_source).map(r => {
    const d = r.data_source.data;
    const entries = d instanceof Map ? [...d] : Object.entries(d);
    return Object.fromEntries(entries.map(([k, x]) => [k, Array.from(x, e => typeof e === 'number' ? e : String(e))]));
  });
  return JSON.stringify({title: v.model.title ? v.model.title.text : null, data});
}"""
"""JS: what the figure named ``name`` draws in the browser (its title and every glyph's data), as a string."""

SCROLL_TO = """(name) => [...Bokeh.index.all_views()].find(v => v.model.name === name && v.frame)
  .el.scrollIntoView({block: 'center'})"""
"""JS: scroll the figure named ``name`` into the middle of the viewport (mouse coordinates are the viewport's)."""

COLUMN = """([name, column]) => {
  const v = [...Bokeh.index.all_views()].find(v => v.model.name === name && v.frame);
  for (const r of v.model.renderers) {
    const d = r.data_source ? r.data_source.data : null;
    const c = d ? (d instanceof Map ? d.get(column) : d[column]) : undefined;
    if (c !== undefined) return Array.from(c, e => typeof e === 'number' ? e : String(e));
  }
  return null;
}"""
"""JS: the first data column named ``column`` of any glyph of the figure ``name``, as the browser has it."""

COLUMN_OF = """([name, key, column]) => {
  const v = [...Bokeh.index.all_views()].find(v => v.model.name === name && v.frame);
  for (const r of v.model.renderers) {
    const d = r.data_source ? r.data_source.data : null;
    const get = (k) => d ? (d instanceof Map ? d.get(k) : d[k]) : undefined;
    if (get(key) !== undefined && get(column) !== undefined) return Array.from(get(column), Number);
  }
  return null;
}"""
"""JS: the data column ``column`` of the glyph of figure ``name`` that also has a column ``key``."""

COUNTER = """([name, fid]) => {
  const v = [...Bokeh.index.all_views()].find(v => v.model.name === name && v.frame);
  for (const r of v.model.renderers) {
    const d = r.data_source ? r.data_source.data : null;
    const get = (k) => d ? (d instanceof Map ? d.get(k) : d[k]) : undefined;
    const names = get('name'), detail = get('detail');
    if (names === undefined || detail === undefined) continue;
    const i = Array.from(names).indexOf(fid);
    if (i >= 0) return {x: (get('x0')[i] + get('x1')[i]) / 2, y: (get('y0')[i] + get('y1')[i]) / 2,
                        line: String(get('line')[i])};
  }
  return null;
}"""
"""JS: centre and outline colour of the counter of figure ``fid`` on the Kung Fu 2100 board, or null."""

COUNTER_TEXTS = """([name, fid]) => {
  const v = [...Bokeh.index.all_views()].find(v => v.model.name === name && v.frame);
  for (const r of v.model.renderers) {
    const d = r.data_source ? r.data_source.data : null;
    const text = d ? (d instanceof Map ? d.get('text') : d['text']) : undefined;
    if (text !== undefined && Array.from(text).includes(fid)) return Array.from(text, String);
  }
  return [];
}"""
"""JS: the texts of the Kung Fu 2100 board's glyph that names figure ``fid``: counter names, levels left (five
digits), movement costs (one or two)."""


CELL_STREAMS = """() => jupyterapp.shell.currentWidget.content.widgets.flatMap((c, n) =>
  c.model.type !== 'code' ? [] : Array.from({length: c.model.outputs.length}, (_, i) => c.model.outputs.get(i).toJSON())
    .filter(o => o.output_type === 'stream' || o.output_type === 'error'
                 || (o.data && String(o.data['text/html'] || '').includes('<pre>')))
    .map(o => `cell ${n}: ${o.output_type === 'error' ? o.ename + ': ' + o.evalue
                            : o.text !== undefined ? [].concat(o.text).join('')
                            : [].concat(o.data['text/html']).join('')}`))"""
"""JS: what each code cell of the notebook printed (stdout, stderr, a raised error, and the tracebacks of callbacks
that raised, which Panel's ``console_output`` shows under the cell as HTML), for a failure's report."""


class Live:
    """The notebook page, with its dashboards drawn, and what the browser was refused or complained of."""

    def __init__(self, page, blocked: list[str], errors: list[str], log: Path | None = None) -> None:
        self.page, self.blocked, self.errors, self.log = page, blocked, errors, log

    @property
    def problems(self) -> list[str]:
        """The browser's errors but its refused loads (``blocked`` lists those): what a failure should show."""
        return [e for e in self.errors if "Failed to load resource" not in e]

    def report(self) -> str:
        """What a failed test prints: the browser's errors and the end of JupyterLab's log (the kernel's
        tracebacks go there)."""
        log = self.log.read_text(errors="replace")[-4000:] if self.log is not None and self.log.exists() else ""
        try:
            said = self.page.evaluate(CELL_STREAMS)
        except Exception as exc:  # a report of a failure must not fail in turn
            said = f"(could not read the cells' outputs: {exc})"
        return (f"browser errors ({len(self.problems)}): {self.problems[-10:]}\nrefused: {len(self.blocked)}\n"
                f"--- what the cells printed (streams and errors) ---\n{str(said)[-4000:]}\n"
                f"--- the end of JupyterLab's log ---\n{log}")

    def cell(self, game: str):
        return self.page.locator(".jp-Notebook .jp-Cell").nth(CELL[game])

    def figure(self, name: str) -> str | None:
        return self.page.evaluate(FIGURE_DATA, name)

    def column(self, name: str, column: str) -> list | None:
        return self.page.evaluate(COLUMN, [name, column])

    def column_of(self, name: str, key: str, column: str) -> list | None:
        return self.page.evaluate(COLUMN_OF, [name, key, column])

    def wait(self, cond, what: str, timeout: float = WAIT / 1000) -> None:
        """Poll a condition on the page; on time-out say what did not happen and what the browser refused."""
        end = time.time() + timeout
        while not cond():
            if time.time() > end:
                raise AssertionError(f"{what} (waited {timeout:.0f} s; blocked: {self.blocked[:5]}; "
                                     f"browser errors: {self.problems[:5]})")
            self.page.wait_for_timeout(100)

    def wait_changed(self, name: str, before: str | None, what: str, timeout: float = WAIT / 1000) -> None:
        self.wait(lambda: self.figure(name) != before, f"the {what} ({name!r}) did not change", timeout)

    def shot(self, name: str) -> None:
        self.page.wait_for_timeout(300)
        SHOTS.mkdir(exist_ok=True)
        self.page.screenshot(path=str(SHOTS / f"{name}.png"))


@pytest.fixture(scope="module")
def live(jupyter_lab, browser):
    """One notebook page for the module: opened in JupyterLab, every cell run, the three boards drawn."""
    context = browser.new_context(viewport={"width": 1500, "height": 1000})
    page = context.new_page()
    blocked = block_other_hosts(page)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(f"page error: {exc}"))
    page.on("console", lambda msg: errors.append(f"console.error: {msg.text}") if msg.type == "error" else None)
    jupyter_lab.open(page, NOTEBOOK)
    jupyter_lab.run_all(page)
    for name in ("track", "board", "arena"):
        page.wait_for_function(BOARD_READY, arg=name, timeout=WAIT)
    yield Live(page, blocked, errors, jupyter_lab.log)
    context.close()


@pytest.fixture(autouse=True)
def report_failure(request, live):
    """After a test that failed, print what the browser complained of and what the kernel logged: a failure in CI
    is read from its output alone."""
    yield
    call = getattr(request.node, "rep_call", None)
    if call is not None and call.failed:
        print(live.report())


def test_the_dashboards_clicks_go_to_the_kernels_main_shell(live):
    """JupyterLab as ``dojo lab`` starts it sends comm messages to the kernel's main shell, not to a subshell (a
    second thread in ipykernel 7): Panel's messages to the page, sent in parts from that thread and from the main
    one (the background work), interleaved, and the page stopped updating ("s is not iterable"), 1 run in 2 of
    this file with a core busy. The setting as the page's JupyterLab loaded it."""
    setting = live.page.evaluate("""async () => (await jupyterapp.serviceManager.settings.fetch(
      '@jupyterlab/apputils-extension:kernels-settings')).schema.properties.commsOverSubshells.default""")
    assert setting == "disabled"


# --- Man-Kzin Wars: a card, then decisions -----------------------------------------------------------------
def kzin_tile(live: Live):
    """The first card tile (Human Fleet or Tactics in play) of the Kzin dashboard."""
    tile = live.cell("kzin").locator(".tile button").first
    tile.scroll_into_view_if_needed()
    return tile


def kzin_as_dealt(live: Live) -> None:
    """Wait until no card is selected: the odds gone and the chart's title back to no chance. The chart redraws a
    moment after the odds pane, so a test that read the chart before its redraw would compare against the selection
    it undid."""
    expect(live.cell("kzin").locator(".win")).to_have_count(0, timeout=WAIT)
    live.wait(lambda: "you win" not in (live.figure("forces") or "you win"),
              "the Force distributions chart still gives a chance with no card selected")


def test_kzin_card_click_shows_the_odds(live):
    """Selecting a Fleet shows the chance of winning; unselecting it takes the chance away again."""
    cell = live.cell("kzin")
    expect(cell.locator(".win")).to_have_count(0)
    kzin_tile(live).click()
    expect(cell.locator(".win")).to_have_text(re.compile(r"^\d+\.\d%$"), timeout=WAIT)
    expect(kzin_tile(live)).to_have_text(re.compile("^✓"), timeout=WAIT)
    live.shot("kzin_card_selected")
    kzin_tile(live).click()
    kzin_as_dealt(live)


def test_kzin_card_click_redraws_the_force_distributions(live):
    cell = live.cell("kzin")
    kzin_as_dealt(live)
    before = live.figure("forces")
    kzin_tile(live).click()
    try:
        expect(cell.locator(".win")).to_be_visible(timeout=WAIT)  # the click reached the kernel
        live.wait_changed("forces", before, "Force distributions chart")
        assert "you win" in live.figure("forces")  # the title gives the chance the odds pane shows
    finally:
        kzin_tile(live).click()  # unselect: the next test starts from the table as dealt
        kzin_as_dealt(live)


def kzin_status(live: Live) -> tuple[int, int]:
    """(turn, Expansion Marker space) as the status line of the Kzin dashboard says."""
    line = live.cell("kzin").get_by_text(re.compile(r"Expansion Marker on space \d+")).first
    text = line.inner_text(timeout=WAIT)
    found = re.search(r"Turn (\d+) · Expansion Marker on space (\d+)", text)
    assert found, f"no status line in the Kzin dashboard: {text[:500]}"
    return int(found[1]), int(found[2])


def running_turns(live: Live) -> int:
    """How many turns the running odds cover, as the progress line under the chart says (0 before any)."""
    line = live.cell("kzin").get_by_text(re.compile(r"turn\(s\) estimated by")).first
    if not line.count():
        return 0
    return int(re.match(r"\s*(\d+)", line.inner_text(timeout=WAIT))[1])


def decide_in_kzin(live: Live, turn: int) -> None:
    """Fall back or pass, whichever the page offers, until the turn moves on. The status line and the decision
    buttons are separate panes: the button shown a moment after the status changed may still be the last turn's,
    and the kernel rightly refuses that press, so a press the turn does not follow is made again."""
    cell = live.cell("kzin")
    end = time.time() + 3 * WAIT / 1000
    while True:
        button = cell.get_by_role("button", name=re.compile("^(Fall back|Pass)$")).locator("visible=true").first
        button.scroll_into_view_if_needed(timeout=WAIT)
        button.click(timeout=WAIT)
        try:
            live.wait(lambda: kzin_status(live)[0] != turn, "the turn did not move on", timeout=10)
            return
        except AssertionError:
            if time.time() > end:
                raise AssertionError(f"the turn did not move on after a decision (pressed for "
                                     f"{3 * WAIT / 1000:.0f} s; browser errors: {live.problems[:5]})") from None


def test_kzin_decisions_move_the_marker_on_the_track(live):
    """Fall back or pass until the marker moves: the track draws it on the space the status gives, with the
    move's arrow."""
    turn, space = kzin_status(live)
    moved = False
    for _ in range(8):
        decide_in_kzin(live, turn)
        turn, now = kzin_status(live)
        if now != space:
            moved = True
            break
    assert moved, "eight decisions and the Expansion Marker never moved: choose another game"
    live.wait(lambda: live.column_of("track", "marker", "tx") == [now] == live.column_of("track", "tx1", "tx1"),
              f"the track does not show the marker on space {now}, with the last move's arrow ending there: "
              f"{live.column_of('track', 'marker', 'tx')}, {live.column_of('track', 'tx1', 'tx1')}")
    live.shot("kzin_after_decisions")


def test_kzin_running_odds_chart_has_every_turn_its_progress_line_counts(live):
    """After the decisions above, the running odds of every turn played are estimated (the progress line,
    a Panel pane, counts them) and the chart draws one point per turn."""
    turn, _ = kzin_status(live)
    live.wait(lambda: running_turns(live) >= turn, f"the running odds never reached turn {turn}",
              timeout=3 * WAIT / 1000)
    counted = running_turns(live)
    live.wait(lambda: len(live.column("running", "turn") or []) == counted,
              f"the running odds chart does not have the {counted} turns its progress line counts: "
              f"{live.column('running', 'turn')}")


# --- Kung Fu 2100: a figure ----------------------------------------------------------------------------------
def kf2100_select_t1(live: Live) -> None:
    """The Terminators wait at their entries (the buttons), then a click on T1's counter selects it."""
    cell = live.cell("kf2100")
    for fid, entry in (("T1", "disposal"), ("T2", "disposal"), ("T3", "loo")):
        button = cell.get_by_role("button", name=f"{fid} at the {entry}")
        if button.count():
            button.scroll_into_view_if_needed()
            button.click()
            expect(button).to_have_count(0, timeout=WAIT)
    live.wait(lambda: live.page.evaluate(COUNTER, ["board", "T1"]) is not None, "T1 is not on the board")
    selected = cell.get_by_text("T1 selected")
    for _ in range(3):  # two quick clicks on one spot are taken for a double tap: click again then
        live.page.evaluate(SCROLL_TO, "board")
        t1 = live.page.evaluate(COUNTER, ["board", "T1"])
        live.page.mouse.click(*to_page(live.page, t1["x"], t1["y"], "board"))
        try:
            expect(selected.first).to_be_visible(timeout=5000)
            break
        except AssertionError:
            live.page.wait_for_timeout(500)
    expect(selected.first).to_be_visible(timeout=WAIT)  # the click reached the game in the kernel


def test_kf2100_figure_click_selects_it(live):
    kf2100_select_t1(live)


def test_kf2100_figure_click_marks_where_it_can_go_on_the_board(live):
    """The board outlines the selected T1 and marks the squares it can reach with their cost (an earlier test of
    this notebook may have left T1 selected, so the change checked is the outline and the costs themselves)."""
    kf2100_select_t1(live)
    live.wait(lambda: live.page.evaluate(COUNTER, ["board", "T1"])["line"] == "#facc15",
              "the board does not outline the selected T1")
    texts = live.page.evaluate(COUNTER_TEXTS, ["board", "T1"])
    costs = [c for c in texts if c.isdigit() and len(c) <= 2]
    assert costs and min(map(int, costs)) == 1, f"no reachable squares marked on the board: {texts}"
    live.shot("kf2100_figure_selected")


# --- Kung-Fu Zoo: a flick ------------------------------------------------------------------------------------
def arena_click(live: Live, x: float, y: float) -> None:
    live.page.evaluate(SCROLL_TO, "arena")
    live.page.mouse.click(*to_page(live.page, x, y, "arena"))
    live.page.wait_for_timeout(400)  # a press right after a click would be read as part of a double tap


def test_zoo_flick_draws_the_aim_its_odds_and_the_heat_map(live):
    """Choose C2 on the bench, the west dot and the back face, then drag the flick: the arena draws the die
    chosen and the aim, the odds of the flick appear and the heat map of caging odds is drawn; commit it, and
    the board and the turn follow."""
    cell = live.cell("zoo")
    arena, heat = live.figure("arena"), live.figure("heatmap")
    arena_click(live, *za.bench_xy(0, 1))
    live.wait_changed("arena", arena, "arena, after choosing a die")
    chosen = live.figure("arena")
    arena_click(live, -10.0, 150.0)
    live.wait_changed("arena", chosen, "arena, after choosing the west dot")
    cell.get_by_role("button", name="back", exact=True).click()
    aimed = live.figure("arena")
    direction, speed = math.radians(8.0), 1.3
    vector = (speed * DRAG_MM_PER_M_S * math.cos(direction), speed * DRAG_MM_PER_M_S * math.sin(direction))
    # the cells above redraw as their games' background work lands, which shifts the arena: the drag follows it
    drag_data(live.page, "arena", (9.5, 150.0), vector, before=lambda: live.page.evaluate(SCROLL_TO, "arena"))
    live.wait_changed("arena", aimed, "arena, after the flick was dragged")
    expect(cell.locator(".p-cage")).to_be_visible(timeout=WAIT)
    expect(cell.locator(".odds-n")).to_contain_text("simulated flicks", timeout=WAIT)
    live.wait_changed("heatmap", heat, "heat map of caging odds", timeout=2 * WAIT / 1000)
    live.shot("zoo_flick_aimed")
    flicked = live.figure("arena")
    cell.get_by_role("button", name="Commit flick").click()  # the flick is played: the board follows it
    live.wait_changed("arena", flicked, "arena, after the flick was committed")
    # the turn passes to P2, a bot: the prompt names him while he thinks, and his flick is logged once he has
    # played (a quick bot's prompt can come and go between two looks, so either one shows the turn followed)
    p2_moved = cell.locator("tr", has_text="P2 (Elephant)").filter(has_text="flick ")
    expect(cell.locator(".prompt", has_text="P2 (Elephant)").or_(p2_moved).first).to_be_visible(timeout=WAIT)
    expect(cell.get_by_text("flick C2 from W-dot face=back").first).to_be_visible(timeout=WAIT)  # the face chosen
    live.shot("zoo_flick_played")


# --- offline: after every click above ------------------------------------------------------------------------
CDN_STYLESHEETS = """() => [...Bokeh.index.all_views()].flatMap(v => (v.model.stylesheets || [])
  .filter(s => typeof s !== 'string' && s.url && !s.url.startsWith(location.origin) && /^https?:/.test(s.url))
  .map(s => `${v.model.type} ${JSON.stringify(String(v.model.text || v.model.name || '').slice(0, 80))}: ${s.url}`))"""
"""JS: every model of the page whose stylesheet is fetched from another host, with its text, for a failure message."""


def test_the_notebook_loads_everything_from_127_0_0_1(live):
    """BokehJS, Panel and HoloViews came inline with the notebook and JupyterLab served the rest itself, through
    every click above (this test runs last).

    Panel inlines the stylesheets of the first display only: a pane it updates later (the Kzin status line, the
    advisor's text, the game log) links them again, from its CDN unless told otherwise. ``dojo lab`` points those
    links at JupyterLab's own static files (``engine.cli.lab_environment``), so nothing is refused here."""
    late = live.page.evaluate(CDN_STYLESHEETS)
    assert live.blocked == [], f"refused: {live.blocked[:10]}; stylesheets from other hosts: {late[:10]}"
    assert late == []
    assert [e for e in live.errors if "Failed to load resource" in e] == []
