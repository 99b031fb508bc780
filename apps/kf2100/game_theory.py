"""The chit exchange as a zero-sum game, beside the CRT: the payoff matrix of the exchange in play, both sides'
minimax mixes and its value, all exact (``engine.kf2100.exchange``).

An exchange is read from the figures' levels, which both sides see, never from the chits either side has picked,
so this view shows nobody anything the rules hide.
"""

from __future__ import annotations

import html
from fractions import Fraction

from apps.kf2100.lair import NAMES
from engine.kf2100.exchange import ExchangeGame, combat_exchange
from engine.kf2100.session import KungFuSession


def exchanges(s: KungFuSession, armed: tuple[str, str] | None) -> list[ExchangeGame]:
    """The exchange of the pending attack, or, while a chit is armed, of its figure on each enemy in the combat;
    none outside a combat (or where no chit of the figure reaches anyone)."""
    state = s.state
    c = state.combat
    if c is None:
        return []
    if c.attack is not None:
        try:
            return [combat_exchange(state)]
        except ValueError:  # an attack the odds cannot read (a chit picked before its level was lost): none
            return []
    if armed is None or armed[0] not in state.figs:
        return []
    side = state.figs[armed[0]].side
    games = []
    for target in c.members:
        g = state.figs.get(target)
        if (g is None and target.startswith("E")) or (g is not None and g.side != side and g.conscious):
            try:
                games.append(combat_exchange(state, armed[0], target))
            except ValueError:
                continue  # that target is out of the armed figure's reach
    return games


def _frac(p: Fraction) -> str:
    return str(p.numerator) if p.denominator == 1 else f"{p.numerator}/{p.denominator}"


def _mix(names: tuple[str, ...], weights: tuple[Fraction, ...]) -> str:
    return ", ".join(f"{html.escape(NAMES.get(n, n))} {_frac(w)}" for n, w in zip(names, weights, strict=True)
                     if w) or "—"


def exchange_html(s: KungFuSession, armed: tuple[str, str] | None) -> str:
    """Each exchange as its matrix of exact hit chances (attack chits down, answers across), the attacker's and
    the answerers' minimax mixes and the value: the hit chance when both sides play their best mixes."""
    games = exchanges(s, armed)
    if not games:
        return ("<b>The exchange as a game</b><br><i>When a chit is armed or an attack is pending, its exchange is "
                "solved here as a zero-sum game with secret choices.</i>")
    parts = ["<b>The exchange as a game</b> (a hit chance for each attack chit against each answer; both "
             "choose in secret)"]
    for g in games:
        head = "".join(f"<th>{html.escape(NAMES.get(c, c))}</th>" for c in g.columns)
        body = "".join(f"<tr><th>{html.escape(NAMES.get(r, r))}</th>"
                       + "".join(f"<td>{_frac(p)}</td>" for p in row) + "</tr>"
                       for r, row in zip(g.rows, g.payoff, strict=True))
        parts.append(
            f"<div class='exchange'><b>{html.escape(g.attacker)} on {html.escape(g.target)}</b>: value "
            f"<b>{_frac(g.value)}</b> ({100 * float(g.value):.0f}%)"
            f"<table class='odds'><tr><th></th>{head}</tr>{body}</table>"
            f"Attacker's minimax mix: {_mix(g.rows, g.attack_strategy)}<br>"
            f"Answerers' minimax mix: {_mix(g.columns, g.answer_strategy)}</div>")
    return "".join(parts)
