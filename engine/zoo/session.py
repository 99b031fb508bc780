"""The session model: one table of Kung-Fu Zoo, with no UI import.

A ``ZooSession`` wraps one battle for one browser tab or notebook. The battle's options (mode, players,
teams, seats person/bot, seed) and the aim noise of the odds are parameters; the player's commands are
methods: ``choose_die``, ``launch_spot``, ``set_face``, ``propose_flick`` (direction, speed) build the
proposed flick (``propose_vector`` aims by a drag on the arena, ``spot_at`` names the rail spot under a
click), ``odds`` estimates it (``note_odds`` keeps the odds shown with the flick's log entry),
``commit_flick`` plays it and returns the trajectory frames to animate; ``think_bot`` works out a bot's
move on a copy (off a page's event loop) for ``play_bot`` to play; ``place``, ``use_ability``,
``choose_first``, ``pass_extra`` and ``play_bot`` are the other moves; ``save``/``load`` keep a whole
session as JSON. A command that cannot be carried out returns False (or None), says why in ``message``
and leaves the battle exactly as it was.
"""

from __future__ import annotations

import math
import re
import threading
from typing import Any

import pandas as pd
import param

from engine.core import Action, IllegalActionError, StateFormatError, make_rng
from engine.core.serialize import (
    check_entries,
    dump_session,
    is_count,
    is_probability,
    is_text,
    load_session,
    optional,
)
from engine.zoo.actions import ChooseFirst, Flick, Pass, Place, UseAbility, ZooAction
from engine.zoo.bot import OddsBot
from engine.zoo.constants import FACE_NAMES, TEAMS, abilities, arena, constants
from engine.zoo.game import EVENT, MODES, ZooGame, ZooState
from engine.zoo.odds import AimNoise, FlickOdds, flick_odds, odds_grid

SESSION_FORMAT = "tabletop-dojo/zoo-session"
SESSION_VERSION = 2  # 2: the whole file checksummed, the log checked entry by entry


def _is_float(v: Any) -> bool:
    return type(v) in (int, float)  # an interval from one sample is infinite: allowed


ODDS_NOTE_FIELDS = {"samples": is_count, "cage_opponent": is_probability, "cage_low": is_probability,
                    "cage_high": is_probability, "lose_own": is_probability, "lose_low": is_probability,
                    "lose_high": is_probability, "points": _is_float, "points_low": _is_float, "points_high": _is_float}
LOG_FIELDS = {"move": is_count, "player": optional(is_count), "text": is_text,
              "events": lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v)}
SEATS = ("person", "bot")
_SPOT = re.compile(r"(?:(?P<here>here)|(?P<rail>[NESW])(?:-(?P<dot>dot)|@(?P<along>[-+]?\d+(?:\.\d*)?)))")
_AIM = constants()["aim"]
_FLICK = constants()["flick"]
DRAG_MM_PER_M_S = 100.0
"""A drag of this many mm on the arena is a flick of 1 m/s (so 250 mm is the top speed, 2.5 m/s)."""
RAIL_NORMALS = {"S": 90.0, "N": -90.0, "W": 0.0, "E": 180.0}
"""Heading (degrees, world) straight into the arena from each rail."""


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


