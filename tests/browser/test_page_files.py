"""Issue 18, points 6 and 7, on the served pages: an autosave that fails is said on the page (and the warning
goes once a save works again); a file over the stated size limit is refused with its reason, and the page's
connection lives on."""

from __future__ import annotations

from pathlib import Path

import pytest
from browser_helpers import BOARD_READY, choose_file, dashboard_of, serve_pages, wait_for
from playwright.sync_api import expect

from apps import kf2100, zoo
from apps._files import MAX_UPLOAD_BYTES

pytestmark = pytest.mark.browser

BOARDS = {kf2100: "board", zoo: "arena"}
WAIT = 30_000  # ms: a loaded machine may take that long to update the page
NOT_SAVED = "This game is not being saved"


def message(dashboard) -> str:
    s = dashboard.session
    return s.notice.text


@pytest.mark.parametrize("module", list(BOARDS), ids=lambda m: m.__name__.split(".")[-1])
def test_a_failing_autosave_is_shown_until_a_save_works(page, serve_app, tmp_path: Path, monkeypatch, module) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the data folder should be")
    monkeypatch.setenv("TABLETOP_DOJO_DATA", str(blocker / "dojo"))  # no folder can be made under a file
    url, pages = serve_pages(serve_app, module.create_app)
    page.goto(url)
    page.wait_for_function(BOARD_READY, arg=BOARDS[module], timeout=WAIT)
    wait_for(lambda: pages, page)
    session = dashboard_of(pages[0]).session
    version = session.version
    page.get_by_role("button", name="New game").click()
    wait_for(lambda: session.version > version, page, timeout=WAIT / 1000)
    expect(page.get_by_text(NOT_SAVED)).to_be_visible(timeout=WAIT)
    assert not (blocker / "dojo").exists()

    blocker.unlink()
    blocker.mkdir()  # the folder can be made now: the next save works
    version = session.version
    page.get_by_role("button", name="New game").click()
    wait_for(lambda: session.version > version, page, timeout=WAIT / 1000)
    expect(page.get_by_text(NOT_SAVED)).to_be_hidden(timeout=WAIT)
    assert list((blocker / "dojo").glob("*-last.json"))


@pytest.mark.parametrize("module", list(BOARDS), ids=lambda m: m.__name__.split(".")[-1])
def test_an_oversize_file_is_refused_and_the_page_lives_on(page, serve_app, tmp_path: Path, module) -> None:
    url, pages = serve_pages(serve_app, module.create_app)
    page.goto(url)
    page.wait_for_function(BOARD_READY, arg=BOARDS[module], timeout=WAIT)
    wait_for(lambda: pages, page)
    dashboard = dashboard_of(pages[0])
    expect(page.get_by_text(f"at most {MAX_UPLOAD_BYTES // 1024 // 1024}.0 MB").first).to_be_visible()
    saved = dashboard.session.save()
    big = tmp_path / "huge.json"
    with big.open("wb") as f:  # over the server's 20 MB websocket message once base64-encoded
        f.write(b'{"pad": "' + b"x" * (16 * 1024 * 1024) + b'"}')
    choose_file(page, big)
    wait_for(lambda: "huge.json is 16.0 MB" in message(dashboard), page, timeout=WAIT / 1000)
    expect(page.get_by_text("huge.json is 16.0 MB").first).to_be_visible()
    assert dashboard.session.save() == saved
    # the connection is still there: the page still plays
    seed = dashboard.session.seed
    page.get_by_label("Seed").fill(str(seed + 1))
    page.get_by_label("Seed").press("Enter")
    page.get_by_role("button", name="New game").click()
    wait_for(lambda: dashboard.session.seed == seed + 1, page, timeout=WAIT / 1000)
