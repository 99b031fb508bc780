"""The session model: one table of Kung-Fu Zoo, with no UI import.

``ZooSession`` is a :class:`~engine.core.session.GameSession`: the battle's options (mode, players, teams,
seed) and the aim noise of the odds are parameters, the seats say who plays each team (a person or a bot),
and the moves are typed actions: ``play(Flick(...))``, ``play(Place(...))``, ``play(UseAbility(...))``,
``play(ChooseFirst(p))``, ``play(Pass())`` refuse an illegal one with ``IllegalActionError`` and change
nothing. A flick is built step by step for a page (``choose_die``, ``launch_spot``, ``set_face``,
``arm_ability``, ``propose_flick`` / ``propose_vector``), estimated (``odds``, ``odds_grid``) and played
(``commit_flick``, which returns the trajectory frames to animate). Those named commands are the views'
attempts: a refusal becomes a warning ``notice``, returns False (or None) and leaves the battle as it was.

A bot's move is thought out on a copy (``think_bot``, off a page's event loop) and played with
``play_bot(choice)``, refused if the battle moved on meanwhile; ``step()`` does both at once. When a move
ends a round, ``round_result`` holds the round's :class:`RoundResult` (who won and how, or each animal's
face and points) with the board as the round ended, until ``next_round()``: a page shows it, and its bots
wait, until the players have seen it.
"""

from __future__ import annotations

import math
import re
import threading
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
import param

from engine.core import IllegalActionError, StateFormatError, make_rng
from engine.core.serialize import SavedSession, check_entries, is_count, is_probability, is_text, optional
from engine.core.session import BOT, PERSON, GameSession, Level, Notice, Seat
from engine.zoo.actions import ChooseFirst, Flick, Pass, Place, UseAbility, ZooAction
from engine.zoo.bot import OddsBot
from engine.zoo.constants import FACE_NAMES, TEAMS, abilities, arena, constants, face_points
from engine.zoo.game import EVENT, MODES, STRIKE_DEFAULT, ZooGame, ZooState
from engine.zoo.odds import AimNoise, FlickOdds, flick_odds, odds_grid

SESSION_FORMAT = "tabletop-dojo/zoo-session"
SESSION_VERSION = 2  # 2: the whole file checksummed, the log checked entry by entry


@dataclass
class Rehearsal:
    """The proposed flick played ahead on a copy of the battle (:meth:`ZooSession.rehearse`), off the event loop,
    while the player looks at its odds: committing that very flick at that very moment then takes the copy's
    result instead of running the physics on the click (the copy's generator is a copy of the battle's, so the
    result is the one the click would get)."""

    game_number: int
    version: int
    flick: Flick
    state: ZooState
    frames: list[dict[str, Any]] = field(default_factory=list)
    played: bool = False


def _is_float(v: Any) -> bool:
    return type(v) in (int, float)  # an interval from one sample is infinite: allowed


ODDS_NOTE_FIELDS = {"samples": is_count, "cage_opponent": is_probability, "cage_low": is_probability,
                    "cage_high": is_probability, "lose_own": is_probability, "lose_low": is_probability,
                    "lose_high": is_probability, "points": _is_float, "points_low": _is_float, "points_high": _is_float}
LOG_FIELDS = {"move": is_count, "player": optional(is_count), "text": is_text,
              "events": lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v)}
SEATS = (PERSON, BOT)
_SPOT = re.compile(r"(?:(?P<here>here)|(?P<rail>[NESW])(?:-(?P<dot>dot)|@(?P<along>[-+]?\d+(?:\.\d*)?)))")
_AIM = constants()["aim"]
_FLICK = constants()["flick"]
DRAG_MM_PER_M_S = 100.0
"""A drag of this many mm on the arena is a flick of 1 m/s (so 250 mm is the top speed, 2.5 m/s)."""
RAIL_NORMALS = {"S": 90.0, "N": -90.0, "W": 0.0, "E": 180.0}
"""Heading (degrees, world) straight into the arena from each rail."""
DUST_KICK = "eyes closed (Dust Kick): no aim preview and no odds for this flick"

MOVES = (Flick, Place, UseAbility, ChooseFirst, Pass)
"""The typed moves of Kung-Fu Zoo (``ZooAction`` only parses them from text)."""
Move = Flick | Place | UseAbility | ChooseFirst | Pass

_NEW_BATTLE = re.compile(r'new [2-4]-player (?:"All Valley" )?(?:Cage|Points) Battle, seed [0-9]{1,40}')


def _check_log_texts(log: list[dict[str, Any]]) -> None:
    """Each log line is one the session writes: the new battle's line, or a move that reads back to its own text,
    with event lines the physics writes (a forged file's markup or prose is refused, not shown)."""
    for i, entry in enumerate(log):
        text = entry["text"]
        if not _NEW_BATTLE.fullmatch(text):
            try:
                readable = str(ZooAction.parse(text)) == text
            except ValueError:
                readable = False
            if not readable:
                raise StateFormatError(f"the battle log is damaged: entry {i + 1} is not a move")
        if any(not EVENT.fullmatch(e) for e in entry["events"]):
            raise StateFormatError(f"the battle log is damaged: entry {i + 1} has an event the game does not write")


