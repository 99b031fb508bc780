"""Kung-Fu Zoo on the core protocol: Cage Battle, Points Battle, All Valley and the 3-4 player variants.

Chance is SAMPLED: a flick's outcome (extra jitter of an eyes-closed or off-hand flick, the sideways offset
of the finger's strike) is drawn inside ``apply_action`` from the state's own generator, which is saved and
cloned with the state, so a seed reproduces a game and a clone applying the same flick gets the same result.
Every flick runs on the 3-D arena (``engine.zoo.arena3d``, MuJoCo), deterministic on one machine; each die in
the arena keeps the exact pose the physics left it in (``Die.z``, ``Die.quat``), so a saved battle replays.

Rulings of the 3-D arena (``arena3d``'s docstring states them in full):

* A die's face is the one pointing most nearly up, also for a die at rest leaning on a rail or on another
  die; such a die stays as it leans (its height and 3-D orientation are kept) until something moves it.
* A flicked die that did not roll over an edge (a tip that falls back is not a roll) is turned feet-up where
  it lies (the FAQ).
* A die is flicked from the rail top at the dot (or its spot on the rail), so a die lying in the arena at that
  spot is struck at once, never passed through; should it overlap a die leaning over the rail's edge, it is
  set down at the nearest free point along the rail.
* Player 2's rail-first rule counts only a rail touched after the flicked die has left its start.
* A die whose centre ends over a hole is caged there (a die leaning over a cage would fall in).
* A Chest Pound turns the Gorilla flat and back-up where it lies, at its height.

Rulings where the seed is silent (ours, stated so they can be checked):

* Player 2's first flick of a round must touch a rail before striking an animal. If it strikes first, the
  flick is a foul: every other animal goes back where it was and the flicked animal is out for the round.
* If a flick beats both teams at once (Cage Battle), the player who flicked wins the round; in a 3-4 player
  Cage Battle the flicker wins if nobody is left.
* An animal that left the arena (and is not placed back) counts as caged for the All Valley conditions.
* On your turn you flick an animal in hand (a starting animal or reinforcement) while you have one; an
  extra flick in a two-player game picks up an animal from the arena, as the seed says.
* 3-4 player Cage Battle is a single match (no rounds); 3-4 player Points Battle has the player with the
  fewest points choose who starts the next round (the previous starter when tied), like the two-player game.
* Team abilities are Cage Battle only (the seed: "during a Cage Battle"). Chest Pound and Dust Kick are
  used on your own turn before you flick; Ambush and Trunk Shot are flicks marked ``ability``.
* The owner of an animal knocked out (or, by the FAQ, of one caged on a turn the flicker's own animal left
  the arena) places it back at once: the seed's "may" is always taken, since it never hurts.
"""

from __future__ import annotations

import math
import numbers
import re
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal

import msgspec
import numpy as np

