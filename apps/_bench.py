"""Dashboard benchmarks: ``python -m apps._bench`` runs each game app's ``benchmark()``.

The engine's benchmark (``python -m engine.bench``) cannot import the UI, so the server-side cost of
a click, a decision or a bot turn is measured here, on the same Bokeh models a browser is sent.
"""

from __future__ import annotations

import os
import tempfile

from apps import discover_games


def main() -> int:
    # The served-page benchmarks play games: their autosaves go to a scratch folder, never over the
    # user's last games.
    before = os.environ.get("TABLETOP_DOJO_DATA")
    with tempfile.TemporaryDirectory(prefix="dojo-bench-") as scratch:
        os.environ["TABLETOP_DOJO_DATA"] = scratch
        try:
            for game in discover_games():
                module = __import__(game.create_app.__module__, fromlist=["benchmark"])
                bench = getattr(module, "benchmark", None)
                if callable(bench):
                    print(f"== {game.title} dashboard ==", flush=True)
                    bench()
        finally:
            if before is None:
                del os.environ["TABLETOP_DOJO_DATA"]
            else:
                os.environ["TABLETOP_DOJO_DATA"] = before
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
