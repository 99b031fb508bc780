"""The last game of each kind, kept on disk, so a closed or reloaded tab can be resumed.

Every tab is a session of its own, so a reload used to start afresh and lose the game in progress. A
served dashboard now writes its session file after every change to ``<data dir>/<game>-last.json`` and a
new page offers to resume the game that was there when it opened. The data dir is ``$TABLETOP_DOJO_DATA``,
else ``$XDG_DATA_HOME/tabletop-dojo`` (``~/.local/share/tabletop-dojo``). Tabs of one game share the file:
the game that changed last is the one kept. A dashboard in a notebook neither writes nor offers anything.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import panel as pn


def data_dir() -> Path:
    """Where the dashboards keep their files (read from the environment each time, so tests can move it)."""
    explicit = os.environ.get("TABLETOP_DOJO_DATA")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "tabletop-dojo"


class Autosave:
    """A served page's autosave: writes ``session.save()`` to the game's file after every change, and offers
    (``button``) the game that was in the file when the page opened, loaded with the page's own ``load``
    (which refuses a bad file and keeps the game in progress)."""

    def __init__(self, game: str, session: Any, load: Callable[[str], bool], directory: Path | None = None) -> None:
        self.path = (directory or data_dir()) / f"{game}-last.json"
        self.session = session
        self.error: str | None = None
        try:
            self.snapshot: str | None = self.path.read_text(encoding="utf-8")
            saved_at = time.strftime("%d %b %H:%M", time.localtime(self.path.stat().st_mtime))
        except (OSError, UnicodeDecodeError):
            self.snapshot, saved_at = None, ""
        self.button = pn.widgets.Button(label=f"Resume the last game (saved {saved_at})", margin=(4, 6),
                                        visible=self.snapshot is not None)
        self.button.on_click(lambda _event: self.resume(load))
        session.param.watch(self._write_session, ["version"])

    def resume(self, load: Callable[[str], bool]) -> bool:
        if self.snapshot is None or not load(self.snapshot):
            return False
        self.button.visible = False
        return True

    def _write_session(self, *_events: Any) -> None:
        self.write(self.session.save())

    def write(self, text: str) -> None:
        """Replace the file in one step (a crash mid-write leaves the old game, never half a file). A disk
        that refuses is noted in ``error`` and the game goes on: the autosave is a safety net, not the game."""
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.{id(self)}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, self.path)
            self.error = None
        except OSError as exc:
            self.error = f"the game could not be autosaved ({exc.strerror or exc})"
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
