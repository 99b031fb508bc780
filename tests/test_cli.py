"""The ``dojo`` command: version, game sub-command discovery, ``dojo lab`` and a real ``dojo serve``."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from browser_helpers import free_port, wait_until_live

import engine
from engine import cli

DICE_CLI = '''
def register(subparsers):
    dice = subparsers.add_parser("dice", help="a fake game")
    sub = dice.add_subparsers(dest="dice_command", required=True)
    odds = sub.add_parser("odds")
    odds.add_argument("--bonus", type=int, default=0)
    odds.set_defaults(func=lambda args: print(f"odds with +{args.bonus}") or args.bonus)
'''


def fake_engine(make_package):
    return make_package({
        "dice/cli.py": DICE_CLI,
        "core/cli.py": DICE_CLI.replace('"dice"', '"core"'),  # core is not a game
        "zoo/rules.py": "",  # a game package without a cli module
        "chits/cli.py": "def helper():\n    pass\n",  # a cli module without register
        "_hidden/cli.py": DICE_CLI.replace('"dice"', '"hidden"'),
    })


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"dojo {engine.__version__}"


def test_no_command_prints_help_and_fails(capsys):
    assert cli.main([]) == 2
    assert "serve" in capsys.readouterr().out


def test_unknown_options_are_refused_outside_lab(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["serve", "--colour", "red"])
    assert exit_.value.code == 2
    assert "unrecognized arguments: --colour red" in capsys.readouterr().err


def test_game_sub_commands_are_discovered_from_game_packages(make_package, capsys):
    package = fake_engine(make_package)
    assert [m.__name__.split(".")[-2] for m in cli.game_command_modules(package)] == ["dice"]
    assert cli.main(["dice", "odds", "--bonus", "3"], package=package) == 3
    assert capsys.readouterr().out == "odds with +3\n"
    with pytest.raises(SystemExit):
        cli.main(["core"], package=package)


def test_lab_runs_jupyterlab_on_the_notebooks_of_this_clone(monkeypatch, tmp_path):
    calls = []
    monkeypatch.setattr(cli, "run_instead", lambda argv, env: calls.append((argv, env)) or 0)
    monkeypatch.setattr(cli.os, "geteuid", lambda: 1000)
    monkeypatch.setattr(cli, "panel_stylesheets", lambda: tmp_path)
    monkeypatch.setenv("JUPYTERLAB_DIR", str(tmp_path / "lab"))
    monkeypatch.delenv("PANEL_INLINE", raising=False)
    monkeypatch.delenv("PANEL_CDN_ROOT", raising=False)
    cli.main(["lab", "--port", "8890", "--no-browser"])
    [(argv, env)] = calls
    # the dashboards' clicks go to the kernel's main shell (JupyterLab's own setting, as an override)
    assert (tmp_path / "lab" / "settings" / "overrides.d" / "tabletop-dojo.json").is_file()
    assert env["PANEL_INLINE"] == "true"  # the kernels load Panel and Bokeh inline: notebooks work offline
    # and the panes Panel updates later link their stylesheets from the Jupyter server, not from the CDN
    assert env["PANEL_CDN_ROOT"] == "http://localhost:8890/static/panel/"
    assert argv[:4] == [sys.executable, "-m", "jupyter", "lab"]
    assert argv[4] == f"--ServerApp.root_dir={cli.REPO / 'notebooks'}"
    assert argv[5:] == [f"--ServerApp.extra_static_paths={tmp_path}", "--port", "8890", "--no-browser"]
    assert (cli.REPO / "notebooks" / "00_dice_and_odds.ipynb").is_file()


def test_lab_without_a_port_chooses_one_for_the_stylesheets_url(monkeypatch, tmp_path):
    calls = []
    monkeypatch.setattr(cli, "run_instead", lambda argv, env: calls.append((argv, env)) or 0)
    monkeypatch.setattr(cli, "panel_stylesheets", lambda: tmp_path)
    monkeypatch.setattr(cli, "lab_overrides", lambda: None)
    monkeypatch.setattr(cli, "free_lab_port", lambda ip: 8893)
    monkeypatch.delenv("PANEL_CDN_ROOT", raising=False)
    cli.main(["lab"])
    [(argv, env)] = calls
    assert argv[-2:] == ["--ServerApp.port=8893", "--ServerApp.port_retries=0"]  # Jupyter may not move elsewhere
    assert env["PANEL_CDN_ROOT"] == "http://localhost:8893/static/panel/"


def test_lab_without_panels_stylesheets_leaves_the_cdn_as_it_was(monkeypatch):
    calls = []
    monkeypatch.setattr(cli, "run_instead", lambda argv, env: calls.append((argv, env)) or 0)
    monkeypatch.setattr(cli, "panel_stylesheets", lambda: None)
    monkeypatch.setattr(cli, "lab_overrides", lambda: None)
    monkeypatch.delenv("PANEL_CDN_ROOT", raising=False)
    cli.main(["lab", "--port", "8890"])
    [(argv, env)] = calls
    assert "PANEL_CDN_ROOT" not in env and not any("extra_static_paths" in a for a in argv)


def test_lab_keeps_a_panel_inline_setting_of_the_user():
    assert cli.lab_environment({"PANEL_INLINE": "false", "HOME": "/h"}) == {"PANEL_INLINE": "false", "HOME": "/h"}
    mine = {"PANEL_INLINE": "true", "PANEL_CDN_ROOT": "https://mirror.example/panel/"}
    assert cli.lab_environment(mine, cdn_root="http://localhost:8888/static/panel/") == mine


@pytest.mark.parametrize(("args", "root"), [
    (["--port", "8890"], "http://localhost:8890/static/panel/"),
    (["--ServerApp.port=9000", "--ServerApp.ip=127.0.0.1"], "http://127.0.0.1:9000/static/panel/"),
    (["--port=9000", "--ServerApp.base_url=/user/ana/"], "http://localhost:9000/user/ana/static/panel/"),
    (["--port", "9000", "--ip", "::1"], "http://[::1]:9000/static/panel/"),
    (["--port", "9000", "--ip", "0.0.0.0"], None),  # a browser on another machine would not reach localhost
    (["--no-browser"], None),  # no port: the URL cannot be known
])
def test_lab_cdn_root_names_this_server(args, root):
    assert cli.lab_cdn_root(args) == root


def test_panel_stylesheets_copies_panels_css_where_its_cdn_has_them(tmp_path):
    import json

    import panel

    folder = cli.panel_stylesheets(tmp_path / "static")
    assert folder == tmp_path / "static"
    version = json.loads((Path(panel.__file__).parent / "package.json").read_text())["version"].split("+")[0]
    dist = folder / "panel" / version / "dist"
    assert (dist / "css" / "loading.css").read_bytes() == (Path(panel.__file__).parent / "dist" / "css" /
                                                          "loading.css").read_bytes()
    assert (dist / "bundled" / "theme" / "default.css").is_file() and (dist / "assets").is_dir()
    assert not (dist / "bundled" / "bootstrap5").exists()  # the stylesheets of panes only, not Panel's 100 MB
    (dist / "css" / "loading.css").write_text("kept")  # a second call copies nothing again
    assert cli.panel_stylesheets(tmp_path / "static") == folder and (dist / "css" / "loading.css").read_text() == "kept"
    assert [p.name for p in (folder / "panel" / version).iterdir()] == ["dist"]  # no scratch folder left behind


def test_panel_stylesheets_that_cannot_be_written_are_none(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("")
    assert cli.panel_stylesheets(blocked / "static") is None


def test_lab_as_root_allows_root(monkeypatch):
    monkeypatch.setattr(cli.os, "geteuid", lambda: 0)
    assert "--allow-root" in cli.lab_command(cli.REPO / "notebooks")


def test_lab_without_notebooks_folder_says_so(tmp_path):
    with pytest.raises(FileNotFoundError, match="no notebooks folder"):
        cli.lab_command(tmp_path / "notebooks")


def test_serve_prints_the_url_and_serves_the_landing_page(tmp_path):
    port = free_port()
    log = tmp_path / "serve.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "engine.cli", "serve", "--port", str(port), "--no-show"],
            stdout=out, stderr=subprocess.STDOUT, cwd=tmp_path,  # not the repo: works from anywhere
        )
    try:
        wait_until_live(f"http://127.0.0.1:{port}/", timeout=30)
        html = urllib.request.urlopen(f"http://localhost:{port}/", timeout=10).read().decode()
        assert "<title>Tabletop Dojo</title>" in html
        deadline = time.time() + 5
        while f"http://localhost:{port}/" not in log.read_text():
            assert time.time() < deadline, log.read_text()
            time.sleep(0.1)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_lab_overrides_keep_a_dashboards_clicks_on_the_kernels_main_shell(tmp_path):
    """JupyterLab reads the file as an override of its own setting (read back by jupyterlab_server, as the
    server does); a second call rewrites only an edited file; an unwritable place gives None, not a failure."""
    import os

    from jupyterlab_server.settings_utils import get_settings

    path = cli.lab_overrides(tmp_path / "lab")
    assert path == tmp_path / "lab" / "settings" / "overrides.d" / "tabletop-dojo.json"
    schemas = Path(sys.prefix) / "share" / "jupyter" / "lab" / "schemas"
    read, _ = get_settings(str(tmp_path / "lab" / "settings"), str(schemas), str(tmp_path / "user"),
                           schema_name="@jupyterlab/apputils-extension:kernels-settings")
    assert read["schema"]["properties"]["commsOverSubshells"]["default"] == "disabled"
    written = os.stat(path).st_mtime_ns
    assert cli.lab_overrides(tmp_path / "lab") == path and os.stat(path).st_mtime_ns == written
    path.write_text("{}")
    assert cli.lab_overrides(tmp_path / "lab") == path and "disabled" in path.read_text()
    (tmp_path / "file").write_text("")
    assert cli.lab_overrides(tmp_path / "file") is None  # a file where the folder should be
