"""Issue 18: a table's bot driver keeps nothing of the page that poked it.

A table outlives its pages. Its bot's move ran in a task made while a page was being built, and a task copies the
context it is made in, Panel's current document with it; the driver kept its last task, so a closed tab's document
(and, through the document's session-destroyed callbacks, its page) stayed in memory while the table lived.
"""

from __future__ import annotations

import asyncio
import gc
import weakref
from dataclasses import replace

import pytest
from bokeh.document import Document
from panel.io.state import set_curdoc, state

from apps._tables import BotDriver
from engine.core.seal import Sealer
from engine.core.tables import TableRegistry, new_token
from engine.kzin.table import KZIN_TABLE

LIGHT = replace(KZIN_TABLE, session_options={"advisor_rollouts": 60})


@pytest.mark.no_event_loop  # asyncio.run needs a thread without Playwright's running loop
def test_the_bot_moves_outside_the_document_of_the_page_that_poked_it(tmp_path):
    registry = TableRegistry(tmp_path / "tables", {"kzin": LIGHT}, Sealer.in_folder(tmp_path))
    a = new_token()
    table = registry.create("kzin", a)
    seen: list[object] = []

    async def run() -> tuple[BotDriver, weakref.ref]:
        bot = BotDriver(table)
        table.session.param.watch(lambda _e: seen.append(state.curdoc), "version")
        doc = Document()
        with set_curdoc(doc):  # as while a page of the table is built for a browser
            assert table.hand_to_bot("Humans", a) == ""
        assert bot.busy
        for _ in range(3000):
            await asyncio.sleep(0.01)
            if not bot.busy and table.session.state.phase == "over":
                break
        return bot, weakref.ref(doc)

    bot, doc = asyncio.run(run())
    assert table.session.state.phase == "over" and bot.moves >= 1 and bot.errors == []
    assert seen and all(d is None for d in seen), "a bot move ran as if in the poking page's document"
    gc.collect()
    assert doc() is None, f"the poking page's document is kept: {[type(r).__name__ for r in gc.get_referrers(doc())]}"
