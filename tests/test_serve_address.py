"""``dojo serve --address`` (issue 18, point 9): the URLs others can use are printed, never ``0.0.0.0``, their
pages may connect (websocket origin), and the printout says there is no login. Nothing here contacts an
address other than loopback: the interfaces are read from this machine, and the origin is only a header."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import threading
import time
from collections import namedtuple
from pathlib import Path

import pytest
from browser_helpers import free_port, wait_until_live
from tornado.httpclient import HTTPClientError, HTTPRequest
from tornado.websocket import websocket_connect

from apps import server

Addr = namedtuple("Addr", "family address netmask broadcast ptp")


@pytest.fixture
def machine(monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine called ``tabletop-host`` with loopback, a LAN address, a link-local one and IPv6."""
    interfaces = {
        "lo": [Addr(socket.AF_INET, "127.0.0.1", None, None, None), Addr(socket.AF_INET6, "::1", None, None, None)],
        "eth0": [Addr(socket.AF_INET, "192.0.2.7", None, None, None),
                 Addr(socket.AF_INET6, "2001:db8::7", None, None, None),
                 Addr(socket.AF_INET6, "fe80::7%eth0", None, None, None)],
        "wlan0": [Addr(socket.AF_INET, "169.254.3.3", None, None, None)],
    }
    monkeypatch.setattr(server.psutil, "net_if_addrs", lambda: interfaces)
    monkeypatch.setattr(server.socket, "gethostname", lambda: "tabletop-host")


def test_every_interface_prints_the_host_name_and_addresses_others_can_use(machine) -> None:
    lines, origins = server.serve_plan(5006, "0.0.0.0", 3)
    text = "\n".join(lines)
    assert lines[0].startswith("Tabletop Dojo dashboard: http://localhost:5006/")
    assert "http://tabletop-host:5006/" in text and "http://192.0.2.7:5006/" in text
    assert "0.0.0.0" not in text and "169.254" not in text and "127.0.0.1" not in text
    assert "no login" in text
    assert origins == ["127.0.0.1:5006", "192.0.2.7:5006", "localhost:5006", "tabletop-host:5006"]
    lines6, origins6 = server.serve_plan(5006, "::", 3)
    assert "http://[2001:db8::7]:5006/" in "\n".join(lines6) and "[2001:db8::7]:5006" in origins6
    assert not any("fe80" in o for o in origins6)


def test_one_address_prints_that_address_and_loopback_prints_no_warning(machine) -> None:
    lines, origins = server.serve_plan(8000, "192.0.2.7", 3)
    assert lines[0].startswith("Tabletop Dojo dashboard: http://192.0.2.7:8000/")
    assert "no login" in "\n".join(lines) and "192.0.2.7:8000" in origins
    lines, origins = server.serve_plan(8000, "127.0.0.1", 3)
    assert len(lines) == 1 and "no login" not in lines[0]
    assert origins == ["127.0.0.1:8000", "localhost:8000"]


def websocket_refused(port: int, origin: str) -> bool:
    """Whether the server refuses (403) a websocket from a page served at ``origin`` (sent to 127.0.0.1)."""
    async def attempt() -> bool:
        request = HTTPRequest(f"ws://127.0.0.1:{port}/ws", headers={"Origin": origin}, request_timeout=10)
        try:
            conn = await websocket_connect(request)
        except HTTPClientError as exc:
            return exc.code == 403
        except Exception:  # past the origin check (no session token): not a refusal of the origin
            return False
        conn.close()
        return False

    result: list[bool] = []  # on a thread of its own: a browser test's event loop may be running on this one
    worker = threading.Thread(target=lambda: result.append(asyncio.run(asyncio.wait_for(attempt(), 20))))
    worker.start()
    worker.join(timeout=30)
    return result[0]


