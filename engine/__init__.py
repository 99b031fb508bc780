"""Tabletop Dojo: rules engines for three tabletop games, with the probabilities behind them.

The package has no UI import anywhere: ``engine.core`` holds what every game shares and each
``engine.<game>`` holds one game's rules, data, odds, bots and session model.
"""

__version__ = "0.1.0"
