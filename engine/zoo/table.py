"""Kung-Fu Zoo at a table: 2 to 4 teams as seats, what its session file hides, and how its bots play there.

Everything of a battle is on the table (the dice, the scores, the abilities spent) but the chance: each flick's
aim noise is drawn from the battle's own generator, and the bots think with the session's. Both come from the
seed, and the seed with the log replays every roll. So a table's battle is dealt from a fresh secret seed
(:data:`SECRET_SEED_BITS` bits), which no page shows, and a file saved at a table seals both generators, the
seed and the log line that names the seed: a seat that saved the file cannot run the physics noise ahead.

At a table the bots are played by the table's driver (one per table, whatever the number of pages), not by
each page. A bot waits, as on a page of one's own, until the players have seen the flick before it play out
and the round's result: :class:`TableZooSession` keeps a bot from moving while a result is shown, and
:func:`bot_think` waits out the last flick's animation on the worker thread before it thinks.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from typing import Any

import param

from engine.core.seal import JsonPath
from engine.core.tables import TableGame
from engine.zoo.session import ZooSession

SECRET_SEED_BITS = 62
"""A table's seed is drawn from 2**62 (the bots' generator is seeded with seed + 1: it stays within 64 bits)."""
BOT_PAUSE_S = 0.3
"""A person sees the board before the computer flicks (as apps.zoo.panels.BOT_PAUSE_S on a page of one's own)."""


def secret_seed() -> int:
    return secrets.randbelow(2**SECRET_SEED_BITS)


def hidden(body: dict[str, Any]) -> list[JsonPath]:
    """The bots' generator, the battle's own (the aim noise of every flick), the seed and the log line that
    says the seed ("new 4-player Cage Battle, seed ...")."""
    paths: list[JsonPath] = [("rng",), ("seed",)]
    game = body.get("game")
    if isinstance(game, dict) and isinstance(game.get("state"), dict) and "rng" in game["state"]:
        paths.append(("game", "state", "rng"))
    log = body.get("log")
    if isinstance(log, list):
        paths += [("log", i, "text") for i, e in enumerate(log)
                  if isinstance(e, dict) and isinstance(e.get("text"), str) and e["text"].startswith("new ")]
    return paths


class TableZooSession(ZooSession):
    """A battle at a table: its bots wait while a round's result is shown, and going on to the next round
    wakes them (the table's driver listens to ``version`` and ``seats``; Next round changes neither)."""

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.param.watch(self._wake_bots, ["round_result"])

    def bot_to_move(self) -> bool:
        return super().bot_to_move() and self.round_result is None

    def _wake_bots(self, event: param.parameterized.Event) -> None:
        if event.new is None and self.bot_to_move():
            self.param.trigger("seats")


def summary(session: Any) -> str:
    """Round, scores and who is to flick, in one line for the list of tables."""
    s = session.state
    g = s.game
    if s.phase == "over":
        return f"{' and '.join(g.player_name(q) for q in s.winners())} won the {g.title()}"[:80]
    if g.mode == "cage" and not g.multiplayer:
        score = ", ".join(f"{g.player_name(q).split()[0]} {s.wins[q]}" for q in range(g.players))
    elif g.mode == "cage":
        score = "in play " + " ".join(g.player_name(q).split()[0] for q in range(g.players) if not s.eliminated[q])
    else:
        score = ", ".join(f"{g.player_name(q).split()[0]} {s.points[q]} pts" for q in range(g.players))
    doing = "places" if s.phase == "place" else "chooses who starts" if s.phase == "first" else "to flick"
    return f"round {s.round_no}, {score}; {g.player_name(s.to_move)} {doing}"[:80]


def bot_think(session: Any) -> Callable[[], Any]:
    """The bot's choice, worked out on a snapshot by a worker thread once the last flick has played out in the
    browsers (its frames' duration, then a short pause); ``bot_play`` refuses it if the battle moved on."""
    state, version, rng, bot = session.state.clone(), session.version, session.rng, session.new_bot()
    frames = session.last_frames
    wait = (float(frames[-1]["t"]) if frames else 0.0) + BOT_PAUSE_S

    def think() -> Any:
        time.sleep(wait)
        return session.think(state, version, rng, bot)

    return think


def bot_play(session: Any, choice: Any, version: int) -> bool:
    return bool(choice is not None and session.bot_to_move() and session.play_bot(choice) is not None)


ZOO_TABLE = TableGame(slug="zoo", title="Kung-Fu Zoo", session_class=TableZooSession, hidden=hidden,
                      secret_seed=secret_seed, summary=summary, bot_think=bot_think, bot_play=bot_play,
                      session_options={"seats": ["person", "person"], "odds_workers": 1})
