"""What the expert learned, as tables a notebook can show.

* :func:`value_frame`: the learned chance of winning from the start of a turn, by the marker's space,
  the Conquest force in play, the Fleets, Technology and the reserve (long format, to pivot).
* :func:`decision_frame`: every decision of games played by the expert through the plain engine, with
  what it did: ``decline``, ``sacrifice`` (one Fleet alone, below even odds: it clears the Conquest cards,
  win or lose) or ``fight``, with the battle odds and the Conquest force it faced.
* :func:`lessons`: the share of each choice by phase and Conquest force (when it fights, when it sacrifices).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from engine.kzin.cards import CARDS, HUMAN_FLEET
from engine.kzin.expert import (
    C_BINS,
    C_STEP2,
    N_KEM,
    NF_BINS,
    R_POINTS,
    R_STEP,
    TECH_BINS,
    ExpertPolicy,
    game_keys,
    load_values,
    play_plain,
)
from engine.kzin.odds import Battle
from engine.kzin.policies import CommitmentPolicy, everything
from engine.kzin.rules import EARTH, KzinRules, KzinState, make_rules

CONQUEST_BANDS = (-1, 0, 6, 12, 18, 24, 1000)
BAND_LABELS = ("none", "1-6", "7-12", "13-18", "19-24", "25+")


def value_frame(rules: KzinRules | None = None) -> pd.DataFrame:
    """The learned table as rows: kem, conquest (lowest force of the band), fleets, technology, reserve, value."""
    V = load_values(rules if rules is not None else make_rules())
    idx = pd.MultiIndex.from_product(
        [range(EARTH + 1, EARTH + 1 + N_KEM), [b * C_STEP2 / 2 for b in range(C_BINS)], range(NF_BINS),
         range(TECH_BINS), range(V.shape[4]), [i * R_STEP for i in range(R_POINTS)]],
        names=["kem", "conquest", "fleets", "technology", "deck_band", "reserve"])
    return pd.DataFrame({"value": V.reshape(-1)}, index=idx).reset_index()


class _Recorder(CommitmentPolicy):
    """The expert, noting each decision the first time it is asked."""

    name = "expert"

    def __init__(self) -> None:
        self.expert = ExpertPolicy()
        self.rows: list[dict[str, Any]] = []

    def commitment(self, state: KzinState) -> list[int] | None:
        chosen = self.expert.commitment(state)
        if not state.committed:
            self.rows.append(describe(state, chosen or []))
        return chosen


def describe(state: KzinState, chosen: list[int]) -> dict[str, Any]:
    """One decision: the table, the choice and its battle odds (and the odds with everything, for comparison)."""
    fleet = state.invading_fleet()
    conquest = state.kzin_const() - state.rules.kzin_base_force
    if fleet is not None and state.rules.kzin_fleet_force:
        conquest -= fleet.const
    dice = sum(c.dice for c in state.conquest_in_play())
    all_cards = everything(state)
    fleets = sum(1 for k in chosen if _is_fleet(k))
    odds = float(Battle.from_state(state, chosen).win_probability()) if chosen else None
    if not chosen:
        kind = "decline"
    elif len(chosen) == 1 and odds is not None and odds < 0.5:
        kind = "sacrifice"
    else:
        kind = "fight"
    return {
        "turn": state.turn, "phase": state.battle_phase, "kem": state.kem,
        "conquest_force": conquest + 5.5 * dice, "conquest_cards": len(state.conquest_in_play()),
        "fleets_in_play": state.fleets_in_play(), "technology": state.technology(),
        "cards_available": len(all_cards), "choice": kind, "cards_committed": len(chosen), "fleets_committed": fleets,
        "battle_odds": odds,
        "odds_with_everything": float(Battle.from_state(state, all_cards).win_probability())
        if any(_is_fleet(k) for k in all_cards) else None,
    }


def _is_fleet(kind: int) -> bool:
    return CARDS[kind].type == HUMAN_FLEET


def decision_frame(games: int = 300, seed: int = 0, rules: KzinRules | None = None) -> pd.DataFrame:
    """Every decision of ``games`` expert games (the kernel's games for ``game_keys(default_rng(seed))``)."""
    rec = _Recorder()
    keys = game_keys(np.random.default_rng(seed), games)
    for g, key in enumerate(keys):
        start = len(rec.rows)
        won, _ = play_plain(int(key), rec, rules)
        for row in rec.rows[start:]:
            row["game"], row["won"] = g, won
    return pd.DataFrame(rec.rows)


def lessons(frame: pd.DataFrame) -> pd.DataFrame:
    """Share of decline / sacrifice / fight by phase and Conquest force band (with the count of decisions)."""
    band = pd.cut(frame["conquest_force"], CONQUEST_BANDS, labels=BAND_LABELS)
    table = pd.crosstab([frame["phase"], band], frame["choice"], normalize="index")
    table["decisions"] = pd.crosstab([frame["phase"], band], frame["choice"]).sum(axis=1)
    return table


__all__ = ["decision_frame", "describe", "lessons", "value_frame"]
