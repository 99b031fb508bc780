"""Kung-Fu Zoo: flick animal dice into cages in a 3-D arena (MuJoCo), with the odds of every flick.

``game`` holds the rules on the core protocol, ``arena3d`` the arena, ``faces`` the 24 orientations,
``odds`` the flick odds by simulation, ``bot`` a player that chooses by those odds, ``session`` the model
the dashboard is built on. DESIGN values are in ``constants.toml``, ``faces.csv`` and ``abilities.csv``.
"""

from engine.zoo.actions import ChooseFirst, Flick, Pass, Place, UseAbility, ZooAction
from engine.zoo.game import ZooGame, ZooState, new_game

__all__ = ["ChooseFirst", "Flick", "Pass", "Place", "UseAbility", "ZooAction", "ZooGame", "ZooState", "new_game"]
