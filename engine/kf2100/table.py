"""Kung Fu 2100 at a table: what its session file hides, how a table's game is dealt, its one-line summary, and
how a bot seat's step is worked out off the event loop.

What no seat may read in a session file (each of these is sealed, :mod:`engine.core.seal`):

- every face-down Clone Master counter: its whole entry in the figure list (its identity, square, levels), so
  the file says only that a counter of the mix is still face down somewhere (the mix itself is public);
- the set-up queue while the Clone Master places his counters (it names the counters still to place);
- the combat's chits, both sides' unplayed picks (a chit once played is in the combat's attack or answer);
- the generator and the seed, which foretell every die (the Solo deal too) and, with the log, replay the game.

A table's game is dealt from a fresh secret seed (:data:`SECRET_SEED_BITS` bits) that no page shows.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any

from engine.core import IllegalActionError
from engine.core.rng import clone_rng
from engine.core.seal import JsonPath
from engine.core.tables import TableGame
from engine.kf2100.actions import KFAction
from engine.kf2100.session import KungFuSession
from engine.kf2100.state import PHASE_TITLES, PLAYER_NAMES

SECRET_SEED_BITS = 62
"""A table's seed is drawn from 2**62 (numpy takes it; too many to find by replaying the rolls)."""
CLONE_MASTER_KINDS = frozenset({"clone_master", "jelly", "armed_technician", "unarmed_technician", "servant",
                                "constabulary"})


def secret_seed() -> int:
    return secrets.randbelow(2**SECRET_SEED_BITS)


def hidden(body: dict[str, Any]) -> list[JsonPath]:
    """The paths of a Kung Fu 2100 session file that no seat may read (see the module's docstring)."""
    paths: list[JsonPath] = [("rng",), ("seed",)]
    game = body.get("game")
    state = game.get("state") if isinstance(game, dict) else None
    if not isinstance(state, dict):
        return paths
    figures = state.get("figures")
    if isinstance(figures, list):
        paths += [("game", "state", "figures", i) for i, f in enumerate(figures)
                  if isinstance(f, dict) and f.get("kind") in CLONE_MASTER_KINDS and not f.get("face_up")]
    if state.get("phase") == "setup" and "queue" in state:
        paths.append(("game", "state", "queue"))
    combat = state.get("combat")
    if isinstance(combat, dict) and "chits" in combat:
        paths.append(("game", "state", "combat", "chits"))
    return paths


def summary(session: Any) -> str:
    """Turn, phase and who is to move (or the result), as the list of tables shows it."""
    s = session.state
    if s.is_terminal():
        return f"{s.result.replace('_', ' ')} on turn {s.turn}"
    player = s.current_player()
    who = PLAYER_NAMES[player] if 0 <= player < len(PLAYER_NAMES) else "the dice"
    return f"turn {s.turn}, {PHASE_TITLES[s.phase]}: {who} to move"


def bot_think(session: Any) -> Callable[[], tuple[KFAction, Any]]:
    """The bot's (or the dice's) next step, chosen on copies of the state and the generator (a worker thread
    runs it); the generator as the choice left it goes with it to :func:`bot_play`."""
    state, rng = session.state.clone(), clone_rng(session.rng)
    return lambda: (session.next_step(state, rng), rng)


def bot_play(session: Any, result: Any, version: int) -> bool:
    """Play the step chosen for the game at ``version``; False (nothing changed) once the game has moved on."""
    action, rng = result
    try:
        session.play_step(action, version, rng)
    except IllegalActionError:
        return False
    return True


KF2100_TABLE = TableGame(slug="kf2100", title="Kung Fu 2100", session_class=KungFuSession, hidden=hidden,
                         secret_seed=secret_seed, summary=summary, bot_think=bot_think, bot_play=bot_play)
