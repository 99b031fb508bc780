"""Compile the numba kernels once, at install time: ``python -m engine.warm``.

The kernels are cached on disk (``cache=True``), but a fresh checkout has no cache, and the first call of each
compiles it: about 20 s for the Man-Kzin Wars advisor's (the fast rollouts and the paired rollouts of the expert's
kernel), longer on a busy machine. Without this step the first page's advisor, running odds and expert would wait
that long, each worker thread holding its page meanwhile. ``make install`` and ``make install-test`` run it.
"""

from __future__ import annotations

import time


def warm() -> list[tuple[str, float]]:
    """Call each kernel a page calls, on the start of a seeded game with few rollouts; (what, seconds) each. The
    running odds use the advisor's fast rollouts, so they are compiled with it."""
    import numpy as np

    from engine.kzin import expert
    from engine.kzin.advisor import advise, expert_advice
    from engine.kzin.session import KzinSession

    state = KzinSession(seed=1).state
    done = []
    for what, call in (
        ("Man-Kzin Wars advisor and running odds (fast and paired rollouts)", lambda: advise(state, rollouts=64)),
        ("Man-Kzin Wars expert advisor", lambda: expert_advice(state)),
        ("Man-Kzin Wars expert games", lambda: expert.play_keys(expert.game_keys(np.random.default_rng(1), 4))),
    ):
        start = time.perf_counter()
        call()
        done.append((what, time.perf_counter() - start))
    return done


def main() -> int:
    for what, seconds in warm():
        print(f"compiled (or loaded from the cache): {what}, {seconds:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
