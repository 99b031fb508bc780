"""Helpers for browser tests: map board data coordinates to page pixels and wait on server-side state.

Import them in a game's browser test (``from browser_helpers import BOARD_READY, to_page, wait_for``);
``tests`` is on pytest's ``pythonpath``. Recipes from ``../shared/guides/panel-and-browser-tests.md`` §6.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import panel as pn

from apps._browser import BOARD_READY as BOARD_READY  # the page predicates, shared with the benchmarks and soak
from apps._browser import HAS_TEXT as HAS_TEXT
from engine.cli import lab_cdn_root, lab_command, lab_environment, lab_overrides, panel_stylesheets

TO_PAGE = """([name, x, y]) => {
  const v = [...Bokeh.index.all_views()].find(v => v.model.name === name && v.frame);
  const r = v.canvas.events_el.getBoundingClientRect();
  return [r.left + v.frame.x_scale.compute(x), r.top + v.frame.y_scale.compute(y)];
}"""
"""JS: data (x, y) on the Bokeh figure named ``name`` -> viewport pixels (Playwright mouse coordinates)."""

# The Man-Kzin Wars track as the browser draws it: is its Expansion Marker on space ``kem``?
MARKER_ON = """([name, kem]) => {
  const v = [...Bokeh.index.all_views()].find(v => v.model.name === name && v.frame);
  if (!v) return false;
  for (const r of v.model.renderers) {
    const d = r.data_source ? r.data_source.data : null;
    const get = (k) => d instanceof Map ? d.get(k) : (d ? d[k] : undefined);
    if (get("marker") !== undefined) return get("tx")[0] == kem;
  }
  return false;
}"""


def to_page(page, x: float, y: float, name: str = "board") -> tuple[float, float]:
    """Viewport pixels of data point (x, y) on the figure named ``name``."""
    px, py = page.evaluate(TO_PAGE, [name, x, y])
    return px, py


def drag_data(page, name: str, start: tuple[float, float], vector: tuple[float, float], steps: int = 12,
              before: Callable[[], object] | None = None, before_release: Callable[[], object] | None = None) -> None:
    """A real mouse drag on the figure ``name``, from data point ``start`` by ``vector`` (data units).

    The page may move under the mouse: a pane above the figure that a loaded browser redraws a moment late takes
    a line more or less and shifts the figure by its height, and a drag whose pixels were worked out before the
    shift drags another vector. So the pointer follows the data points, each step's pixels worked out as it moves
    there, and a drag during which the figure moved at its press (the browser places the pan's start when the
    pointer first moves) or at its release is made again, up to three times. ``before`` runs before each try
    (a scroll), ``before_release`` before the release (a screenshot of the drag)."""
    points = [(start[0] + vector[0] * k / steps, start[1] + vector[1] * k / steps) for k in range(steps + 1)]
    for _ in range(3):
        if before is not None:
            before()
        pressed = to_page(page, *points[0], name)
        page.mouse.move(*pressed)
        page.mouse.down()
        page.mouse.move(*to_page(page, *points[1], name))
        moved = to_page(page, *points[0], name) != pressed
        for point in points[2:]:
            page.mouse.move(*to_page(page, *point, name))
        if before_release is not None:
            before_release()
        released = to_page(page, *points[-1], name)
        page.mouse.move(*released)
        page.mouse.up()
        if not moved and to_page(page, *points[-1], name) == released:
            return
    raise AssertionError(f"the figure {name!r} kept moving under the mouse: three drags in a row were shifted")


def wait_for(cond: Callable[[], object], page, timeout: float = 30.0,
             seen: Callable[[], object] | None = None) -> None:
    """Poll a server-side condition while letting the page run (assert on Python state, not pixels); 30 s by
    default, as a loaded CI machine may take that long for something that does happen. ``seen``: what the failure
    reports of the state it waited on (CI's output is all a failure there leaves)."""
    end = time.time() + timeout
    while not cond():
        assert time.time() < end, "condition not met in time" + (f"; saw {seen()}" if seen is not None else "")
        page.wait_for_timeout(50)


def page_report(page, errors: list[str] | None = None, limit: int = 2500) -> str:
    """What the page shows and the browser's errors, for a failure message (a late or lost update shows here)."""
    try:
        text = page.locator("body").inner_text(timeout=2000)
    except Exception as exc:  # the report must not hide the failure it describes
        text = f"(the page text could not be read: {exc})"
    return f"browser errors: {errors or []}; page text: {' '.join(text.split())[:limit]}"


def choose_file(page, path, timeout: float = 20.0) -> None:
    """Choose ``path`` in the page's file input once the file chosen before is forgotten: the page clears the
    input after each load, and a file chosen before that clear reaches the browser would be cleared with it."""
    box = page.locator("input[type=file]")
    end = time.time() + timeout
    while box.evaluate("e => e.files.length") > 0:
        assert time.time() < end, "the page never cleared its file input after the last load"
        page.wait_for_timeout(50)
    box.set_input_files(str(path))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_live(url: str, timeout: float = 20.0) -> None:
    """Wait for a Panel server's ``/liveness`` (which, unlike ``/``, builds no session)."""
    deadline = time.time() + timeout
    while True:
        try:
            urllib.request.urlopen(url.rstrip("/") + "/liveness", timeout=2).read()
            return
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(0.1)


def dashboard_of(app: Any) -> Any:
    """The object holding a page's session and controls: a page component itself (``apps/kzin``) or, for a
    dashboard still built as a layout, its ``dashboard`` attribute."""
    return getattr(app, "dashboard", app)


def new_game_button(app: Any) -> Any:
    dashboard = getattr(app, "dashboard", None)
    return dashboard._new if dashboard is not None else app.controls.new


def serve_pages(serve_app: Callable[..., str], create_app: Callable[..., object], game: bool = True
                ) -> tuple[str, list]:
    """Serve ``create_app`` with the ``serve_app`` fixture and keep every page it builds, one per tab, so a
    test can reach each tab's dashboard (``pages[i].dashboard``): (base URL, the list of pages). A game's
    ``create_app`` is told it is served, as ``dojo serve``'s routes tell it (``game=False``: another page)."""
    pages: list = []

    def factory() -> object:
        app = create_app(served=True) if game else create_app()
        app.served_document = pn.state.curdoc  # the tab's own document, for tests that run code on its loop
        pages.append(app)
        return app

    return serve_app(factory), pages


def block_other_hosts(page) -> list[str]:
    """Abort every request of ``page`` to a host other than 127.0.0.1, as in a classroom without internet;
    returns the list the aborted URLs are appended to (a test asserts on it)."""
    blocked: list[str] = []

    def route(route) -> None:
        url = route.request.url
        if urlsplit(url).scheme in ("http", "https", "ws", "wss") and urlsplit(url).hostname != "127.0.0.1":
            blocked.append(url)
            route.abort()
        else:
            route.continue_()

    page.route("**/*", route)
    return blocked


KERNEL_IDLE = """() => { const w = window.jupyterapp && jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  return !!k && k.status === 'idle' && w.content && w.content.widgets.length > 0; }"""
"""JS predicate: JupyterLab's current notebook has its kernel and the kernel is idle."""


class JupyterLab:
    """A real JupyterLab on 127.0.0.1, started with ``dojo lab``'s own command line and environment
    (:func:`engine.cli.lab_command`), on a folder of notebooks, in a process of its own.

    Everything it writes (runtime files, settings, workspaces, the notebook-signing key, the dashboards'
    autosaves) goes to ``home``. The page gets ``window.jupyterapp`` (``--LabApp.expose_app_in_browser``) so a
    test runs JupyterLab's own commands (run all cells) instead of clicking through its menus.
    """

    TOKEN = "dojo-test"

    def __init__(self, root: Path, home: Path) -> None:
        self.root, self.home = Path(root), Path(home)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._proc: subprocess.Popen | None = None
        self.log = self.home / "jupyter.log"

    def start(self, timeout: float = 60.0) -> None:
        settings = self.home / "settings"
        for rel, value in {  # every cell attached to the page (no windowing); no news pop-up over the cells
            "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
            "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false",
                                                                                "checkForUpdates": False},
        }.items():
            (settings / rel).parent.mkdir(parents=True, exist_ok=True)
            (settings / rel).write_text(json.dumps(value))
        static = panel_stylesheets()
        lab_overrides()  # as dojo lab: the dashboards' clicks on the kernel's main shell
        args = ["--no-browser", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={self.port}",
                "--ServerApp.port_retries=0", f"--IdentityProvider.token={self.TOKEN}",
                "--LabApp.expose_app_in_browser=True",
                f"--LabApp.user_settings_dir={settings}", f"--LabApp.workspaces_dir={self.home / 'workspaces'}"]
        cmd = lab_command(self.root, args, static)
        cdn_root = lab_cdn_root(args) if static is not None else None
        env = {**lab_environment(cdn_root=cdn_root), "JUPYTER_RUNTIME_DIR": str(self.home / "runtime"),
               "JUPYTER_DATA_DIR": str(self.home / "data"), "JUPYTER_CONFIG_DIR": str(self.home / "config"),
               "TABLETOP_DOJO_DATA": str(self.home / "dojo-data")}
        with self.log.open("w") as out:  # not a PIPE: nothing reads it, and a full pipe would block the server
            self._proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.time() + timeout
        while True:
            try:
                urllib.request.urlopen(f"{self.url}/api/status?token={self.TOKEN}", timeout=2).read()
                return
            except OSError:
                if self._proc.poll() is not None or time.time() > deadline:
                    self.stop()
                    raise RuntimeError(f"JupyterLab did not start: {self.log.read_text()[-3000:]}") from None
                time.sleep(0.2)

    def stop(self) -> None:
        """Shut down the server and its kernels (Jupyter's own shutdown request), then make sure it has ended."""
        if self._proc is None:
            return
        try:
            request = urllib.request.Request(f"{self.url}/api/shutdown?token={self.TOKEN}", method="POST", data=b"")
            urllib.request.urlopen(request, timeout=10).read()
            self._proc.wait(timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            self._proc.terminate()
            self._proc.wait(timeout=30)
        self._proc = None

    def open(self, page, notebook: str, timeout: float = 90.0) -> None:
        """Open ``notebook`` (a path under the root) in JupyterLab and wait for its kernel to be idle."""
        page.goto(f"{self.url}/lab/tree/{notebook}?token={self.TOKEN}")
        page.wait_for_function(KERNEL_IDLE, timeout=timeout * 1000)

    def run_all(self, page, timeout: float = 180.0) -> None:
        """Run every cell, as Run > Run All Cells does, and wait until the kernel has run them all; a cell that
        raised fails with its error."""
        page.evaluate("() => jupyterapp.commands.execute('notebook:run-all-cells')")
        page.wait_for_function("""() => { const cells = jupyterapp.shell.currentWidget.content.widgets;
          return cells.every(c => c.model.type !== 'code' || (c.model.executionCount !== null
                                                              && c.promptNode.textContent.trim() !== '[*]:')); }""",
                               timeout=timeout * 1000)
        page.wait_for_function(KERNEL_IDLE, timeout=timeout * 1000)
        errors = page.evaluate("""() => jupyterapp.shell.currentWidget.content.widgets.flatMap(c =>
          c.model.type !== 'code' ? [] : Array.from({length: c.model.outputs.length}, (_, i) => c.model.outputs.get(i)
            .toJSON()).filter(o => o.output_type === 'error').map(o => `${o.ename}: ${o.evalue}`))""")
        if errors:
            raise AssertionError(f"a notebook cell raised: {errors}")


# --- Kung Fu 2100 pages ------------------------------------------------------------------------------------
BOARD_DETAILS = """() => {
  const v = [...Bokeh.index.all_views()].find(v => v.model.name === "board" && v.frame);
  const out = [];
  for (const r of v.model.renderers) {
    const d = r.data_source ? r.data_source.data : null;
    const get = (k) => d instanceof Map ? d.get(k) : (d ? d[k] : undefined);
    if (get("detail") !== undefined) out.push(...get("detail"));
  }
  return out;
}"""
"""JS: the hover texts of the counters the browser has (what a player could read off the page)."""
