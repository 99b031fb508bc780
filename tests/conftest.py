"""Shared fixtures: serve Panel apps in-process and drive them in Debian's headless Chromium.

Recipes from ``../shared/guides/panel-and-browser-tests.md`` (sections 3, 4, 6 and 10).
"""

from __future__ import annotations

import itertools
import shutil
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_helpers import JupyterLab, free_port, wait_until_live
from playwright.sync_api import expect

# Playwright's ``expect`` gives up after 5 s by default; a loaded CI machine can take longer to show what does
# happen. Every browser test waits up to 30 s (an explicit ``timeout=`` still wins).
expect.set_options(timeout=30_000)

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    """Use Debian's Chromium: Playwright's own browser download does not work on this machine kind."""
    path = CHROMIUM if shutil.which(CHROMIUM) else shutil.which("chromium")
    if path is None:
        pytest.fail("the browser tests need Debian's chromium package: `make test` installs it")
    return {**browser_type_launch_args, "executable_path": path, "headless": True, "args": CHROMIUM_ARGS}


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Run a test marked ``no_event_loop`` in a thread of its own.

    A page's async work (``pn.bind`` over an async generator) runs to the end at once where no event loop is
    running, which is what a page test outside a server relies on. Playwright's sync API leaves its loop
    running in the main thread after the browser tests, and there Panel would only schedule the work."""
    if pyfuncitem.get_closest_marker("no_event_loop") is None:
        return None
    import inspect
    import threading

    wanted = inspect.signature(pyfuncitem.obj).parameters
    kwargs = {name: value for name, value in pyfuncitem.funcargs.items() if name in wanted}
    failure: list[BaseException] = []

    def run() -> None:
        try:
            pyfuncitem.obj(**kwargs)
        except BaseException as exc:  # the test's own failure, raised again in the main thread
            failure.append(exc)

    thread = threading.Thread(target=run, name=f"test-{pyfuncitem.name}")
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
    return True


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    """Keep each phase's report on its test (``item.rep_call``), for a fixture that reports more on a failure."""
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"rep_{report.when}", report)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that uses a browser page is a browser test, marked or not (so ``-m "not browser"`` works)."""
    for item in items:
        if "page" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(autouse=True)
def dashboard_data(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own data dir for the dashboards' autosaves, never the user's."""
    path = tmp_path_factory.mktemp("dojo-data")
    monkeypatch.setenv("TABLETOP_DOJO_DATA", str(path))
    return path


Servable = Callable[[], Any] | dict[str, Callable[[], Any]]


@pytest.fixture
def serve_app() -> Iterator[Callable[..., str]]:
    """``serve_app(factory_or_routes, **pn_serve_kwargs) -> base URL``: serve in a thread on a free port.

    ``factory`` is called once per browser session (page load); a dict maps URL slugs to factories, as
    ``apps.server.routes()`` does. The test process holds the server, so a test can assert on the very
    Python objects the page drives. All servers stop at teardown.
    """
    import panel as pn

    def _serve(app: Servable, **kwargs: Any) -> str:
        port = free_port()
        pn.serve(app, port=port, address="127.0.0.1", threaded=True, show=False, verbose=False, liveness=True, **kwargs)
        url = f"http://127.0.0.1:{port}/"
        wait_until_live(url)
        return url

    import threading

    from panel.io.threads import StoppableThread

    before = set(threading.enumerate())
    yield _serve
    pn.state.kill_all_servers()  # not thread.stop() as well: that raises "Thread already stopping"
    # Wait for the servers' threads to end: a server thread still handling a session holds its document on
    # Bokeh's process-wide current-document stack, where a page built by the next test (outside any server)
    # would find it and take itself for served.
    for thread in set(threading.enumerate()) - before:
        if isinstance(thread, StoppableThread):
            thread.join(timeout=15)


@pytest.fixture(scope="module")
def jupyter_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterLab]:
    """A real JupyterLab (``dojo lab``'s command line) on a copy of ``tests/notebooks`` at ``jupyter_lab.url``, for
    the tests of one module; it stops with its kernels afterwards. Open a notebook with ``jupyter_lab.open(page,
    name)``. A copy: JupyterLab saves a notebook it ran, outputs and all, and the checkout's file stays as it is."""
    home = tmp_path_factory.mktemp("jupyter")
    root = shutil.copytree(Path(__file__).parent / "notebooks", home / "notebooks")
    lab = JupyterLab(root, home)
    lab.start()
    yield lab
    lab.stop()


@pytest.fixture
def console_errors(page) -> list[str]:
    """Browser console errors and uncaught page errors, collected from before the first navigation.

    A test ends with ``assert console_errors == []``.
    """
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(f"console.error: {msg.text}") if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(f"page error: {exc}"))
    return errors


@pytest.fixture
def server_errors() -> Iterator[list[str]]:
    """Errors the server logs while a test runs (a callback that raised, a failed update), for
    ``assert server_errors == []``: a page can look fine while its server side is failing."""
    import logging

    errors: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            import asyncio

            if record.exc_info and isinstance(record.exc_info[1], asyncio.CancelledError):
                # A websocket write cancelled with the async view run Panel cancels when a newer move supersedes
                # it (Panel 1.9.4 cancels the run's task; tornado logs it). The page is unaffected; see issue 11.
                return
            from tornado.websocket import WebSocketClosedError

            if record.exc_info and isinstance(record.exc_info[1], WebSocketClosedError):
                # A write to a tab that has closed (a test closes its pages, or an earlier test's server is still
                # sending its last update): tornado logs the unretrieved task; no page is there to be affected.
                return
            errors.append(f"{record.name}: {logging.Formatter().format(record)}")  # with its traceback

    handler = Collect(level=logging.ERROR)
    root = logging.getLogger()
    root.addHandler(handler)
    yield errors
    root.removeHandler(handler)


_package_numbers = itertools.count()


@pytest.fixture
def make_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[dict[str, str]], Any]:
    """``make_package({"sub/mod.py": source, ...}) -> module``: a throwaway importable package.

    For discovery tests (game apps, game CLI commands): each call makes a package with a fresh name, so
    nothing is shared through ``sys.modules`` between tests. Every folder gets an ``__init__.py``.
    """
    import importlib

    def _make(files: dict[str, str]) -> Any:
        name = f"dojo_fake_{next(_package_numbers)}"
        root = tmp_path / name
        root.mkdir()
        (root / "__init__.py").write_text("")
        for rel, source in files.items():
            path = root / rel
            for folder in [*reversed(path.relative_to(root).parents)][1:]:
                (root / folder).mkdir(exist_ok=True)
                (root / folder / "__init__.py").touch()
            path.write_text(textwrap.dedent(source))
        monkeypatch.syspath_prepend(str(tmp_path))
        importlib.invalidate_caches()
        return importlib.import_module(name)

    return _make


@pytest.fixture(scope="session")
def dask_scheduler() -> Iterator[str]:
    """The address of one 2-worker Dask LocalCluster for every test of the large runs (started once: it takes
    seconds)."""
    from dask_helpers import local_cluster

    with local_cluster(2) as address:
        yield address
