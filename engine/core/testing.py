"""``random_sim_test``: play random legal games of any game and check the protocol's invariants.

Every game's test suite calls it. At each step it checks:

* a chance node lists distinct outcomes whose exact probabilities are positive and sum to 1, and
  ``sample_chance`` draws one of them;
* a non-terminal decision node has legal actions, each printing to text that parses back to it;
* a clone is independent: applying an action to the clone leaves the original exactly as it was;
* a JSON save loads back to a state with the same JSON, player to move and legal actions;
* illegal actions (actions seen legal elsewhere but not legal here, and junk text) raise
  ``IllegalActionError`` and leave the state exactly as it was;
* so do malformed ones: a legal action with one field wrongly typed (``Commit("x")``, a NaN speed, a list
  for a figure) or out of every game's range (``Commit(-35)``, ``Lead(2)``, ``Commit(99)``), and things that are
  not actions at all; a malformed action still prints;
* every player's view is JSON-serialisable;
* at the end, returns lie within the game's utility bounds.
"""

from __future__ import annotations

import dataclasses
import json
import math
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.core.analysis import StateFactory, as_factory
from engine.core.protocol import CHANCE, Action, Game, IllegalActionError, State, check_probabilities
from engine.core.rng import make_rng, sample_outcome
from engine.core.serialize import load_state


@dataclass
class SimReport:
    games: int = 0
    steps: int = 0
    chance_nodes: int = 0
    decisions: int = 0
    illegal_probes: int = 0
    malformed_probes: int = 0
    max_length: int = 0


def _json(state: State) -> str:
    return state.to_json()


def random_sim_test(
    game_or_factory: Game | StateFactory,
    num_games: int = 5,
    seed: int = 0,
    max_steps: int = 20_000,
    check_every: int = 1,
    illegal_probes: int = 2,
    malformed_probes: int = 3,
    choose: Callable[[State, np.random.Generator], Action] | None = None,
) -> SimReport:
    """Play ``num_games`` random games, asserting the invariants; return what was exercised.

    ``check_every`` > 1 runs the expensive checks (clone, JSON, probes) on every n-th step only.
    ``choose`` replaces the uniform choice among legal actions (e.g. to favour ending moves).
    ``malformed_probes`` malformed actions (see :func:`malformed_variants`) are tried on each checked step.
    """
    factory = as_factory(game_or_factory)
    rng = make_rng(seed)
    report = SimReport()
    seen_actions: list[Action] = []
    seen_set: set[Action] = set()
    for _ in range(num_games):
        state = factory(rng)
        game_cls = type(state.game)
        info = state.game.info
        length = 0
        while not state.is_terminal():
            assert length < max_steps, f"game did not end within {max_steps} steps"
            player = state.current_player()
            deep = length % check_every == 0
            if player == CHANCE:
                outcomes = state.chance_outcomes()
                check_probabilities(outcomes)
                legal = [a for a, _ in outcomes]
                sampled = state.sample_chance(rng)
                assert sampled in set(legal), f"sample_chance gave {sampled}, not a listed outcome"
                action = sample_outcome(outcomes, rng)
                report.chance_nodes += 1
            else:
                assert 0 <= player < info.num_players, f"bad current player {player}"
                legal = state.legal_actions()
                assert legal, f"non-terminal state with no legal actions: {state!r}"
                action = choose(state, rng) if choose else legal[int(rng.integers(len(legal)))]
                report.decisions += 1
            if deep:
                _check_state(state, legal, game_cls, seen_actions, seen_set, illegal_probes, rng, report)
                _check_malformed(state, legal, malformed_probes, rng, report)
            for a in legal[:4]:
                if a not in seen_set:
                    seen_set.add(a)
                    seen_actions.append(a)
            state.apply_action(action)
            length += 1
            report.steps += 1
        returns = state.returns()
        assert len(returns) == info.num_players
        for r in returns:
            assert info.min_utility <= r <= info.max_utility, f"return {r} outside utility bounds"
        assert state.legal_actions() == [], "a terminal state has legal actions"
        _check_roundtrip(state, game_cls)
        report.games += 1
        report.max_length = max(report.max_length, length)
    return report


def _check_roundtrip(state: State, game_cls: type[Game]) -> None:
    text = _json(state)
    loaded = load_state(text, game_cls)
    assert _json(loaded) == text, "JSON round trip changed the state"
    assert loaded.current_player() == state.current_player()
    assert loaded.returns() == state.returns()


