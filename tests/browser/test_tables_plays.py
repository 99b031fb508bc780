"""The load test's and the benchmark's plays of Kung Fu 2100 and Kung-Fu Zoo (:data:`apps._browser.TABLE_PLAYS`),
short, in the style of ``test_soak_tables.py``: on a real ``dojo serve``, each game's maker moves through the page
only (Kung Fu 2100: its decision buttons, holding both seats with the hand-over; the Zoo: its flicks, holding both
teams), each move shows in the table's other browser, and neither table's move shows at the other.

The memory is compared with the server warmed by six moves at each game's table first: the Zoo's first flicks
build each worker thread's physics models (``engine.zoo.arena3d.model.kit_for``), ~20 MB once for the server.
The warm-up played no move at all until a CI run failed at +10.6%."""

from __future__ import annotations

import pytest

from apps._browser import TABLE_PLAYS
from apps._soak_tables import soak_tables

pytestmark = pytest.mark.browser

GAMES = ["kf2100", "zoo"]
SECONDS = 20


def test_the_three_games_are_played_at_tables_by_the_load_test():
    assert set(TABLE_PLAYS) == {"kzin", "kf2100", "zoo"}


def test_kung_fu_2100_and_zoo_tables_are_played_through_the_page_and_kept_apart(browser) -> None:
    figures, run = soak_tables(SECONDS / 60, len(GAMES), games=GAMES, session_ms=5000, warm_moves=6, browser=browser,
                               drop_tables=False)  # as test_soak_tables: a table held is not a page kept
    assert run.failures == []
    assert len(run.moves) == len(GAMES) and all(n >= 2 for n in run.moves.values()), run.moves
    assert figures["after"] <= 1.10 * figures["warm"], figures


@pytest.mark.no_event_loop  # the benchmark drives its own Chromium through Playwright's sync API: a thread of its own
def test_the_delay_benchmark_times_a_zoo_flick_by_its_first_frame_in_the_other_browser():
    """The delay benchmark's moment for a Zoo flick is the first frame of the flick playing out on the other
    browser's arena, not that page's status (it changes once the flick has stopped, so the old figure timed the
    animation): a flick is the first move at a new table, and its delay says it was timed so; with two other
    browsers at the table, in each of them."""
    from apps._tables_bench import click_delays

    timed = click_delays("zoo", 2, others=2)
    assert len(timed) == 4 and all(0 < delay < 30 for delay, _flick in timed), timed
    assert timed[0][1] and timed[1][1], timed
