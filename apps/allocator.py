"""The server's allocator: glibc's ``malloc`` for every object, so that what closed tabs freed goes back to the system.

CPython's own allocator for objects of 512 bytes or less (pymalloc) takes memory from the system in 1 MiB arenas and
hands an arena back only once every object in it is free. Measured with the soak (``python -m apps._soak``, 20 tabs
over the three games played for two minutes, then closed): the live small objects came back exactly to their warm
figure (106 MB), but the arenas grew from 128 to 230 MB and stayed there, the few objects that outlive a tab being
spread over them, so the server's resident memory stayed 30% above its warm start. Under ``PYTHONMALLOC=malloc``
every object is its own glibc allocation, and the ``malloc_trim`` that :class:`apps.server.MemoryRelease` runs after
tabs close returns every free page, not only whole arenas: the same soak came back to 8.8% above the warm start.
The tables load test (``python -m apps._soak --tables 10 --minutes 3``: 20 browser contexts at 10 tables, 5 moves
a table), run the same hour under each: warm start 407 MB under malloc and 408 MB under pymalloc, peak 541 against
551 MB, after the tables dropped 439 MB (+7.7%) against 496 MB (+21.8%). The dashboard benchmark's click medians
under either allocator were within their run-to-run spread (``apps._bench``, two runs each on a loaded machine).

``PYTHONMALLOC`` is read once, when the interpreter starts, so ``dojo serve`` starts itself again with it set (the
same process: ``execve`` keeps the PID). A ``PYTHONMALLOC`` already set, to any value, is kept (``pymalloc`` brings
CPython's allocator back); off glibc (macOS, Windows, musl) there is no ``malloc_trim`` and nothing changes.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import platform
import sys
from collections.abc import Callable, Mapping, Sequence

SWITCH = "PYTHONMALLOC"
SYSTEM = "malloc"


def wants_restart(environ: Mapping[str, str], libc: str) -> bool:
    """Whether this server should start again under glibc's allocator: on glibc, unless the switch is set."""
    return libc == "glibc" and SWITCH not in environ


def use_system_malloc(environ: Mapping[str, str] = os.environ, argv: Sequence[str] = sys.orig_argv,
                      execve: Callable[..., object] = os.execve) -> None:
    """Start this command again, the same way, under ``PYTHONMALLOC=malloc`` (see the module); returns only when
    it need not (or, with a stand-in ``execve``, after calling it)."""
    if wants_restart(environ, platform.libc_ver()[0]):
        sys.stdout.flush()
        sys.stderr.flush()
        execve(sys.executable, [sys.executable, *argv[1:]], {**environ, SWITCH: SYSTEM})


def allocator() -> str:
    """The allocator this process runs under, for the benchmarks' figures."""
    return os.environ.get(SWITCH) or "pymalloc"


def malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, which hands the free heap back to the system (:class:`apps.server.MemoryRelease`);
    None off glibc (macOS, musl, Windows), where the allocator is left alone."""
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):
        return None
