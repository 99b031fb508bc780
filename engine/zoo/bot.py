"""A computer player that chooses its flick by the flick odds.

On a flick it builds candidates: aimed shots that knock an opponent's animal towards a cage (the pool
player's "ghost ball": aim the flicked die at the spot touching the target on the far side from the cage,
hard enough for the target to reach it), plus some of the representative flicks. It estimates each
candidate's odds with a few noisy samples (the same aim-noise model as the odds panel), re-estimates the
best few with more samples and plays the best by a utility: in a Cage Battle, caging an opponent is good and
losing your own, being stunned or a foul is bad; in a Points Battle, the expected change in points. On an
extra flick it passes when no flick is worth more than passing. Abilities that cannot hurt (Chest Pound,
Dust Kick) are used at once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from engine.core import Action, Policy, State
from engine.zoo.actions import ChooseFirst, Flick, Pass, Place, UseAbility
from engine.zoo.arena3d import RAILS, launch_point
from engine.zoo.constants import FACE_UP, STUNNED, arena, constants
from engine.zoo.game import ZooState
from engine.zoo.odds import AimNoise, FlickOdds, noisy_jobs, run_samples, summarise


@dataclass(frozen=True)
class Weights:
    """How the bot values a flick's odds in a Cage Battle (Points Battle uses expected points)."""

    cage_opponent: float = 2.0
    lose_own: float = 1.5
    stunned: float = 1.0
    face_up: float = 0.3
    foul: float = 3.0


def utility(state: ZooState, odds: FlickOdds, weights: Weights = Weights()) -> float:
    """The bot's value of a flick from its odds (0 is the value of passing an extra flick)."""
    if state.game.mode == "points":
        return odds.points_mean - weights.foul * odds.foul.value
    stunned = weights.stunned * (0.2 if state.game.all_valley else 1.0)
    return (weights.cage_opponent * odds.cage_opponent.value - weights.lose_own * odds.lose_own.value
            - stunned * odds.outcomes[STUNNED].value + weights.face_up * odds.outcomes[FACE_UP].value
            - weights.foul * odds.foul.value)


def aimed_shots(state: ZooState, speeds_margin: float = 1.2) -> list[Flick]:
    """Ghost-ball shots: every own flickable die x launch spot x opponent die x cage that the rules allow."""
    c = constants()
    a = arena()
    p = state.to_move
    edge = c["die"]["edge"]
    decel = c["friction"]["floor"] * c["friction"]["gravity"]
    e = c["restitution"]["die_die"]
    max_angle = c["flick"]["max_angle_deg"] - 5
    targets = [(d, die) for d, die in state.dice.items() if die.status == "arena" and die.owner != p]
    out: list[Flick] = []
    for d in state.flickable():
        die = state.dice[d]
        spots: list[float | None] = [None]
        if die.status == "arena" and die.face == FACE_UP:
            spots += [90.0, 210.0]
        for rail in RAILS:
            for along in spots:
                lx, ly, normal = launch_point(rail, a.size / 2 if along is None else along)
                for _t, target in targets:
                    for hx, hy in a.holes.values():
                        tx, ty = target.x, target.y
                        to_hole = math.hypot(hx - tx, hy - ty)
                        if to_hole < 1e-6:
                            continue
                        ux, uy = (hx - tx) / to_hole, (hy - ty) / to_hole
                        gx, gy = tx - ux * edge, ty - uy * edge
                        dist = math.hypot(gx - lx, gy - ly)
                        if dist < 1e-6:
                            continue
                        heading = math.atan2(gy - ly, gx - lx)
                        rel = math.degrees((heading - normal + math.pi) % (2 * math.pi) - math.pi)
                        cut = math.cos(heading - math.atan2(uy, ux))
                        if abs(rel) > max_angle or cut < 0.5:
                            continue
                        need = math.sqrt(2 * decel * to_hole) * speeds_margin / ((1 + e) / 2 * cut)
                        v0 = math.sqrt(need**2 + 2 * decel * dist) / 1000.0
                        speed = min(max(v0, c["flick"]["min_speed_m_s"]), c["flick"]["max_speed_m_s"])
                        out.append(Flick(d, rail, along, FACE_UP, round(rel, 2), round(speed, 3)))
    return [f for f in out if state.illegal_reason(f) is None]


