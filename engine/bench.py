"""Throughput of the shared tools: exact odds, Monte Carlo on the state protocol, raw numpy dice.

Run ``python -m engine.bench`` (or ``make bench``). It prints one row per benchmark: what was
measured, the rate and its unit. Games add rows without editing this file: a module
``engine.<game>.bench`` with ``run(quick: bool = False) -> list[Result]`` is found the way the CLI
finds game commands (a plain ``run()`` works too). Figures depend on the machine and its load;
they are printed, never asserted.

The Monte Carlo rows play :class:`OpposedRollGame`, the smallest game on the protocol that asks a
question the games ask: the Man-Kzin Wars battle with no cards in play, Human d10 + committed force
against Kzin d10 + 10, Humans winning ties.
"""

from __future__ import annotations

import argparse
import inspect
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from types import ModuleType
from typing import Any, ClassVar, NamedTuple

from engine.core import (
    CHANCE,
    TERMINAL,
    Action,
    ChanceMode,
    Game,
    GameInfo,
    IllegalActionError,
    Information,
    State,
    UniformRandomPolicy,
    make_rng,
    monte_carlo,
    policy_value,
)
from engine.core.dist import d, dice_sum, p_at_least_as_high, table


class Result(NamedTuple):
    """One benchmark row: what was measured, how many per second, and of what."""

    name: str
    rate: float
    unit: str


# --- the benchmark game -----------------------------------------------------------------------

KZIN_BONUS = 10
"""The Kzin's fixed +10 in every battle (seed rules, Invasion and Liberation)."""


@dataclass(frozen=True, slots=True)
class Commit(Action):
    """The Humans commit fleets worth ``force``."""

    force: int

    def __str__(self) -> str:
        return f"commit {self.force}"


@dataclass(frozen=True, slots=True)
class Roll(Action):
    """A d10 roll (the Humans' first, then the Kzin's)."""

    value: int

    def __str__(self) -> str:
        return f"roll {self.value}"


class OpposedAction(Action):
    @classmethod
    def parse(cls, text: str) -> Action:
        word, _, number = text.strip().partition(" ")
        if word == "commit":
            return Commit(int(number))
        if word == "roll":
            return Roll(int(number))
        raise ValueError("expected 'commit N' or 'roll N'")


ROLLS = [(Roll(v), Fraction(1, 10)) for v in range(1, 11)]


class OpposedRollState(State):
    __slots__ = ("force", "rolls")
    game: OpposedRollGame  # State.game, known to be this game's

    def __init__(self, game: OpposedRollGame) -> None:
        super().__init__(game)
        self.force: int | None = None
        self.rolls: tuple[int, ...] = ()

    def current_player(self) -> int:
        if self.force is None:
            return 0
        return CHANCE if len(self.rolls) < 2 else TERMINAL

    def legal_actions(self) -> list[Action]:
        player = self.current_player()
        if player == 0:
            return [Commit(f) for f in self.game.forces]
        return [a for a, _ in ROLLS] if player == CHANCE else []

    def chance_outcomes(self) -> list[tuple[Action, Fraction]]:
        if self.current_player() != CHANCE:
            raise IllegalActionError(f"{self.describe_player()} is to move, not chance")
        return list(ROLLS)

    def illegal_reason(self, action: Action) -> str | None:
        if self.current_player() == 0 and isinstance(action, Commit) and action not in self.legal_actions():
            return f"the Humans can commit force {', '.join(map(str, self.game.forces))}, not {action.force}"
        return super().illegal_reason(action)

    def _apply(self, action: Action) -> None:
        if isinstance(action, Commit):
            self.force = action.force
        else:
            assert isinstance(action, Roll), action  # illegal_reason refused anything else
            self.rolls = (*self.rolls, action.value)

    def human_wins(self) -> bool:
        human, kzin = self.rolls
        assert self.force is not None, "the Humans commit before the rolls"
        return human + self.force >= kzin + KZIN_BONUS

    def returns(self) -> list[float]:
        if not self.is_terminal():
            return [0.0]
        return [1.0 if self.human_wins() else -1.0]

    def clone(self) -> OpposedRollState:
        c = OpposedRollState.__new__(OpposedRollState)
        c.game, c.force, c.rolls = self.game, self.force, self.rolls
        return c

    def to_dict(self) -> dict[str, Any]:
        return {"force": self.force, "rolls": list(self.rolls)}


