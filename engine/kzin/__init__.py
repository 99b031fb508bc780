"""Man-Kzin Wars: a solo card game of holding off the Kzinti, as a rules engine with exact odds.

>>> from engine.kzin import Battle
>>> Battle("invasion", fleets=["Belter Ships", "Pirate Fleet"], tactics=["Marines"], technology=1,
...        kzin_fleet="Kzinti Horde").win_probability()
Fraction(16, 25)
"""

from engine.kzin.cards import CARDS, DECK_SIZE, SPACES, Card, card
from engine.kzin.odds import Battle, p_humans_win
from engine.kzin.policies import POLICY_NAMES, make_policy
from engine.kzin.rules import KzinAction, KzinGame, KzinRules, KzinState, make_rules

__all__ = [
    "CARDS", "DECK_SIZE", "POLICY_NAMES", "SPACES", "Battle", "Card", "KzinAction", "KzinGame", "KzinRules",
    "KzinState", "card", "make_policy", "make_rules", "p_humans_win",
]
