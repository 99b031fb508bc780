"""A command that Panel runs outside the Bokeh document lock still updates every dashboard.

Panel handles a click that arrives while earlier widget changes are still pending on a later tick of the
event loop and *without* the document lock (``panel.reactive.Reactive._server_event``). A dashboard that
then sets a Bokeh model property directly (a data source, a title) makes Bokeh raise "_pending_writes
should be non-None …", and the rest of the update never happens. A hot-seat browser test once failed so on
a loaded CI machine: a seat was chosen and New game clicked at once, and the hand-over screen never came.
Here each dashboard's New game is run on that very path, on purpose.
"""

from __future__ import annotations

import threading

import panel as pn
import pytest
from browser_helpers import BOARD_READY, serve_pages, wait_for
from panel.io.state import set_curdoc

from apps import kf2100, kzin, zoo

pytestmark = pytest.mark.browser

BOARDS = {kzin: "track", kf2100: "board", zoo: "arena"}


def run_as_a_late_click(doc, command) -> list[Exception]:
    """Run ``command`` on the page's event loop the way Panel runs a late click: a coroutine scheduled
    through ``pn.state.execute``, which Panel marks to run without the document lock."""
    errors: list[Exception] = []
    done = threading.Event()

    async def late_click() -> None:
        try:
            command()
        except Exception as exc:
            errors.append(exc)
        finally:
            done.set()

    with set_curdoc(doc):
        pn.state.execute(late_click, schedule=True)
    assert done.wait(timeout=30), "the page's event loop never ran the command"
    return errors


@pytest.mark.parametrize("module", list(BOARDS), ids=lambda m: m.__name__.split(".")[-1])
def test_new_game_outside_the_document_lock_updates_the_page(page, serve_app, console_errors, module):
    url, pages = serve_pages(serve_app, module.create_app)
    page.goto(url)
    page.wait_for_function(BOARD_READY, arg=BOARDS[module], timeout=20_000)
    wait_for(lambda: pages, page)
    dash = pages[0].dashboard
    session = dash.session
    before = session.version

    assert run_as_a_late_click(dash._doc, dash.new_game) == []
    wait_for(lambda: session.version > before, page)
    assert run_as_a_late_click(dash._doc, dash.new_game) == []  # and once more, over a game in progress
    page.wait_for_timeout(300)
    assert console_errors == []
