"""Man-Kzin Wars speed figures: plain engine against the numba kernel, rollouts, exact odds.

``python -m engine.kzin.bench`` prints the table (``--quick`` for a smoke run); ``python -m
engine.bench`` includes these rows. Figures depend on the machine and its load: printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from engine.kzin.advisor import advise
from engine.kzin.cards import card
from engine.kzin.fast import play, rollout_wins
from engine.kzin.odds import Battle, p_humans_win
from engine.kzin.policies import make_policy
from engine.kzin.rules import DRAW, Draw, KzinGame, KzinState
from engine.kzin.simulate import simulate


def mid_game_state(turns: int = 20, seed: int = 3) -> KzinState:
    """A position at the start of a turn, reached by playing all-in on the plain engine."""
    from engine.core.rng import sample_outcome

    state, rng, policy = KzinGame().new_initial_state(), np.random.default_rng(seed), make_policy("all-in")
    while state.turn < turns or state.phase != DRAW:
        if state.is_terminal():
            return mid_game_state(turns, seed + 1)
        if state.current_player() < 0:
            state._apply(sample_outcome(state.chance_outcomes(), rng))
        else:
            state.apply_action(policy.choose(state, rng))
    return state


# Fifteen Human cards in play, every one of them committable in an invasion, and two Kzinti Conquest cards:
# the advisor's time to answer with the most choices the issue asks about (15 cards).
ADVISOR_TABLE = ("ARM Defense Force", "ARM Defense Force", "Rag Tag Fleet", "Pirate Fleet", "Belter Ships",
                 "Militia Home Fleet", "Marines", "Picket Ships", "Human Luck", "Psionics", "Reinforcements",
                 "Lines of Defense", "Giant Launch Lasers", "Pak Protectors", "Superior Tactics",
                 "Stasis Fields", "Telepathy")


def advisor_position() -> KzinState:
    """An invasion by the Kzinti Armada against the cards of ``ADVISOR_TABLE``."""
    state = KzinGame().new_initial_state()
    for name in ADVISOR_TABLE:
        c = card(name)
        state.pile[c.index] -= 1
        state.in_play[c.index] += 1
    state.apply_action(Draw(card("Kzinti Armada").index))
    return state


BATTLES: list[dict[str, Any]] = [  # keyword arguments of Battle
    {"phase": "invasion", "fleets": ["ARM Defense Force"], "tactics": ["Marines"], "technology": 2,
     "conquest": ["Revenge"], "kzin_fleet": "Kzinti Pride"},
    {"phase": "invasion", "fleets": ["Belter Ships", "Militia Home Fleet"],
     "tactics": ["Giant Launch Lasers", "Psionics", "Reinforcements"], "technology": 1,
     "conquest": ["Telepathy", "Stasis Fields"], "kzin_fleet": "Kzinti Armada", "kem": 5},
    {"phase": "liberation", "fleets": ["Pirate Fleet", "Rag Tag Fleet", "Clonial Squadron"],
     "tactics": ["Wunderland Treaty Maker", "Human Luck", "Slave Revolt"], "technology": 4,
     "conquest": ["Kzinti Scouts", "Expansionism", "Military Outposts"]},
]


def run(quick: bool = False) -> list[tuple[str, float, str]]:
    """(label, value, unit) rows: about half a minute on an idle two-core machine, a few seconds with ``quick``."""
    rows: list[tuple[str, float, str]] = [("machine load average (1 min) at the start", os.getloadavg()[0], "")]
    plain = simulate("all-in", 20 if quick else 300, seed=1, fast=False)
    rows.append(("kzin plain engine, all-in, 1 process", plain.games_per_second, "games/s"))
    games, repeats = (50_000, 1) if quick else (1_000_000, 3)

    def best(policy: str, workers: int, **params: float) -> float:
        """The best of a few runs: other work on a shared machine only ever slows a run down."""
        return max(simulate(policy, games, seed=1, workers=workers, policy_params=params).games_per_second
                   for _ in range(repeats))

    fast1, fast2 = best("all-in", 1), best("all-in", 2)
    rows.append(("kzin fast kernel, all-in, 1 worker", fast1, "games/s"))
    rows.append(("kzin fast kernel, all-in, 2 workers", fast2, "games/s"))
    rows.append(("kzin fast speed-up over plain, 1 worker", fast1 / plain.games_per_second, "x"))
    rows.append(("kzin fast speed-up over plain, 2 workers", fast2 / plain.games_per_second, "x"))
    rows.append(("kzin fast kernel, threshold 0.5/0.5, 2 workers", best("threshold", 2, defend=0.5, attack=0.5),
                 "games/s"))

    state = mid_game_state()
    for policy in ("all-in", "threshold"):
        rollout_wins(state, policy, 10, seed=0)
        reps = 3 if quick else 30
        start = time.perf_counter()
        for i in range(reps):
            rollout_wins(state, policy, 10_000, seed=i)
        rows.append((f"kzin rollouts from turn {state.turn} ({policy}), 10,000 a call",
                     reps * 10_000 / (time.perf_counter() - start), "rollouts/s"))
    rng = np.random.default_rng(0)
    start, n = time.perf_counter(), 0
    while time.perf_counter() - start < (0.2 if quick else 2.0):
        play(1000, rng, "all-in")
        n += 1000
    rows.append(("kzin fast.play, 1,000 games a call", n / (time.perf_counter() - start), "games/s"))

    position = advisor_position()
    advise(position, rollouts=100, seed=0)  # compile the rollout kernel outside the timing
    times = []
    for i in range(2 if quick else 5):
        start = time.perf_counter()
        advise(position, rollouts=4000, seed=i)
        times.append(time.perf_counter() - start)
    rows.append((f"kzin advisor, {len(ADVISOR_TABLE) - 2} Human cards in play, 4,000 rollouts a state, worst",
                 max(times), "s"))

    for b in BATTLES:  # fill the exact-difference cache once, as any session does
        Battle(**b).win_probability()
    start, n = time.perf_counter(), 0
    while time.perf_counter() - start < (0.2 if quick else 2.0):
        for b in BATTLES:
            Battle(**b).win_probability()
        n += len(BATTLES)
    rows.append(("kzin exact odds, Battle(...).win_probability()", n / (time.perf_counter() - start), "odds/s"))
    forces = [(b.human_const(), b.human_dice(), b.kzin_const(), b.kzin_dice()) for b in (Battle(**x) for x in BATTLES)]
    start, n = time.perf_counter(), 0
    while time.perf_counter() - start < (0.2 if quick else 1.0):
        for f in forces:
            p_humans_win(*f)
        n += len(forces)
    rows.append(("kzin exact odds from forces, p_humans_win(...)", n / (time.perf_counter() - start), "odds/s"))
    return rows


def format_rows(rows: Sequence[tuple[str, float, str]]) -> str:
    width = max(len(r[0]) for r in rows)
    lines = [f"{'benchmark':<{width}}  {'value':>14}  unit", "-" * (width + 28)]
    lines += [f"{label:<{width}}  {value:>14,.1f}  {unit}" for label, value, unit in rows]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine.kzin.bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="short runs (a smoke test, not a measurement)")
    args = parser.parse_args(argv)
    print(format_rows(run(quick=args.quick)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
