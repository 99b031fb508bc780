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
import json
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import panel as pn
from bokeh.models import CustomJS

from apps.commands import on_page
from engine.core import serialize

MAX_UPLOAD_BYTES: int = getattr(serialize, "MAX_SAVE_BYTES", 4 * 1024 * 1024)
"""The largest file the pages take: the engine's own limit on a saved game when it has one
(``engine.core.serialize.MAX_SAVE_BYTES``), else the same 4 MB here. Far below the server's websocket limit
(Bokeh's 20 MB message, which a file of about 15 MB fills once base64-encoded), so a file the browser refuses
never reaches the connection and one that slips through (a page without its guard) is refused by size here."""

log = logging.getLogger(__name__)

NO_HTML = {"html": False}
"""``renderer_options`` of every Markdown pane and Alert that shows text from a file, a log or a player:
markdown-it then prints raw HTML as text, so a payload in a saved game is shown, never run (issue 18)."""


def size_text(n: int) -> str:
    return f"{n / 1024 / 1024:.1f} MB" if n >= 1024 * 1024 else f"{max(1, round(n / 1024))} KB"


def too_big(name: str, size: int) -> str:
    """The refusal of an oversize file (its name is the player's: shown by panes that print HTML as text)."""
    return (f"the file {name or 'chosen'} is {size_text(size)}; a saved game is at most {size_text(MAX_UPLOAD_BYTES)}, "
            "so it was not loaded")


UPLOAD_GUARD = """
// Refuse an oversize file in the browser, before Bokeh reads it and sends it over the page's websocket (a
// message over the server's limit closes the connection, and the page with it). A capturing listener on the
// file input's shadow root runs before the input's own; the refusal goes to the server through a hidden
// text input, so the page says why.
const views = [...Bokeh.index.all_views()];
const has = (v, name) => (v.model.css_classes ?? []).includes(name);
const box = views.find((v) => has(v, box_class) && v.shadow_el != null);
const notice = views.find((v) => has(v, notice_class));
if (box == null || notice == null || box.dojo_guarded) { return; }
box.dojo_guarded = true;
box.shadow_el.addEventListener("change", (event) => {
  const input = event.target;
  const file = input.files && input.files[0];
  if (file == null || file.size <= limit) { return; }
  event.stopImmediatePropagation();
  input.value = "";
  notice.model.value = JSON.stringify({name: file.name, size: file.size, at: Date.now()});
}, true);
"""


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
        self.warning = pn.pane.Alert("", alert_type="warning", visible=False, margin=(0, 6), name="autosave",
                                     sizing_mode="stretch_width", renderer_options=NO_HTML)
        try:
            self.snapshot: str | None = self.path.read_text(encoding="utf-8")
            saved_at = time.strftime("%d %b %H:%M", time.localtime(self.path.stat().st_mtime))
        except (OSError, UnicodeDecodeError):
            self.snapshot, saved_at = None, ""
        self.button = pn.widgets.Button(label=f"Resume the last game (saved {saved_at})", margin=(4, 6),
                                        visible=self.snapshot is not None)
        self.button.on_click(on_page(lambda: self.resume(load)))
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
        self._show_error()

    def _show_error(self) -> None:
        """Say on the page that the game is not being saved (a reload would lose it), until a save works."""
        if self.error is None:
            if self.warning.visible:
                self.warning.visible = False
            return
        text = (f"**This game is not being saved:** {self.error} to {self.path.parent}. Play goes on, but a "
                "reload or a closed tab loses it: use *Save game* to keep a copy. This goes once a save works.")
        if self.warning.object != text or not self.warning.visible:
            self.warning.param.update(object=text, visible=True)


class GameFiles:
    """Save game (a JSON download of ``session.save()``), Load a saved game (``load``, the page's own loader,
    which refuses a bad file and keeps the game) and, on a served page, the autosave with its Resume button
    and its warning when the game is not being saved.

    A file over :data:`MAX_UPLOAD_BYTES` is refused by the browser before it is sent (and here, should it
    come), with ``refuse(reason)``: the page's own way of saying a file was not loaded (without one, a notice
    beside the file input says it). A loader that fails on a file in a way it did not foresee is refused the
    same way, and the server's log gets one line, never the file."""

    UPLOAD_CLASS = "dojo-upload"
    NOTICE_CLASS = "dojo-upload-refused"

    def __init__(self, game: str, filename: str, session: Any, load: Callable[[str | bytes], bool],
                 served: bool, refuse: Callable[[str], None] | None = None) -> None:
        self._load = load
        self.download = pn.widgets.FileDownload(callback=lambda: io.StringIO(session.save()), filename=filename,
                                                label="Save game", embed=False, margin=(4, 6))
        self.upload = pn.widgets.FileInput(accept=".json", margin=(4, 6), css_classes=[self.UPLOAD_CLASS])
        self.upload.param.watch(self.load_file, "value")
        self.notice = pn.pane.Alert("", alert_type="danger", visible=False, margin=(0, 6),
                                    renderer_options=NO_HTML)
        self._refuse = refuse or self._show_notice
        self._refused_in_browser = pn.widgets.TextInput(visible=False, css_classes=[self.NOTICE_CLASS])
        self._refused_in_browser.param.watch(self._browser_refused, "value")
        self.autosave = Autosave(game, session, load) if served else None
        doc = pn.state.curdoc if served else None
        if doc is not None:
            doc.js_on_event("document_ready", CustomJS(code=UPLOAD_GUARD, args={
                "box_class": self.UPLOAD_CLASS, "notice_class": self.NOTICE_CLASS, "limit": MAX_UPLOAD_BYTES}))

    @property
    def warning(self) -> pn.pane.Alert | None:
        """The autosave's warning that the game is not being saved (None on a page that does not autosave)."""
        return self.autosave.warning if self.autosave else None

    def load_file(self, event: Any) -> None:
        """Load the chosen file, then forget it, in the browser and here, so that choosing the same file again
        loads it again."""
        data = event.new
        if not data:
            return
        if self.notice.visible:
            self.notice.visible = False
        try:
            if len(data) > MAX_UPLOAD_BYTES:
                self.refuse(too_big(self.upload.filename or "", len(data)))
            else:
                self._load(data)
        except Exception as exc:  # a loader's own bug: say so, and keep the upload out of the server's log
            log.warning("a %s upload could not be read: %s", size_text(len(data)), type(exc).__name__)
            self.refuse(f"the file could not be read ({type(exc).__name__}), so it was not loaded")
        finally:
            self.upload.clear()
            self.upload.value = None

    def refuse(self, reason: str) -> None:
        self._refuse(reason)

    def _show_notice(self, reason: str) -> None:
        self.notice.param.update(object=f"Could not load the file: {reason}.", visible=True)

    def _browser_refused(self, event: Any) -> None:
        try:
            info = json.loads(event.new)
            name, size = str(info["name"]), int(info["size"])
        except (TypeError, ValueError, KeyError):
            return  # not the guard's report: nothing to say
        self.refuse(too_big(name, size))

    def row(self, with_warning: bool = True) -> pn.Row:
        """The controls; ``with_warning=False`` when the page shows :attr:`warning` where it is seen first."""
        limit = pn.pane.Markdown(f"Load a saved game (at most {size_text(MAX_UPLOAD_BYTES)}):", margin=(0, 6))
        return pn.Row(self.download, pn.Column(limit, self.upload, self.notice, self._refused_in_browser),
                      *([self.autosave.button] if self.autosave else []),
                      *([self.autosave.warning] if self.autosave and with_warning else []))
