"""The dashboards' autosave: where it writes, what a new page offers, and that a failing disk or a bad
file never costs the game in progress."""

from __future__ import annotations

from pathlib import Path

import param
import pytest

from apps._files import Autosave, data_dir


class Session(param.Parameterized):
    """The two things an autosave uses of a session model: ``version`` and ``save()``."""

    version = param.Integer(default=0)
    text = param.String(default="game 0")

    def save(self) -> str:
        return self.text


def test_the_data_dir_comes_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("TABLETOP_DOJO_DATA", str(tmp_path / "mine"))
    assert data_dir() == tmp_path / "mine"
    monkeypatch.delenv("TABLETOP_DOJO_DATA")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert data_dir() == tmp_path / "xdg" / "tabletop-dojo"


def test_every_change_is_written_and_the_next_page_offers_it(dashboard_data: Path):
    first = Session()
    page = Autosave("duel", first, load=lambda text: True)
    assert page.snapshot is None and not page.button.visible
    first.param.update(text="game 1", version=1)
    assert (dashboard_data / "duel-last.json").read_text() == "game 1"
    first.param.update(text="game 2", version=2)

    loaded = []
    second = Session()
    later = Autosave("duel", second, load=lambda text: loaded.append(text) or True)
    assert later.snapshot == "game 2" and later.button.visible and "Resume the last game" in later.button.name
    second.param.update(text="a new game", version=1)  # this page plays on before resuming...
    later.button.clicks += 1
    assert loaded == ["game 2"] and not later.button.visible  # ...and still resumes what it was offered
    assert [p.name for p in dashboard_data.iterdir()] == ["duel-last.json"]  # no temporary files left


def test_a_refused_resume_keeps_the_offer_and_a_failing_disk_keeps_the_game(dashboard_data: Path):
    (dashboard_data / "duel-last.json").write_text("{damaged")
    session = Session()
    page = Autosave("duel", session, load=lambda text: False)
    assert not page.resume(lambda text: False) and page.button.visible
    blocked = Autosave("duel", session, load=lambda text: True, directory=dashboard_data / "duel-last.json")
    blocked.write("game 1")  # its folder is a file: the write fails, quietly, with the reason kept
    assert blocked.error is not None and "autosaved" in blocked.error
    assert (dashboard_data / "duel-last.json").read_text() == "{damaged"


@pytest.mark.parametrize("module", ["kzin", "kf2100", "zoo"])
def test_a_dashboard_outside_a_server_neither_writes_nor_offers(module, dashboard_data: Path):
    import importlib

    app = importlib.import_module(f"apps.{module}").create_app()
    if module in ("kzin", "zoo", "kf2100"):  # a page component: its controls hold the files
        app.controls.new_game()
        files = app.controls.files
    else:
        app.dashboard.new_game()
        files = app.dashboard._files
    assert files.autosave is None and list(dashboard_data.iterdir()) == []


def test_the_dashboard_benchmarks_keep_their_autosaves_out_of_the_data_dir(monkeypatch, dashboard_data: Path):
    import sys
    import types

    from apps import _bench

    seen = []
    module = types.ModuleType("fake_game_app")
    module.create_app = lambda: None
    module.benchmark = lambda: (data_dir().mkdir(exist_ok=True), seen.append(data_dir()))
    module.create_app.__module__ = "fake_game_app"
    monkeypatch.setitem(sys.modules, "fake_game_app", module)
    game = types.SimpleNamespace(title="Fake", create_app=module.create_app)
    monkeypatch.setattr(_bench, "discover_games", lambda: [game])
    assert _bench.main() == 0
    assert len(seen) == 1 and seen[0] != dashboard_data and not seen[0].exists()  # a scratch folder, removed
    assert data_dir() == dashboard_data  # and the setting is as it was
