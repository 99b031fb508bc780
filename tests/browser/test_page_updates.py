"""A command that Panel runs outside the Bokeh document lock still updates every dashboard.

Panel handles a click that arrives while earlier widget changes are still pending on a later tick of the
event loop and *without* the document lock (``panel.reactive.Reactive._server_event``). A dashboard that
then sets a Bokeh model property directly (a data source, a title) makes Bokeh raise "_pending_writes
should be non-None …", and the rest of the update never happens. A hot-seat browser test once failed so on
a loaded CI machine: a seat was chosen and New game clicked at once, and the hand-over screen never came.
Here each dashboard's New game is run on that very path, on purpose: once as if the browser had not yet
reported the page loaded (``pn.io.unlocked()`` then does nothing, and a CI run under load failed so), then
once more over the game in progress.
"""

from __future__ import annotations

import threading
import traceback

import panel as pn
import pytest
from browser_helpers import BOARD_READY, dashboard_of, new_game_button, serve_pages, wait_for
from panel.io.state import set_curdoc

from apps import kf2100, kzin, zoo

pytestmark = pytest.mark.browser

BOARDS = {kzin: "track", kf2100: "board", zoo: "arena"}


def run_as_a_late_click(doc, command, before_load: bool = False) -> list[str]:
    """Run ``command`` on the page's event loop the way Panel runs a late click: a coroutine scheduled
    through ``pn.state.execute``, which Panel marks to run without the document lock. ``before_load``: as
    in the moments before the browser reports the page loaded."""
    errors: list[str] = []  # each with its traceback, so a failure says where the update broke
    done = threading.Event()

    async def late_click() -> None:
        loaded = pn.state._loaded.get(doc)
        try:
            if before_load:
                pn.state._loaded[doc] = False
            command()
        except Exception:
            errors.append(traceback.format_exc())
        finally:
            if before_load:
                pn.state._loaded[doc] = loaded
            done.set()

    with set_curdoc(doc):
        pn.state.execute(late_click, schedule=True)
    assert done.wait(timeout=30), "the page's event loop never ran the command"
    return errors


@pytest.mark.parametrize("module", list(BOARDS), ids=lambda m: m.__name__.split(".")[-1])
def test_new_game_outside_the_document_lock_updates_the_page(page, serve_app, console_errors, module):
    url, pages = serve_pages(serve_app, module.create_app)
    page.goto(url)
    page.wait_for_function(BOARD_READY, arg=BOARDS[module], timeout=30_000)
    wait_for(lambda: pages, page)
    session = dashboard_of(pages[0]).session
    doc = pages[0].served_document
    before = session.version

    wait_for(lambda: pn.state._loaded.get(doc), page)

    def click_new_game():
        new_game_button(pages[0]).clicks += 1  # what Panel does for the button's click event: its handlers run

    errors = run_as_a_late_click(doc, click_new_game, before_load=True)
    assert not errors, "\n".join(errors)
    wait_for(lambda: session.version > before, page)
    middle = session.version
    errors = run_as_a_late_click(doc, click_new_game)  # and once more, over a game in progress
    assert not errors, "\n".join(errors)
    wait_for(lambda: session.version > middle, page)
    page.wait_for_timeout(300)
    assert console_errors == []