class OpposedRollGame(Game):
    """Human d10 + committed force against Kzin d10 + 10; the Humans (player 0) win ties."""

    info: ClassVar[GameInfo] = GameInfo(
        "opposed_roll", "Opposed roll", 1, ChanceMode.EXPLICIT, Information.PERFECT, -1, 1, 1, 3
    )
    action_type = OpposedAction

    def __init__(self, forces: Sequence[int] = (0, 5, 10, 15)) -> None:
        if not forces or any(not isinstance(f, int) or f < 0 for f in forces):
            raise ValueError(f"forces must be non-negative integers, not {forces!r}")
        self.forces = tuple(forces)

    def new_initial_state(self, rng: Any = None) -> OpposedRollState:
        return OpposedRollState(self)

    def rule_options(self) -> dict[str, Any]:
        return {"forces": list(self.forces)}

    def player_name(self, player: int) -> str:
        return "the Humans"

    def state_from_dict(self, data: dict[str, Any]) -> OpposedRollState:
        force, rolls = data["force"], tuple(data["rolls"])
        if force is not None and force not in self.forces:
            raise ValueError(f"force {force} is not one of {self.forces}")
        if len(rolls) > 2 or (force is None and rolls) or any(r not in range(1, 11) for r in rolls):
            raise ValueError(f"impossible rolls {list(rolls)}")
        state = OpposedRollState(self)
        state.force, state.rolls = force, rolls
        return state


# --- measuring --------------------------------------------------------------------------------

def rate(fn: Callable[[], Any], min_seconds: float, per_call: float = 1.0) -> float:
    """Calls per second (times ``per_call`` items per call), repeating ``fn`` for at least ``min_seconds``."""
    fn()  # warm up caches and imports outside the timing
    calls, start = 0, time.perf_counter()
    while True:
        fn()
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds:
            return calls * per_call / elapsed


def core_benchmarks(quick: bool = False) -> tuple[list[Result], list[str]]:
    """The shared tools' rows, and a check that the simulated figure agrees with the exact one."""
    seconds = 0.2 if quick else 1.0
    results = []

    ks = iter(range(10**9))

    def kzin_odds() -> Fraction:
        return p_at_least_as_high(d(10) + next(ks) % 21, d(10) + KZIN_BONUS)

    results.append(Result("exact P(d10+k >= d10+10), icepool", rate(kzin_odds, seconds), "odds/s"))
    results.append(Result("exact 2d10 table (p, at least, at most)", rate(lambda: table(dice_sum(2, 10)), seconds),
                          "tables/s"))

    game = OpposedRollGame()
    uniform = [UniformRandomPolicy()]
    results.append(Result("exact policy_value, opposed roll (whole tree)",
                          rate(lambda: policy_value(game.new_initial_state(), uniform), seconds), "trees/s"))

    games = 2_000 if quick else 20_000
    for workers in (1, 2):
        start = time.perf_counter()
        estimate = monte_carlo(game, uniform, games, seed=1, workers=workers)
        label = f"monte_carlo, opposed roll, {workers} worker{'s' if workers > 1 else ''}"
        results.append(Result(label, games / (time.perf_counter() - start), "games/s"))
    exact = (policy_value(game.new_initial_state(), uniform)[0] + 1) / 2  # returns are +1 / -1
    verdict = "inside" if estimate.contains(float(exact)) else "OUTSIDE"
    notes = [f"check: monte_carlo P(Humans win) = {estimate}; exact {exact} = {float(exact):.4f}, {verdict} the CI"]

    rng = make_rng(0)
    n = 100_000 if quick else 1_000_000

    def numpy_battles() -> int:
        human, kzin = rng.integers(1, 11, size=(2, n))
        return int((human + 5 >= kzin + KZIN_BONUS).sum())

    results.append(Result("numpy d10+5 vs d10+10, vectorised", rate(numpy_battles, seconds, per_call=n), "battles/s"))
    return results, notes


def game_benchmarks(quick: bool = False, package: ModuleType | None = None) -> list[tuple[str, list[Result]]]:
    """(game, rows) for every ``engine.<game>.bench`` module (``package`` replaces ``engine`` in tests).

    ``run`` gets ``quick`` when its signature takes it; a plain ``run()`` is called as it is.
    """
    import engine
    from engine.cli import game_modules

    sections = []
    for module in game_modules("bench", "run", package or engine):
        takes_quick = "quick" in inspect.signature(module.run).parameters
        rows = module.run(quick=quick) if takes_quick else module.run()
        sections.append((module.__name__.split(".")[-2], [Result(*row) for row in rows]))
    return sections


def figure(value: float) -> str:
    """A rate with thousands separators when large and three significant digits when small (0.42 ms, 2.43 s)."""
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def format_table(sections: Sequence[tuple[str, Sequence[Result]]], notes: Sequence[str] = ()) -> str:
    """The rows as a plain-text table, one section per source (core, then each game), then the notes."""
    width = max((len(r.name) for _, rows in sections for r in rows), default=20)
    lines = [f"{'benchmark':<{width}}  {'rate':>14}  unit", "-" * (width + 26)]
    for title, rows in sections:
        lines.append(f"[{title}]")
        lines += [f"{r.name:<{width}}  {figure(r.rate):>14}  {r.unit}" for r in rows]
    return "\n".join([*lines, *notes])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine.bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="short runs (a smoke test, not a measurement)")
    parser.add_argument("--core-only", action="store_true", help="skip the games' benchmarks")
    args = parser.parse_args(argv)
    rows, notes = core_benchmarks(args.quick)
    sections: list[tuple[str, Sequence[Result]]] = [("core", rows)]
    if not args.core_only:
        sections += game_benchmarks(args.quick)
    print(format_table(sections, notes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