def _check_state(
    state: State,
    legal: list[Action],
    game_cls: type[Game],
    seen_actions: list[Action],
    seen_set: set[Action],
    illegal_probes: int,
    rng: np.random.Generator,
    report: SimReport,
) -> None:
    before = _json(state)
    # Text round trip of every legal action.
    for a in legal:
        text = state.action_to_string(a)
        assert state.parse_action(text) == a, f"{text!r} does not parse back to {a!r}"
    # Views are plain JSON.
    for p in range(state.game.info.num_players):
        json.dumps(state.player_view(p))
    # JSON round trip.
    _check_roundtrip(state, game_cls)
    loaded = load_state(before, game_cls)
    assert loaded.legal_actions() == legal or state.is_chance_node(), "reloaded state has other legal actions"
    # Clone independence: move the clone, the original must not change.
    clone = state.clone()
    assert _json(clone) == before, "clone differs from the original"
    clone.apply_action(legal[int(rng.integers(len(legal)))])
    assert _json(state) == before, "applying an action to a clone changed the original"
    # Illegal actions change nothing.
    legal_set = set(legal)
    candidates = [a for a in seen_actions if a not in legal_set]
    probes = []
    if candidates:
        picks = rng.integers(len(candidates), size=min(illegal_probes, len(candidates)))
        probes = [candidates[int(i)] for i in picks]
    for a in probes:
        try:
            state.apply_action(a)
        except IllegalActionError as exc:
            assert str(exc), "IllegalActionError without a reason"
        else:
            raise AssertionError(f"{a} was applied although it is not among the legal actions")
        assert _json(state) == before, f"refusing {a} changed the state"
        report.illegal_probes += 1
    try:
        state.apply_action("\x00 not a move \x00")
    except IllegalActionError:
        pass
    else:
        raise AssertionError("junk text was accepted as a move")
    assert _json(state) == before, "refusing junk text changed the state"


# Values no move of any game may hold in a field of the given type: wrongly typed, or out of every game's range
# (no card, side, player, d6 or d10 is numbered -35, -1 or a million; no die, figure or face is named "<b>").
_WRONG: dict[Any, tuple[Any, ...]] = {
    int: ("x", 1.5, True, None, [1], -35, -1, 10**6, 2**200),
    float: ("x", None, math.nan, math.inf, -math.inf, [1.0]),
    str: (7, None, ["x"], "x" * 1000, "<b>"),
    bool: ("yes", 1, None),
}
_NOT_ACTIONS: tuple[Any, ...] = (None, 42, 1.5, ["pass"], {"move": "pass"}, b"pass")


def malformed_variants(action: Any) -> list[Any]:
    """Copies of a (dataclass) action with one field set to a wrong value: a wrong type for that field, or a
    number or text out of every game's range. A tuple field also gets tuples of wrong items and a list."""
    if not dataclasses.is_dataclass(action):
        return []
    hints = typing.get_type_hints(type(action))
    out = []
    for f in dataclasses.fields(action):
        hint = hints[f.name]
        args = typing.get_args(hint)
        base = hint if hint in _WRONG else next((a for a in args if a in _WRONG), None)
        values = list(_WRONG[base]) if base is not None else [[1], 3.5]
        if typing.get_origin(hint) is tuple and args:
            values += [("x" * 1000,), (7,), ["x"]]
        if type(None) in args:
            values = [v for v in values if v is not None]
        for v in values:
            bad = object.__new__(type(action))
            for g in dataclasses.fields(action):
                object.__setattr__(bad, g.name, v if g.name == f.name else getattr(action, g.name))
            out.append(bad)
    return out


def _check_malformed(state: State, legal: list[Action], probes: int, rng: np.random.Generator,
                     report: SimReport) -> None:
    """Malformed actions are refused with ``IllegalActionError`` (never another error) and change nothing."""
    if probes <= 0:
        return
    before = _json(state)
    candidates = [v for a in legal[:8] for v in malformed_variants(a)]
    picks = [candidates[int(i)] for i in rng.integers(len(candidates), size=probes)] if candidates else []
    picks.append(_NOT_ACTIONS[int(rng.integers(len(_NOT_ACTIONS)))])
    for bad in picks:
        try:
            state.apply_action(bad)
        except IllegalActionError as exc:
            assert str(exc), "IllegalActionError without a reason"
        except Exception as exc:
            raise AssertionError(f"a malformed action {_show(bad)} raised {type(exc).__name__}: {exc}") from exc
        else:
            raise AssertionError(f"a malformed action {_show(bad)} was applied")
        assert _json(state) == before, f"refusing the malformed action {_show(bad)} changed the state"
        try:
            str(bad)  # a view may show the refused move
        except Exception as exc:
            raise AssertionError(f"a malformed action {_show(bad)} does not print: {type(exc).__name__}") from exc
        report.malformed_probes += 1


def _show(action: Any) -> str:
    if dataclasses.is_dataclass(action):
        fields = ", ".join(f"{f.name}={getattr(action, f.name)!r:.30}" for f in dataclasses.fields(action))
        return f"{type(action).__name__}({fields})"
    return f"{action!r:.40}"
