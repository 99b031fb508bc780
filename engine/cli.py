"""The ``dojo`` command: ``dojo serve`` (the dashboard), ``dojo lab`` (JupyterLab) and one sub-command per game.

Games add their own sub-commands without touching this file: every package ``engine.<game>`` (other
than ``core``) with a module ``cli`` defining ``register(subparsers) -> None`` is asked to add its
parser, which sets ``func`` (``args -> int | None``) with ``set_defaults``.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import pkgutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType

import engine

REPO = Path(engine.__file__).resolve().parent.parent
"""The project's root (the package is installed editable, so the notebooks sit beside it)."""


def game_modules(submodule: str, attribute: str, package: ModuleType = engine) -> list[ModuleType]:
    """``<package>.<game>.<submodule>`` modules defining ``attribute``, for every game package, in name order.

    How games plug into the shared tools (``cli`` with ``register``, ``bench`` with ``run``) without
    editing them. ``core`` and private packages are not games. A plug-in that fails to import raises.
    """
    found = []
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        if not info.ispkg or info.name == "core" or info.name.startswith("_"):
            continue
        name = f"{package.__name__}.{info.name}.{submodule}"
        if importlib.util.find_spec(name) is None:
            continue
        module = importlib.import_module(name)
        if callable(getattr(module, attribute, None)):
            found.append(module)
    return found


def game_command_modules(package: ModuleType = engine) -> list[ModuleType]:
    """The ``<package>.<game>.cli`` modules that define ``register(subparsers)``."""
    return game_modules("cli", "register", package)


def _serve(args: argparse.Namespace) -> int:
    if args.command_line:  # the real command, not main([...]) inside another program: it may start itself again
        from apps.allocator import use_system_malloc

        use_system_malloc()  # under glibc's malloc, so closed tabs' memory goes back (apps/allocator.py)
    from apps.server import serve  # the only place the engine reaches the UI: the command that starts it

    serve(port=args.port, address=args.address, show=args.show)
    return 0