class OddsBot(Policy):
    """Chooses flicks by simulated odds; ``candidates`` and ``samples`` trade strength for time."""

    name = "odds bot"

    def __init__(self, candidates: int = 24, samples: int = 6, refine: int = 3, refine_samples: int = 24,
                 noise: AimNoise | None = None, workers: int | None = 1, weights: Weights = Weights()) -> None:
        if min(candidates, samples, refine, refine_samples, 1 if workers is None else workers) < 1:
            raise ValueError("the bot's candidates, samples, refine, refine_samples and workers must be >= 1")
        self.candidates = candidates
        self.samples = samples
        self.refine = refine
        self.refine_samples = refine_samples
        self.noise = noise or AimNoise()
        self.workers = workers
        self.weights = weights
        self.last_odds: FlickOdds | None = None  # the odds of the flick chosen last, for the game's log

    def choose(self, state: State, rng: np.random.Generator) -> Action:
        assert isinstance(state, ZooState)
        legal = state.legal_actions()
        if not legal:
            raise ValueError("the game is over: nothing to choose")
        if state.phase == "first":
            return ChooseFirst(state.to_move)
        if state.phase == "place":
            return self._place(state, legal)
        for a in legal:
            if isinstance(a, UseAbility):
                return a
        flick, value = self.best_flick(state, rng)
        if state.phase == "extra" and (flick is None or value < 0):
            return Pass()
        if flick is None:
            return legal[int(rng.integers(len(legal)))]
        return flick

    def best_flick(self, state: ZooState, rng: np.random.Generator) -> tuple[Flick | None, float]:
        """The best candidate flick and its utility."""
        listed = [a for a in state.legal_actions() if isinstance(a, Flick)]
        aimed = aimed_shots(state)
        pool: list[Flick] = []
        if aimed:
            picks = rng.permutation(len(aimed))[: max(1, self.candidates * 2 // 3)]
            pool += [aimed[int(i)] for i in picks]
        if listed:
            picks = rng.permutation(len(listed))[: max(1, self.candidates - len(pool))]
            pool += [listed[int(i)] for i in picks]
        self.last_odds = None
        if not pool:
            return None, -math.inf
        scored = self._score(state, pool, self.samples, rng)
        top = [f for _, f, _ in sorted(scored, key=lambda t: -t[0])[: self.refine]]
        final = self._score(state, top, self.refine_samples, rng)
        value, best, self.last_odds = max(final, key=lambda t: t[0])
        return best, value

    def _score(self, state: ZooState, flicks: list[Flick], samples: int, rng: np.random.Generator
               ) -> list[tuple[float, Flick, FlickOdds]]:
        jobs = []
        for f in flicks:
            jobs += noisy_jobs(f, self.noise, samples, rng)
        results = run_samples(state, jobs, self.workers)
        out = []
        for k, f in enumerate(flicks):
            odds = summarise(f, self.noise, results[k * samples:(k + 1) * samples])
            out.append((utility(state, odds, self.weights), f, odds))
        return out

    def _place(self, state: ZooState, legal: list[Action]) -> Action:
        """Set the animal face-up, as far from the cages and the opponents as the listed spots allow."""
        holes = list(arena().holes.values())
        p = state.to_move
        foes = [(d.x, d.y) for d in state.dice.values() if d.status == "arena" and d.owner != p]

        def safety(a: Action) -> float:
            assert isinstance(a, Place)
            near_hole = min(math.hypot(a.x - hx, a.y - hy) for hx, hy in holes)
            near_foe = min((math.hypot(a.x - x, a.y - y) for x, y in foes), default=300.0)
            return near_hole + 0.5 * near_foe + (1000.0 if a.face == FACE_UP else 0.0)

        return max(legal, key=safety)

