"""What every game shares: the state protocol, seeded randomness, exact dice and analysis."""

from engine.core.analysis import Estimate, best_value, monte_carlo, play_game, policy_value, wilson_interval
from engine.core.policy import FunctionPolicy, Policy, UniformRandomPolicy
from engine.core.protocol import (
    CHANCE,
    TERMINAL,
    Action,
    ChanceMode,
    Game,
    GameInfo,
    IllegalActionError,
    Information,
    State,
    StateFormatError,
)
from engine.core.rng import make_rng
from engine.core.serialize import dump_state, load_state
from engine.core.testing import random_sim_test

__all__ = [
    "CHANCE", "TERMINAL", "Action", "ChanceMode", "Estimate", "FunctionPolicy", "Game", "GameInfo",
    "IllegalActionError", "Information", "Policy", "State", "StateFormatError", "UniformRandomPolicy",
    "best_value", "dump_state", "load_state", "make_rng", "monte_carlo", "play_game", "policy_value",
    "random_sim_test", "wilson_interval",
]
