"""Issue 12's load test, short: tables of two browsers each on a real ``dojo serve``, every game kept apart, and
the server's memory and pages back once they close (``python -m apps._soak --tables 10`` is the full one)."""

from __future__ import annotations

import pytest

from apps._soak_tables import soak_tables

pytestmark = pytest.mark.browser

TABLES = 2
SECONDS = 12


def test_tables_are_kept_apart_and_give_their_memory_back(browser) -> None:
    figures, run = soak_tables(SECONDS / 60, TABLES, session_ms=5000, warm_moves=2, browser=browser,
                               drop_tables=False)  # a table held is not a page kept: the full run drops them
    assert run.failures == []
    assert len(run.moves) == TABLES and all(n >= 1 for n in run.moves.values()), run.moves
    assert figures["after"] <= 1.10 * figures["warm"], figures
