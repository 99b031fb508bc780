"""A searching opponent for either side: determinized Monte Carlo search over the chit exchange.

At each combat decision (picking chits, who leads, an attack, an answer, the level to lose) the bot tries
every legal action in worlds it samples from what its side may know, plays each world on to the end of the
combat with the heuristic bot of ``bots.py`` playing both sides, and keeps the heuristic's own choice unless
another action beats it in the same worlds by more than ``confidence`` standard errors of the paired difference
(optionally corrected for how many candidates there are, ``SearchBot.threshold``; off by default). Outside
combat (set-up, movement, activation, the door) it plays as the heuristic bot does: those
decisions are many and cheap to get roughly right, and a playout long enough to judge them would cost
seconds; the combats are where the hidden chits and the dice decide the game.

What the side cannot see is never looked at. A world is the real position with its hidden part redrawn
from public knowledge only (``determinize``): for the Terminators the face-down counters are shuffled among
the face-down squares (a counter only where the set-up rules let it start), for the Clone Master the
Terminators' unplayed chits are redrawn from what their levels allow, keeping how many each holds. The
draw depends only on the side's view and the generator, so two positions that differ only in what the
side cannot see give the same worlds and the same decision (``tests/kf2100/test_search.py``).

The search is seeded: every world, die and rollout choice comes from a generator spawned from the one
``choose`` is given, and each candidate action is played in the same worlds with the same dice (common
random numbers), so the comparison between actions is not drowned by the luck of the draw. The budget is
``playouts`` a decision, shared among the candidates (DESIGN, ``data/search.toml``); where a playout stops
the position is scored by a material evaluation of the victory conditions, also in that file.
"""

from __future__ import annotations

import re
import time
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction
from importlib import resources
from statistics import NormalDist
from typing import Any

import numpy as np

from engine.core import CHANCE, Policy
from engine.core.protocol import Action, State
from engine.kf2100.bots import CLONE_MASTER, TERMINATORS, HeuristicBot
from engine.kf2100.data import CHIT_TECHNIQUES, TECHNIQUES

SETUP_LETTER = {"servant": "S", "unarmed_technician": "T", "armed_technician": "T", "jelly": "J"}
"""The room initials each kind of counter may be set up under (the seed's set-up rule); a kind not named
(the Clone Master) may start on any floor square of the lair."""
COMBAT_PHASES = ("combat1", "combat2")


def search_budget(name: str) -> int | None:
    """The playouts a decision named by a bot name: ``search`` (the default budget) or ``search:N``."""
    if name == "search":
        return None
    head, _, count = name.partition(":")
    if head != "search" or not count.isdigit() or int(count) < 1:
        raise ValueError(f"{name!r} is not a search bot: write search or search:N with N playouts a decision")
    return int(count)


def _settings() -> dict[str, Any]:
    return tomllib.loads(resources.files("engine.kf2100").joinpath("data/search.toml").read_text(encoding="utf-8"))


@dataclass(frozen=True)
class Evaluation:
    """What a position where a playout stops is worth to the Terminators (DESIGN, ``data/search.toml``)."""

    terminal: float
    terminator_level: float
    terminator_conscious: float
    terminator_unconscious: float
    equipment_smashed: float
    clone_master_killed: float
    jelly_level: float
    jelly_killed: float
    other_killed: float

    @classmethod
    def from_file(cls) -> Evaluation:
        return cls(**{k: float(v) for k, v in _settings()["value"].items()})

    def __call__(self, state: Any) -> float:
        """The Terminators' value of ``state`` (the Clone Master's is its negative)."""
        if state.is_terminal():
            return self.terminal * state.returns()[TERMINATORS]
        v = 0.0
        for f in state.figs.values():
            if f.side == TERMINATORS:
                if f.status in ("active", "waiting", "escaped"):
                    v += self.terminator_conscious + self.terminator_level * sum(f.levels)
                elif f.status == "unconscious":
                    v += self.terminator_unconscious + self.terminator_level * sum(f.levels)
            elif f.kind == "clone_master":
                v += self.clone_master_killed * (f.status == "dead")
            elif f.kind == "jelly":
                v += self.jelly_level * (sum(f.start) - (sum(f.levels) if f.status != "dead" else 0))
                v += self.jelly_killed * (f.status == "dead")
            else:
                v += self.other_killed * (f.status == "dead")
        v += self.equipment_smashed * sum(1 for alive in state.equipment.values() if not alive)
        return v


