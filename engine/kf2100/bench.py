"""Kung Fu 2100 speed figures: random playouts, bot decisions, legal-move generation."""

from __future__ import annotations

import time

from engine.core import UniformRandomPolicy, make_rng, play_game
from engine.core.rng import sample_outcome
from engine.kf2100.bots import bots_for
from engine.kf2100.state import KungFuGame


def run() -> list[tuple[str, float, str]]:
    """(label, value, unit) rows; a few seconds in all."""
    out: list[tuple[str, float, str]] = []
    game = KungFuGame("basic")
    rng = make_rng(0)
    start, n = time.perf_counter(), 0
    while time.perf_counter() - start < 2.0 or n < 2:
        play_game(game.new_initial_state(), [UniformRandomPolicy()] * 2, rng)
        n += 1
    out.append(("kf2100 random playouts (basic)", n / (time.perf_counter() - start), "games/s"))

    bots = bots_for(game)
    times: list[float] = []
    state = game.new_initial_state()
    while not state.is_terminal() and len(times) < 400:
        p = state.current_player()
        if p < 0:
            state.apply_action(sample_outcome(state.chance_outcomes(), rng))
            continue
        t0 = time.perf_counter()
        action = bots[p].choose(state, rng)
        times.append(time.perf_counter() - t0)
        state.apply_action(action)
    times.sort()
    out.append(("kf2100 bot decision, median", 1000 * times[len(times) // 2], "ms"))
    out.append(("kf2100 bot decision, max", 1000 * times[-1], "ms"))

    start = time.perf_counter()
    end = play_game(game.new_initial_state(), bots, rng)
    out.append(("kf2100 bot-vs-bot game (basic)", time.perf_counter() - start, f"s ({end.result})"))

    s = game.new_initial_state()
    start, k = time.perf_counter(), 0
    while time.perf_counter() - start < 0.5:
        s._legal = None
        s.legal_actions()
        k += 1
    out.append(("kf2100 legal actions at set-up (~250 squares)", 1e6 * (time.perf_counter() - start) / k, "us"))
    return out


if __name__ == "__main__":
    for label, value, unit in run():
        print(f"{label:48s} {value:10.2f} {unit}")
