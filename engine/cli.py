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


def lab_command(notebooks: Path, extra: Sequence[str] = ()) -> list[str]:
    """The JupyterLab command line, run by this environment's Python so the kernel sees ``engine``."""
    if not notebooks.is_dir():
        raise FileNotFoundError(f"no notebooks folder at {notebooks}: run dojo lab from a clone of the project")
    cmd = [sys.executable, "-m", "jupyter", "lab", f"--ServerApp.root_dir={notebooks}"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")  # Jupyter refuses to start as root otherwise (containers, CI machines)
    return [*cmd, *extra]


def lab_environment(environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """JupyterLab's environment, which its kernels inherit: Panel inlines its JS and CSS (``PANEL_INLINE``, the
    environment form of ``pn.extension(inline=True)``), so a notebook's dashboards and plots load from the
    installed packages and work offline, not from a CDN. A value the user set is kept."""
    return {**environ, "PANEL_INLINE": environ.get("PANEL_INLINE", "true")}


def _lab(args: argparse.Namespace) -> int:
    try:
        cmd = lab_command(REPO / "notebooks", args.jupyter_args)
    except FileNotFoundError as exc:
        print(f"dojo lab: {exc}", file=sys.stderr)
        return 2
    return run_instead(cmd, lab_environment())


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
