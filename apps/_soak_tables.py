"""Issue 12's load test of tables (``python -m apps._soak --tables N``): N tables, each made by one browser context
and joined by a second through its link, played in turn, each game kept apart, and the server's memory around it.
The soak's server, readings and waits are :mod:`apps._soak`'s; the short variants are
``tests/browser/test_soak_tables.py`` and ``tests/browser/test_tables_plays.py``."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import psutil

from apps._browser import BOARD_READY, TABLE_PLAYS, TablePlay, launch, shown_table
from apps._soak import SESSION_EXPIRY, mb, print_report, served, server_report, settle

PAGE_KINDS = ("documents", "server sessions", "panel viewables", "bokeh models", "holoviews plots",
              "holoviews streams")
"""What a closed page must give back: its document, server session, components, models and plots. (A table's
game session stays until the table is idle and written out, so game sessions and their watchers grow with the
tables, not the pages.)"""


@dataclass
class SeatedTable:
    """One table of the load test: its game, its id, and the two browsers at it (the maker first)."""

    play: TablePlay
    id: str
    contexts: list[Any]
    pages: list[Any]
    moves: int = 0
    status: str = ""

    def close(self) -> None:
        for context in self.contexts:
            context.close()


def open_table(browser: Any, url: str, play: TablePlay, timeout: float = 120.0) -> SeatedTable:
    """A new table of ``play``'s game made by one browser context and joined by another through its link;
    both must show the same table (the id in their seat bars is the link's)."""
    contexts = [browser.new_context(), browser.new_context()]
    first = contexts[0].new_page()
    first.goto(url + play.slug, timeout=timeout * 1000)
    first.wait_for_function(BOARD_READY, arg=play.board, timeout=timeout * 1000)
    first.wait_for_url(f"**/{play.slug}?table=*", timeout=timeout * 1000)
    link = first.url
    second = contexts[1].new_page()
    second.goto(link + play.join, timeout=timeout * 1000)
    second.wait_for_function(BOARD_READY, arg=play.board, timeout=timeout * 1000)
    table_id = link.split("table=", 1)[1].split("&", 1)[0]
    shown = [shown_table(first), shown_table(second)]
    if shown != [table_id, table_id]:
        raise AssertionError(f"the browsers of table {table_id} show tables {shown}")
    seated = SeatedTable(play, table_id, contexts, [first, second])
    seated.status = play.wait_change(first, "", timeout=timeout)  # drawn: the status before any move
    return seated


@dataclass
class TablesRun:
    """What the load test saw: moves per table, and every time a table's browsers disagreed or a move showed
    at another table."""

    moves: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    peak_mb: float = 0.0
    objects: dict[str, dict[str, int]] = field(default_factory=dict)
    """The server's live objects by kind (:func:`apps._memory.live_objects`) at the warm start and after."""

    def kept_pages(self) -> dict[str, tuple[int, int]]:
        """The kinds a page is made of (a table holds none) that are above their warm count after the tables
        closed: {kind: (warm, after)}."""
        warm, after = self.objects.get("warm", {}), self.objects.get("after", {})
        return {k: (warm[k], after[k]) for k in PAGE_KINDS if k in warm and k in after and after[k] > warm[k]}


def play_tables(tables: list[SeatedTable], seconds: float, server: psutil.Process, run: TablesRun,
                timeout: float = 60.0, rounds_at_least: int = 0) -> None:
    """Each table in turn: its maker moves, the move must show in the table's other browser, and every browser
    at every other table must still show what it showed before (a game kept apart); for ``seconds``, and for at
    least ``rounds_at_least`` rounds (a move at each table)."""
    end = time.time() + seconds
    rounds = 0
    while time.time() < end or rounds < rounds_at_least:
        for t in tables:
            before = {other.id: other.status for other in tables}
            try:
                t.play.move(t.pages[0])
                t.status = t.play.wait_change(t.pages[0], before[t.id], timeout=timeout)
                t.play.wait_status(t.pages[1], t.status, timeout=timeout)
            except Exception as exc:  # a lost update: said, and the run goes on with the next table
                run.failures.append(f"table {t.id}: a move did not show in both its browsers: {exc}")
                t.status = t.play.shown(t.pages[0])
                continue
            t.moves += 1
            for other in tables:
                if other is t:
                    continue
                for page in other.pages:
                    if (now := other.play.shown(page)) != before[other.id]:
                        run.failures.append(f"a move at table {t.id} changed table {other.id}: "
                                            f"'{before[other.id]}' became '{now}'")
                        other.status = now
        rounds += 1
        run.peak_mb = max(run.peak_mb, mb(server))
        print(f"  {len(tables)} tables, round {rounds}: {sum(t.moves for t in tables)} moves, "
              f"{mb(server):.0f} MB", flush=True)
    for t in tables:
        run.moves[t.id] = t.moves


def soak_tables(minutes: float, tables: int, games: list[str] | None = None, session_ms: int | None = None,
                warm_moves: int = 6, browser: Any | None = None,
                drop_tables: bool = True) -> tuple[dict[str, float], TablesRun]:
    """Issue 12's load test: ``tables`` tables (two browser contexts each) over the games of
    :data:`apps._browser.TABLE_PLAYS`, played for ``minutes``, then closed; the server's memory cold, warm (one
    table of each game played and closed first), during and after, and what the play saw. ``browser``: a
    Chromium already running (a test's), else one is launched. ``drop_tables``: the warm start and "after" are
    read once the closed tables are idle and dropped (up to :data:`apps._soak.TABLES_DROPPED` s each); without
    it, with the tables still held ("after" is then "after, tables held")."""
    import contextlib

    from playwright.sync_api import sync_playwright

    plays = [TABLE_PLAYS[g] for g in (games or list(TABLE_PLAYS))]
    poll = 0.5 if session_ms else 5.0
    figures: dict[str, float] = {}
    run = TablesRun()
    with served(session_ms=session_ms) as (server, url):
        figures["cold"] = mb(server)
        with contextlib.ExitStack() as stack:
            if browser is None:
                browser = launch(stack.enter_context(sync_playwright()))
                stack.callback(browser.close)
            warm = [open_table(browser, url, play) for play in plays]
            # The code of play in (imports, compiled paths, the worker threads' physics, caches every table shares).
            # Rounds, not time: with no time given a call plays no round, and the first measured moves would warm it.
            play_tables(warm, 0, server, TablesRun(), rounds_at_least=warm_moves)
            for t in warm:
                t.close()
            held = 0 if drop_tables else None
            figures["warm"] = settle(url, server, "warm-up tables closed", poll=poll, tables=held)
            report = server_report(url)
            run.objects["warm"] = report["objects"]
            print_report("warm start", report)
            print(f"opening {tables} tables, two browsers each", flush=True)
            seated = [open_table(browser, url, plays[i % len(plays)]) for i in range(tables)]
            ids = [t.id for t in seated]
            if len(set(ids)) != len(ids):
                run.failures.append(f"two browsers' new tables got the same id: {ids}")
            figures[f"{tables} tables open"] = mb(server)
            print(f"{tables} tables open ({2 * tables} browser contexts): {mb(server):.0f} MB", flush=True)
            play_tables(seated, 60 * minutes, server, run)
            figures["during (peak)"] = max(run.peak_mb, figures[f"{tables} tables open"])
            print_report("during", server_report(url))
            for t in seated:
                t.close()
            figures["after, tables held"] = settle(url, server, "tables closed", poll=poll,
                                                   timeout=30 if session_ms else SESSION_EXPIRY * 4,
                                                   sessions=run.objects["warm"]["server sessions"])
            print_report("after the tables' browsers closed, the tables held", server_report(url))
            figures["after"] = (settle(url, server, "tables idle", poll=poll, tables=0) if drop_tables
                                else figures["after, tables held"])
            report = server_report(url)
            run.objects["after"] = report["objects"]
            print_report("after, the tables dropped", report)
    return figures, run


def main_tables(minutes: float, tables: int, games: list[str] | None) -> int:
    """Run :func:`soak_tables` and print its figures; fails (1) if a game was not kept apart."""
    unknown = sorted(set(games or []) - set(TABLE_PLAYS))
    if unknown:
        print(f"not played at tables by the load test yet: {', '.join(unknown)} (it knows {', '.join(TABLE_PLAYS)})")
        return 2
    figures, run = soak_tables(minutes, tables, games)
    for name, value in figures.items():
        print(f"server memory {name}: {value:.0f} MB")
    print(f"moves per table: {', '.join(f'{k} {v}' for k, v in run.moves.items())}")
    for failure in run.failures:
        print(f"FAILED: {failure}")
    for kind, (warm, after) in run.kept_pages().items():
        print(f"kept after the tables closed: {kind} {warm} at the warm start, {after} after")
    growth = figures["after"] / figures["warm"] - 1
    print(f"after the tables closed vs the warm start: {100 * growth:+.1f}% (aim: within 10%); "
          f"{'every game kept apart' if not run.failures else f'{len(run.failures)} failure(s)'}")
    return 1 if run.failures else 0
