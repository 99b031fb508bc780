"""Man-Kzin Wars at a table: what its session file hides, how a table's game is dealt, and its one-line summary.

The deck's counts are public (the page shows them), but its order is not stored anywhere: the next card is
drawn by the session's generator. So the generator's state is the deck order and every future die roll, and
the seed it came from replays it with the log. A table's game is dealt from a fresh secret seed
(:data:`SECRET_SEED_BITS` bits: too many to find by replaying the drawn cards), which no page shows, and a
file saved at a table seals the generator, the seed and the log line that names the seed.
"""

from __future__ import annotations

import secrets
from typing import Any

from engine.core.seal import JsonPath
from engine.core.tables import TableGame
from engine.kzin.rules import OVER
from engine.kzin.session import KzinSession

SECRET_SEED_BITS = 62
"""A table's seed is drawn from 2**62: the advisor adds the turn to it and numba takes 64-bit seeds."""


def secret_seed() -> int:
    return secrets.randbelow(2**SECRET_SEED_BITS)


def hidden(body: dict[str, Any]) -> list[JsonPath]:
    """The generator, the seed, and the detail of each "new game" log line (it says the seed)."""
    paths: list[JsonPath] = [("rng",), ("seed",)]
    log = body.get("log")
    if isinstance(log, list):
        paths += [("log", i, "detail") for i, e in enumerate(log)
                  if isinstance(e, dict) and e.get("event") == "new game"]
    return paths


def summary(session: Any) -> str:
    s = session.state
    if s.phase == OVER:
        return f"{s.winner} won on turn {s.turn}"
    return f"turn {s.turn}, marker on {s.kem}"


def bot_think(session: Any) -> Any:
    """The advisor's choice for the decision now, worked out on a snapshot (a worker thread runs it)."""
    state, version = session.state.clone(), session.version
    return lambda: session.advice_for(state, version)


def bot_play(session: Any, advice: Any, version: int) -> bool:
    return bool(advice is not None and session.play_advice(advice, version))


KZIN_TABLE = TableGame(slug="kzin", title="Man-Kzin Wars", session_class=KzinSession, hidden=hidden,
                       secret_seed=secret_seed, summary=summary, bot_think=bot_think, bot_play=bot_play)
