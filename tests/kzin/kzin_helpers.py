"""Scenario helpers: set up Man-Kzin Wars positions and script the chance nodes."""

from __future__ import annotations

from engine.kzin.cards import CARDS, card
from engine.kzin.rules import Draw, KzinGame, KzinState, Roll


def draw(state: KzinState, name: str) -> None:
    state.apply_action(Draw(card(name).index))


def roll(state: KzinState, *values: int) -> None:
    for v in values:
        state.apply_action(Roll(v))


def put_in_play(state: KzinState, *names: str) -> None:
    """Move cards from the deck into play, as if drawn on earlier turns (keeps every card accounted for)."""
    for name in names:
        c = card(name)
        assert state.pile[c.index] > 0, f"no {name} left in the deck"
        state.pile[c.index] -= 1
        state.in_play[c.index] += 1


def fresh(**options) -> KzinState:
    return KzinGame(**options).new_initial_state()


def kinds(*names: str) -> list[int]:
    return [card(n).index for n in names]


__all__ = ["CARDS", "draw", "fresh", "kinds", "put_in_play", "roll"]