@dataclass(frozen=True)
class Animal:
    """One animal as a round ended: where it lay, the face it showed and what that face scores."""

    die: str
    player: int
    x: float
    y: float
    angle: float
    face: str
    points: int


@dataclass(frozen=True)
class RoundResult:
    """How a round ended, for the result card: its winner and how (Cage Battle) or each animal's face and
    points with the totals (Points Battle), and the board as it was (``animals``: the dice in the arena)."""

    round_no: int
    mode: str
    players: tuple[str, ...]  # "P1 (Crocodile)", in seat order
    winner: int | None  # who won the round (Cage Battle); None for a Points Battle round
    how: str  # a sentence: how the round was won, or the scores
    animals: tuple[Animal, ...]
    totals: tuple[int, ...]  # each player's points on the table (Points Battle)
    gained: tuple[int, ...]  # what each player scored for the round (Points Battle)
    battle_over: bool
    battle_winners: tuple[int, ...]

    @property
    def difference(self) -> int:
        """The first player's total minus the best other's (Points Battle; 0 in a Cage Battle)."""
        if len(self.totals) < 2:
            return 0
        return self.totals[0] - max(self.totals[1:])


def _seat(value: Any, name: str) -> Seat:
    if isinstance(value, Seat):
        return Seat(name, value.kind)
    return Seat(name, str(value))


