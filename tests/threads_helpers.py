"""Helpers for tests of work that several pages (a table's) ask for at once on their worker threads."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any


def slowed(real: Callable[..., Any], calls: list[int], seconds: float = 0.3) -> Callable[..., Any]:
    """``real``, counting its calls in ``calls`` and taking ``seconds`` longer: long enough for every page to ask
    while the first is still working."""

    def slow(*args: Any, **kwargs: Any) -> Any:
        calls.append(threading.get_ident())
        time.sleep(seconds)
        return real(*args, **kwargs)

    return slow


def asked_at_once(ask: Callable[[], Any], pages: int = 3) -> list[Any]:
    """What ``ask()`` returns to each of ``pages`` threads that call it at the same time."""
    got: list[Any] = []
    threads = [threading.Thread(target=lambda: got.append(ask())) for _ in range(pages)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return got