class ZooSession(param.Parameterized):
    """One battle of Kung-Fu Zoo for one user (or several at one screen), with bots in some seats."""

    mode: param.Selector[str] = param.Selector(default="cage", objects=list(MODES), doc="Cage Battle or Points Battle.")
    players = param.Integer(default=2, bounds=(2, 4), doc="Number of players (teams).")
    teams = param.List(default=list(TEAMS[:2]), item_type=str, doc="One team per player, in seat order.")
    seats = param.List(default=["person", "bot"], item_type=str, doc="'person' or 'bot' for each seat.")
    all_valley = param.Boolean(default=False, doc='Two-player "All Valley" Cage Battle rules.')
    abilities = param.Boolean(default=True, doc="Team abilities, once per round (Cage Battle only).")
    seed = param.Integer(default=1, bounds=(0, None), doc="Seed of the next new battle.")
    aim_angle_sd = param.Number(default=float(_AIM["angle_sd_deg"]), bounds=(0, 90),
                                doc="Aim noise of the odds: standard deviation of the direction, degrees.")
    aim_speed_sd = param.Number(default=float(_AIM["speed_sd_fraction"]), bounds=(0, 1),
                                doc="Aim noise of the odds: standard deviation of the speed, fraction of it.")
    odds_samples = param.Integer(default=500, bounds=(10, 20000), doc="Simulated flicks per odds estimate.")
    odds_workers = param.Integer(default=None, allow_None=True, bounds=(1, 8),
                                 doc="Processes for the odds (None: two when two cores are idle, else one).")
    bot_candidates = param.Integer(default=16, bounds=(1, 200), doc="Flicks a bot considers per move.")
    bot_samples = param.Integer(default=6, bounds=(1, 200), doc="Noisy samples per candidate for a bot.")

    # None only until __init__ starts a battle; param types a ClassSelector without a default as optional.
    state: param.ClassSelector[ZooState] = param.ClassSelector(  # type: ignore[assignment]
        class_=ZooState, doc="The battle in progress.")
    die = param.String(default="", doc="The animal chosen to flick.")
    spot = param.String(default="S-dot", doc="Where it is flicked from: N/E/S/W-dot, a rail and mm (S@120), here.")
    face: param.Selector[str] = param.Selector(default="head", objects=list(FACE_NAMES),
                                               doc="The face set up before flicking.")
    direction = param.Number(default=0.0, doc="Degrees from straight in (rail) or heading (from where it lies).")
    speed = param.Number(default=1.2, doc="Flick speed, m/s.")
    use_ability_flag = param.Boolean(default=False, doc="Flick with the team's ability (Ambush, Trunk Shot).")
    last_frames = param.List(default=[], doc="Trajectory frames of the last flick, for animation.")
    message = param.String(default="", doc="What just happened, or why a command was refused.")
    log = param.List(default=[], doc="One dict per move of the battle.")
    version = param.Integer(default=0, doc="Bumped on every change of the battle, for views to depend on.")

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self._lock = threading.RLock()
        self._rng = make_rng(self.seed)
        self._odds_notes: dict[str, dict[str, float]] = {}
        if self.state is None:
            self.new_game()

    # --- setting up ---------------------------------------------------------------------------
    def new_game(self, seed: int | None = None) -> bool:
        """A new battle with the current options; ``seed`` (default: the seed parameter) fixes every roll."""
        with self._lock:
            if seed is not None:
                if type(seed) is not int or seed < 0:
                    return self._refuse(f"the seed must be a whole number from 0, not {seed!r}")
                self.seed = seed
            teams = list(self.teams)
            if len(teams) < self.players:
                teams += [t for t in TEAMS if t not in teams][: self.players - len(teams)]
            teams = teams[: self.players]
            seats = (list(self.seats) + ["bot"] * self.players)[: self.players]
            bad = [s for s in seats if s not in SEATS]
            if bad:
                return self._refuse(f"a seat is 'person' or 'bot', not {bad[0]!r}")
            try:
                game = ZooGame(mode=self.mode, players=self.players, teams=teams,
                               all_valley=self.all_valley and self.mode == "cage",
                               abilities=self.abilities and self.mode == "cage")
            except ValueError as exc:
                return self._refuse(str(exc))
            with param.parameterized.batch_call_watchers(self):
                self.teams, self.seats = teams, seats
                self._rng = make_rng(self.seed + 1)
                self.state = game.new_initial_state(make_rng(self.seed))
                self.log = [{"move": 0, "player": None, "text": f"new {game.title()}, seed {self.seed}",
                             "events": []}]
                self.last_frames = []
                self._reset_proposal()
                self.message = self._prompt()
                self._changed()
            return True

    # --- building the proposed flick -------------------------------------------------------------
    def choose_die(self, die: str) -> bool:
        """Pick the animal to flick (one the player to move may flick now)."""
        with self._lock:
            s = self.state
            if s.phase not in ("flick", "extra"):
                return self._refuse(f"there is no flick to make now: {self._prompt()}")
            allowed = s.flickable()
            if die not in allowed:
                probe = Flick(die, "S", None, "head", 0.0, 1.0)
                reason = s.illegal_reason(probe) if die in s.dice else f"there is no animal {die!r} in this battle"
                return self._refuse(reason or f"{die} cannot be flicked now")
            self.die = die
            if s.dice[die].status == "hand" and not self.spot.endswith("-dot"):
                self.spot = "S-dot"  # animals in hand enter from a dot
                self.use_ability_flag = False
            self.message = f"{die} chosen. " + self._proposal_hint()
            return True

    def launch_spot(self, spot: str) -> bool:
        """Where to flick from: ``S-dot`` (a rail's midpoint), ``E@120`` (mm along a rail) or ``here``."""
        with self._lock:
            m = _SPOT.fullmatch(str(spot).strip())
            if m is None:
                return self._refuse(f"a spot is N-dot, E-dot, S-dot, W-dot, a rail and mm like S@120, or here; "
                                    f"not {spot!r}")
            old = self.spot
            self.spot = str(spot).strip()
            if self.spot == "here":
                self.use_ability_flag = True
            problem = self.proposal_problem(ignore_aim=True)
            if problem is not None:
                self.spot = old
                return self._refuse(problem)
            self.message = self._proposal_hint()
            return True

    def set_face(self, face: str) -> bool:
        """The face set up on the rail before flicking."""
        with self._lock:
            if face not in FACE_NAMES:
                return self._refuse(f"no face {face!r}; faces are {', '.join(FACE_NAMES)}")
            self.face = face
            self.message = self._proposal_hint()
            return True

    def propose_flick(self, direction: float, speed: float) -> bool:
        """Aim: direction in degrees (from straight in, or a heading for a Trunk Shot) and speed in m/s."""
        with self._lock:
            try:
                direction, speed = float(direction), float(speed)
            except (TypeError, ValueError):
                return self._refuse(f"direction and speed must be numbers, not {direction!r}, {speed!r}")
            if not (math.isfinite(direction) and math.isfinite(speed)):
                return self._refuse("direction and speed must be finite numbers")
            old = (self.direction, self.speed)
            self.direction, self.speed = direction, speed
            problem = self.proposal_problem()
            if problem is not None:
                self.direction, self.speed = old
                return self._refuse(problem)
            self.message = f"Proposed: {self.proposed_flick()}"
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
        if m["here"]:
            return Flick(self.die, "here", None, None, float(self.direction), float(self.speed), True)
        along = None if m["dot"] else float(m["along"])
        return Flick(self.die, m["rail"], along, self.face, float(self.direction), float(self.speed),
                     bool(self.use_ability_flag))

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
            # Ambush off the dot: say how to ask for it.
            reason += " (set the ability flag)"
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
        """The odds of the proposed flick under the session's aim noise (None, with a message, if impossible)."""
        with self._lock:
            if not self.aim_preview():
                return self._refuse_none("eyes closed (Dust Kick): no aim preview and no odds for this flick")
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
        with self._lock:
            if not self.aim_preview():
                return self._refuse_none("eyes closed (Dust Kick): no aim preview and no odds for this flick")
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
    def commit_flick(self) -> list[dict[str, Any]] | None:
        """Play the proposed flick; returns its trajectory frames (None, with a message, if refused)."""
        with self._lock:
            flick = self.proposed_flick()
            if flick is None:
                return self._refuse_none("choose an animal to flick first")
            if self._seat_is_bot():
                return self._refuse_none(f"{self.state.describe_player()} is played by the computer")
            try:
                result = self.state.flick_with_frames(flick)
            except IllegalActionError as exc:
                return self._refuse_none(str(exc))
            self._after_move(flick, result.frames)
            return result.frames

    def place(self, die: str, x: float, y: float, face: str = "head") -> bool:
        """Set an animal knocked out of the arena (or a caged one, by the FAQ) back into the arena."""
        try:
            action = Place(str(die), float(x), float(y), str(face))
        except (TypeError, ValueError):
            return self._refuse(f"cannot place {die!r} at {x!r}, {y!r}")
        return self._play(action)

    def use_ability(self, target: str) -> bool:
        """Chest Pound (target: a stunned Gorilla) or Dust Kick (target: an opponent, P1-P4)."""
        s = self.state
        team = s.team(s.to_move) if s.phase != "over" else ""
        key = abilities()[team].key if team else ""
        return self._play(UseAbility(key, str(target)))

    def choose_first(self, player: int) -> bool:
        """Who starts the next round (player index from 0)."""
        if type(player) is not int:
            return self._refuse(f"a player is a number, not {player!r}")
        return self._play(ChooseFirst(player))

    def pass_extra(self) -> bool:
        """Decline an extra flick."""
        return self._play(Pass())

    def apply(self, text: str) -> bool:
        """Play a move written in the game's notation (e.g. ``flick E2 from S-dot face=head dir=5.0 speed=1.2``)."""
        with self._lock:
            try:
                action = self.state.parse_action(text)
            except IllegalActionError as exc:
                return self._refuse(str(exc))
            if isinstance(action, Flick):
                try:
                    result = self.state.flick_with_frames(action)
                except IllegalActionError as exc:
                    return self._refuse(str(exc))
                self._after_move(action, result.frames)
                return True
            return self._play(action)

    def bot_to_move(self) -> bool:
        return self.state.phase != "over" and self._seat_is_bot()

    def think_bot(self) -> tuple[int, Any] | None:
        """The computer's choice for the seat to move, thought out on a copy of the battle without holding the
        session (so a page stays responsive): ``(version, action)``; play it with ``play_bot(choice)``."""
        with self._lock:
            if not self.bot_to_move():
                return self._refuse_none("it is not a computer player's turn")
            state, version, rng = self.state.clone(), self.version, self._rng
        bot = OddsBot(candidates=self.bot_candidates, samples=self.bot_samples, noise=self.noise(),
                      workers=self.odds_workers)
        action = bot.choose(state, rng)
        with self._lock:
            if self.version == version:
                self._note_bot_odds(bot, action)
        return version, action

    def _note_bot_odds(self, bot: OddsBot, action: Action) -> None:
        """The computer's flick goes into the log with the odds it was chosen by, as a person's does."""
        if bot.last_odds is not None and bot.last_odds.flick == str(action):
            self.note_odds(bot.last_odds)

    def play_bot(self, choice: tuple[int, Any] | None = None) -> list[dict[str, Any]] | None:
        """Let the computer make the move of the seat to move; returns frames when it flicked ([] otherwise).
        ``choice`` is a move from ``think_bot``: refused if the battle changed since."""
        with self._lock:
            if not self.bot_to_move():
                return self._refuse_none("it is not a computer player's turn")
            if choice is None:
                bot = OddsBot(candidates=self.bot_candidates, samples=self.bot_samples, noise=self.noise(),
                              workers=self.odds_workers)
                action = bot.choose(self.state, self._rng)
                self._note_bot_odds(bot, action)
            elif choice[0] != self.version:
                return self._refuse_none("the battle changed while the computer was thinking")
            else:
                action = choice[1]
            if isinstance(action, Flick):
                result = self.state.flick_with_frames(action)
                self._after_move(action, result.frames)
                return result.frames
            self.state.apply_action(action)
            self._after_move(action, [])
            return []

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
        return f"{g.title()}, round {s.round_no}. {score}. {self._prompt()}"

    def arena_view(self) -> dict[str, Any]:
        """Everything needed to draw the table: the arena, the dice and who is to move."""
        a = arena()
        s = self.state
        dice = []
        for d, die in s.dice.items():
            dice.append({"id": d, "owner": die.owner, "team": s.team(die.owner), "status": die.status,
                         "x": die.x, "y": die.y, "angle": die.angle, "face": die.face if die.status == "arena"
                         else None})
        return {"size": a.size, "rail_width": a.rail_width, "hole_radius": a.hole_radius, "holes": a.holes,
                "edge": constants()["die"]["edge"], "dice": dice, "to_move": s.current_player(), "phase": s.phase,
                "spent": list(s.spent), "aim_preview": self.aim_preview()}

    def cards(self) -> list[dict[str, Any]]:
        """Each team's ability card and whether it is spent this round."""
        s = self.state
        out = []
        for q, team in enumerate(s.game.teams):
            ab = abilities()[team]
            out.append({"player": q, "team": team, "ability": ab.name, "text": ab.text,
                        "in_play": s.game.abilities, "spent": s.spent[q]})
        return out

    # --- saving -----------------------------------------------------------------------------------
    def save(self) -> str:
        """The whole session as JSON: the saved battle (core envelope), seats, aim noise, the bots' generator,
        the log."""
        return dump_session(SESSION_FORMAT, SESSION_VERSION, self.state, self._rng, self.seed, self.log,
                            seats=list(self.seats), aim=[self.aim_angle_sd, self.aim_speed_sd])

    def load(self, text: str | bytes) -> bool:
        """Load a saved session; a bad file sets ``message`` and the current battle goes on."""
        try:
            saved = load_session(text, SESSION_FORMAT, SESSION_VERSION, ZooGame, "saved Kung-Fu Zoo session")
            state, rng, seed, log = saved.state, saved.rng, saved.seed, saved.log
            assert isinstance(state, ZooState)
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
        except StateFormatError as exc:
            return self._refuse(f"Could not load: {exc}. Your battle goes on.")
        g = state.game
        with self._lock, param.parameterized.batch_call_watchers(self):
            self.mode, self.players, self.teams = g.mode, g.players, list(g.teams)
            self.all_valley, self.abilities = g.all_valley, g.abilities
            self.seats, self.seed = seats, seed
            self.aim_angle_sd, self.aim_speed_sd = angle_sd, speed_sd
            self._rng = rng
            self.log = log
            self.state = state
            self.last_frames = []
            self._reset_proposal()
            self.message = "Battle loaded. " + self._prompt()
            self._changed()
        return True

    # --- internals ----------------------------------------------------------------------------------
    def _seat_is_bot(self) -> bool:
        s = self.state
        return s.phase != "over" and self.seats[s.to_move] == "bot"

    def _play(self, action: Any) -> bool:
        with self._lock:
            if self._seat_is_bot():
                return self._refuse(f"{self.state.describe_player()} is played by the computer")
            try:
                self.state.apply_action(action)
            except IllegalActionError as exc:
                return self._refuse(str(exc))
            self._after_move(action, [])
            return True

    def _after_move(self, action: Any, frames: list[dict[str, Any]]) -> None:
        s = self.state
        last = s.last or {}
        player = last.get("player")
        with param.parameterized.batch_call_watchers(self):
            entry = {"move": len(self.log), "player": player, "text": str(action),
                     "events": list(last.get("events", []))}
            if str(action) in self._odds_notes:
                entry["odds"] = self._odds_notes[str(action)]
            self._odds_notes = {}
            self.log = [*self.log, entry]
            self.last_frames = frames
            if isinstance(action, Flick) or s.phase not in ("flick", "extra") or self.die not in s.flickable():
                self._reset_proposal()
            events = "; ".join(last.get("events", []))
            self.message = (f"{action}. {events + '. ' if events else ''}{self._prompt()}").strip()
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

    def _prompt(self) -> str:
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

    def _refuse(self, reason: str) -> bool:
        self.message = reason[:1].upper() + reason[1:] if reason else "refused"
        return False

    def _refuse_none(self, reason: str) -> None:
        self._refuse(reason)
        return None

    def _changed(self) -> None:
        self.version += 1
