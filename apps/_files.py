"""Save, load and resume: the game-file controls every dashboard shows, and the autosave behind Resume.

:class:`GameFiles` is the row of controls (Save game, Load a saved game, Resume the last game) over a
session's ``save()`` and the page's own loader. :class:`Autosave` keeps the last game of each kind on disk,
so a closed or reloaded tab can be resumed.

Every tab is a session of its own, so a reload used to start afresh and lose the game in progress. A
served dashboard now writes its session file after every change to ``<data dir>/<game>-last.json`` and a
new page offers to resume the game that was there when it opened. The data dir is ``$TABLETOP_DOJO_DATA``,
else ``$XDG_DATA_HOME/tabletop-dojo`` (``~/.local/share/tabletop-dojo``). Tabs of one game share the file:
the game that changed last is the one kept. A dashboard in a notebook neither writes nor offers anything.
"""

from __future__ import annotations

import contextlib
import io
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import panel as pn

from apps._background import page_command

NO_HTML = {"html": False}
"""``renderer_options`` of every Markdown pane and Alert that shows text from a file, a log or a player:
markdown-it then prints raw HTML as text, so a payload in a saved game is shown, never run (issue 18)."""


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
        self.button.on_click(page_command(lambda _event: self.resume(load)))
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


class GameFiles:
    """Save game (a JSON download of ``session.save()``), Load a saved game (``load``, the page's own loader,
    which refuses a bad file and keeps the game) and, on a served page, the autosave with its Resume button."""

    def __init__(self, game: str, filename: str, session: Any, load: Callable[[str | bytes], bool],
                 served: bool) -> None:
        self._load = load
        self.download = pn.widgets.FileDownload(callback=lambda: io.StringIO(session.save()), filename=filename,
                                                label="Save game", embed=False, margin=(4, 6))
        self.upload = pn.widgets.FileInput(accept=".json", margin=(4, 6))
        self.upload.param.watch(self.load_file, "value")
        self.autosave = Autosave(game, session, load) if served else None

    def load_file(self, event: Any) -> None:
        """Load the chosen file, then forget it, in the browser and here, so that choosing the same file again
        loads it again."""
        if event.new:
            self._load(event.new)
            self.upload.clear()
            self.upload.value = None

    def row(self) -> pn.Row:
        return pn.Row(self.download, pn.Column(pn.pane.Markdown("Load a saved game:", margin=(0, 6)), self.upload),
                      *([self.autosave.button] if self.autosave else []))
