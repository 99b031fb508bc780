"""Issue 18, points 1 and 2: no text from a file runs script in the player's page.

Each game's page (served, in headless Chromium, through its own file input) is given files whose strings
are HTML payloads: an ``<img src=x onerror=...>`` that sets a flag in the browser when it is drawn as HTML.
Refused files carry it in ``version``, in the inner game's ``game`` and in a name the rules look up (a
scenario, a team, a card); accepted files, forged with recomputed checksums, carry it in every string of
their log entries. After each file the page must show the payload as text (so it was shown, and escaped)
and the flag must never be set.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from browser_helpers import BOARD_READY, choose_file

from apps import kf2100, kzin, zoo
from engine.core.serialize import checksum, session_checksum
from engine.kf2100.session import KungFuSession
from engine.kzin.session import KzinSession
from engine.zoo.session import ZooSession

pytestmark = pytest.mark.browser

FLAG = "dojoXss"
WAIT = 30.0  # s: a loaded machine may take that long to show a file


def payload(case: int) -> str:
    """An image that fails to load and then sets ``window.dojoXss`` to ``case`` (no quote a repr() would escape)."""
    return f'<img src=x onerror="window.{FLAG}={case}">'


def forge(data: dict[str, Any]) -> str:
    """A session file whose inner game checksum and whole-file checksum are recomputed, as a forger would."""
    game = data["game"]
    game["checksum"] = checksum(game["rules"], game["state"])
    data["checksum"] = session_checksum(data)
    return json.dumps(data)


def kf2100_name(data: dict[str, Any], p: str) -> None:
    data["game"]["rules"]["scenario"] = p


def kf2100_log(data: dict[str, Any], p: str) -> None:
    entries = [{"turn": 1, "phase": "move1", "what": p, "roll": 3, "need": 4, "p": "2/3", "result": p},
               {"turn": 1, "phase": "move1", "what": f"T1 Mountain Heart recovery {p}", "roll": 2, "need": 3,
                "p": "1/2", "result": p},
               {"turn": 1, "phase": "move1", "event": p}]
    data["game"]["state"]["log"] = [*data["game"]["state"].get("log", []), *entries]
    data["log"] = [*data["log"], *(e for e in entries if "roll" in e)]


def zoo_name(data: dict[str, Any], p: str) -> None:
    data["game"]["rules"]["teams"][0] = p


def zoo_log(data: dict[str, Any], p: str) -> None:
    data["log"] = [*data["log"], {"move": 1, "player": 0, "text": p, "events": [p, p]}]


def kzin_name(data: dict[str, Any], p: str) -> None:
    deck = data["game"]["state"]["deck"]
    name = next(iter(deck))
    deck[p] = deck.pop(name)


def kzin_log(data: dict[str, Any], p: str) -> None:
    data["log"] = [*data["log"], {"turn": 1, "event": p, "detail": p, "odds": None, "outcome": p}]


SAVES: dict[str, Callable[[], str]] = {
    "kf2100": lambda: KungFuSession(seed=3).save(),
    "zoo": lambda: ZooSession(seats=["person", "bot"], odds_workers=1).save(),
    "kzin": lambda: KzinSession().save(),
}
GAMES: dict[str, tuple[Any, str, Callable[..., None], Callable[..., None]]] = {
    "kf2100": (kf2100, "board", kf2100_name, kf2100_log),
    "zoo": (zoo, "arena", zoo_name, zoo_log),
    "kzin": (kzin, "track", kzin_name, kzin_log),
}


def hostile_files(saved: str, name: Callable[..., None], log: Callable[..., None]) -> list[str]:
    """The files of one game: three refused, one accepted (as far as checksums go)."""
    fmt = json.loads(saved)["format"]
    files = [json.dumps({"format": fmt, "version": payload(1)})]
    data = json.loads(saved)
    data["game"]["game"] = payload(2)
    files.append(forge(data))
    data = json.loads(saved)
    name(data, payload(3))
    files.append(forge(data))
    data = json.loads(saved)
    log(data, payload(4))
    files.append(forge(data))
    return files


def shown_or_run(page, case: int) -> None:
    """Wait until the page shows the case's payload as text, says it could not load the file (a refusal
    describes markup, it never repeats it), or the payload's handler has run."""
    marker = f"window.{FLAG}={case}"
    waited = 0.0
    while waited < WAIT:
        if page.evaluate(f"window.{FLAG}") is not None:
            return
        if page.get_by_text(marker).count() > 0 or page.get_by_text("Could not load").count() > 0:
            return
        page.wait_for_timeout(100)
        waited += 0.1
    raise AssertionError(f"the page showed neither the refusal nor the file of case {case}")


@pytest.mark.parametrize("game", ["kf2100", "zoo", "kzin"])
def test_no_payload_in_a_file_runs_in_the_page(page, serve_app, tmp_path: Path, game: str) -> None:
    module, board, name, log = GAMES[game]
    url = serve_app(module.create_app)  # only the page and its file input: so it holds for a rewritten page
    for case, text in enumerate(hostile_files(SAVES[game](), name, log), start=1):
        page.goto(url)  # a fresh page for each file: what it shows is this file's doing
        page.wait_for_function(BOARD_READY, arg=board, timeout=WAIT * 1000)
        path = tmp_path / f"hostile-{case}.json"
        path.write_text(text, encoding="utf-8")
        choose_file(page, path)
        shown_or_run(page, case)
        page.wait_for_timeout(500)  # every pane that shows the file has had its turn
        assert page.evaluate(f"window.{FLAG}") is None, f"case {case}: a payload ran in the page"
        assert page.locator("img[src='x']").count() == 0, f"case {case}: the payload was drawn as an element"
