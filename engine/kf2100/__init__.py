"""Kung Fu 2100 (Steve Jackson Games, 1980): Terminators against the Clone Master's lair.

The rules engine follows the seed's summary; the map, unit values and CRT are a reconstruction kept
in ``data/`` (``map.txt``, ``units.toml``, ``crt.csv``, ``scenarios.toml``). Modules:

* ``data``: the validating loader (errors name the file and line);
* ``board``: movement costs, line of sight, missile reach;
* ``actions``: the moves as text (``move T1 g5``, ``chits T1 fist+kick+mist``, ``attack T1 kick J3``...);
* ``steps``: ``Step``, the one thing the game waits for now (set-up, move, pick, answer, roll...);
* ``figures``: the sides, phases, a ``Figure`` (one counter) and a ``Combat`` (one chit exchange);
* ``state``: ``KungFuGame`` / ``KungFuState`` on the core protocol, and ``skirmish`` positions; the state's
  rules are its bases, a module each: ``state_core`` (fields, helpers, the step), ``state_setup``,
  ``state_movement``, ``state_combat``, ``state_flow`` (phases, rolls, the result) and ``state_save``
  (copies, saved positions and their checks, views; the file schema is ``state_schema``);
* ``bots``: ``HeuristicBot`` for either side (the solo Clone Master with ``solo=True``);
* ``solo``: the Solo Clone Master's behaviour rules (Jellies straight at the Terminator, attack chits first...);
* ``odds``: single-chit odds, door, Mountain Heart, untrained mobs, whole-combat distributions;
* ``session``: ``KungFuSession``, the ``param`` model the dashboard drives;
* ``cli`` (``dojo kf2100 simulate``) and ``bench``.
"""