class ZooSession(GameSession):
    """One battle of Kung-Fu Zoo for one user (or several at one screen), with bots in some seats."""

    FORMAT = SESSION_FORMAT
    FORMAT_VERSION = SESSION_VERSION
    GAME = ZooGame
    GAME_WORD = "battle"
    WHAT = "saved Kung-Fu Zoo session"

    mode: param.Selector[str] = param.Selector(default="cage", objects=list(MODES), doc="Cage Battle or Points Battle.")
    players = param.Integer(default=2, bounds=(2, 4), doc="Number of players (teams).")
    teams = param.List(default=list(TEAMS[:2]), item_type=str, doc="One team per player, in seat order.")
    all_valley = param.Boolean(default=False, doc='Two-player "All Valley" Cage Battle rules.')
    abilities = param.Boolean(default=True, doc="Team abilities, once per round (Cage Battle only).")
    aim_angle_sd = param.Number(default=float(_AIM["angle_sd_deg"]), bounds=(0, 90),
                                doc="Aim noise of the odds: standard deviation of the direction, degrees.")
    aim_speed_sd = param.Number(default=float(_AIM["speed_sd_fraction"]), bounds=(0, 1),
                                doc="Aim noise of the odds: standard deviation of the speed, fraction of it.")
    odds_samples = param.Integer(default=500, bounds=(10, 20000), doc="Simulated flicks per odds estimate.")
    odds_workers = param.Integer(default=None, allow_None=True, bounds=(1, 8),
                                 doc="Processes for the odds (None: two when two cores are idle, else one).")
    bot_candidates = param.Integer(default=16, bounds=(1, 200), doc="Flicks a bot considers per move.")
    bot_samples = param.Integer(default=6, bounds=(1, 200), doc="Noisy samples per candidate for a bot.")

    state: param.ClassSelector[ZooState] = param.ClassSelector(  # type: ignore[assignment]
        class_=ZooState, doc="The battle in progress.")
    seats = param.List(default=[Seat("P1", PERSON), Seat("P2", BOT)], item_type=Seat,
                       doc="Who plays each team (a person or a bot), in seat order.")
    die = param.String(default="", doc="The animal chosen to flick.")
    spot = param.String(default="S-dot", doc="Where it is flicked from: N/E/S/W-dot, a rail and mm (S@120), here.")
    face: param.Selector[str] = param.Selector(default="head", objects=list(FACE_NAMES),
                                               doc="The face set up before flicking.")
    direction = param.Number(default=0.0, doc="Degrees from straight in (rail) or heading (from where it lies).")
    speed = param.Number(default=1.2, doc="Flick speed, m/s.")
    use_ability_flag = param.Boolean(default=False, doc="Flick with the team's ability (Ambush, Trunk Shot).")
    strike = param.Number(default=STRIKE_DEFAULT, bounds=(0.0, 1.0),
                          doc="Strike height control: 0 strikes low (a push that slides), 1 high (topspin, tumbles).")
    last_frames = param.List(default=[], doc="Trajectory frames of the last flick, for animation.")
    round_result = param.ClassSelector(class_=RoundResult, default=None, allow_None=True,
                                       doc="How the last round ended, until the players go on to the next one.")

    def __init__(self, **params: Any) -> None:
        seats = params.pop("seats", None)
        super().__init__(**params)
        self._odds_notes: dict[str, dict[str, float]] = {}
        self._rehearsed: Rehearsal | None = None
        self._rehearsal_lock = threading.Lock()  # rehearse() runs on a worker thread, the commit on the page's
        if seats is not None:
            try:
                self.seats = [_seat(k, f"P{q + 1}") for q, k in enumerate(seats)]
            except ValueError as exc:
                raise ValueError(str(exc)) from None
        if self.state is None:
            if not self.new_game():
                raise ValueError(self.notice.text)

    # --- setting up ---------------------------------------------------------------------------
    def new_game(self, seed: int | None = None) -> bool:
        """A new battle with the current options; ``seed`` (default: the seed parameter) fixes every roll."""
        return self.attempt(self._new_game, seed)

    def _new_game(self, seed: int | None) -> None:
        if seed is not None and (type(seed) is not int or seed < 0):
            raise IllegalActionError(f"the seed must be a whole number from 0, not {seed!r}")
        teams = list(self.teams)
        if len(teams) < self.players:
            teams += [t for t in TEAMS if t not in teams][: self.players - len(teams)]
        teams = teams[: self.players]
        kinds = ([s.kind for s in self.seats] + [BOT] * self.players)[: self.players]
        try:
            game = ZooGame(mode=self.mode, players=self.players, teams=teams,
                           all_valley=self.all_valley and self.mode == "cage",
                           abilities=self.abilities and self.mode == "cage")
        except ValueError as exc:
            raise IllegalActionError(str(exc)) from None
        if seed is not None:
            self.seed = seed
        with param.parameterized.batch_call_watchers(self):
            self.game_number += 1
            self.teams = teams
            self.seats = [Seat(game.player_name(q), k) for q, k in enumerate(kinds)]
            self.rng = make_rng(self.seed + 1)
            self.state = game.new_initial_state(make_rng(self.seed))
            self.log = [{"move": 0, "player": None, "text": f"new {game.title()}, seed {self.seed}", "events": []}]
            self.last_frames = []
            self.round_result = None
            self._reset_proposal()
            self.notice = Notice(self.prompt())
            self._changed()

    def set_seats(self, kinds: list[str]) -> bool:
        """Who plays each team from now on: 'person' or 'bot', one per seat."""
        if not isinstance(kinds, list) or len(kinds) != len(self.seats) or any(k not in SEATS for k in kinds):
            self.refuse(f"seats are one of {', '.join(SEATS)} for each of the {len(self.seats)} players")
            return False
        self.seats = [Seat(s.name, k) for s, k in zip(self.seats, kinds, strict=True)]
        return True

    # --- building the proposed flick -------------------------------------------------------------
    def choose_die(self, die: str) -> bool:
        """Pick the animal to flick (one the player to move may flick now)."""
        s = self.state
        if s.phase not in ("flick", "extra"):
            return self._refuse(f"there is no flick to make now: {self.prompt()}")
        if die not in s.flickable():
            probe = Flick(die, "S", None, "head", 0.0, 1.0)
            reason = s.illegal_reason(probe) if die in s.dice else f"there is no animal {die!r} in this battle"
            return self._refuse(reason or f"{die} cannot be flicked now")
        with param.parameterized.batch_call_watchers(self):
            self.die = die
            if s.dice[die].status == "hand" and not self.spot.endswith("-dot"):
                self.spot = "S-dot"  # animals in hand enter from a dot
                self.use_ability_flag = False
            self.notice = Notice(f"{die} chosen. " + self._proposal_hint())
        return True

    def launch_spot(self, spot: str) -> bool:
        """Where to flick from: ``S-dot`` (a rail's midpoint), ``E@120`` (mm along a rail) or ``here`` (the
        Trunk Shot: choosing it is the step that uses the ability). Off a dot needs the Ambush armed first."""
        m = _SPOT.fullmatch(str(spot).strip())
        if m is None:
            return self._refuse(f"a spot is N-dot, E-dot, S-dot, W-dot, a rail and mm like S@120, or here; "
                                f"not {spot!r}")
        old = (self.spot, self.use_ability_flag)
        with param.parameterized.batch_call_watchers(self):
            self.spot = str(spot).strip()
            if self.spot == "here":
                self.use_ability_flag = True
            elif old[0] == "here":
                self.use_ability_flag = False  # leaving the Trunk Shot spot leaves the Trunk Shot
            problem = self.proposal_problem(ignore_aim=True)
            if problem is not None:
                self.spot, self.use_ability_flag = old
                return self._refuse(problem)
            self.notice = Notice(self._proposal_hint())
        return True

    def arm_ability(self, armed: bool = True) -> bool:
        """The explicit step that arms (or disarms) the ability a flick uses: the Crocodile's Ambush (flick
        from anywhere on a rail). A click on a rail never arms it."""
        s = self.state
        if s.phase not in ("flick", "extra"):
            return self._refuse("an ability is used on your own turn, before you flick")
        key = abilities()[s.team(s.to_move)].key
        if key != "ambush":
            return self._refuse(f"{abilities()[s.team(s.to_move)].name} is not armed for a flick")
        if armed and not s.ability_ready(s.to_move):
            return self._refuse("Ambush is already used this round" if s.game.abilities else
                                "abilities are not in play")
        with param.parameterized.batch_call_watchers(self):
            self.use_ability_flag = armed
            if not armed and not self.spot.endswith("-dot"):
                self.spot = "S-dot"
            self.notice = Notice("Ambush armed: click anywhere on a rail (away from the corners) to flick from there."
                                 if armed else "Ambush disarmed: flick from a dot.")
        return True

    def set_face(self, face: str) -> bool:
        """The face set up on the rail before flicking."""
        if face not in FACE_NAMES:
            return self._refuse(f"no face {face!r}; faces are {', '.join(FACE_NAMES)}")
        self.face = face
        self.notice = Notice(self._proposal_hint())
        return True

    def set_strike(self, strike: float) -> bool:
        """The strike height of the flick: from 0 (low, it slides) to 1 (high, it tumbles)."""
        if isinstance(strike, bool) or not isinstance(strike, (int, float)) or not math.isfinite(strike):
            return self._refuse(f"the strike height must be a number from 0 to 1, not {repr(strike)[:40]}")
        reason = self.state.illegal_strike_reason(Flick("A1", "S", None, "head", 0.0, 1.0, strike=float(strike)))
        if reason is not None:
            return self._refuse(reason)
        self.strike = float(strike)
        self.notice = Notice(self._proposal_hint())
        return True

    def propose_flick(self, direction: float, speed: float) -> bool:
        """Aim: direction in degrees (from straight in, or a heading for a Trunk Shot) and speed in m/s."""
        try:
            direction, speed = float(direction), float(speed)
        except (TypeError, ValueError):
            return self._refuse(f"direction and speed must be numbers, not {direction!r}, {speed!r}")
        if not (math.isfinite(direction) and math.isfinite(speed)):
            return self._refuse("direction and speed must be finite numbers")
        old = (self.direction, self.speed)
        with param.parameterized.batch_call_watchers(self):
            self.direction, self.speed = direction, speed
            problem = self.proposal_problem()
            if problem is not None:
                self.direction, self.speed = old
                return self._refuse(problem)
            self.notice = Notice(f"Proposed: {self.proposed_flick()}")
        return True

    def aim_from_vector(self, dx: float, dy: float) -> tuple[float, float]:
        """The (direction, speed) a drag of (dx, dy) mm means from the chosen spot: its heading measured from
        straight in (or absolute, 0-360, for a flick from where the animal lies) held within 80 degrees, and
        its length at ``DRAG_MM_PER_M_S`` held to the speed range (rounded to 0.1 degree and 0.01 m/s)."""
        heading = math.degrees(math.atan2(dy, dx))
        m = _SPOT.fullmatch(self.spot)
        if m is not None and m["here"]:
            direction = round(heading % 360.0, 1) % 360.0
        else:
            normal = RAIL_NORMALS[m["rail"]] if m is not None else 90.0
            direction = (heading - normal + 180.0) % 360.0 - 180.0
            direction = round(max(-_FLICK["max_angle_deg"], min(_FLICK["max_angle_deg"], direction)), 1)
        speed = math.hypot(dx, dy) / DRAG_MM_PER_M_S
        speed = max(_FLICK["min_speed_m_s"], min(_FLICK["max_speed_m_s"], speed))
        return direction, round(speed, 2)

    def propose_vector(self, dx: float, dy: float) -> bool:
        """Aim by a drag vector on the arena (mm): its direction is the flick's, its length the speed."""
        try:
            dx, dy = float(dx), float(dy)
        except (TypeError, ValueError):
            return self._refuse(f"a drag is two numbers, not {dx!r}, {dy!r}")
        if not (math.isfinite(dx) and math.isfinite(dy)) or math.hypot(dx, dy) < 1.0:
            return self._refuse("drag further: the length of the drag sets the speed")
        return self.propose_flick(*self.aim_from_vector(dx, dy))

    @staticmethod
    def spot_at(x: float, y: float, dot_radius: float = 14.0) -> str | None:
        """The launch spot a click at (x, y) mm names: a rail's dot when within ``dot_radius`` of it, else the
        point on that rail (``S@120.5``); None when (x, y) is not on a rail."""
        a = arena()
        size, w = a.size, a.rail_width
        if not (-w <= x <= size + w and -w <= y <= size + w) or (0 <= x <= size and 0 <= y <= size):
            return None
        if y < 0 and 0 <= x <= size:
            rail, along = "S", x
        elif y > size and 0 <= x <= size:
            rail, along = "N", x
        elif x < 0 and 0 <= y <= size:
            rail, along = "W", y
        elif x > size and 0 <= y <= size:
            rail, along = "E", y
        else:
            return None  # a corner of the rails
        if abs(along - size / 2) <= dot_radius:
            return f"{rail}-dot"
        return f"{rail}@{round(along, 1)}"

    def proposed_flick(self) -> Flick | None:
        """The flick the current choices make (None until an animal is chosen or when the spot is unreadable)."""
        m = _SPOT.fullmatch(self.spot)
        if not self.die or m is None:
            return None
        strike = None if self.strike == STRIKE_DEFAULT else float(self.strike)  # the default strike is not written
        if m["here"]:
            return Flick(self.die, "here", None, None, float(self.direction), float(self.speed), True, strike)
        along = None if m["dot"] else float(m["along"])
        return Flick(self.die, m["rail"], along, self.face, float(self.direction), float(self.speed),
                     bool(self.use_ability_flag), strike)


    def proposal_problem(self, ignore_aim: bool = False) -> str | None:
        """Why the proposed flick cannot be played (None when it can). ``ignore_aim`` skips range checks."""
        flick = self.proposed_flick()
        if flick is None:
            return "choose an animal to flick first"
        if ignore_aim:
            c = _FLICK
            speed = min(max(flick.speed, c["min_speed_m_s"]), c["max_speed_m_s"])
            direction = flick.direction % 360.0 if flick.rail == "here" else max(-c["max_angle_deg"], min(
                c["max_angle_deg"], flick.direction))
            flick = flick.with_aim(direction, speed)
        reason = self.state.illegal_reason(flick)
        if reason and "ability" in reason and not flick.ability:
            # Ambush off the dot: it is armed by its own step, never by the click on the rail.
            reason += " (arm the ability first: its button on your card)"
        return reason


    def spot_options(self, die: str | None = None) -> dict[str, Any]:
        """Where ``die`` (default: the chosen one) may be flicked from now: the dots, anywhere on a rail (and
        whether that takes the Ambush), and from where it lies (Trunk Shot); with the rail's allowed range."""
        s = self.state
        die = die or self.die
        out: dict[str, Any] = {"dots": [], "anywhere": False, "anywhere_needs_ability": False, "here": False,
                               "along": [arena().corner_keepout, arena().size - arena().corner_keepout]}
        if s.phase not in ("flick", "extra") or die not in s.flickable():
            return out
        along = out["along"][0]
        probe = [Flick(die, r, None, "head", 0.0, 1.0) for r in "NESW"]
        out["dots"] = [f"{f.rail}-dot" for f in probe if s.illegal_reason(f) is None]
        plain = Flick(die, "S", along, "head", 0.0, 1.0)
        marked = Flick(die, "S", along, "head", 0.0, 1.0, True)
        out["anywhere"] = s.illegal_reason(plain) is None or s.illegal_reason(marked) is None
        out["anywhere_needs_ability"] = s.illegal_reason(plain) is not None and out["anywhere"]
        out["here"] = s.illegal_reason(Flick(die, "here", None, None, 0.0, 1.0, True)) is None
        return out

    def aim_line(self) -> dict[str, float] | None:
        """Where the proposed flick starts and where it heads (for drawing the aim): x, y (mm), heading
        (degrees, world), speed (m/s) and the free slide length v^2/(2 mu g) in mm. None when it cannot be
        played or the player is flicking with eyes closed."""
        flick = self.proposed_flick()
        if flick is None or self.proposal_problem() is not None or not self.aim_preview():
            return None
        launch = self.state.launch_of(flick)
        c = constants()["friction"]
        slide = launch.speed**2 / (2 * c["floor"] * c["gravity"])
        return {"x": launch.x, "y": launch.y, "heading": math.degrees(launch.heading), "speed": flick.speed,
                "slide": slide}

    def aim_preview(self) -> bool:
        """False when the player to move had dirt kicked in the face (Dust Kick): no aim line, no odds."""
        s = self.state
        return s.phase == "over" or not s.dust[s.to_move]

    # --- odds -------------------------------------------------------------------------------------
    def noise(self) -> AimNoise:
        return AimNoise(float(self.aim_angle_sd), float(self.aim_speed_sd))

    def odds(self, samples: int | None = None, seed: int = 0) -> FlickOdds | None:
        """The odds of the proposed flick under the session's aim noise (None, with a notice why, if impossible)."""
        if not self.aim_preview():
            return self._refuse_none(DUST_KICK)
        problem = self.proposal_problem()
        if problem is not None:
            return self._refuse_none(problem)
        flick = self.proposed_flick()
        assert flick is not None
        return flick_odds(self.state, flick, noise=self.noise(), samples=samples or self.odds_samples,
                          seed=seed, workers=self.odds_workers)

    def odds_grid(self, directions: list[float], speeds: list[float], samples: int = 30, seed: int = 0
                  ) -> pd.DataFrame | None:
        """The proposed flick's odds re-aimed over directions x speeds (one row per cell; see ``odds_grid``)."""
        if not self.aim_preview():
            return self._refuse_none(DUST_KICK)
        flick = self.proposed_flick()
        if flick is None:
            return self._refuse_none("choose an animal to flick first")
        try:
            return odds_grid(self.state, flick, directions, speeds, noise=self.noise(), samples=samples,
                             seed=seed, workers=self.odds_workers)
        except ValueError as exc:
            return self._refuse_none(str(exc))

    def note_odds(self, odds: FlickOdds) -> None:
        """Remember the odds shown for a flick: when that very flick is played, its log entry keeps them."""
        self._odds_notes = {odds.flick: {
            "samples": odds.samples, "cage_opponent": odds.cage_opponent.value,
            "cage_low": odds.cage_opponent.low, "cage_high": odds.cage_opponent.high,
            "lose_own": odds.lose_own.value, "lose_low": odds.lose_own.low, "lose_high": odds.lose_own.high,
            "points": odds.points_mean, "points_low": odds.points_low, "points_high": odds.points_high}}

    # --- moves ------------------------------------------------------------------------------------
    def _play(self, action: Any) -> None:
        """A person's move for the side to move (``play``): refused for a bot's seat or an illegal move."""
        if not isinstance(action, MOVES):
            raise IllegalActionError(f"{action} is not a move of Kung-Fu Zoo")
        if self._seat_is_bot():
            raise IllegalActionError(f"{self.state.describe_player()} is played by the computer")
        self._apply(action)

    def _apply(self, action: Move) -> None:
        """Play ``action`` (checked by the rules first: an illegal one raises and changes nothing)."""
        before = self._board()
        round_no = self.state.round_no
        if isinstance(action, Flick):
            rehearsed = self._rehearsed_as(action)
            if rehearsed is not None:
                self.state, frames = rehearsed.state, rehearsed.frames
            else:
                frames = self.state.flick_with_frames(action).frames
        else:
            self.state.apply_action(action)
            frames = []
        self._after_move(action, frames, before, round_no)

    def commit_flick(self) -> list[dict[str, Any]] | None:
        """Play the proposed flick; returns its trajectory frames (None, with a notice saying why, if refused)."""
        flick = self.proposed_flick()
        if flick is None:
            return self._refuse_none("choose an animal to flick first")
        if not self.attempt(self.play, flick):
            return None
        return self.last_frames

    def rehearsal(self) -> Rehearsal | None:
        """The proposed flick on a copy of the battle now, for :meth:`rehearse` (None when it cannot be played)."""
        flick = self.proposed_flick()
        if flick is None or self.proposal_problem() is not None:
            return None
        return Rehearsal(self.game_number, self.version, flick, self.state.clone())

    def rehearse(self, rehearsal: Rehearsal) -> Rehearsal:
        """Play a :meth:`rehearsal` on its copy (on any thread: it touches nothing else; once) and keep it for the
        commit of that flick, in place of the one kept before (aiming back keeps a played one again)."""
        if not rehearsal.played:
            rehearsal.frames = rehearsal.state.flick_with_frames(rehearsal.flick).frames
            rehearsal.played = True
        with self._rehearsal_lock:
            self._rehearsed = rehearsal
        return rehearsal

    def _rehearsed_as(self, flick: Flick) -> Rehearsal | None:
        """The rehearsal of ``flick`` played on this very battle, if there is one (used once)."""
        with self._rehearsal_lock:
            r, self._rehearsed = self._rehearsed, None
        if r is not None and (r.game_number, r.version, r.flick) == (self.game_number, self.version, flick):
            return r
        return None

    def place(self, die: str, x: float, y: float, face: str = "head") -> bool:
        """Set an animal knocked out of the arena (or a caged one, by the FAQ) back into the arena."""
        try:
            action = Place(str(die), float(x), float(y), str(face))
        except (TypeError, ValueError):
            return self._refuse(f"cannot place {die!r} at {x!r}, {y!r}")
        return self.attempt(self.play, action)

    def use_ability(self, target: str) -> bool:
        """Chest Pound (target: a stunned Gorilla) or Dust Kick (target: an opponent, P1-P4)."""
        s = self.state
        team = s.team(s.to_move) if s.phase != "over" else ""
        key = abilities()[team].key if team else ""
        return self.attempt(self.play, UseAbility(key, str(target)))

    def choose_first(self, player: int) -> bool:
        """Who starts the next round (player index from 0)."""
        if type(player) is not int:
            return self._refuse(f"a player is a number, not {player!r}")
        return self.attempt(self.play, ChooseFirst(player))

    def pass_extra(self) -> bool:
        """Decline an extra flick."""
        return self.attempt(self.play, Pass())

    def apply(self, text: str) -> bool:
        """Play a move written in the game's notation (e.g. ``flick E2 from S-dot face=head dir=5.0 speed=1.2``)."""
        try:
            action = self.state.parse_action(text)
        except IllegalActionError as exc:
            return self._refuse(str(exc))
        return self.attempt(self.play, action)

    def next_round(self) -> bool:
        """The players have seen the round's result: the page goes on to the next round (or the battle's end)."""
        if self.round_result is None:
            return self._refuse("no round has ended")
        with param.parameterized.batch_call_watchers(self):
            self.round_result = None
            self.notice = Notice(self.prompt())
        return True

    # --- bots -------------------------------------------------------------------------------------
    def bot_to_move(self) -> bool:
        return self.state.phase != "over" and self._seat_is_bot()

    def new_bot(self) -> OddsBot:
        """A bot for this session's seats: its candidates, samples, aim noise and processes."""
        return OddsBot(candidates=self.bot_candidates, samples=self.bot_samples, noise=self.noise(),
                       workers=self.odds_workers)

    def think_bot(self) -> tuple[int, Any] | None:
        """The computer's choice for the seat to move, thought out on a copy of the battle (so a page can run it
        off its event loop): ``(version, action)``; play it with ``play_bot(choice)``."""
        if not self.bot_to_move():
            return self._refuse_none("it is not a computer player's turn")
        return self.think(self.state.clone(), self.version, self.rng, self.new_bot())

    def think(self, state: ZooState, version: int, rng: Any, bot: OddsBot) -> tuple[int, Any]:
        """The bot's choice on ``state`` (a copy taken at ``version``): touches nothing of the session but the
        bots' generator, so a worker thread may run it."""
        action = bot.choose(state, rng)
        odds = bot.last_odds if bot.last_odds is not None and bot.last_odds.flick == str(action) else None
        return version, (action, odds)

    def play_bot(self, choice: tuple[int, Any] | None = None) -> list[dict[str, Any]] | None:
        """Let the computer make the move of the seat to move; returns frames when it flicked ([] otherwise).
        ``choice`` is a move from ``think_bot``: refused if the battle changed since."""
        if not self.bot_to_move():
            return self._refuse_none("it is not a computer player's turn")
        if choice is None:
            choice = self.think_bot()
            assert choice is not None
        if choice[0] != self.version:
            return self._refuse_none("the battle changed while the computer was thinking")
        action, odds = choice[1]
        if odds is not None:
            self.note_odds(odds)
        if not self.attempt(self._apply, action):
            return None
        return self.last_frames

    def _bot_move(self) -> None:
        """``step()``: the bot to move thinks and plays."""
        if self.play_bot() is None:
            raise IllegalActionError(self.notice.text)

    # --- what the views show ----------------------------------------------------------------------
    def status(self) -> str:
        s = self.state
        g = s.game
        if g.mode == "cage" and not g.multiplayer:
            score = "Rounds won: " + ", ".join(f"{g.player_name(q)} {s.wins[q]}" for q in range(g.players))
        elif g.mode == "cage":
            score = "In play: " + ", ".join(g.player_name(q) for q in range(g.players) if not s.eliminated[q])
        else:
            score = "Points: " + ", ".join(f"{g.player_name(q)} {s.points[q]}" for q in range(g.players))
        return f"{g.title()}, round {s.round_no}. {score}. {self.prompt()}"

    def cards(self) -> list[dict[str, Any]]:
        """Each team's ability card and whether it is spent this round."""
        s = self.state
        out = []
        for q, team in enumerate(s.game.teams):
            ab = abilities()[team]
            out.append({"player": q, "team": team, "key": ab.key, "ability": ab.name, "text": ab.text,
                        "in_play": s.game.abilities, "spent": s.spent[q]})
        return out

    def prompt(self) -> str:
        s = self.state
        if s.phase == "over":
            names = " and ".join(s.game.player_name(q) for q in s.winners())
            return f"The battle is over: {names} won."
        who = s.describe_player()
        if s.phase == "first":
            return f"{who} chooses who starts round {s.round_no + 1}."
        if s.phase == "place":
            _owner, die, rule = s.pending[0]
            side = "face-up" if rule == "head" else "any side up"
            return f"{who} places {die} {side} anywhere in the arena."
        extra = "an extra flick (or pass)" if s.phase == "extra" else "a flick"
        return f"{who} to make {extra}: {', '.join(s.flickable())}."

    # --- saving (the path itself is GameSession's) ---------------------------------------------------
    def _save_extra(self) -> dict[str, Any]:
        return {"seats": [s.kind for s in self.seats], "aim": [self.aim_angle_sd, self.aim_speed_sd]}

    def _check_saved(self, saved: SavedSession) -> dict[str, Any]:
        state = saved.state
        assert isinstance(state, ZooState)  # load_session read it with ZooGame
        log = saved.log
        check_entries(log, "battle log", LOG_FIELDS, {"odds": lambda v: isinstance(v, dict)})
        check_entries([e["odds"] for e in log if "odds" in e], "odds in the battle log", ODDS_NOTE_FIELDS)
        if any(e["player"] is not None and e["player"] >= state.game.players for e in log):
            raise StateFormatError("the battle log is damaged: a move by a player who is not in the battle")
        _check_log_texts(log)
        if not set(saved.extra) <= {"seats", "aim"}:
            raise StateFormatError("the file has fields a Kung-Fu Zoo session does not write")
        seats = saved.extra.get("seats")
        if not isinstance(seats, list) or len(seats) != state.game.players or any(s not in SEATS for s in seats):
            raise StateFormatError("the seats are damaged")
        try:
            angle_sd, speed_sd = (float(v) for v in saved.extra["aim"])
            AimNoise(angle_sd, speed_sd)
        except (KeyError, TypeError, ValueError) as exc:
            raise StateFormatError(f"the aim noise is damaged ({exc})") from None
        return {"seats": seats, "aim": (angle_sd, speed_sd)}

    def _restore(self, saved: SavedSession, extra: dict[str, Any]) -> None:
        state = saved.state
        assert isinstance(state, ZooState)
        g = state.game
        self.mode, self.players, self.teams = g.mode, g.players, list(g.teams)
        self.all_valley, self.abilities = g.all_valley, g.abilities
        self.seats = [Seat(g.player_name(q), k) for q, k in enumerate(extra["seats"])]
        self.aim_angle_sd, self.aim_speed_sd = extra["aim"]
        self.last_frames = []
        self.round_result = None
        self.state = state  # the proposal below is for the loaded battle
        self._reset_proposal()

    def try_load(self, text: str | bytes) -> bool:
        """Load a file for a view (see GameSession.try_load); a loaded one says so with the next move."""
        if not super().try_load(text):
            return False
        self.notice = Notice("Battle loaded. " + self.prompt())
        return True

    # --- internals ----------------------------------------------------------------------------------
    def _seat_is_bot(self) -> bool:
        s = self.state
        return s.phase != "over" and self.seats[s.to_move].kind == BOT

    def _board(self) -> dict[str, tuple[float, float, float, str]]:
        """Every die in the arena: where it lies and the face it shows (for a round's final board)."""
        return {d: (die.x, die.y, die.angle, die.face) for d, die in self.state.dice.items() if die.status == "arena"}

    def _final_board(self, action: Move, frames: list[dict[str, Any]],
                     before: dict[str, tuple[float, float, float, str]], restarted: bool
                     ) -> dict[str, tuple[float, float, float, str]]:
        """The arena as the round ended. When the rules started the next round at once (a tied Points Battle
        round), the dice are back in hand: the flick's last frame (or the placement) tells where they lay."""
        if not restarted:
            return self._board()
        if frames:
            return {d: (float(p[0]), float(p[1]), float(p[2]), str(p[3])) for d, p in frames[-1]["dice"].items()}
        board = dict(before)
        if isinstance(action, Place):
            board[action.die] = (action.x, action.y, 0.0, action.face)
        return board

    def _round_result(self, action: Move, frames: list[dict[str, Any]],
                      before: dict[str, tuple[float, float, float, str]], round_no: int) -> RoundResult | None:
        """The result of the round ``action`` ended, or None when the round goes on."""
        s = self.state
        g = s.game
        last = s.last or {}
        restarted = s.round_no != round_no
        ended = restarted or (s.phase in ("first", "over") and any(
            k in last for k in ("round_winner", "round_scores", "winner")))
        if not ended:
            return None
        board = self._final_board(action, frames, before, restarted)
        owner = {d: die.owner for d, die in s.dice.items()}
        animals = tuple(Animal(d, owner[d], x, y, a, f, face_points(f)) for d, (x, y, a, f) in sorted(board.items()))
        names = tuple(g.player_name(q) for q in range(g.players))
        over = s.phase == "over"
        winners = tuple(s.winners()) if over else ()
        if g.mode == "cage":
            winner = int(last.get("round_winner", last.get("winner", s.to_move)))
            beaten = [names[q] for q in range(g.players) if q != winner]
            events = "; ".join(last.get("events", []))
            how = (f"{names[winner]} won round {round_no}: {' and '.join(beaten)} had no animal left fighting "
                   f"(every one caged, out or stunned)" + (f" after {events}" if events else "") + ".")
            return RoundResult(round_no, g.mode, names, winner, how, animals, (), (), over, winners)
        totals = tuple(sum(a.points for a in animals if a.player == q) for q in range(g.players))
        gained = tuple(last.get("round_points", totals))
        how = "Points on the table: " + ", ".join(f"{n} {t}" for n, t in zip(names, totals, strict=True)) + "."
        return RoundResult(round_no, g.mode, names, None, how, animals, totals, gained, over, winners)

    def _after_move(self, action: Move, frames: list[dict[str, Any]],
                    before: dict[str, tuple[float, float, float, str]], round_no: int) -> None:
        s = self.state
        last = s.last or {}
        player = last.get("player")
        events = list(last.get("events", []))
        result = self._round_result(action, frames, before, round_no)
        with param.parameterized.batch_call_watchers(self):
            # The frames first: param calls a batch's watchers in the order their parameters were first set, and
            # a page's arena (watching these and the version) then schedules a flick's animation on every page at
            # the table before the log's, the odds' and the notice's redraws, which a page shows while it plays.
            self.last_frames = frames
            entry: dict[str, Any] = {"move": len(self.log), "player": player, "text": str(action), "events": events}
            if str(action) in self._odds_notes:
                entry["odds"] = self._odds_notes[str(action)]
            self._odds_notes = {}
            self.log = [*self.log, entry]
            self.round_result = result
            if isinstance(action, Flick) or s.phase not in ("flick", "extra") or self.die not in s.flickable():
                self._reset_proposal()
            said = "; ".join(events)
            text = f"{action}. {said + '. ' if said else ''}"
            if result is not None:
                text += result.how + " "
            level = (Level.SUCCESS if result is not None or any("cage" in e for e in events) else
                     Level.WARNING if any(e.startswith("foul") or "hopped out" in e for e in events) else Level.INFO)
            self.notice = Notice((text + self.prompt()).strip(), level)
            self._changed()

    def _reset_proposal(self) -> None:
        s = self.state
        allowed = s.flickable() if s.phase in ("flick", "extra") else []
        self.die = allowed[0] if allowed else ""
        self.spot = "S-dot"
        self.use_ability_flag = False
        self.direction, self.speed = 0.0, 1.2  # a new flick starts from a fresh aim, not the last one

    def _proposal_hint(self) -> str:
        problem = self.proposal_problem()
        flick = self.proposed_flick()
        return f"Proposed: {flick}" if problem is None else f"Not yet playable: {problem}"

    def _refuse(self, reason: str) -> bool:
        self.refuse(reason[:1].upper() + reason[1:] if reason else "refused")
        return False

    def _refuse_none(self, reason: str) -> None:
        self._refuse(reason)
        return None

    def refuse(self, reason: str) -> None:
        super().refuse(reason[:1].upper() + reason[1:] if reason else "refused")


__all__ = ["DRAG_MM_PER_M_S", "Animal", "Rehearsal", "RoundResult", "ZooSession"]
