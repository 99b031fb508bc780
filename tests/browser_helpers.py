"""Helpers for browser tests: map board data coordinates to page pixels and wait on server-side state.

Import them in a game's browser test (``from browser_helpers import BOARD_READY, to_page, wait_for``);
``tests`` is on pytest's ``pythonpath``. Recipes from ``../shared/guides/panel-and-browser-tests.md`` §6.
"""

from __future__ import annotations

import socket
import time
import urllib.request
from collections.abc import Callable
from typing import Any

import panel as pn

TO_PAGE = """([name, x, y]) => {
  const v = [...Bokeh.index.all_views()].find(v => v.model.name === name && v.frame);
  const r = v.canvas.events_el.getBoundingClientRect();
  return [r.left + v.frame.x_scale.compute(x), r.top + v.frame.y_scale.compute(y)];
}"""
"""JS: data (x, y) on the Bokeh figure named ``name`` -> viewport pixels (Playwright mouse coordinates)."""

BOARD_READY = """(name) => window.Bokeh && Bokeh.index &&
  [...Bokeh.index.all_views()].some(v => v.model.name === name && v.frame && v.is_idle)"""
"""JS predicate for ``page.wait_for_function``: the figure named ``name`` is laid out and idle."""


def to_page(page, x: float, y: float, name: str = "board") -> tuple[float, float]:
    """Viewport pixels of data point (x, y) on the figure named ``name``."""
    px, py = page.evaluate(TO_PAGE, [name, x, y])
    return px, py


def wait_for(cond: Callable[[], object], page, timeout: float = 10.0) -> None:
    """Poll a server-side condition while letting the page run (assert on Python state, not pixels)."""
    end = time.time() + timeout
    while not cond():
        assert time.time() < end, "condition not met in time"
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


def serve_pages(serve_app: Callable[..., str], create_app: Callable[[], object]) -> tuple[str, list]:
    """Serve ``create_app`` with the ``serve_app`` fixture and keep every page it builds, one per tab, so a
    test can reach each tab's dashboard (``pages[i].dashboard``): (base URL, the list of pages)."""
    pages: list = []

    def factory() -> object:
        app = create_app()
        app.served_document = pn.state.curdoc  # the tab's own document, for tests that run code on its loop
        pages.append(app)
        return app

    return serve_app(factory), pages