@dataclass
class SearchStats:
    """What the searched decisions cost: playouts, wall-clock seconds and this process's CPU seconds (on a
    shared machine the wall clock counts the other processes' turns too)."""

    decisions: int = 0
    playouts: int = 0
    seconds: list[float] = field(default_factory=list)
    cpu_seconds: list[float] = field(default_factory=list)


def _hidden_counters(state: Any, player: int) -> tuple[list[Any], list[int]]:
    """The counters ``player`` cannot identify (face-down, in the lair) and their squares, both in an order
    that does not depend on who stands where: figures by id, squares by number."""
    if player != TERMINATORS:
        return [], []
    figs = sorted((f for f in state.figs.values() if f.side == CLONE_MASTER and not f.face_up and f.on_board),
                  key=lambda f: f.id)
    return figs, sorted(f.pos for f in figs)


def _allowed(state: Any, kind: str, sq: int) -> bool:
    """Whether a face-down counter of ``kind`` could stand on ``sq``: it was set up there and has not moved."""
    if state.game.solo or kind not in SETUP_LETTER:
        return True  # solo counters are dealt at random two to a room; the Clone Master starts anywhere
    board = state.board
    room = board.cells[sq].room
    return room is not None and SETUP_LETTER[kind] in board.lair.rooms[room].initials


def _shuffle_counters(world: Any, figs: list[Any], squares: list[int], rng: np.random.Generator) -> None:
    """Put ``figs`` on ``squares`` at random, each where the set-up rules allow (retrying a dead end)."""
    placed: dict[str, int] | None = None
    # where each kind may stand, worked out once (the same squares in the same order as asking _allowed square by
    # square on every draw, so the same draws; asking it anew each time was a tenth of a decision's time)
    allowed = {kind: {sq for sq in squares if _allowed(world, kind, sq)} for kind in {f.kind for f in figs}}
    for _ in range(64):
        free = list(squares)
        placed = {}
        for i in rng.permutation(len(figs)):
            f = figs[int(i)]
            fits_kind = allowed[f.kind]
            fits = [sq for sq in free if sq in fits_kind]
            if not fits:
                placed = None
                break
            sq = fits[int(rng.integers(len(fits)))]
            placed[f.id] = sq
            free.remove(sq)
        if placed is not None:
            break
    if placed is None:  # no rule-abiding draw found: any shuffle (the set of squares is still what is seen)
        placed = {figs[int(i)].id: sq for i, sq in zip(rng.permutation(len(figs)), squares, strict=True)}
    for fid, sq in placed.items():
        world.figs[fid].pos = sq


PLAYED = re.compile(r"^(?P<fig>\S+) (?P<chit>\S+) on \S+ \(answer (?:none|(?P<by>\S+) (?P<with>\S+))\)$")
"""A combat roll's log line (``state_flow``): the attack chit played, and the answering chit if any."""


