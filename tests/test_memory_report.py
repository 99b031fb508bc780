"""The server's memory report (:mod:`apps._memory`) lists the live Bokeh sessions and the pending tasks; it must
answer with a destroyed session still in the heap (its ``/memory-report`` raised a 500 there and failed a CI run)."""

from __future__ import annotations

import asyncio

import pytest
from bokeh.document import Document
from bokeh.server.session import ServerSession
from bokeh.util.token import generate_session_id

from apps._memory import pending_tasks, server_sessions

pytestmark = pytest.mark.no_event_loop  # asyncio.run


def test_a_destroyed_session_in_the_heap_is_listed_not_raised_on():
    live = ServerSession(generate_session_id(), Document())
    gone = ServerSession(generate_session_id(), Document())
    gone.destroy()
    found = {s["id"]: s for s in server_sessions()}
    assert found[gone.id[:8]]["destroyed"] is True and found[gone.id[:8]]["path"] is None
    assert found[live.id[:8]]["destroyed"] is False and found[live.id[:8]]["connections"] == 0
    live.destroy()


def test_pending_tasks_are_listed_by_what_they_run_and_where_they_wait():
    async def waits_for_ever(event: asyncio.Event) -> None:
        await event.wait()

    async def main() -> dict[str, int]:
        event = asyncio.Event()
        tasks = [asyncio.ensure_future(waits_for_ever(event)) for _ in range(2)]
        await asyncio.sleep(0)
        found = pending_tasks()
        event.set()
        await asyncio.gather(*tasks)
        return found

    found = asyncio.run(main())
    [(key, count)] = [(k, n) for k, n in found.items() if "waits_for_ever" in k]
    assert count == 2 and "test_memory_report.py" in key
    assert pending_tasks() == {}  # outside a running loop: nothing of the server's to list


def test_the_small_object_heap_counts_live_blocks_within_the_arenas_kept():
    """A million small objects show as about their size in live blocks, inside arenas at least as large; freed
    again, the live blocks fall back while some arenas may stay (the memory the soak's figures keep)."""
    from apps._memory import small_object_heap

    before = small_object_heap()
    assert 0 < before["blocks"] <= before["arenas"]
    objects = [(i, i + 1) for i in range(1_000_000)]  # a tuple of two ints: 56 bytes, two ints 28-32 each
    during = small_object_heap()
    assert during["blocks"] - before["blocks"] > 50 and during["blocks"] <= during["arenas"]
    del objects
    after = small_object_heap()
    assert after["blocks"] < during["blocks"] - 50
