"""dojo serve runs under glibc's malloc (apps/allocator.py), so closed tabs' memory goes back to the system."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from browser_helpers import free_port, wait_until_live

from apps.allocator import SWITCH, allocator, use_system_malloc, wants_restart


def test_only_glibc_without_the_switch_set_restarts():
    assert wants_restart({}, "glibc")
    assert not wants_restart({SWITCH: "pymalloc"}, "glibc")  # a user's choice, any value, is kept
    assert not wants_restart({SWITCH: "malloc"}, "glibc")  # already restarted: never twice
    assert not wants_restart({}, "")  # macOS, Windows, musl: no malloc_trim, nothing to gain


def test_the_restart_runs_the_same_command_with_the_switch_set():
    calls = []
    use_system_malloc({"HOME": "/h"}, ["/venv/bin/python", "-m", "engine.cli", "serve", "--port", "1"],
                      lambda path, argv, env: calls.append((path, list(argv), dict(env))))
    if platform.libc_ver()[0] != "glibc":
        assert calls == []
        return
    assert calls == [(sys.executable, [sys.executable, "-m", "engine.cli", "serve", "--port", "1"],
                      {"HOME": "/h", SWITCH: "malloc"})]
    calls.clear()
    use_system_malloc({SWITCH: "pymalloc"}, ["python", "x"], lambda *a: calls.append(a))
    assert calls == []


def test_allocator_names_the_switch_or_pymalloc(monkeypatch):
    monkeypatch.delenv(SWITCH, raising=False)
    assert allocator() == "pymalloc"
    monkeypatch.setenv(SWITCH, "malloc")
    assert allocator() == "malloc"


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="the restart is for glibc only")
def test_dojo_serve_runs_under_malloc_in_the_same_process(tmp_path: Path):
    port = free_port()
    with (tmp_path / "serve.log").open("w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "engine.cli", "serve", "--port", str(port), "--no-show"],
                                stdout=out, stderr=subprocess.STDOUT, cwd=tmp_path,
                                env={k: v for k, v in os.environ.items() if k != SWITCH})
    try:
        wait_until_live(f"http://127.0.0.1:{port}/", timeout=30)
        served = psutil.Process(proc.pid)  # execve kept the PID: the process started is the one serving
        assert served.environ().get(SWITCH) == "malloc"
        assert "engine.cli" in served.cmdline() and "serve" in served.cmdline()
        time.sleep(0.1)
        assert proc.poll() is None
    finally:
        proc.terminate()
        proc.wait(timeout=10)