def played_chits(state: Any) -> dict[str, Counter[str]]:
    """The chits each figure has played in the combat now fought, from public facts only: the rolls of this
    phase in the log (every attack and answer is shown when played) and the attack and answer on the table.

    A figure fights in one combat a phase, so this phase's rolls by the combat's members are this combat's.
    An answer that goes on to attack (the "aim" step) is one chit, not two: an attack by the figure and with
    the chit that answered just before is that same chit."""
    c = state.combat
    if c is None:
        return {}
    members = set(c.members)
    exchanges: list[tuple[str, str, tuple[str, str] | None]] = []
    for entry in state.log:
        if entry.get("turn") != state.turn or entry.get("phase") != state.phase or "roll" not in entry:
            continue
        m = PLAYED.match(entry["what"])
        if m is None or m["fig"] not in members:
            continue
        exchanges.append((m["fig"], m["chit"], (m["by"], m["with"]) if m["by"] else None))
    if c.attack is not None and c.step in ("answer", "roll"):  # on the table, not rolled (so not logged) yet
        exchanges.append((c.attack[0], c.attack[1], c.answer))
    played: dict[str, Counter[str]] = {}
    before: tuple[str, str] | None = None
    for fig, chit, answer in exchanges:
        if before != (fig, chit):
            played.setdefault(fig, Counter())[chit] += 1
        if answer is not None:
            played.setdefault(answer[0], Counter())[answer[1]] += 1
        before = answer
    return played


def levels_lost(state: Any, fid: str) -> Counter[str]:
    """The ability levels ``fid`` has lost this phase (so in this combat), from the log's public events."""
    lost: Counter[str] = Counter()
    prefix = f"{fid} loses a level of "
    for entry in state.log:
        text = entry.get("event", "")
        if entry.get("turn") == state.turn and entry.get("phase") == state.phase and text.startswith(prefix):
            lost[text[len(prefix):]] += 1
    return lost


def chit_pool(state: Any, f: Any, played: Counter[str]) -> list[str]:
    """The chits ``f`` may still hold, as a pool to draw from: of each, what its levels (or weapon) allowed when
    it picked, less the ones it has played in this combat, and no more than its levels allow now (a level lost
    takes a held chit of it away)."""
    options_now, _ = state.chit_options(f)
    lost = levels_lost(state, f.id)
    pool: list[str] = []
    for chit in sorted(set(options_now) | set(played) | (set(lost) & set(CHIT_TECHNIQUES))):
        if chit in CHIT_TECHNIQUES:
            now = f.levels[TECHNIQUES.index(chit)]
            spent_on_door = len([x for x in state.door_chits.get(f.id, []) if x == chit])
            at_pick = now + lost[chit] - spent_on_door
            k = min(at_pick - played[chit], now)
        else:
            k = options_now.get(chit, 0) - played[chit]
        pool.extend([chit] * max(0, k))
    return pool


def _redraw_chits(world: Any, player: int, rng: np.random.Generator) -> None:
    """The other side's unplayed chits in the combat, redrawn: as many as each figure holds, from the chits
    it may still hold (``chit_pool``: its levels at the pick less what it has played since)."""
    c = world.combat
    if c is None:
        return
    played = played_chits(world)
    for fid in sorted(c.chits):
        f = world.figs[fid]
        if f.side == player or not c.chits[fid]:
            continue
        pool = chit_pool(world, f, played.get(fid, Counter()))
        k = min(len(c.chits[fid]), len(pool))
        picks: Any = rng.choice(len(pool), size=k, replace=False) if k else []
        c.chits[fid] = sorted(pool[int(i)] for i in picks)


def determinize(state: Any, player: int, rng: np.random.Generator) -> Any:
    """A copy of ``state`` with everything ``player`` cannot see redrawn from what it can see.

    The redraw reads only public facts (which counters are face down and on which squares, how many chits each
    figure holds, the figures' levels) in an order of their own, so the result does not depend on the hidden
    truth.
    """
    world = state.clone()
    figs, squares = _hidden_counters(world, player)
    if figs:
        _shuffle_counters(world, figs, squares, rng)
    _redraw_chits(world, player, rng)
    return world


def _combat_over(state: Any, members: list[str]) -> bool:
    return (state.is_terminal() or state.phase not in COMBAT_PHASES or state.combat is None
            or state.combat.members != members)


