"""The bots' chit play measured from games, against the minimax mix of the exchange (notebook 02, section 7).

An exchange, as ``engine.kf2100.exchange`` models it, is a fresh attack chit met by an answering chit: the rows
of its matrix game are the chits the attacker's levels give that reach the target, the columns every answer the
target's side there can give (:func:`engine.kf2100.exchange.combat_exchange`). :func:`play_recorded` plays a game
exactly as ``engine.core.play_game`` does (same policies, same draws, so a seed gives the tournament's games) and
records each exchange: which side attacked, the two figures' kinds, the exchange's rows and columns, the attack
chit played and the answer given ("none" when the target's side had no chit left to answer with). Attacks that
are an answer turned round (the "aim" step) are not counted: their chit was chosen as an answer.

From the counts, :func:`attack_concession` and :func:`answer_concession` say exactly (in fractions) what a mix
gives away against the best reply to it: ``v - min_j (x A)_j`` for the attacker's mix ``x``, ``max_i (A y)_i - v``
for the answering side's ``y``; the minimax mixes concede nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from engine.core import Policy
from engine.core.protocol import CHANCE
from engine.kf2100.actions import Answer, Attack
from engine.kf2100.data import CHIT_TECHNIQUES
from engine.kf2100.exchange import Matrix, answer_column, solve_game
from engine.kf2100.steps import Step

ANSWER_ORDER = (*CHIT_TECHNIQUES, "weapon", "none")
"""The answer columns in one fixed order."""
RECORD_FIELDS = ("side", "attacker", "target", "rows", "columns", "attack", "answer")
"""One recorded exchange: the attacking side (0 Terminators, 1 Clone Master), the attacking and attacked figures'
kinds, the exchange's attack chits and answer columns ("+"-joined), the attack chit and the answer column."""


def chits_of(state: Any, figure: Any) -> list[str]:
    """The chits a figure's levels (and weapon) let it play, in the order ``combat_exchange`` lists them."""
    options, _ = state.chit_options(figure)
    return [c for c in (*CHIT_TECHNIQUES, *sorted(set(options) - set(CHIT_TECHNIQUES))) if options.get(c, 0) > 0]


def exchange_shape(state: Any, attacker: str, target: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The rows and columns of ``combat_exchange(state, attacker, target)`` without solving its game (a game has
    some fifty exchanges): the attacker's chits that reach the target, the answer columns of the target's side
    (in :data:`ANSWER_ORDER`, so that one exchange is always written the same way)."""
    f, g = state.figs[attacker], state.figs[target]
    rows = tuple(chit for chit in chits_of(state, f) if state.in_reach(f, chit, g.pos))
    answers = [chit for x in state.combat.members
               if (h := state.figs.get(x)) is not None and h.side != f.side and h.conscious
               for chit in chits_of(state, h)]
    found = {answer_column(a) for a in answers}
    columns = tuple(column for column in ANSWER_ORDER if column in found) or ("none",)
    return rows, columns


def play_recorded(state: Any, policies: Sequence[Policy], rng: np.random.Generator,
                  max_steps: int = 1_000_000) -> tuple[Any, list[dict[str, Any]]]:
    """Play ``state`` to the end in place, as ``play_game`` does, and return it with the exchanges it had (one dict
    of :data:`RECORD_FIELDS` each). Attacks on equipment have no answer and are left out."""
    records: list[dict[str, Any]] = []
    open_: dict[str, Any] | None = None
    for _ in range(max_steps):
        player = state.current_player()
        if player < 0:
            if player == CHANCE:
                if open_ is not None:  # the attack goes to its roll unanswered
                    records.append({**open_, "answer": "none"})
                    open_ = None
                state._apply(state.sample_chance(rng))
                continue
            return state, records
        step = state.step
        action = policies[player].choose(state, rng)
        if step is Step.ANSWER and isinstance(action, Answer) and open_ is not None:
            records.append({**open_, "answer": answer_column(action.chit)})
            open_ = None
        elif step in (Step.ATTACK, Step.AIM) and isinstance(action, Attack):
            if open_ is not None:
                records.append({**open_, "answer": "none"})
            open_ = None
            if step is Step.ATTACK and not action.target.startswith("E"):
                rows, columns = exchange_shape(state, action.figure, action.target)
                open_ = {"side": player, "attacker": state.figs[action.figure].kind,
                         "target": state.figs[action.target].kind, "rows": "+".join(rows),
                         "columns": "+".join(columns), "attack": action.chit}
        state.apply_action(action)
    raise RuntimeError(f"game did not end within {max_steps} steps")


def mix_of(counts: Mapping[str, int], names: Sequence[str]) -> tuple[Fraction, ...]:
    """The measured mix over ``names``: each one's count over the total, exactly. A count of a name outside
    ``names``, or no count at all, is a ``ValueError``."""
    outside = [k for k, n in counts.items() if n and k not in names]
    if outside:
        raise ValueError(f"counts of {outside} are not strategies of this exchange ({', '.join(names)})")
    total = sum(counts.get(k, 0) for k in names)
    if total <= 0:
        raise ValueError("a mix needs at least one counted play")
    return tuple(Fraction(counts.get(k, 0), total) for k in names)


def attack_concession(payoff: Matrix, x: Sequence[Fraction]) -> Fraction:
    """What the attacker's mix ``x`` gives away: the value minus the hit chance it keeps against the answer that
    beats it best (a pure answer is always among the best replies to a fixed mix)."""
    m, n = len(payoff), len(payoff[0])
    if len(x) != m or any(p < 0 for p in x) or sum(x) != 1:
        raise ValueError(f"{list(map(str, x))} is not a mix over the {m} attack chits")
    keeps = min(sum((x[i] * Fraction(payoff[i][j]) for i in range(m)), Fraction(0)) for j in range(n))
    return solve_game(payoff).value - keeps


def answer_concession(payoff: Matrix, y: Sequence[Fraction]) -> Fraction:
    """What the answering side's mix ``y`` gives away: the hit chance the best attack against it gets, minus the
    value."""
    m, n = len(payoff), len(payoff[0])
    if len(y) != n or any(p < 0 for p in y) or sum(y) != 1:
        raise ValueError(f"{list(map(str, y))} is not a mix over the {n} answers")
    gets = max(sum((Fraction(payoff[i][j]) * y[j] for j in range(n)), Fraction(0)) for i in range(m))
    return gets - solve_game(payoff).value


def chunk_exchanges(scenario: str, seed: np.random.SeedSequence, games: int) -> tuple[dict[str, int], list[dict]]:
    """One chunk of ``engine.kf2100.tournament``'s heuristic-against-heuristic games (the same policies and draws as
    its ``play_chunk``, so the same games and grades), with every exchange they had."""
    from collections import Counter

    from engine.core import make_rng
    from engine.kf2100.state import KungFuGame
    from engine.kf2100.tournament import make_bot

    game = KungFuGame(scenario)
    policies = [make_bot("heuristic", 0, game), make_bot("heuristic", 1, game)]
    rng = make_rng(seed)
    grades: Counter[str] = Counter()
    records: list[dict] = []
    for _ in range(games):
        end, played = play_recorded(game.new_initial_state(), policies, rng)
        grades[end.result] += 1
        records.extend(played)
    return dict(grades), records
