"""The tables' app side without a browser: the landing page's list of tables and its Resume links, and a seat
handed to a bot played by the table's bot driver off the event loop."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest
from markdown_it import MarkdownIt

from apps import GameApp, landing
from apps._tables import BotDriver
from engine.core.seal import Sealer
from engine.core.session import BOT
from engine.core.tables import TableRegistry, new_token
from engine.kzin.table import KZIN_TABLE

LIGHT = replace(KZIN_TABLE, session_options={"advisor_rollouts": 60})
KZIN = GameApp("kzin", "Man-Kzin Wars", "Hold off the Kzinti.", 1, lambda: None, lambda: None)
OTHER = GameApp("dice", "Fake Dice", "Roll.", 2, lambda: None)


@pytest.fixture
def registry(tmp_path):
    return TableRegistry(tmp_path / "tables", {"kzin": LIGHT}, Sealer.in_folder(tmp_path))


def test_the_landing_page_lists_each_table_with_its_seats_and_join_or_watch_links(registry):
    a, b = new_token(), new_token()
    taken = registry.create("kzin", a)
    free = registry.create("kzin", b)
    free.leave("Humans", b)
    text = landing.tables_markdown([KZIN, OTHER], registry.listing(), token=None)
    assert "### Man-Kzin Wars tables\n[New table](/kzin)" in text and "Fake Dice tables" not in text
    row_taken = next(line for line in text.splitlines() if taken.id in line)
    row_free = next(line for line in text.splitlines() if free.id in line)
    assert "Humans: taken" in row_taken and "join" not in row_taken and f"(/kzin?table={taken.id})" in row_taken
    assert "Humans: free" in row_free and f"[join as Humans](/kzin?table={free.id}&seat=Humans)" in row_free
    assert f"turn {taken.session.state.turn}, marker on {taken.session.state.kem}" in row_taken
    assert "Resume" not in text
    assert a not in text and (taken.seats["Humans"] or "") not in text  # neither a token nor its hash is shown


def test_the_tables_list_renders_as_one_html_table_a_game(registry):
    """Rendered as the landing page's Markdown pane renders it (markdown-it, 'gfm-like', no raw HTML): each table is
    a row of one HTML table, not a paragraph of pipes after an empty header (a blank line ends a Markdown table),
    and a ``|`` in a cell's text does not split the cell."""
    tables = [registry.create("kzin", new_token()) for _ in range(3)]
    text = landing.tables_markdown([KZIN], registry.listing(), token=None)
    html = MarkdownIt("gfm-like", options_update={"html": False}).render(text)
    assert html.count("<table>") == 1 and html.count("<tr>") == 1 + len(tables)
    for table in tables:
        assert f"<td><code>{table.id}</code></td>" in html
    assert "<p>|" not in html
    info = registry.listing()[0]
    odd = replace(info, summary="turn 1 | marker on 9")
    html = MarkdownIt("gfm-like", options_update={"html": False}).render(landing.tables_markdown([KZIN], [odd], None))
    assert "<td>turn 1 | marker on 9</td>" in html and html.count("<td>") == 5


def test_resume_offers_the_tables_of_this_browser_only(registry):
    a, b = new_token(), new_token()
    mine, theirs = registry.create("kzin", a), registry.create("kzin", b)
    registry.drop_all()  # written out and dropped: still offered, from the files
    text = landing.tables_markdown([KZIN], registry.listing(), token=a)
    resume = next(line for line in text.splitlines() if line.startswith("**Resume your tables:**"))
    assert f"/kzin?table={mine.id}" in resume and theirs.id not in resume


def test_a_game_not_played_at_tables_lists_nothing():
    assert landing.tables_markdown([OTHER], [], token=None) == ""


@pytest.mark.no_event_loop  # asyncio.run needs a thread without Playwright's running loop
def test_a_seat_handed_to_a_bot_is_played_off_the_loop_until_the_game_ends(registry):
    a = new_token()
    table = registry.create("kzin", a)

    async def run() -> BotDriver:
        bot = BotDriver(table)
        assert table.hand_to_bot("Humans", a) == ""  # the session's seats change: the driver is poked
        assert table.session.seats[0].kind == BOT and bot.busy
        for _ in range(2000):
            await asyncio.sleep(0.01)
            if table.session.state.phase == "over":
                break
        return bot

    bot = asyncio.run(run())
    assert table.session.state.phase == "over" and bot.moves >= 1 and bot.errors == []
    assert any(e["event"].endswith("battle") or e["event"] in ("fall back", "pass") for e in table.session.log)


@pytest.mark.no_event_loop
def test_a_watchers_choice_of_advisor_is_refused_and_the_players_reaches_every_page(registry):
    """The advisor is the table's (its one session's): only the seated player may change it."""
    from apps._tables import TablePage
    from apps.kzin import KzinPage

    player, watcher = new_token(), new_token()
    table = registry.create("kzin", player)
    mine, theirs = (TablePage(t, lambda tb, _t, may_act: KzinPage(session=tb.session, may_act=may_act,
                                                                   secret_seed=True), table=table)
                    for t in (player, watcher))
    theirs.game.advisor.choice.value = "expert"  # the watcher's click
    assert table.session.advisor == "rollouts" and theirs.game.advisor.choice.value == "rollouts"
    assert theirs.bar.said.startswith("Not done: you are watching")
    mine.game.advisor.choice.value = "expert"
    assert table.session.advisor == "expert" and theirs.game.advisor.choice.value == "expert"