def test_serve_on_every_interface_lets_the_printed_hosts_connect(tmp_path: Path) -> None:
    port = free_port()
    log = tmp_path / "serve.log"
    with log.open("w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "engine.cli", "serve", "--address", "0.0.0.0", "--port",
                                 str(port), "--no-show"], stdout=out, stderr=subprocess.STDOUT, cwd=tmp_path)
    try:
        wait_until_live(f"http://127.0.0.1:{port}/", timeout=30)
        deadline = time.time() + 5
        while "no login" not in log.read_text():
            assert time.time() < deadline, log.read_text()
            time.sleep(0.1)
        text = log.read_text()
        assert "0.0.0.0" not in text
        name = socket.gethostname()
        assert f"http://{name}:{port}/" in text
        assert not websocket_refused(port, f"http://{name}:{port}")
        assert websocket_refused(port, f"http://elsewhere.example:{port}")
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def release_on_a_recorded_loop(monkeypatch: pytest.MonkeyPatch) -> tuple[server.MemoryRelease, list, list[int]]:
    """A memory release whose IOLoop only records what it is asked to run later, and whose trim is recorded."""
    scheduled: list = []
    trims: list[int] = []

    class Loop:
        def call_later(self, delay, fn):
            scheduled.append((delay, fn))

    monkeypatch.setattr(server.IOLoop, "current", staticmethod(lambda: Loop()))
    release = server.MemoryRelease()
    monkeypatch.setattr(release, "_trim", trims.append)
    return release, scheduled, trims


def test_a_closed_session_is_followed_by_one_release_of_its_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """However many sessions end at once, one release is scheduled; it collects their cycles and trims."""
    import gc
    import weakref

    release, scheduled, trims = release_on_a_recorded_loop(monkeypatch)

    class Page:
        pass

    gc.disable()
    try:
        page = Page()
        page.me = page  # a cycle, like a closed tab's dashboard and its widgets
        ref = weakref.ref(page)
        del page
        for _ in range(5):
            release.session_destroyed(None)
        assert len(scheduled) == 1 and scheduled[0][0] == server.RELEASE_DELAY
        assert ref() is not None
        scheduled[0][1]()
        assert ref() is None and trims == [0]
        release.session_destroyed(None)
        assert len(scheduled) == 2  # the next closed tab gets its own release
    finally:
        gc.enable()


def test_idle_tables_dropped_by_a_sweep_are_followed_by_a_release(monkeypatch: pytest.MonkeyPatch,
                                                                   tmp_path: Path) -> None:
    """A closed tab's table outlives its page until it is idle; when the server's sweep drops it, its game session
    is freed and the heap trimmed as a closed page's is (else the soak's memory after the tables went stayed up)."""
    import gc
    import weakref

    import panel as pn

    from apps import _tables
    from engine.core.seal import Sealer
    from engine.core.tables import TableRegistry
    from engine.kzin.table import KZIN_TABLE

    now = [1000.0]
    reg = TableRegistry(tmp_path / "tables", {"kzin": KZIN_TABLE}, Sealer.in_folder(tmp_path), idle_seconds=20,
                        clock=lambda: now[0])
    monkeypatch.setattr(_tables, "registry", lambda: reg)
    tasks: dict = {}
    monkeypatch.setattr(pn.state, "schedule_task", lambda name, fn, period: tasks.setdefault(name, fn))
    release, scheduled, trims = release_on_a_recorded_loop(monkeypatch)
    _tables.start_sweeps(dropped=release.tables_dropped)
    (sweep,) = tasks.values()

    table = reg.create("kzin", None)
    session = weakref.ref(table.session)
    del table
    sweep()
    assert scheduled == [] and session() is not None  # not idle yet: nothing dropped, nothing to release
    now[0] += 21
    gc.disable()
    try:
        sweep()
        assert len(scheduled) == 1 and scheduled[0][0] == server.RELEASE_DELAY
        scheduled[0][1]()
        assert session() is None and trims == [0]
    finally:
        gc.enable()
