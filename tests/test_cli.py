"""The ``dojo`` command: version, game sub-command discovery, ``dojo lab`` and a real ``dojo serve``."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request

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


def test_lab_runs_jupyterlab_on_the_notebooks_of_this_clone(monkeypatch):
    calls = []
    monkeypatch.setattr(cli, "run_instead", lambda argv, env: calls.append((argv, env)) or 0)
    monkeypatch.setattr(cli.os, "geteuid", lambda: 1000)
    monkeypatch.delenv("PANEL_INLINE", raising=False)
    cli.main(["lab", "--port", "8890", "--no-browser"])
    [(argv, env)] = calls
    assert env["PANEL_INLINE"] == "true"  # the kernels load Panel and Bokeh inline: notebooks work offline
    assert argv[:4] == [sys.executable, "-m", "jupyter", "lab"]
    assert argv[4] == f"--ServerApp.root_dir={cli.REPO / 'notebooks'}"
    assert argv[5:] == ["--port", "8890", "--no-browser"]
    assert (cli.REPO / "notebooks" / "00_dice_and_odds.ipynb").is_file()


def test_lab_keeps_a_panel_inline_setting_of_the_user():
    assert cli.lab_environment({"PANEL_INLINE": "false", "HOME": "/h"}) == {"PANEL_INLINE": "false", "HOME": "/h"}


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