from engine.core import (
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
from engine.core.protocol import malformed
from engine.core.rng import clone_rng, make_rng, rng_state
from engine.core.serialize import check_schema, checked_rng, quote
from engine.zoo.actions import ChooseFirst, Flick, Pass, Place, UseAbility, ZooAction
from engine.zoo.arena3d import RAILS, DieBody, Launch, SimResult, face_up, launch_point, simulate, snap
from engine.zoo.arena3d.pose import quat_mat
from engine.zoo.constants import (
    FACE_NAMES,
    FACE_UP,
    STUNNED,
    TEAMS,
    abilities,
    arena,
    constants,
    face_points,
    faces,
)
from engine.zoo.faces import orientation_with_up, up_face

STATE_VERSION = 2
"""The saved battle's format: 2 since the 3-D arena (each die's height and 3-D pose). A battle saved in format 1
(the 2-D arena) is refused: its flicks would not replay on the new physics."""

MODES = ("cage", "points")
STATUSES = ("hand", "reserve", "arena", "caged", "out", "unused")
"""In hand to be flicked in; a reinforcement held back; in the arena; caged; out for the round; not used."""
PHASES = ("first", "flick", "extra", "place", "over")

# The representative flicks listed by legal_actions (any in-range flick is legal).
LEGAL_DIRECTIONS = (-30.0, 0.0, 30.0)
LEGAL_SPEEDS = (0.6, 1.2, 2.0)
LEGAL_FACES = ("head", "back")
LEGAL_OFF_DOT = 90.0  # mm along each rail for flicks from anywhere on a rail
LEGAL_HEADINGS = (0.0, 90.0, 180.0, 270.0)  # Trunk Shot, absolute
PLACE_GRID = (60.0, 105.0, 150.0, 195.0, 240.0)

# --- the saved state's schema (msgspec): every field's type and range, before the rules look at its meaning ---
_DIE_ID = r"[A-Z][1-4]"
_Die = Annotated[str, msgspec.Meta(pattern=f"^{_DIE_ID}$")]
_Player = Annotated[int, msgspec.Meta(ge=0, le=3)]
_Coordinate = Annotated[float, msgspec.Meta(ge=-1e6, le=1e6)]
_Count = Annotated[int, msgspec.Meta(ge=0, le=10_000)]
_Hole = Literal["SW", "SE", "NE", "NW"]
_Text = Annotated[str, msgspec.Meta(max_length=200)]
_Height = Annotated[float, msgspec.Meta(ge=-100.0, le=200.0)]
_Unit = Annotated[float, msgspec.Meta(ge=-1.0, le=1.0)]
_MM = r"[+-]?[0-9]{1,4}(?:\.[0-9]{1,6})?"
EVENT = re.compile(
    f"{_DIE_ID} left the arena over the [NESW] rail"
    f"|{_DIE_ID} fell into the (?:SW|SE|NE|NW) cage"
    f"|{_DIE_ID} did not tumble and is turned feet-up"
    f"|{_DIE_ID} is set down {_MM} mm along the [NESW] rail: its spot was taken"
    f"|stopped after {_MM} s with dice still moving"
    f"|foul: {_DIE_ID} struck before touching a rail on P[1-4] \\((?:{'|'.join(t.capitalize() for t in TEAMS)})\\)'s "
    f"first flick; the arena is put back and {_DIE_ID} is out for the round")
"""Every event line the physics and the rules write (a saved battle's events hold nothing else)."""


class _Last(msgspec.Struct, tag_field="kind", forbid_unknown_fields=True):
    player: _Player
    round_winner: _Player | None = None
    round_scores: Annotated[list[_Count], msgspec.Meta(max_length=4)] | None = None
    round_points: Annotated[list[_Count], msgspec.Meta(max_length=4)] | None = None
    winner: _Player | None = None


class _LastFirst(_Last, tag="first"):
    pass


class _LastPass(_Last, tag="pass"):
    pass


class _LastFlick(_Last, tag="flick"):
    flick: _Text = ""
    direction: float = 0.0
    speed: float = 0.0
    strike: Annotated[float, msgspec.Meta(ge=0.0, le=1.0)] | None = None  # None: saved before strikes were chosen
    caged: dict[_Die, _Hole] = {}
    left: dict[_Die, Literal[RAILS]] = {}
    events: Annotated[list[_Text], msgspec.Meta(max_length=40)] = []
    foul: bool = False


class _LastPlace(_Last, tag="place"):
    place: _Text = ""


class _LastAbility(_Last, tag="ability"):
    ability: _Text = ""


class _StateFile(msgspec.Struct, forbid_unknown_fields=True):
    rng: dict[str, Any]
    phase: Literal[PHASES]
    to_move: _Player
    round: Annotated[int, msgspec.Meta(ge=1, le=10_000)]
    starter: _Player
    rail_rule: _Player | None
    wins: Annotated[list[_Count], msgspec.Meta(min_length=2, max_length=4)]
    points: Annotated[list[_Count], msgspec.Meta(min_length=2, max_length=4)]
    spent: list[bool]
    dust: list[bool]
    eliminated: list[bool]
    pending: Annotated[list[tuple[_Player, _Die, Literal["head", "any"]]], msgspec.Meta(max_length=16)]
    resume: tuple[_Player, bool] | None
    dice: dict[_Die, tuple[_Player, Annotated[str, msgspec.Meta(max_length=20)], _Coordinate, _Coordinate, _Coordinate,
                           Annotated[int, msgspec.Meta(ge=0, le=23)], _Height | None,
                           tuple[_Unit, _Unit, _Unit, _Unit] | None]]
    last: _LastFirst | _LastPass | _LastFlick | _LastPlace | _LastAbility | None


class _RulesFile(msgspec.Struct, forbid_unknown_fields=True):
    mode: Literal[MODES] = "cage"
    players: Annotated[int, msgspec.Meta(ge=2, le=4)] = 2
    teams: Annotated[list[Literal[TEAMS]], msgspec.Meta(max_length=4)] | None = None
    all_valley: bool = False
    abilities: bool | None = None
    starting_player: _Player = 0


MAX_FACE_POINTS = max(f.points for f in faces())
STRIKE_DEFAULT = float(constants()["arena3d"]["strike"])
"""The strike height control of a flick that names none (DESIGN, ``constants.toml`` [arena3d])."""
MAX_HEIGHT = 4 * float(constants()["die"]["edge"])
"""The highest a die's centre can rest (mm): on a rail, or on dice leaning on each other."""
REST_CLEARANCE = 0.75
"""Two dice at rest never have centres closer than this many die edges (they would overlap: squares of edge e
touch at e at the closest; the physics' contact slop is far below the quarter edge this allows)."""


@dataclass
class Die:
    """One animal die: its owner, where it is, and (in the arena) its pose and 3D orientation.

    ``angle`` (yaw) and ``orientation`` (one of the 24 of ``faces.rotations``) are the flat pose nearest to the
    die's; ``z`` (mm, its centre's height) and ``quat`` (w, x, y, z) its exact pose where the physics left it
    (leaning on a rail or another die, or lying on one). Without them (a die placed by hand) it lies flat on the
    floor, turned by ``angle``.
    """

    owner: int
    status: str
    x: float = 0.0
    y: float = 0.0
    angle: float = 0.0
    orientation: int = 0
    z: float | None = None
    quat: tuple[float, float, float, float] | None = None

    @property
    def face(self) -> str:
        return up_face(self.orientation)

    def copy(self) -> Die:
        return Die(self.owner, self.status, self.x, self.y, self.angle, self.orientation, self.z, self.quat)

    def to_list(self) -> list[Any]:
        return [self.owner, self.status, self.x, self.y, self.angle, self.orientation, self.z,
                None if self.quat is None else list(self.quat)]

    def body(self, die_id: str) -> DieBody:
        """The die for the physics, in its exact pose when known."""
        return DieBody(die_id, self.x, self.y, self.angle, self.orientation, self.z, self.quat)


class ZooGame(Game):
    """A Kung-Fu Zoo battle with its rule options.

    ``mode`` is ``"cage"`` or ``"points"``; ``players`` 2-4 (with 3-4 players a Cage Battle uses the All
    Valley rules and reinforcements, a Points Battle three animals over five rounds); ``teams`` one team
    per player; ``all_valley`` the All Valley Cage Battle rules for two players; ``abilities`` the team
    abilities (Cage Battle only); ``starting_player`` who starts the first round.
    """

    info: ClassVar[GameInfo] = GameInfo(
        "kung-fu-zoo", "Kung-Fu Zoo", 2, ChanceMode.SAMPLED, Information.PERFECT, -1.0, 1.0, STATE_VERSION, None
    )
    action_type = ZooAction

    def __init__(
        self,
        mode: str = "cage",
        players: int = 2,
        teams: tuple[str, ...] | list[str] | None = None,
        all_valley: bool = False,
        abilities: bool | None = None,
        starting_player: int = 0,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        if not isinstance(players, int) or not 2 <= players <= 4:
            raise ValueError(f"Kung-Fu Zoo is for 2 to 4 players, not {players!r}")
        teams = tuple(TEAMS[:players]) if teams is None else tuple(teams)
        if len(teams) != players:
            raise ValueError(f"{players} players need {players} teams, got {len(teams)}")
        for t in teams:
            if t not in TEAMS:
                raise ValueError(f"no team {t!r}; teams are {', '.join(TEAMS)}")
        if len(set(teams)) != len(teams):
            raise ValueError("each player needs a different team")
        if mode == "points" and all_valley:
            raise ValueError("All Valley rules are a Cage Battle variant")
        if abilities is None:
            abilities = mode == "cage"
        if abilities and mode != "cage":
            raise ValueError("team abilities are used during a Cage Battle only")
        if not isinstance(starting_player, int) or not 0 <= starting_player < players:
            raise ValueError(f"starting player must be 0..{players - 1}")
        self.mode = mode
        self.players = players
        self.teams = teams
        self.all_valley = bool(all_valley) or (mode == "cage" and players > 2)
        self.abilities = bool(abilities)
        self.starting_player = starting_player
        # The player count is a rule option: each game has its own info (Game.info is typed a ClassVar).
        self.info = GameInfo(  # type: ignore[misc]
            "kung-fu-zoo", "Kung-Fu Zoo", players, ChanceMode.SAMPLED, Information.PERFECT, -1.0, 1.0, STATE_VERSION,
            None,
        )
        letters = [abilities_letter(t) for t in teams]
        self.die_ids: tuple[str, ...] = tuple(f"{letter}{k}" for letter in letters for k in range(1, 5))
        self.owner_of = {d: letters.index(d[0]) for d in self.die_ids}
        r = constants()["rules"]
        self.rounds_to_win = int(r["cage_rounds_to_win"])
        self.points_to_win = int(r["points_to_win"])
        self.multiplayer_rounds = int(r["multiplayer_points_rounds"])
        self.cage_starting = int(r["multiplayer_cage_starting"])
        self.points_animals = int(r["multiplayer_points_animals"])

    @property
    def multiplayer(self) -> bool:
        return self.players > 2

    def rule_options(self) -> dict[str, Any]:
        return {
            "mode": self.mode, "players": self.players, "teams": list(self.teams), "all_valley": self.all_valley,
            "abilities": self.abilities, "starting_player": self.starting_player,
        }

    def player_name(self, player: int) -> str:
        return f"P{player + 1} ({self.teams[player].capitalize()})"

    def title(self) -> str:
        kind = "Cage Battle" if self.mode == "cage" else "Points Battle"
        if self.mode == "cage" and self.all_valley:
            kind = '"All Valley" ' + kind
        return f"{self.players}-player {kind}"

    def new_initial_state(self, rng: Any = None) -> ZooState:
        # The state owns its generator: seeded from the one given (or a seed), never sharing it with the caller.
        if rng is None or isinstance(rng, int):
            rng = make_rng(rng)
        state = ZooState(self, make_rng(int(rng.integers(2**63))))
        state._start_round(self.starting_player)
        return state

    @classmethod
    def from_rule_options(cls, options: dict[str, Any]) -> ZooGame:
        """A saved battle's rule options, each of its type (the constructor then checks their values)."""
        check_schema(options, _RulesFile, "the rule options are damaged")
        return cls(**options)

    def state_from_dict(self, data: dict[str, Any]) -> ZooState:
        return ZooState.from_dict(self, data)


def abilities_letter(team: str) -> str:
    return abilities()[team].letter


def _numbers_reason(*named: tuple[str, Any]) -> str | None:
    """Why a move's number is unusable, or None: a NaN slips through every range check (each comparison with it
    is False) and would put an animal at (nan, nan), so non-numbers and non-finite numbers are refused first."""
    for name, value in named:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return f"{name} must be a number, not {repr(value)[:40]}"
        if not math.isfinite(value):
            return f"{name} must be a finite number, not {value}"
    return None


def _flick_numbers_reason(f: Flick) -> str | None:
    return _numbers_reason(("heading" if f.rail == "here" else "direction", f.direction), ("speed", f.speed),
                           *([("the spot along the rail", f.along)] if f.along is not None else []),
                           *([("the strike height", f.strike)] if f.strike is not None else []))


def _wrap_degrees(d: float) -> float:
    return (d + 180.0) % 360.0 - 180.0


class ZooState(State):
    """A position of a Kung-Fu Zoo battle. See the module docstring for the rulings."""

    __slots__ = (
        "dice", "dust", "eliminated", "last", "pending", "phase", "points", "rail_rule", "resume", "rng",
        "round_no", "spent", "starter", "to_move", "wins",
    )

    def __init__(self, game: ZooGame, rng: np.random.Generator) -> None:
        super().__init__(game)
        n = game.players
        self.rng = rng
        self.dice: dict[str, Die] = {d: Die(game.owner_of[d], "hand") for d in game.die_ids}
        self.phase = "flick"
        self.to_move = 0
        self.round_no = 0
        self.wins = [0] * n
        self.points = [0] * n
        self.starter = 0
        self.rail_rule: int | None = None  # the player whose first flick of the round must touch a rail first
        self.spent = [False] * n
        self.dust = [False] * n
        self.eliminated = [False] * n
        self.pending: list[list[Any]] = []  # [owner, die, "head" | "any"] placements to make, in order
        self.resume: list[Any] | None = None  # [player, extra] to continue with after the placements
        self.last: dict[str, Any] | None = None

    game: ZooGame

    # --- setup ---------------------------------------------------------------------------------------
    def _start_round(self, starter: int) -> None:
        g = self.game
        self.round_no += 1
        self.starter = starter
        for d, die in self.dice.items():
            k = int(d[1])
            if g.mode == "cage" and g.multiplayer:
                status = "hand" if k <= g.cage_starting else "reserve"
            elif g.mode == "points" and g.multiplayer:
                status = "hand" if k <= g.points_animals else "unused"
            else:
                status = "hand"
            self.dice[d] = Die(die.owner, status)
        self.spent = [False] * g.players
        self.dust = [False] * g.players
        self.pending = []
        self.resume = None
        self.phase = "flick"
        self.to_move = starter
        self.rail_rule = self._next_active(starter)

    # --- queries ---------------------------------------------------------------------------------------
    def current_player(self) -> int:
        return TERMINAL if self.phase == "over" else self.to_move

    def team(self, player: int) -> str:
        return self.game.teams[player]

    def dice_of(self, player: int, *statuses: str) -> list[str]:
        return [d for d, die in self.dice.items() if die.owner == player and (not statuses or die.status in statuses)]

    def round_score(self, player: int) -> int:
        """Points of ``player``'s animals in the arena, by the face each shows."""
        return sum(face_points(self.dice[d].face) for d in self.dice_of(player, "arena"))

    def _next_active(self, player: int) -> int:
        n = self.game.players
        for k in range(1, n + 1):
            q = (player + k) % n
            if not self.eliminated[q]:
                return q
        return player

    def _stunned(self, d: str) -> bool:
        return self.dice[d].face == STUNNED

    def flickable(self, player: int | None = None, extra: bool | None = None) -> list[str]:
        """The dice ``player`` may flick on this turn (or extra flick)."""
        g = self.game
        p = self.to_move if player is None else player
        extra = (self.phase == "extra") if extra is None else extra
        hand = self.dice_of(p, "hand")
        if hand and not (extra and not g.multiplayer):
            return hand
        if g.mode == "points" and not extra:
            return []
        arena_dice = self.dice_of(p, "arena")
        if g.mode == "points" or g.all_valley:
            return arena_dice
        return [d for d in arena_dice if not self._stunned(d)]

    def ability_ready(self, player: int) -> bool:
        return self.game.abilities and not self.spent[player]

    # --- legality ------------------------------------------------------------------------------------
    def illegal_reason(self, action: Action) -> str | None:
        """Why ``action`` cannot be played now, or None.

        Any in-range flick is legal (continuous direction and speed), not only the representative flicks
        that ``legal_actions`` lists.
        """
        reason = _flick_numbers_reason(action) if isinstance(action, Flick) else None
        reason = reason or malformed(action)  # the numbers in the game's words first, then every field's type
        if reason is not None:
            return reason
        if self.phase == "over":
            return "the battle is over"
        if isinstance(action, Flick):
            return self._flick_reason(action)
        if isinstance(action, Place):
            return self._place_reason(action)
        if isinstance(action, UseAbility):
            return self._ability_reason(action)
        if isinstance(action, ChooseFirst):
            if self.phase != "first":
                return "who goes first is chosen only at the start of a round"
            if not 0 <= action.player < self.game.players or self.eliminated[action.player]:
                return f"there is no player {action.player + 1} to start"
            return None
        if isinstance(action, Pass):
            if self.phase != "extra":
                return "you can only pass on an extra flick"
            return None
        return f"{action} is not a Kung-Fu Zoo move"

    def _flick_reason(self, f: Flick) -> str | None:
        g = self.game
        c = constants()["flick"]
        a = arena()
        p = self.to_move
        if self.phase == "first":
            return f"{self.describe_player()} must first choose who starts the round"
        if self.phase == "place":
            return f"{self.describe_player()} must first place {self.pending[0][1]} in the arena"
        numbers_reason = _flick_numbers_reason(f)
        if numbers_reason is not None:
            return numbers_reason
        if f.die not in self.dice:
            return f"there is no animal {f.die} in this battle"
        die = self.dice[f.die]
        if die.owner != p:
            return f"{f.die} belongs to {g.player_name(die.owner)}, and it is {g.player_name(p)}'s turn"
        allowed = self.flickable()
        if f.die not in allowed:
            if not allowed:
                return f"{g.player_name(p)} has no animal that may be flicked now"
            if die.status in ("caged", "out", "unused", "reserve"):
                return f"{f.die} is {dict(caged='caged', out='out for the round', unused='not in this battle', reserve='a reinforcement, not yet in play')[die.status]}"  # noqa: E501
            if die.status == "arena" and self.dice[allowed[0]].status == "hand":
                return f"you must first flick an animal from your hand ({', '.join(allowed)})"
            if die.status == "arena" and self._stunned(f.die):
                return f"{f.die} is stunned (feet-up) and cannot be flicked"
            return f"{f.die} cannot be flicked now (you may flick {', '.join(allowed)})"
        if not (c["min_speed_m_s"] <= f.speed <= c["max_speed_m_s"]):
            return f"speed must be {c['min_speed_m_s']}-{c['max_speed_m_s']} m/s, not {f.speed}"
        strike_reason = self.illegal_strike_reason(f)
        if strike_reason is not None:
            return strike_reason
        ability = abilities()[self.team(p)]
        if f.rail == "here":
            if not (ability.key == "trunk-shot" and die.status == "arena"):
                return "only an Elephant in the arena can be flicked from where it lies (Trunk Shot)"
            if not f.ability:
                return "flicking from where it lies is the Trunk Shot ability: add 'ability'"
            if not self.ability_ready(p):
                return "Trunk Shot is already used this round" if g.abilities else "abilities are not in play"
            if self._stunned(f.die):
                return f"{f.die} is stunned: the Trunk Shot needs a non-stunned Elephant"
            if f.face is not None:
                return "a Trunk Shot flicks the animal as it lies: do not set a face"
            if not (0.0 <= f.direction < 360.0):
                return f"a Trunk Shot's heading must be 0-360 degrees, not {f.direction}"
            return None
        if f.rail not in RAILS:
            return f"no rail {f.rail!r}"
        if f.face is None:
            return "say which face you set up before flicking (face=head, back, ...)"
        if f.face not in FACE_NAMES:
            return f"no face {f.face!r}; faces are {', '.join(FACE_NAMES)}"
        if abs(f.direction) > c["max_angle_deg"]:
            return f"direction must be within {c['max_angle_deg']} degrees of straight in, not {f.direction}"
        if f.along is not None:
            lo, hi = a.corner_keepout, a.size - a.corner_keepout
            if not lo <= f.along <= hi:
                return f"a spot on the rail must be {lo:g}-{hi:g} mm along it (away from the corners), not {f.along}"
            free = die.status == "arena" and die.face == FACE_UP
            if not free:
                if ability.key == "ambush" and self.ability_ready(p):
                    if not f.ability:
                        return f"{f.die} is not face-up: from off the dot only with Ambush (add 'ability')"
                elif die.status == "hand":
                    return f"{f.die} enters from the midpoint (dot) of a rail"
                else:
                    return f"only a face-up animal can be flicked from anywhere on a rail; {f.die} shows {die.face}"
            elif f.ability:
                return f"{f.die} is face-up and needs no ability to be flicked from anywhere on a rail"
        elif f.ability:
            return "no ability is needed to flick from a dot"
        return None

    def _place_reason(self, pl: Place) -> str | None:
        if self.phase != "place":
            return "there is no animal to place now"
        _owner, die_id, rule = self.pending[0]
        if pl.die != die_id:
            return f"{die_id} is the animal to place now, not {pl.die}"
        numbers_reason = _numbers_reason(("x", pl.x), ("y", pl.y))
        if numbers_reason is not None:
            return numbers_reason
        if pl.face not in FACE_NAMES:
            return f"no face {pl.face!r}; faces are {', '.join(FACE_NAMES)}"
        if rule == "head" and pl.face != FACE_UP:
            return f"{die_id} goes back face-up (face=head)"
        return self._spot_reason(pl.x, pl.y, exclude=die_id)

    def _spot_reason(self, x: float, y: float, exclude: str | None = None) -> str | None:
        a = arena()
        half = constants()["die"]["edge"] / 2
        if not (half <= x <= a.size - half and half <= y <= a.size - half):
            return f"({x:g}, {y:g}) is not inside the arena ({half:g}-{a.size - half:g} mm each way)"
        hole = a.over_hole(x, y)
        if hole is not None:
            return f"({x:g}, {y:g}) is over the {hole} cage"
        clear = constants()["die"]["edge"] * math.sqrt(2)
        for d, die in self.dice.items():
            if d != exclude and die.status == "arena" and math.hypot(die.x - x, die.y - y) < clear:
                return f"({x:g}, {y:g}) is on top of {d}"
        return None

    def _ability_reason(self, u: UseAbility) -> str | None:
        g = self.game
        p = self.to_move
        if self.phase not in ("flick", "extra"):
            return "an ability is used on your own turn, before you flick"
        if not g.abilities:
            return "team abilities are not in play in this battle"
        ability = abilities()[self.team(p)]
        if u.key != ability.key:
            return f"{self.team(p).capitalize()}'s ability is {ability.name} ({ability.key}), not {u.key}"
        if self.spent[p]:
            return f"{ability.name} is already used this round"
        if u.key == "chest-pound":
            die = self.dice.get(u.target)
            if die is None or die.owner != p:
                return f"{u.target} is not one of your Gorillas"
            if die.status != "arena" or die.face != STUNNED:
                return f"Chest Pound sets a stunned Gorilla in the arena back-up; {u.target} is not one"
            return None
        if u.key == "dust-kick":
            if not (len(u.target) == 2 and u.target[0] == "P" and u.target[1].isdigit()):
                return f"Dust Kick targets an opponent (P1-P{g.players}), not {u.target}"
            q = int(u.target[1]) - 1
            if not 0 <= q < g.players or q == p or self.eliminated[q]:
                return f"{u.target} is not an opponent in play"
            return None
        return f"{ability.name} is used as part of a flick (add 'ability' to the flick)"

    # --- legal actions -------------------------------------------------------------------------------
    def legal_actions(self) -> list[Action]:
        """A finite, representative list of legal moves.

        Flicks are continuous: this lists, per flickable animal, the dots (and one spot off the dot per
        rail where allowed) x ``LEGAL_FACES`` x ``LEGAL_DIRECTIONS`` x ``LEGAL_SPEEDS``. ``illegal_reason``
        and ``apply_action`` accept any in-range flick or placement, not only these.
        """
        if self.phase == "over":
            return []
        g = self.game
        p = self.to_move
        if self.phase == "first":
            return [ChooseFirst(q) for q in range(g.players) if not self.eliminated[q]]
        if self.phase == "place":
            return self._legal_places()
        out: list[Action] = []
        if self.phase == "extra":
            out.append(Pass())
        ability = abilities()[self.team(p)] if g.abilities else None
        ready = self.ability_ready(p)
        if ability is not None and ready:
            if ability.key == "chest-pound":
                out += [UseAbility("chest-pound", d) for d in self.dice_of(p, "arena") if self._stunned(d)]
            elif ability.key == "dust-kick":
                out += [UseAbility("dust-kick", f"P{q + 1}") for q in range(g.players)
                        if q != p and not self.eliminated[q]]
        for d in self.flickable():
            die = self.dice[d]
            spots: list[tuple[str, float | None, bool]] = [(r, None, False) for r in RAILS]
            if die.status == "arena" and die.face == FACE_UP:
                spots += [(r, LEGAL_OFF_DOT, False) for r in RAILS]
            elif ability is not None and ready and ability.key == "ambush":
                spots += [(r, LEGAL_OFF_DOT, True) for r in RAILS]
            for rail, along, ab in spots:
                for face in LEGAL_FACES:
                    for direction in LEGAL_DIRECTIONS:
                        for speed in LEGAL_SPEEDS:
                            out.append(Flick(d, rail, along, face, direction, speed, ab))
            if (ability is not None and ready and ability.key == "trunk-shot" and die.status == "arena"
                    and not self._stunned(d)):
                for heading in LEGAL_HEADINGS:
                    for speed in LEGAL_SPEEDS:
                        out.append(Flick(d, "here", None, None, heading, speed, True))
        return out

    def _legal_places(self) -> list[Action]:
        _owner, die_id, rule = self.pending[0]
        faces = (FACE_UP,) if rule == "head" else FACE_NAMES
        spots = [(x, y) for x in PLACE_GRID for y in PLACE_GRID if self._spot_reason(x, y, die_id) is None]
        if not spots:
            a = arena()
            fine = [15.0 + 5.0 * k for k in range(int((a.size - 30.0) / 5.0) + 1)]
            spots = [(x, y) for x in fine for y in fine if self._spot_reason(x, y, die_id) is None][:8]
        return [Place(die_id, x, y, f) for x, y in spots for f in faces]

    # --- applying ------------------------------------------------------------------------------------
    def _apply(self, action: Action) -> None:
        if isinstance(action, Flick):
            self._flick(action, record=False)
        elif isinstance(action, Place):
            self._place(action)
        elif isinstance(action, UseAbility):
            self._use_ability(action)
        elif isinstance(action, ChooseFirst):
            self._start_round(action.player)
            self.last = {"kind": "first", "player": action.player}
        elif isinstance(action, Pass):
            self.last = {"kind": "pass", "player": self.to_move}
            self._end_turn(self.to_move, extra=False)

    @staticmethod
    def illegal_strike_reason(f: Flick) -> str | None:
        """Why the flick's strike height is unusable (a number, checked finite before), or None."""
        if f.strike is not None and not 0.0 <= f.strike <= 1.0:
            return f"the strike height must be from 0 (low: slides) to 1 (high: tumbles), not {f.strike}"
        return None

    def play_flick(self, action: Action | str, record: bool = False) -> SimResult:
        """Apply a flick like ``apply_action`` (``IllegalActionError`` and no change if illegal) and return
        what the simulation did; ``record`` adds the trajectory frames for animation."""
        if isinstance(action, str):
            action = self.parse_action(action)
        if not isinstance(action, Flick):
            raise IllegalActionError(f"{action} is not a flick")
        reason = self.illegal_reason(action)
        if reason is not None:
            raise IllegalActionError(reason)
        return self._flick(action, record=record)

    def flick_with_frames(self, action: Flick | str) -> SimResult:
        """Apply a flick and return its simulation with trajectory frames (for the dashboard's animation)."""
        return self.play_flick(action, record=True)

    def margin(self, player: int) -> int:
        """``player``'s round score minus the best other player's, counting animals waiting to be placed
        back as face-up (their owner will place them so)."""
        g = self.game
        scores = [self.round_score(q) for q in range(g.players)]
        for owner, _die, _rule in self.pending:
            scores[owner] += face_points(FACE_UP)
        others = [scores[q] for q in range(g.players) if q != player]
        return scores[player] - max(others)

    def jitter(self, f: Flick) -> tuple[float, float]:
        """Standard deviations (degrees, fraction of speed) of the extra random jitter this flick gets."""
        aim = constants()["aim"]
        sd_a = sd_s = 0.0
        if self.dust[self.to_move]:
            sd_a += aim["dust_kick_angle_sd_deg"]
            sd_s += aim["dust_kick_speed_sd_fraction"]
        die = self.dice[f.die]
        if self.game.mode == "cage" and self.game.all_valley and die.status == "arena" and die.face == STUNNED:
            sd_a += aim["off_hand_angle_sd_deg"]
            sd_s += aim["off_hand_speed_sd_fraction"]
        return sd_a, sd_s

    def launch_of(self, f: Flick, direction: float | None = None, speed: float | None = None) -> Launch:
        """Where and how the flicked die starts, for the physics (direction in degrees, speed in m/s)."""
        direction = f.direction if direction is None else direction
        speed = f.speed if speed is None else speed
        die = self.dice[f.die]
        if f.rail == "here":
            return Launch(f.die, die.x, die.y, math.radians(direction), speed * 1000.0, die.orientation,
                          angle=die.angle, strike=f.strike)
        along = arena().size / 2 if f.along is None else f.along
        x, y, normal = launch_point(f.rail, along)
        heading = normal + math.radians(direction)
        return Launch(f.die, x, y, heading, speed * 1000.0, orientation_with_up(f.face or FACE_UP), strike=f.strike)

    def _flick(self, f: Flick, record: bool) -> SimResult:
        g = self.game
        c = constants()["flick"]
        p = self.to_move
        direction, speed = f.direction, f.speed
        sd_a, sd_s = self.jitter(f)
        if sd_a or sd_s:
            direction += float(self.rng.normal(0.0, sd_a)) if sd_a else 0.0
            speed *= 1.0 + (float(self.rng.normal(0.0, sd_s)) if sd_s else 0.0)
            speed = min(max(speed, c["min_speed_m_s"]), c["max_speed_m_s"])
            if f.rail != "here":
                direction = min(max(direction, -c["max_angle_deg"]), c["max_angle_deg"])
        self.dust[p] = False
        if f.ability or f.rail == "here":
            self.spent[p] = True
        launch = self.launch_of(f, direction, speed)
        before = {d: die.copy() for d, die in self.dice.items()}
        others = [die.body(d) for d, die in self.dice.items() if die.status == "arena" and d != f.die]
        result = simulate(others, launch, self.rng, record=record)
        _cage_dice_over_holes(result)
        rail_rule = self.rail_rule == p
        if rail_rule:
            self.rail_rule = None
        last: dict[str, Any] = {
            "kind": "flick", "player": p, "flick": str(f), "direction": direction, "speed": speed,
            "strike": STRIKE_DEFAULT if f.strike is None else float(f.strike),
            "caged": dict(result.caged), "left": dict(result.left), "events": list(result.events), "foul": False,
        }
        self.last = last
        if rail_rule and result.rail_before_strike is False:
            self.dice = before
            self.dice[f.die].status = "out"
            self.dice[f.die].z = self.dice[f.die].quat = None
            last["foul"] = True
            last["events"].append(
                f"foul: {f.die} struck before touching a rail on {g.player_name(p)}'s first flick; "
                f"the arena is put back and {f.die} is out for the round")
            last["caged"], last["left"] = {}, {}
            self._end_turn(p, extra=False)
            return result
        for d, body in result.dice.items():
            die = self.dice[d]
            die.status, die.x, die.y, die.angle, die.orientation = "arena", body.x, body.y, body.angle, body.orientation
            die.z, die.quat = body.z, body.quat
        for d in (*result.caged, *result.left):
            self.dice[d].z = self.dice[d].quat = None
        for d in result.caged:
            self.dice[d].status = "caged"
        opp_caged = [d for d in result.caged if self.dice[d].owner != p]
        own_caged = [d for d in result.caged if self.dice[d].owner == p]
        own_out = [d for d in result.left if self.dice[d].owner == p]
        opp_out = [d for d in result.left if self.dice[d].owner != p]
        for d in result.left:
            self.dice[d].status = "out"
        pending: list[list[Any]] = []
        if opp_caged and own_out:  # FAQ: your animal is out, your turn ends, the opponent places his animal back
            pending += [[self.dice[d].owner, d, "any"] for d in opp_caged]
        pending += [[self.dice[d].owner, d, "head"] for d in opp_out]
        pending.sort(key=lambda e: ((e[0] - p) % g.players, e[1]))
        extra = bool(opp_caged) and not own_caged and not own_out
        self.pending = pending
        if pending:
            self.resume = [p, extra]
            self.phase = "place"
            self.to_move = pending[0][0]
        else:
            self._end_turn(p, extra)
        return result

    def _place(self, pl: Place) -> None:
        owner, die_id, _rule = self.pending.pop(0)
        die = self.dice[die_id]
        die.status, die.x, die.y, die.angle = "arena", pl.x, pl.y, 0.0
        die.orientation = orientation_with_up(pl.face)
        die.z = die.quat = None  # set down flat on the floor
        self.last = {"kind": "place", "player": owner, "place": str(pl)}
        if self.pending:
            self.to_move = self.pending[0][0]
            return
        p, extra = self.resume if self.resume else (owner, False)
        self.resume = None
        self._end_turn(p, extra)

    def _use_ability(self, u: UseAbility) -> None:
        p = self.to_move
        self.spent[p] = True
        if u.key == "chest-pound":
            die = self.dice[u.target]
            die.orientation = orientation_with_up("back")
            die.quat = None  # turned flat and back-up where it lies, at its height (on another die it stays there)
        elif u.key == "dust-kick":
            self.dust[int(u.target[1]) - 1] = True
        self.last = {"kind": "ability", "player": p, "ability": str(u)}

    # --- turn and round flow ------------------------------------------------------------------------
    def still_fighting(self, q: int) -> int:
        """How many of player ``q``'s animals keep the team in a Cage Battle round: those still to enter
        and those in the arena that are not stunned (under All Valley rules a stunned animal fights on)."""
        arena = self.dice_of(q, "arena")
        if not self.game.all_valley:
            arena = [d for d in arena if not self._stunned(d)]
        return len(self.dice_of(q, "hand", "reserve")) + len(arena)

    def _beaten(self, q: int) -> bool:
        """Whether player ``q``'s team is beaten in the current round (Cage Battle)."""
        return self.still_fighting(q) == 0

    def _end_turn(self, p: int, extra: bool) -> None:
        """After player ``p``'s action: reinforcements, round end, then an extra flick or the next player."""
        g = self.game
        self.phase = "flick"
        if g.mode == "cage":
            if g.multiplayer:
                for q in range(g.players):
                    if not self.eliminated[q] and not self.dice_of(q, "hand", "arena") and self.dice_of(q, "reserve"):
                        for d in self.dice_of(q, "reserve"):
                            self.dice[d].status = "hand"
                for q in range(g.players):
                    if not self.eliminated[q] and self._beaten(q):
                        self.eliminated[q] = True
                alive = [q for q in range(g.players) if not self.eliminated[q]]
                if len(alive) <= 1:
                    self._finish(alive[0] if alive else p)
                    return
            else:
                beaten = [q for q in range(g.players) if self._beaten(q)]
                if beaten:
                    winner = p if len(beaten) == g.players else next(q for q in range(g.players) if q not in beaten)
                    self._win_round(winner)
                    return
            if extra and self.flickable(p, extra=True):
                self.phase = "extra"
                self.to_move = p
                return
            self.to_move = self._next_active(p)
            return
        # Points Battle
        if extra and self.flickable(p, extra=True):
            self.phase = "extra"
            self.to_move = p
            return
        n = g.players
        for k in range(1, n + 1):
            q = (p + k) % n
            if self.dice_of(q, "hand"):
                self.to_move = q
                return
        self._score_round()

    def _win_round(self, winner: int) -> None:
        g = self.game
        self.wins[winner] += 1
        loser = next(q for q in range(g.players) if q != winner)
        self.last = dict(self.last or {}, round_winner=winner)
        if self.wins[winner] >= g.rounds_to_win:
            self.phase = "over"
            return
        self.phase = "first"
        self.to_move = loser
        self.pending, self.resume = [], None

    def _score_round(self) -> None:
        g = self.game
        scores = [self.round_score(q) for q in range(g.players)]
        if g.multiplayer:
            for q in range(g.players):
                self.points[q] += scores[q]
            gained = scores
        else:
            diff = scores[0] - scores[1]
            gained = [max(diff, 0), max(-diff, 0)]
            self.points[0] += gained[0]
            self.points[1] += gained[1]
        self.last = dict(self.last or {}, round_scores=scores, round_points=gained)
        if g.multiplayer:
            if self.round_no >= g.multiplayer_rounds:
                self.phase = "over"
                return
        elif max(self.points) >= g.points_to_win:
            self.phase = "over"
            return
        low = min(self.points)
        lowest = [q for q in range(g.players) if self.points[q] == low]
        if len(lowest) == 1:
            self.phase = "first"
            self.to_move = lowest[0]
            self.pending, self.resume = [], None
        else:
            self._start_round(self.starter)

    def _finish(self, winner: int) -> None:
        self.phase = "over"
        self.to_move = winner
        self.last = dict(self.last or {}, winner=winner)

    # --- outcome -------------------------------------------------------------------------------------
    def winners(self) -> list[int]:
        """The players who won the battle (several on a tied multi-player Points Battle); [] until the end."""
        if self.phase != "over":
            return []
        g = self.game
        if g.mode == "cage":
            if g.multiplayer:
                return [q for q in range(g.players) if not self.eliminated[q]] or [self.to_move]
            return [max(range(g.players), key=lambda q: self.wins[q])]
        top = max(self.points)
        return [q for q in range(g.players) if self.points[q] == top]

    def returns(self) -> list[float]:
        if self.phase != "over":
            return [0.0] * self.game.players
        w = set(self.winners())
        return [1.0 if q in w else -1.0 for q in range(self.game.players)]

    # --- copies and persistence ----------------------------------------------------------------------
    def clone(self, rng: np.random.Generator | None = None) -> ZooState:
        """An independent copy; ``rng`` gives it another generator instead of a copy of this one's."""
        c = ZooState.__new__(ZooState)
        c.game = self.game
        c.rng = clone_rng(self.rng) if rng is None else rng
        c.dice = {d: die.copy() for d, die in self.dice.items()}
        c.phase, c.to_move, c.round_no, c.starter, c.rail_rule = (
            self.phase, self.to_move, self.round_no, self.starter, self.rail_rule)
        c.wins, c.points, c.spent, c.dust, c.eliminated = (
            list(self.wins), list(self.points), list(self.spent), list(self.dust), list(self.eliminated))
        c.pending = [list(e) for e in self.pending]
        c.resume = list(self.resume) if self.resume else None
        c.last = _copy_json(self.last)
        return c

    def to_dict(self) -> dict[str, Any]:
        return {
            "rng": rng_state(self.rng),
            "phase": self.phase, "to_move": self.to_move, "round": self.round_no, "starter": self.starter,
            "rail_rule": self.rail_rule, "wins": list(self.wins), "points": list(self.points),
            "spent": list(self.spent), "dust": list(self.dust), "eliminated": list(self.eliminated),
            "pending": [list(e) for e in self.pending], "resume": list(self.resume) if self.resume else None,
            "dice": {d: die.to_list() for d, die in self.dice.items()},
            "last": _copy_json(self.last),
        }

    def player_view(self, player: int) -> dict[str, Any]:
        """Everything is on the table; the view adds who is to move, the scores and the aim-preview flag."""
        view = self.to_dict()
        del view["rng"]
        view["you"] = player
        view["aim_preview"] = not self.dust[player]
        view["round_scores"] = [self.round_score(q) for q in range(self.game.players)]
        view["faces"] = {d: die.face for d, die in self.dice.items() if die.status == "arena"}
        return view

    @classmethod
    def from_dict(cls, game: ZooGame, data: dict[str, Any]) -> ZooState:
        """A saved battle, refused unless play could have reached it: the schema checks every field's type and
        range, then the dice, scores, placements and the last move are checked against the battle's rules."""
        dice_rows = data.get("dice") if isinstance(data, dict) else None
        if isinstance(dice_rows, dict) and any(isinstance(v, list) and len(v) == 6 for v in dice_rows.values()):
            raise StateFormatError("this battle was saved by the 2-D arena (format 1): its dice have no height or "
                                   "3-D pose and its flicks do not replay on the 3-D physics; start a new battle")
        check_schema(data, _StateFile, "the saved battle is damaged")
        n = game.players
        s = cls(game, checked_rng(data["rng"]))
        phase = data["phase"]
        s.phase = phase
        s.to_move = _player(data["to_move"], n)
        s.round_no = data["round"]
        s.starter = _player(data["starter"], n)
        s.rail_rule = None if data["rail_rule"] is None else _player(data["rail_rule"], n)
        s.wins = _ints(data["wins"], n, 0, game.rounds_to_win)
        s.points = _ints(data["points"], n, 0, 10_000)
        s.spent = _bools(data["spent"], n)
        s.dust = _bools(data["dust"], n)
        s.eliminated = _bools(data["eliminated"], n)
        s._check_scores()
        dice = data["dice"]
        if set(dice) != set(game.die_ids):
            raise StateFormatError(f"the dice must be {', '.join(game.die_ids)}")
        allowed = {"hand", "arena", "caged", "out"}
        if game.multiplayer:
            allowed.add("reserve" if game.mode == "cage" else "unused")
        for d in game.die_ids:
            owner, status, x, y, angle, orientation, z, quat = dice[d]
            if owner != game.owner_of[d]:
                raise StateFormatError(f"{d} belongs to player {game.owner_of[d] + 1}")
            if status not in STATUSES:
                raise StateFormatError(f"{d} has unknown status {quote(status)}")
            if status not in allowed:
                raise StateFormatError(f"{d} cannot be {status} in a {game.title()}")
            q = None if quat is None else tuple(float(v) for v in quat)
            s.dice[d] = Die(owner, status, float(x), float(y), float(angle), orientation,
                            None if z is None else float(z), q)  # type: ignore[arg-type]
            _check_pose(d, s.dice[d])
        s._check_arena()
        s.pending = []
        for owner, die_id, rule in data["pending"]:
            if s.dice[die_id].owner != owner or s.dice[die_id].status not in ("caged", "out"):
                raise StateFormatError(f"{die_id} is not an animal of player {owner + 1} waiting to be placed")
            s.pending.append([owner, die_id, rule])
        if len({e[1] for e in s.pending}) != len(s.pending):
            raise StateFormatError("an animal is to be placed twice")
        if (phase == "place") != bool(s.pending):
            raise StateFormatError("placements to make and the phase disagree")
        if phase == "place" and s.to_move != s.pending[0][0]:
            raise StateFormatError("the player placing must own the animal to place")
        resume = data["resume"]
        if resume is not None and phase != "place":
            raise StateFormatError("a turn to resume after placements, with no placements")
        s.resume = None if resume is None else [_player(resume[0], n), resume[1]]
        if phase != "over" and s.eliminated[s.to_move]:
            raise StateFormatError(f"{game.player_name(s.to_move)} is out of the battle but to move")
        s.last = s._checked_last(data["last"])
        if phase in ("flick", "extra") and not s.flickable() and not s.legal_actions():
            raise StateFormatError(f"{game.player_name(s.to_move)} is to move but has nothing to do")
        return s

    def _check_scores(self) -> None:
        """Round wins and points as the battle's rules score them: none in a Cage Battle, at most an arena of
        top faces a round in a Points Battle, and no battle going on past its end."""
        g = self.game
        over = self.phase == "over"
        top = MAX_FACE_POINTS * len(g.die_ids) // g.players
        if g.mode == "cage":
            if any(self.points):
                raise StateFormatError("a Cage Battle scores no points")
            if not over and max(self.wins) >= g.rounds_to_win:
                raise StateFormatError(f"a player has {max(self.wins)} round wins but the battle goes on")
            if not g.multiplayer and not sum(self.wins) <= self.round_no <= sum(self.wins) + 1:
                raise StateFormatError(f"round {self.round_no} after {sum(self.wins)} rounds won")
            return
        if any(self.wins):
            raise StateFormatError("a Points Battle has no round wins")
        if g.multiplayer:
            if self.round_no > g.multiplayer_rounds:
                raise StateFormatError(f"round {self.round_no} of a {g.multiplayer_rounds}-round battle")
            animals = g.points_animals * MAX_FACE_POINTS
            if any(p > self.round_no * animals for p in self.points):
                raise StateFormatError(f"more points than {self.round_no} rounds can score")
        else:
            limit = g.points_to_win + top if over else g.points_to_win
            if max(self.points) >= limit:
                raise StateFormatError(f"{max(self.points)} points, and the battle ends at {g.points_to_win}")
            if over and max(self.points) < g.points_to_win:
                raise StateFormatError("a finished Points Battle needs a player at the points to win")

    def _check_arena(self) -> None:
        """The dice in the arena lie where dice come to rest: inside the rails, not over a cage (a die whose
        centre passes over one falls in), and never on top of each other."""
        a = arena()
        edge = constants()["die"]["edge"]
        lo, hi = edge / 2 * REST_CLEARANCE, a.size - edge / 2 * REST_CLEARANCE
        placed: list[tuple[str, Die]] = []
        for d, die in self.dice.items():
            if die.status != "arena":
                continue
            # A die set down by hand lies flat, its centre at least (nearly) half an edge from the walls; one the
            # physics left (with its 3-D pose) may lean over a rail's edge, its centre anywhere inside the rails.
            low, high = (lo, hi) if die.quat is None else (0.0, a.size)
            if not (low <= die.x <= high and low <= die.y <= high):
                raise StateFormatError(f"{d} lies outside the arena")
            hole = a.over_hole(die.x, die.y)
            if hole is not None:
                raise StateFormatError(f"{d} rests over the {hole} cage (it would have fallen in)")
            z = edge / 2 if die.z is None else die.z
            for e, other in placed:
                oz = edge / 2 if other.z is None else other.z
                if math.dist((die.x, die.y, z), (other.x, other.y, oz)) < edge * REST_CLEARANCE:
                    raise StateFormatError(f"{d} and {e} overlap")
            placed.append((d, die))

    def _checked_last(self, last: dict[str, Any] | None) -> dict[str, Any] | None:
        """The last move's record as the rules write it: its move text one that reads back to itself, its dice and
        players in the battle, its events lines the physics writes."""
        if last is None:
            return None
        n = self.game.players
        players = [last.get(k) for k in ("player", "round_winner", "winner")]
        if any(p is not None and p >= n for p in players):
            raise StateFormatError("the last move names a player who is not in the battle")
        kind = last["kind"]
        text = last.get(kind) if kind in ("flick", "place", "ability") else None
        if text is not None:
            try:
                move = ZooAction.parse(text)
            except ValueError:
                raise StateFormatError(f"the last {kind} is not a move") from None
            if str(move) != text or getattr(move, "die", getattr(move, "target", "x")) not in (*self.dice, "P1",
                                                                                             "P2", "P3", "P4"):
                raise StateFormatError(f"the last {kind} is not a move of this battle")
        for key in ("caged", "left"):
            if any(d not in self.dice for d in last.get(key, {})):
                raise StateFormatError(f"the last flick's {key} names a die not in the battle")
        if any(not EVENT.fullmatch(e) for e in last.get("events", [])):
            raise StateFormatError("the last flick's events are not ones the game writes")
        for key in ("round_scores", "round_points"):
            if key in last and len(last[key]) != n:
                raise StateFormatError(f"the last move's {key.replace('_', ' ')} are not one per player")
        if kind == "flick" and not all(math.isfinite(last[k]) for k in ("direction", "speed")):
            raise StateFormatError("the last flick's aim is not a number")
        if kind == "flick" and last.get("strike") is not None and text is not None:
            chosen = ZooAction.parse(text).strike  # type: ignore[attr-defined]
            if last["strike"] != (STRIKE_DEFAULT if chosen is None else chosen):
                raise StateFormatError("the last flick's strike height is not the one its move names")
        return _copy_json(last)


def _check_pose(d: str, die: Die) -> None:
    """A die's 3-D pose as the physics leaves it: only in the arena, a unit quaternion whose up face and yaw are
    the die's face and angle, its height above the floor."""
    if die.status != "arena":
        if die.z is not None or die.quat is not None:
            raise StateFormatError(f"{d} is {die.status} and has a pose in the arena")
        return
    if die.z is not None and not 0.0 <= die.z <= MAX_HEIGHT:
        raise StateFormatError(f"{d} rests {die.z:g} mm above the floor (0-{MAX_HEIGHT:g} mm)")
    if die.quat is None:
        return
    if die.z is None:
        raise StateFormatError(f"{d} has a 3-D orientation but no height")
    q = np.array(die.quat)
    if abs(float(q @ q) - 1.0) > 1e-6:
        raise StateFormatError(f"{d}'s orientation is not a rotation (its quaternion is not of length 1)")
    r = quat_mat(q)
    yaw, _ = snap(r)
    if face_up(r) != die.face or abs(_wrap_degrees(math.degrees(yaw - die.angle))) > 1e-3:
        raise StateFormatError(f"{d}'s 3-D orientation does not show its face {die.face} at its angle")


def _cage_dice_over_holes(result: SimResult) -> None:
    """Our ruling for a die that comes to rest (leaning, or on another die) with its centre over a hole: it is
    caged in that hole, as a die whose centre passes over one falls in (the saved battle never holds one)."""
    a = arena()
    for d, body in list(result.dice.items()):
        hole = a.over_hole(body.x, body.y)
        if hole is not None:
            del result.dice[d]
            result.caged[d] = hole
            result.events.append(f"{d} fell into the {hole} cage")


def _copy_json(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _copy_json(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_copy_json(v) for v in obj]
    return obj


def _player(v: Any, n: int) -> int:
    if not isinstance(v, int) or not 0 <= v < n:
        raise StateFormatError(f"{v!r} is not a player of this battle")
    return v


def _ints(v: Any, n: int, lo: int, hi: int) -> list[int]:
    if not isinstance(v, list) or len(v) != n or not all(isinstance(x, int) and lo <= x <= hi for x in v):
        raise StateFormatError(f"expected {n} whole numbers {lo}-{hi}, got {v!r}")
    return list(v)


def _bools(v: Any, n: int) -> list[bool]:
    if not isinstance(v, list) or len(v) != n or not all(isinstance(x, bool) for x in v):
        raise StateFormatError(f"expected {n} true/false values, got {v!r}")
    return list(v)


def new_game(mode: str = "cage", players: int = 2, seed: int | None = 0, **options: Any) -> ZooState:
    """A fresh battle state seeded with ``seed``."""
    return ZooGame(mode=mode, players=players, **options).new_initial_state(make_rng(seed))