class SearchBot(Policy):
    """Determinized Monte Carlo search at the combat decisions, the heuristic bot everywhere else.

    ``playouts`` is the budget of one decision (default from ``data/search.toml``, a side's own where it has
    one: the budget each seat was measured at): the candidates share it,
    each played at least ``min_per_action`` times, every candidate in the same sampled worlds. ``solo``: the
    scenario is solo, so the Clone Master of the playouts follows the seed's solo rules.
    """

    def __init__(self, player: int, solo: bool = False, playouts: int | None = None,
                 evaluation: Evaluation | None = None) -> None:
        if player not in (TERMINATORS, CLONE_MASTER):
            raise ValueError(f"player is 0 (Terminators) or 1 (Clone Master), not {player!r}")
        settings = _settings()["search"]
        seat = "terminators" if player == TERMINATORS else "clone_master"
        default = settings.get("side_playouts", {}).get(seat, settings["playouts"])
        self.playouts = int(default if playouts is None else playouts)
        if self.playouts < 1:
            raise ValueError(f"playouts must be at least 1, not {playouts!r}")
        self.min_per_action = int(settings["min_per_action"])
        self.confidence = float(settings["confidence"])
        self.corrected = seat in settings.get("corrected", [])
        self.searched = frozenset(settings["searched"])
        self.player, self.solo = player, solo
        self.evaluation = evaluation or Evaluation.from_file()
        self.rollout = (HeuristicBot(TERMINATORS), HeuristicBot(CLONE_MASTER, solo=solo))
        self.heuristic = self.rollout[player]
        self.stats = SearchStats()
        side = "Terminators" if player == TERMINATORS else "Clone Master"
        self.name = f"search {side} ({self.playouts} playouts a decision)"

    def action_probabilities(self, state: State) -> list[tuple[Action, Fraction]]:
        raise NotImplementedError("the search bot's choice is a sample, not a distribution; call choose")

    def searches(self, state: Any) -> bool:
        """Whether this decision is searched: a combat decision with a choice to make."""
        if state.phase not in COMBAT_PHASES or state.combat is None or getattr(state, "door_step", False):
            return False
        legal = state.legal_actions()
        return len(legal) > 1 and type(legal[0]).__name__ in self.searched

    def choose(self, state: State, rng: np.random.Generator) -> Action:
        if state.current_player() != self.player:
            raise ValueError(f"it is not the {('Terminators', 'Clone Master')[self.player]}' decision")
        if not self.searches(state):
            return self.heuristic.choose(state, rng)
        start, cpu = time.perf_counter(), time.process_time()
        action, n = self.search(state, rng)
        self.stats.decisions += 1
        self.stats.playouts += n
        self.stats.seconds.append(time.perf_counter() - start)
        self.stats.cpu_seconds.append(time.process_time() - cpu)
        return action

    def search(self, state: Any, rng: np.random.Generator) -> tuple[Action, int]:
        """The heuristic's own choice unless another candidate beats it in the same worlds by more than
        ``threshold`` standard errors of the paired difference (and then the best such); the playouts spent.

        Playouts are few, so a candidate that merely drew better dice must not displace a sound default:
        the heuristic is the prior, the search the correction."""
        legal = state.legal_actions()
        members = list(state.combat.members)
        sign = 1.0 if self.player == TERMINATORS else -1.0
        worlds = max(self.min_per_action, -(-self.playouts // len(legal)))
        seeds = rng.spawn(worlds + 1)
        default = legal.index(self.heuristic.choose(state, seeds[-1]))
        values = np.zeros((worlds, len(legal)))
        for w in range(worlds):
            world_rng = seeds[w]
            world = determinize(state, self.player, world_rng)
            dice = int(world_rng.integers(2**63))
            for i, action in enumerate(legal):
                values[w, i] = sign * self.playout(world, action, members, np.random.default_rng(dice))
        diff = values - values[:, [default]]
        gain = diff.mean(axis=0)
        spread = diff.std(axis=0, ddof=1) / np.sqrt(worlds) if worlds > 1 else np.zeros(len(legal))
        z = self.threshold(len(legal))
        sure = [i for i in range(len(legal)) if gain[i] > z * spread[i] and gain[i] > 1e-9]
        pick = max(sure, key=lambda i: (gain[i], -i)) if sure else default
        return legal[pick], worlds * len(legal)

    def threshold(self, candidates: int) -> float:
        """How many standard errors a candidate must beat the heuristic's choice by: ``confidence``, or with
        ``corrected`` (DESIGN, ``data/search.toml``) the Bonferroni-corrected quantile, so that the chance that
        some one of the ``candidates - 1`` others merely drew luckier worlds stays that of a single comparison
        at ``confidence`` (two candidates: ``confidence`` itself; ten: about 2.1 standard errors at 1.0)."""
        if not self.corrected or candidates <= 2:
            return self.confidence
        tail = 1.0 - NormalDist().cdf(self.confidence)
        return NormalDist().inv_cdf(1.0 - tail / (candidates - 1))

    def playout(self, world: Any, action: Action, members: list[str], rng: np.random.Generator) -> float:
        """Play ``action`` in ``world``, then the heuristic bots to the end of this combat; the Terminators' value."""
        s = world.clone()
        s.apply_action(action)
        while not _combat_over(s, members):
            p = s.current_player()
            if p == CHANCE:
                s.apply_action(s.sample_chance(rng))
            else:
                s.apply_action(self.rollout[p].choose(s, rng))
        return self.evaluation(s)


def decision_times(scenario: str, player: int, games: int = 3, seed: int = 0, playouts: int | None = None
                   ) -> dict[str, Any]:
    """Seconds per searched decision of the search bot for ``player`` against the heuristic bot, over ``games``
    seeded games in this process: median and worst, wall clock and CPU time, how many, and the playouts spent."""
    from engine.core import play_game
    from engine.kf2100.state import KungFuGame

    game = KungFuGame(scenario)
    bot = SearchBot(player, solo=game.solo, playouts=playouts)
    policies: list[Policy] = [HeuristicBot(TERMINATORS), HeuristicBot(CLONE_MASTER, solo=game.solo)]
    policies[player] = bot
    rng = np.random.default_rng(seed)
    for _ in range(games):
        play_game(game.new_initial_state(), policies, rng)
    out: dict[str, Any] = {"scenario": scenario, "side": ("terminators", "clone_master")[player],
                           "playouts": bot.playouts, "games": games, "decisions": bot.stats.decisions}
    for key, values in (("s", bot.stats.seconds), ("cpu_s", bot.stats.cpu_seconds)):
        arr = np.array(values)
        out[f"median_{key}"] = float(np.median(arr)) if arr.size else 0.0
        out[f"worst_{key}"] = float(arr.max()) if arr.size else 0.0
    out["playouts_per_decision"] = bot.stats.playouts / max(1, bot.stats.decisions)
    return out


def versus_heuristic(frame: Any) -> Any:
    """From tournament tables (``tournament.py``'s tidy rows, concatenated): per scenario and side, the search
    bot's win rate against the heuristic bot beside the heuristic bot's own in the same seat against the same
    opponent, both with their 95% Wilson intervals, and whether the search bot's whole interval lies above
    the heuristic's rate (the issue's test of "beats the heuristic bot")."""
    import pandas as pd

    keep = ["games", "wins", "draws", "losses", "win_rate", "win_low", "win_high", "mean_return"]
    rows = []
    for (scenario, side), part in frame.groupby(["scenario", "side"], sort=False):
        search = part[part["bot"].str.startswith("search") & (part["opponent"] == "heuristic")]
        base = part[(part["bot"] == "heuristic") & (part["opponent"] == "heuristic")]
        if search.empty or base.empty:
            continue
        s, b = search.iloc[0], base.iloc[0]
        row = {"scenario": scenario, "side": side, "search_bot": s["bot"]}
        row.update({f"search_{k}": s[k] for k in keep})
        row.update({f"heuristic_{k}": b[k] for k in keep})
        row["beats_heuristic"] = bool(s["win_low"] > b["win_rate"])
        rows.append(row)
    return pd.DataFrame(rows)