def lab_command(notebooks: Path, extra: Sequence[str] = (), static: Path | None = None) -> list[str]:
    """The JupyterLab command line, run by this environment's Python so the kernel sees ``engine``; ``static``
    (:func:`panel_stylesheets`) is served among the server's static files."""
    if not notebooks.is_dir():
        raise FileNotFoundError(f"no notebooks folder at {notebooks}: run dojo lab from a clone of the project")
    cmd = [sys.executable, "-m", "jupyter", "lab", f"--ServerApp.root_dir={notebooks}"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")  # Jupyter refuses to start as root otherwise (containers, CI machines)
    if static is not None:
        cmd.append(f"--ServerApp.extra_static_paths={static}")
    return [*cmd, *extra]


def lab_environment(environ: Mapping[str, str] = os.environ, cdn_root: str | None = None) -> dict[str, str]:
    """JupyterLab's environment, which its kernels inherit: Panel inlines its JS and CSS (``PANEL_INLINE``, the
    environment form of ``pn.extension(inline=True)``), so a notebook's dashboards and plots load from the
    installed packages and work offline, not from a CDN.

    Panel inlines a pane's stylesheets only when the cell is first shown; a pane it updates later (a status line
    at the next turn) links them from Panel's CDN again. ``cdn_root`` (:func:`lab_cdn_root`) is given to Panel as
    ``PANEL_CDN_ROOT``, its own setting for air-gapped machines, so those links go to the Jupyter server itself.
    A value the user set is kept."""
    env = {**environ, "PANEL_INLINE": environ.get("PANEL_INLINE", "true")}
    if cdn_root is not None:
        env["PANEL_CDN_ROOT"] = environ.get("PANEL_CDN_ROOT", cdn_root)
    return env


def lab_option(jupyter_args: Sequence[str], *flags: str) -> str | None:
    """The value of the first of ``flags`` given on JupyterLab's command line (``--flag=value`` or ``--flag
    value``), else None."""
    for i, arg in enumerate(jupyter_args):
        for flag in flags:
            if arg.startswith(f"{flag}="):
                return arg.split("=", 1)[1]
            if arg == flag and i + 1 < len(jupyter_args):
                return jupyter_args[i + 1]
    return None


LOOPBACK = ("localhost", "127.0.0.1", "::1")


def lab_cdn_root(jupyter_args: Sequence[str]) -> str | None:
    """Where the Jupyter server started with ``jupyter_args`` serves :func:`panel_stylesheets`, as the absolute URL
    Panel needs for ``PANEL_CDN_ROOT`` (it inlines only what an ``http`` URL names); None unless the port is given
    and the server listens on this machine only (a browser elsewhere would not reach ``localhost``)."""
    ip = lab_option(jupyter_args, "--ServerApp.ip", "--ip") or "localhost"
    port = lab_option(jupyter_args, "--ServerApp.port", "--port")
    if port is None or ip not in LOOPBACK:
        return None
    base = lab_option(jupyter_args, "--ServerApp.base_url", "--base_url") or "/"
    host = f"[{ip}]" if ":" in ip else ip
    return f"http://{host}:{port}/{base.strip('/') + '/' if base.strip('/') else ''}static/{PANEL_FILES}/"


def free_lab_port(ip: str = "localhost", first: int = 8888, tries: int = 50) -> int | None:
    """The first port from ``first`` (Jupyter's default) that nothing listens on, as Jupyter's own retries
    would find it, or None."""
    import socket

    for port in range(first, first + tries):
        with socket.socket() as probe:
            try:
                probe.bind((ip, port))
            except OSError:
                continue
            return port
    return None


PANEL_FILES = "panel"
"""The folder of :func:`panel_stylesheets`, under the Jupyter server's ``static/`` URL."""
PANEL_STYLESHEETS = ("css", "bundled/theme", "assets")
"""What Panel links from its CDN for the panes of a page: their stylesheets, the design's, and the images those
use (the loading spinners)."""


def panel_stylesheets(folder: Path | None = None) -> Path | None:
    """A folder for the Jupyter server's static files with Panel's stylesheets where Panel's CDN has them
    (``panel/<version>/dist/css/...``), copied from the installed Panel once per version; None if there is no
    Panel or the folder cannot be written (the links then go to the CDN, as before).

    Copied, not linked: Jupyter refuses a static file whose real path lies outside its static folders."""
    import json
    import shutil
    import tempfile

    spec = importlib.util.find_spec("panel")  # found, not imported: the engine has no UI import
    if spec is None or not spec.submodule_search_locations:
        return None
    package = Path(next(iter(spec.submodule_search_locations)))
    folder = folder or Path(sys.prefix) / "share" / "tabletop-dojo" / "jupyter-static"
    try:
        version = json.loads((package / "package.json").read_text())["version"].split("+")[0]
        dist = folder / PANEL_FILES / version / "dist"
        if not dist.is_dir():
            dist.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(dir=dist.parent) as scratch:  # whole or not at all
                for part in PANEL_STYLESHEETS:
                    shutil.copytree(package / "dist" / part, Path(scratch) / "dist" / part)
                try:
                    (Path(scratch) / "dist").rename(dist)
                except OSError:
                    if not dist.is_dir():  # else another dojo lab copied it first
                        raise
    except (OSError, ValueError, KeyError):
        return None
    return folder


LAB_OVERRIDES = {"@jupyterlab/apputils-extension:kernels-settings": {"commsOverSubshells": "disabled"}}
"""JupyterLab settings the dashboards need, as defaults a user's own settings still override: the clicks of a
dashboard go to the kernel's main shell. JupyterLab 4.4+ sends comm messages to a kernel subshell (a second
thread in ipykernel 7) by default, and Panel's messages to the page, sent in parts from that thread and from the
main one (the background work), interleave: the page fails to apply them ("s is not iterable") and stops
updating. JupyterLab's own documented fix is this setting."""


def lab_overrides(app_dir: Path | None = None) -> Path | None:
    """Write :data:`LAB_OVERRIDES` as this project's file among JupyterLab's per-package overrides
    (``<app dir>/settings/overrides.d/tabletop-dojo.json``; the app dir is JupyterLab's, ``$JUPYTERLAB_DIR`` or
    this environment's ``share/jupyter/lab``), so ``jupyter lab`` in this environment has them too. Returns the
    file, or None if it cannot be written (JupyterLab then keeps its own defaults)."""
    import json

    if app_dir is None:
        app_dir = Path(os.environ.get("JUPYTERLAB_DIR") or Path(sys.prefix) / "share" / "jupyter" / "lab")
    path = app_dir / "settings" / "overrides.d" / "tabletop-dojo.json"
    text = json.dumps(LAB_OVERRIDES, indent=2) + "\n"
    try:
        if not path.is_file() or path.read_text() != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    except OSError:
        return None
    return path


def _lab(args: argparse.Namespace) -> int:
    jupyter_args = list(args.jupyter_args)
    static = panel_stylesheets()
    lab_overrides()
    if static is not None and lab_option(jupyter_args, "--ServerApp.port", "--port") is None:
        port = free_lab_port(lab_option(jupyter_args, "--ServerApp.ip", "--ip") or "localhost")
        if port is not None:  # the stylesheets' URL names the port: Jupyter must not move to another
            jupyter_args += [f"--ServerApp.port={port}", "--ServerApp.port_retries=0"]
    try:
        cmd = lab_command(REPO / "notebooks", jupyter_args, static)
    except FileNotFoundError as exc:
        print(f"dojo lab: {exc}", file=sys.stderr)
        return 2
    cdn_root = lab_cdn_root(jupyter_args) if static is not None else None
    return run_instead(cmd, lab_environment(cdn_root=cdn_root))


def run_instead(cmd: Sequence[str], env: Mapping[str, str] | None = None) -> int:
    """Become ``cmd`` (POSIX exec) with ``env`` (default: this one), so Ctrl+C and kill reach it directly;
    elsewhere run it and wait."""
    environment = dict(os.environ if env is None else env)
    if os.name == "posix":
        os.execve(cmd[0], list(cmd), environment)
    return subprocess.call(list(cmd), env=environment)


def build_parser(package: ModuleType = engine) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dojo", description="Tabletop Dojo: three tabletop games with the probabilities behind every decision."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {engine.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    serve = sub.add_parser("serve", help="serve the dashboard (landing page and every game) in the browser")
    serve.add_argument("--port", type=int, default=5006, help="port to listen on (default 5006)")
    serve.add_argument("--address", default="127.0.0.1",
                       help="address to listen on (default 127.0.0.1: this machine only; 0.0.0.0: every network "
                            "interface, printing the addresses others can use; there is no login)")
    serve.add_argument(
        "--show",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="open a browser tab (default: only when a display is available)",
    )
    serve.set_defaults(func=_serve)

    lab = sub.add_parser(
        "lab",
        help="open JupyterLab on notebooks/ with this environment's kernel",
        description="Open JupyterLab on notebooks/. Other options go to jupyter lab (e.g. --port 8890 --no-browser).",
    )
    lab.set_defaults(func=_lab, jupyter_args=[])

    for module in game_command_modules(package):
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None, package: ModuleType = engine) -> int:
    parser = build_parser(package)
    args, extra = parser.parse_known_args(argv)
    args.command_line = argv is None
    if extra:
        if args.command != "lab":
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        args.jupyter_args = extra
    if getattr(args, "func", None) is None:
        parser.print_help()
        return 2
    result = args.func(args)
    return 0 if result is None else int(result)


if __name__ == "__main__":
    sys.exit(main())
