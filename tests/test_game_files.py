"""The game-file controls without a browser (issue 18, points 6 and 7): the size limit is checked on the
server too, a loader that fails on a file is a refusal with a reason and one log line (never the upload),
and the autosave's warning comes and goes with the disk."""

from __future__ import annotations

import logging
from pathlib import Path

import param

from apps._files import MAX_UPLOAD_BYTES, Autosave, GameFiles, too_big


class Session(param.Parameterized):
    version = param.Integer(default=0)

    def save(self) -> str:
        return f"game {self.version}"


def files_with(load) -> tuple[GameFiles, list[str]]:
    refused: list[str] = []
    return GameFiles("duel", "duel.json", Session(), load, served=False, refuse=refused.append), refused


def test_a_file_over_the_limit_is_refused_by_size_before_the_loader_sees_it() -> None:
    loaded: list[bytes] = []
    files, refused = files_with(lambda data: loaded.append(data) or True)
    files.upload.param.update(filename="big.json", value=b" " * (MAX_UPLOAD_BYTES + 1))
    assert loaded == []
    assert refused == [too_big("big.json", MAX_UPLOAD_BYTES + 1)]
    assert "a saved game is at most" in refused[0] and files.upload.value is None
    files.upload.param.update(filename="small.json", value=b"{}")
    assert loaded == [b"{}"] and len(refused) == 1


def test_a_loader_that_fails_is_a_refusal_and_the_upload_stays_out_of_the_log(caplog) -> None:
    def load(data: bytes) -> bool:
        raise RecursionError("maximum recursion depth exceeded while decoding a JSON array")

    files, refused = files_with(load)
    secret = b"[" * 5000 + b"SECRET-CONTENT"
    with caplog.at_level(logging.DEBUG):
        files.upload.param.update(filename="deep.json", value=secret)
    assert refused == ["the file could not be read (RecursionError), so it was not loaded"]
    assert "SECRET" not in caplog.text and "[[[[" not in caplog.text
    assert [r.getMessage() for r in caplog.records if r.name == "apps._files"] == [
        "a 5 KB upload could not be read: RecursionError"]


def test_without_a_refuse_of_its_own_the_row_says_it_and_forgets_it_on_the_next_file() -> None:
    files = GameFiles("duel", "duel.json", Session(), lambda data: True, served=False)
    files.upload.param.update(filename="big.json", value=b" " * (MAX_UPLOAD_BYTES + 1))
    assert files.notice.visible and "big.json" in files.notice.object
    files.upload.param.update(filename="ok.json", value=b"{}")
    assert not files.notice.visible


def test_the_autosave_warning_comes_with_a_failing_disk_and_goes_with_a_working_one(tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where the data folder should be")
    session = Session()
    autosave = Autosave("duel", session, load=lambda text: True, directory=blocker / "data")
    assert not autosave.warning.visible
    session.version = 1
    assert autosave.error and autosave.warning.visible
    assert "This game is not being saved" in autosave.warning.object
    blocker.unlink()
    session.version = 2
    assert autosave.error is None and not autosave.warning.visible
    assert (blocker / "data" / "duel-last.json").read_text() == "game 2"
