"""Scripted flicks for the rules tests: the physics replaced by a stated outcome."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from engine.zoo import game as game_module
from engine.zoo.arena3d import DieBody, Launch, SimResult
from engine.zoo.faces import orientation_with_up
from engine.zoo.game import Die, ZooState, new_game

SPOTS = [(60.0 + 45.0 * (k % 5), 70.0 + 45.0 * (k // 5)) for k in range(16)]


def in_arena(state: ZooState, faces: dict[str, str] | None = None, dice: Iterable[str] | None = None) -> ZooState:
    """Put dice (all, by default) in the arena on separate spots with the given faces (default back-up)."""
    faces = faces or {}
    for k, d in enumerate(state.dice if dice is None else dice):
        x, y = SPOTS[k]
        state.dice[d] = Die(state.dice[d].owner, "arena", x, y, 0.0, orientation_with_up(faces.get(d, "back")))
    return state


def fresh(mode: str = "cage", players: int = 2, **options: Any) -> ZooState:
    state = new_game(mode, players, seed=0, **options)
    state.rail_rule = None
    return state


class Script:
    """Replaces ``simulate`` in the rules: the launched die lands at ``land`` face ``face`` unless caged/out,
    ``faces`` re-face other dice, ``caged``/``left`` remove dice; records the launches it saw.

    ``then`` scripts the next flick only; flicks not scripted land back-up in the middle."""

    def __init__(self, monkeypatch: Any) -> None:
        self.launches: list[Launch] = []
        self.next: dict[str, Any] = {}
        monkeypatch.setattr(game_module, "simulate", self)

    def then(self, face: str = "back", land: tuple[float, float] = (150.0, 150.0), caged: dict[str, str] | None = None,
             left: dict[str, str] | None = None, faces: dict[str, str] | None = None,
             rail_before_strike: bool | None = None, moved: dict[str, tuple[float, float]] | None = None) -> Script:
        self.next = dict(face=face, land=land, caged=caged or {}, left=left or {}, faces=faces or {},
                         rail_before_strike=rail_before_strike, moved=moved or {})
        return self

    def __call__(self, others: list[DieBody], launch: Launch, rng: Any, record: bool = False, **kw: Any) -> SimResult:
        self.launches.append(launch)
        n, self.next = self.next, {}  # one outcome per scripted flick, then the default
        n = n or dict(face="back", land=(150.0, 150.0), caged={}, left={}, faces={},
                              rail_before_strike=None, moved={})
        dice = {}
        for b in others:
            o = orientation_with_up(n["faces"][b.id]) if b.id in n["faces"] else b.orientation
            x, y = n["moved"].get(b.id, (b.x, b.y))
            dice[b.id] = DieBody(b.id, x, y, b.angle, o)
        x, y = n["land"]
        dice[launch.die] = DieBody(launch.die, x, y, launch.heading, orientation_with_up(n["face"]))
        for d in (*n["caged"], *n["left"]):
            dice.pop(d, None)
        frames = [{"t": 0.0, "dice": {}}] if record else []
        return SimResult(dice=dice, caged=dict(n["caged"]), left=dict(n["left"]),
                         rail_before_strike=n["rail_before_strike"], frames=frames)
