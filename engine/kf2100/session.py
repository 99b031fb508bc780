"""A Kung Fu 2100 game being played: the model the dashboard (and a notebook) drives, with no UI import.

``KungFuSession`` is a :class:`~engine.core.session.GameSession`: two seats (the Terminators and the Clone
Master, each a person or a bot), a typed ``notice``, the log of every d6, a ``version`` bumped after every
change, and ``play(action)`` that takes a typed :class:`~engine.kf2100.actions.KFAction`, refuses an illegal
one with its reason (``IllegalActionError``) and changes nothing. After a person's move the bots and the dice
play on until a person must decide, so the session rests on a person's decision or the end of the game.

The named commands (``place``, ``wait_at``, ``move``, ``attack``, ``take_screen``, ``new_game``...) are the
views' attempts: a refusal becomes a warning notice, returns False and leaves the game as it was.

For a page that shows the bots' play step by step, ``pace=True`` stops before every bot or dice action (the
hidden set-up excepted); ``step()`` then plays exactly one, and :meth:`KungFuSession.next_step` /
:meth:`KungFuSession.play_step` split that step so a page can choose it on a worker thread. With both seats
played by people and ``hand_over=True``, ``handover`` names the side that must take the screen before it may
act (``take_screen``), and ``screen_view()`` shows only public information until it has.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import param

from engine.core import CHANCE, Action, IllegalActionError, Policy, StateFormatError, load_state
from engine.core.rng import clone_rng, make_rng, sample_outcome
from engine.core.serialize import SavedSession, decode, dump_session
from engine.core.session import BOT, PERSON, GameSession, Level, Notice, Seat
from engine.kf2100.actions import (
    Activate,
    Answer,
    Attack,
    Chits,
    Deal,
    DoorAttack,
    End,
    Exit,
    KFAction,
    Lead,
    Lose,
    Move,
    Place,
    Roll,
    Wait,
)
from engine.kf2100.bots import HeuristicBot
from engine.kf2100.data import CHIT_TECHNIQUES, WEAPON_CHITS
from engine.kf2100.odds import CombatOdds, attack_odds, combat_odds, p_hit
from engine.kf2100.state import PHASE_TITLES, PLAYER_NAMES, KungFuGame, KungFuState
from engine.kf2100.state_movement import Way

SESSION_FORMAT = "tabletop-dojo/kf2100-session"
SESSION_VERSION = 2  # 2: the seats are GameSession's ("person"/"bot"); the log is checked against the game
SCENARIOS = ("basic", "advanced", "solo")
BOT_LEVELS = ("heuristic", "search")
"""The bots a page offers: the heuristic bot, and the searching bot as the strong one."""
CHIT_ORDER = (*CHIT_TECHNIQUES, *WEAPON_CHITS)
ANSWER_TECHNIQUES = ("fist", "kick", "mist", "monkey")


def default_seats(terminators: str = PERSON, clone_master: str = BOT) -> list[Seat]:
    return [Seat(PLAYER_NAMES[0], terminators), Seat(PLAYER_NAMES[1], clone_master)]


def answer_column(attack: tuple[str, str, str] | Attack, answer: tuple[str, str] | Answer | None) -> str:
    """The CRT column an answer is read on: the answering chit, whoever of the other side played it (the seed's
    "attack vs. response, regardless of who responded or to whom"), a weapon as "weapon"; "none" with no answer."""
    if answer is None:
        return "none"
    chit = answer.chit if isinstance(answer, Answer) else answer[1]
    return KungFuState.answer_column(chit)


class KungFuSession(GameSession):
    """One game of Kung Fu 2100 with its seats, dice and log."""

    FORMAT = SESSION_FORMAT
    FORMAT_VERSION = SESSION_VERSION
    GAME = KungFuGame
    WHAT = "saved Kung Fu 2100 game"

    scenario: param.Selector[str] = param.Selector(objects=list(SCENARIOS), default="basic", doc="Scenario")
    seed = param.Integer(default=0, bounds=(0, None), doc="Seed of the dice (and the bots' ties)")
    terminator_levels = param.Dict(default={}, doc="Optional point-buy: Terminator -> 5 levels adding up to 7")
    state: param.ClassSelector[KungFuState] = param.ClassSelector(  # type: ignore[assignment]
        class_=KungFuState, doc="The game in progress.")
    seats = param.List(default=default_seats(), item_type=Seat, doc="The Terminators' and the Clone Master's seats.")
    selected = param.String(default="", doc="The selected figure")
    way = param.List(default=[], item_type=str, doc="Squares the selected figure's move is to go through, in order "
                     "(picked by clicks; empty: the cheapest path)")
    pace = param.Boolean(default=False, doc="Stop before each bot or dice action; step() plays one")
    bot_level: param.Selector[str] = param.Selector(
        objects=list(BOT_LEVELS), default="heuristic",
        doc="How the bot seats play: the heuristic bot, or the searching bot (engine.kf2100.search) at its stated "
            "budget; the Solo Clone Master always follows the seed's solo rules.")
    hand_over = param.Boolean(default=False, doc="Hot-seat: a side must take the screen before it acts")
    viewer = param.Integer(default=-1, bounds=(-1, 1), doc="The side looking at the screen (-1: nobody yet)")
    last_action = param.ClassSelector(class_=KFAction, default=None, allow_None=True,
                                      doc="The last action played, by anyone")

    def _make_bots(self, game: KungFuGame) -> list[Policy]:
        """The bots of the seats at ``bot_level`` (the Solo Clone Master: the seed's automaton whatever the level)."""
        from engine.kf2100.tournament import make_bot

        cm = "heuristic" if game.solo else self.bot_level
        return [make_bot(self.bot_level, 0, game), make_bot(cm, 1, game)]

    @param.depends("bot_level", watch=True)
    def _new_bot_level(self) -> None:
        self.bots = self._make_bots(self.state.game)
        self.notice = Notice(f"The bots now play as the {self.bot_level} bot"
                             + (" (the Solo Clone Master keeps the seed's rules)." if self.state.game.solo else "."))

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.moves: list[tuple[str, str, str]] = []  # the last moves: (figure, from, to), for the board's trail
        # Moves that can be taken back: (the state before, the trail before, the state the move made).
        self._undo: list[tuple[KungFuState, list[tuple[str, str, str]], KungFuState]] = []
        self.combat_log_start = 0  # where the combat being fought begins in the state's log (its exchange so far)
        self._combat_seen: tuple[Any, ...] | None = None
        self._outlook: tuple[Any, CombatOdds] | None = None  # the last combat's outlook, by combat key
        self._outlook_lock = threading.Lock()  # the pages of a table ask at once: the second waits for the first's
        if self.state is None:
            self._start(self.scenario, list(self.seats), self.terminator_levels)

    # --- seats --------------------------------------------------------------------------------------
    def seat(self, player: int) -> str:
        """``"person"`` or ``"bot"``: who plays ``player`` (the Solo Clone Master is always the bot)."""
        return self.seats[player].kind

    def hot_seat(self) -> bool:
        """Both sides played by people on one screen."""
        return self.seat(0) == PERSON and self.seat(1) == PERSON

    def person_to_move(self) -> int | None:
        """The side played by a person that must decide now (None when a bot, the dice or nobody is to)."""
        p = self.state.current_player()
        return p if p >= 0 and self.seat(p) == PERSON else None

    @property
    def pending(self) -> bool:
        """A bot or the dice act next (only ever at rest with ``pace``)."""
        s = self.state
        return not s.is_terminal() and (s.current_player() == CHANCE or self.seat(s.current_player()) == BOT)

    @property
    def handover(self) -> int | None:
        """Hot-seat: the side that must take the screen before it may act (None: no hand-over due)."""
        p = self.person_to_move()
        return p if self.hand_over and self.hot_seat() and p is not None and p != self.viewer else None

    def _first_viewer(self) -> int:
        if self.hot_seat():
            return -1
        return 1 if self.seat(0) == BOT and self.seat(1) == PERSON else 0

    # --- game life ----------------------------------------------------------------------------------
    def new_game(self, seed: int | None = None, *, scenario: str | None = None,
                 seats: tuple[str, str] | list[str] | None = None,
                 terminator_levels: dict[str, list[int]] | None = None) -> bool:
        """Start a new game (by default with this session's scenario, seats, levels and seed); a bad option
        is refused with a notice and the game in progress goes on."""
        seed = self.seed if seed is None else seed
        scenario = self.scenario if scenario is None else scenario
        kinds = [seat.kind for seat in self.seats] if seats is None else list(seats)
        levels = self.terminator_levels if terminator_levels is None else terminator_levels
        if type(seed) is not int or seed < 0:
            self.refuse(f"the seed must be a whole number from 0, not {str(seed)[:20]!r}")
            return False
        if scenario not in SCENARIOS:
            self.refuse(f"there is no scenario {str(scenario)[:20]!r} ({', '.join(SCENARIOS)})")
            return False
        if len(kinds) != 2 or any(k not in (PERSON, BOT) for k in kinds):
            self.refuse(f"each side is played by a {PERSON} or a {BOT}")
            return False
        try:
            KungFuGame(scenario, terminator_levels=levels or None)
        except ValueError as exc:
            self.refuse(str(exc))
            return False
        with param.parameterized.batch_call_watchers(self):
            self.seed = seed
            self.rng = make_rng(seed)
            self._start(scenario, default_seats(*kinds), levels)
        return True

    def _start(self, scenario: str, seats: list[Seat], levels: dict[str, list[int]]) -> None:
        game = KungFuGame(scenario, terminator_levels=levels or None)
        if game.solo:
            seats = [seats[0], Seat(PLAYER_NAMES[1], BOT)]
        with param.parameterized.batch_call_watchers(self):
            self.game_number += 1
            self.scenario, self.terminator_levels, self.seats = scenario, dict(levels), seats
            self.bots = self._make_bots(game)
            self.selected = ""
            self.moves = []
            self.last_action = None
            self._combat_seen, self.combat_log_start = None, 0
            self.viewer = self._first_viewer()
            state = game.new_initial_state()
            self._play_on(state)
            self._publish(state, None)

    @property
    def game(self) -> KungFuGame:
        game = self.state.game
        assert isinstance(game, KungFuGame)
        return game

    # --- commands -------------------------------------------------------------------------------------
    def _play(self, action: Action) -> None:
        if not isinstance(action, KFAction) or isinstance(action, (Roll, Deal)):
            raise IllegalActionError(f"{str(action)[:40]} is not a player's move: the dice are the session's")
        player = self.person_to_move()
        if player is None:
            raise IllegalActionError("the game is over" if self.state.is_terminal()
                                     else "it is not a person's turn: the bot or the dice are to play")
        self._check_screen()
        try:
            reason = self.state.illegal_reason(action)
        except (TypeError, ValueError, KeyError, IndexError, AttributeError) as exc:
            reason = f"{str(action)[:40]} is not a move of this game ({type(exc).__name__})"
        if reason is not None:
            raise IllegalActionError(reason)
        before, moves, dice = self.state, list(self.moves), self.rng.bit_generator.state
        trial = self.state.clone()
        self.moves = []
        self._apply(trial, action)
        self._play_on(trial)
        # A move can be taken back while its phase lasts, no die was rolled since (the generator is where it
        # was) and nothing was revealed or happened (the game's log is as it was: a room entered logs the
        # counters it turned face up). Judged before the views hear of the move (they may draw on the generator).
        if (isinstance(action, Move) and trial.phase == before.phase and len(trial.log) == len(before.log)
                and self.rng.bit_generator.state == dice):
            chain = self._undo if self._undo and self._undo[-1][2] is before else []
            self._undo = [*chain, (before, moves, trial)]
        else:
            self._undo = []
        self._publish(trial, "")

    def standing(self, player: int) -> list[KFAction]:
        """What ``player``, a person, may do now out of turn (the Clone Master's reveal; see
        ``KungFuState.standing_actions``); nothing for a bot's seat or while a hot-seat hand-over is due."""
        if player not in (0, 1) or self.seat(player) != PERSON or self.handover is not None:
            return []
        return [a for a in self.state.standing_actions(player) if isinstance(a, KFAction)]

    def play_standing(self, player: int, action: KFAction) -> None:
        """Play ``player``'s out-of-turn ``action`` (the Clone Master revealing himself during the Terminators'
        turn); then he makes his bonus move and play goes back where it was. A refusal raises IllegalActionError
        with its reason and changes nothing. It reveals him, so no move before it can be taken back."""
        if player not in (0, 1) or self.seat(player) != PERSON:
            raise IllegalActionError("out of turn only a person's side may act, not a bot's")
        self._check_screen()
        reason = self.state.standing_refusal(player, action)
        if reason is not None:
            raise IllegalActionError(reason)
        trial = self.state.clone()
        trial.apply_standing_action(player, action)
        self.last_action = action
        self._undo = []
        self.moves = []
        self._play_on(trial)
        self._publish(trial, "The Clone Master reveals himself.")

    def reveal_clone_master(self) -> bool:
        """The Clone Master's standing control: reveal him now, even during the Terminators' turn."""
        return self.attempt(self.play_standing, 1, Activate("CM"))

    def can_undo(self) -> bool:
        """Whether the last move can be taken back (see :meth:`undo`)."""
        return bool(self._undo) and self._undo[-1][2] is self.state

    def undo(self) -> bool:
        """Take back the last move of this phase, if no die was rolled and nothing hidden was revealed since; a
        refusal says why and changes nothing."""
        if not self.can_undo():
            self._undo = []
            self.refuse("there is no move to take back: only a move of this phase, before any die is rolled or "
                        "anything hidden is revealed")
            return False
        before, moves, _after = self._undo.pop()
        self.moves = moves
        self._publish(before, "Move taken back.")
        return True

    def _check_screen(self) -> None:
        if self.handover is not None:
            raise IllegalActionError(f"hand the screen to the {PLAYER_NAMES[self.handover]} first")

    def _apply(self, state: KungFuState, action: Action) -> None:
        """Apply a checked action and note it for the view (moves with where they came from)."""
        if isinstance(action, Move):
            f = state.figs[action.figure]
            start = state.name(f.pos) if f.pos >= 0 else f.entry
            state.apply_action(action)
            self.moves = [*self.moves[-5:], (action.figure, start, action.square)]
        else:
            state.apply_action(action)
        assert isinstance(action, KFAction)
        self.last_action = action
        self._note_combat(state)

    def _note_combat(self, state: KungFuState) -> None:
        c = state.combat
        key = None if c is None else (state.turn, state.phase, tuple(c.members))
        if key != self._combat_seen:
            self._combat_seen = key
            self.combat_log_start = len(state.log)

    def _choose(self, state: KungFuState, rng: np.random.Generator) -> KFAction:
        p = state.current_player()
        action = sample_outcome(state.chance_outcomes(), rng) if p == CHANCE else self.bots[p].choose(state, rng)
        assert isinstance(action, KFAction)
        return action

    def _play_on(self, state: KungFuState, limit: int = 200_000) -> None:
        """Let the bots and the dice play ``state`` on to a person's decision (with ``pace``: to the next step
        of a bot or the dice, the hidden set-up played through)."""
        for _ in range(limit):
            if state.is_terminal():
                return
            p = state.current_player()
            bot_or_dice = p == CHANCE or self.seat(p) == BOT
            if not bot_or_dice or (self.pace and state.phase != "setup"):
                return
            self._apply(state, self._choose(state, self.rng))

    def _publish(self, state: KungFuState, done: str | None) -> None:
        """The state, its log and the notice change together: a view never sees a move half played."""
        with param.parameterized.batch_call_watchers(self):
            self.log = [e for e in state.log if "roll" in e]
            self.selected = ""
            self.way = []
            self.state = state
            self.notice = self._turn_notice(done)
            self._changed()

    def bot_to_move(self) -> bool:
        """Whether a bot is to move (the dice, played by the session, count too: with ``pace`` each roll is a
        step of its own)."""
        return self.pending

    def _bot_move(self) -> None:
        self.play_step(self._choose(self.state, self.rng), self.version)

    def next_step(self, state: KungFuState, rng: np.random.Generator) -> KFAction:
        """The bot's (or the dice's) next action in ``state`` with ``rng``, copies of the session's (a page
        works it out on a worker thread, then hands both to :meth:`play_step`)."""
        return self._choose(state, rng)

    def play_step(self, action: KFAction, version: int, rng: np.random.Generator | None = None) -> None:
        """Play a bot or dice action chosen for the game at ``version`` (``rng``: the generator as the choice
        left it); refused, changing nothing, once the game has moved on."""
        if version != self.version or not self.pending:
            raise IllegalActionError("that step was for an earlier moment of the game")
        if rng is not None:
            self.rng = rng
        trial = self.state.clone()
        self.moves = self.moves if isinstance(action, Move) else []
        self._apply(trial, action)
        self._play_on(trial)
        self._publish(trial, None)

    def take_screen(self, player: int) -> bool:
        """Hot-seat: the side to act has the screen now; its secrets may be shown."""
        if self.handover != player:
            self.refuse(f"it is not the {PLAYER_NAMES[player]}' turn to take the screen"
                        if player in (0, 1) else f"there is no side {str(player)[:10]}")
            return False
        with param.parameterized.batch_call_watchers(self):
            self.viewer = player
            self.notice = self._turn_notice(None)
            self._changed()
        return True

    def auto_setup(self) -> bool:
        """Place the person's Clone Master's remaining counters as the bot would."""
        if self.state.phase != "setup" or self.person_to_move() != 1:
            self.refuse("only the Clone Master's set-up can be placed automatically")
            return False
        if self.handover is not None:
            self.refuse(f"hand the screen to the {PLAYER_NAMES[self.handover]} first")
            return False
        bot = HeuristicBot(1, solo=False)
        trial = self.state.clone()
        while trial.phase == "setup" and trial.current_player() == 1:
            self._apply(trial, bot.choose(trial, self.rng))
        self._play_on(trial)
        self._publish(trial, "The Clone Master's counters are placed.")
        return True

    def select(self, figure: str) -> bool:
        """Select one of the person's figures (to see where it can go)."""
        player = self.person_to_move()
        f = self.state.figs.get(str(figure).upper())
        if player is None or f is None or f.side != player:
            self.refuse(f"{str(figure)[:20]} is not one of your figures")
            return False
        if self.handover is not None:
            self.refuse(f"hand the screen to the {PLAYER_NAMES[self.handover]} first")
            return False
        with param.parameterized.batch_call_watchers(self):  # the game is unchanged: only the board follows
            self.selected = f.id
            self.way = []
            self.notice = Notice(f"{f.id} selected: click a green square (its number is the cost), or a square "
                                 "on the way you want it to take.")
        return True

    def move(self, square: str, figure: str | None = None) -> bool:
        """Move a figure to ``square``: the selected one by the way picked for it (:attr:`way`), else by the
        cheapest path."""
        fid = (figure or self.selected).upper()
        if not fid:
            self.refuse("select a figure first")
            return False
        if self.way and fid == self.selected:
            way = self.state.way_through(fid, self.way, str(square).lower())
            if isinstance(way, str):
                self.refuse(way)
                return False
            return self.attempt(self.play, way.move())
        return self.attempt(self.play, Move(fid, square.lower()))

    # --- the way of a move, picked square by square ------------------------------------------------
    def add_waypoint(self, square: str) -> bool:
        """Add ``square`` to the way of the selected figure's move (the cheapest path joins the squares picked);
        refused, the way unchanged, when the figure could not walk it with its points."""
        fid = self.selected
        if not fid or self.person_to_move() is None or self.state.figs[fid].side != self.person_to_move():
            self.refuse("select one of your figures first, then click the squares of its way")
            return False
        if self.handover is not None:
            self.refuse(f"hand the screen to the {PLAYER_NAMES[self.handover]} first")
            return False
        way = self.state.way_through(fid, [*self.way, str(square).lower()])
        if isinstance(way, str):
            self.refuse(way)
            return False
        with param.parameterized.batch_call_watchers(self):  # the game is unchanged: the board and way follow
            self.way = [*self.way, str(square).lower()]
            self.notice = Notice(f"{way_text(way)}. Click a green square to go there by this way.")
        return True

    def clear_way(self) -> bool:
        """Forget the squares picked for the way: the move goes by the cheapest path again."""
        with param.parameterized.batch_call_watchers(self):
            self.way = []
            self.notice = Notice("The way is cleared: a move goes by the cheapest path." if self.selected
                                 else self.prompt())
        return True

    def way_shown(self) -> Way | None:
        """The way picked so far for the selected figure , or
        None when none is picked or it no longer fits the game."""
        if not self.way or not self.selected:
            return None
        way = self.state.way_through(self.selected, self.way)
        return None if isinstance(way, str) else way

    def place(self, figure: str, square: str) -> bool:
        return self.attempt(self.play, Place(figure.upper(), square.lower()))

    def wait_at(self, figure: str, entry: str) -> bool:
        return self.attempt(self.play, Wait(figure.upper(), entry))

    def exit(self, figure: str) -> bool:
        return self.attempt(self.play, Exit(figure.upper()))

    def activate(self, figure: str) -> bool:
        return self.attempt(self.play, Activate(figure.upper()))

    def end(self) -> bool:
        return self.attempt(self.play, End())

    def kick_door(self, figure: str, chit: str = "kick") -> bool:
        return self.attempt(self.play, DoorAttack(figure.upper(), chit))

    def choose_chits(self, figure: str, chits: list[str]) -> bool:
        """Pick a figure's secret chits for this combat (any order)."""
        bad = [c for c in chits if c not in CHIT_ORDER]
        if bad:
            self.refuse(f"{str(bad[0])[:20]!r} is not a chit")
            return False
        return self.attempt(self.play, Chits(figure.upper(), tuple(sorted(chits, key=CHIT_ORDER.index))))

    def lead(self, side: int) -> bool:
        return self.attempt(self.play, Lead(side))

    def attack(self, figure: str, chit: str, target: str) -> bool:
        return self.attempt(self.play, Attack(figure.upper(), chit, target.upper()))

    def answer(self, figure: str, chit: str) -> bool:
        return self.attempt(self.play, Answer(figure.upper(), chit))

    def lose(self, figure: str, technique: str) -> bool:
        return self.attempt(self.play, Lose(figure.upper(), technique))

    # --- what to show -----------------------------------------------------------------------------------
    def legal(self) -> list[KFAction]:
        """The moves of the person to decide now (none while a bot, the dice or a hand-over is due)."""
        if self.person_to_move() is None or self.handover is not None:
            return []
        return [a for a in self.state.legal_actions() if isinstance(a, KFAction)]

    def reachable(self, figure: str | None = None) -> dict[str, int]:
        """Squares the selected figure may move to now, with their cost in movement points."""
        fid = (figure or self.selected).upper()
        if not fid or fid not in self.state.figs:
            return {}
        moves = {a.square for a in self.legal() if isinstance(a, Move) and a.figure == fid}
        if self.way and fid == self.selected:  # by the way picked: what it costs that way
            return {sq: c for sq, c in self.state.reachable_by(fid, self.way).items() if sq in moves}
        return {sq: c for sq, c in self.state.reachable(fid).items() if sq in moves}

    def view(self, player: int | None = None) -> dict[str, Any]:
        """The board as ``player`` (default: the person to move, else the Terminators) may see it."""
        if player is None:
            player = self.person_to_move()
            if player is None:
                player = 0 if self.seat(0) == PERSON or self.seat(1) != PERSON else 1
        return self.state.player_view(player)

    def screen_view(self) -> dict[str, Any]:
        """What the screen may show now: the looking side's view, or only public information while a
        hot-seat hand-over is due (face-down counters anonymous, every unplayed chit a count)."""
        if self.handover is None and self.viewer in (0, 1):
            return self.state.player_view(self.viewer)
        return self.public_view()

    def public_view(self) -> dict[str, Any]:
        """What anyone may see (a watcher at a table, a screen between hot-seat turns): face-down counters
        anonymous, every unplayed chit of either side a count, no set-up counter named."""
        view = self.state.player_view(0)
        if view["combat"] is not None:
            view["combat"]["chits"] = {k: (v if isinstance(v, int) else len(v))
                                       for k, v in view["combat"]["chits"].items()}
        view["placing"] = None
        return view

    def odds(self, figure: str, chit: str, target: str) -> dict[str, float] | None:
        """Hit chance of a proposed attack against each answer the other side could give; an unknown figure,
        chit or target, or a chit the figure cannot play, is refused with a notice (None), nothing changed."""
        try:
            chances = attack_odds(self.state, Attack(figure.upper(), chit, target.upper()))
        except ValueError as exc:
            self.refuse(str(exc))
            return None
        return {k: float(v) for k, v in chances.items()}

    def decision_odds(self) -> list[dict[str, Any]]:
        """The chances behind each legal combat decision of the person to move, with the typed action.

        Attacks: the hit chance against every answer the foe could give. Answers: the hit chance of the
        pending attack if answered so (only the target's own chit protects it; any other is read on None).
        """
        c = self.state.combat
        if c is None:
            return []
        crt = self.game.book.crt
        out: list[dict[str, Any]] = []
        for a in self.legal():
            if isinstance(a, Attack):
                out.append({"action": a, "kind": "attack",
                            "p_hit": {k: float(v) for k, v in attack_odds(self.state, a).items()}})
            elif isinstance(a, Answer) and c.attack is not None:
                column = answer_column(c.attack, a)
                out.append({"action": a, "kind": "answer", "column": column,
                            "p_hit": float(p_hit(crt[c.attack[1]][column]))})
        return out

    def hint(self) -> KFAction | None:
        """What the heuristic bot would play in the person's place (it sees only that side's view)."""
        player = self.person_to_move()
        if player is None:
            return None
        action = HeuristicBot(player, solo=False).choose(self.state, None)
        assert isinstance(action, KFAction)
        return action

    def combat_outlook(self, max_nodes: int = 20_000, games: int = 1000) -> CombatOdds | None:
        """Hits each side may take in the combat about to be fought, both sides played by the bots.

        Offered only before any chit is chosen, so it reveals nothing either side has picked."""
        if not outlook_open(self.state):
            self.refuse("the outlook of a combat is shown before its chits are chosen")
            return None
        return outlook_of(self.state, max_nodes=max_nodes, games=games, seed=self.seed)

    def combat_key(self) -> tuple[Any, ...] | None:
        """Which combat is being fought (turn, phase, members): an outlook worked out for another is stale."""
        c = self.state.combat
        return None if c is None else (self.game_number, self.state.turn, self.state.phase, tuple(c.members))

    def outlook_for(self, state: KungFuState, key: tuple[Any, ...], max_nodes: int = 6000, games: int = 400
                    ) -> CombatOdds:
        """The whole-combat outlook of the combat ``key`` from ``state`` (a snapshot a worker thread was handed):
        worked out once per combat and kept, however many pages (a table's) ask for it at once."""
        with self._outlook_lock:
            cached = self._outlook
            if cached is not None and cached[0] == (key, max_nodes, games):
                return cached[1]
            result = outlook_of(state, max_nodes, games, self.seed)
            self._outlook = ((key, max_nodes, games), result)
            return result

    def map_layout(self) -> dict[str, Any]:
        """The lair for drawing: every square with its kind, room, floor level and equipment."""
        board = self.game.board
        rooms = board.lair.rooms
        equipment = {sq: eid for eid, (sq, _) in board.lair.equipment.items()}
        squares = []
        for i, cell in enumerate(board.cells):
            squares.append({"square": board.names[i], "col": i % board.width, "row": i // board.width,
                            "kind": cell.kind, "room": rooms[cell.room].name if cell.room else None,
                            "level": cell.level, "entry": cell.entry or ("door" if i == board.front_door else None),
                            "equipment": equipment.get(i), "equipment_type": cell.equipment})
        return {"width": board.width, "height": board.height, "squares": squares}

    def prompt(self) -> str:
        s = self.state
        if s.is_terminal():
            text = f"Game over: {s.result.replace('_', ' ')}"
            if self.game.solo:
                t, cm = s.solo_points()
                text += f" (Terminator {t} points, Clone Master {cm})"
            return text + "."
        where = f"Turn {s.turn}, {PHASE_TITLES[s.phase]}"
        if self.handover is not None:
            return f"{where}: hand the screen to the {PLAYER_NAMES[self.handover]}."
        if s.current_player() == CHANCE:
            return f"{where}: the dice roll."
        who = PLAYER_NAMES[s.current_player()]
        return f"{where}: {who} to act" + (" (bot)." if self.seat(s.current_player()) == BOT else ".")

    def _turn_notice(self, done: str | None) -> Notice:
        s = self.state
        text = f"{done} {self.prompt()}".strip() if done else self.prompt()
        if s.is_terminal():
            grade = s.result or ""
            level = Level.SUCCESS if grade.startswith("terminator") else (
                Level.DANGER if grade.startswith("clone") else Level.INFO)
            return Notice(text, level)
        return Notice(text, Level.WARNING if self.handover is not None else Level.INFO)

    # --- saving (the path itself is GameSession's) -----------------------------------------------------
    def _save_extra(self) -> dict[str, Any]:
        return {"seats": [seat.kind for seat in self.seats]}

    def load(self, text: str | bytes) -> None:
        """Load a saved session, or a bare saved game (a position: the seats and the dice stay this session's);
        either goes through GameSession's one checked path: a bad file raises ``StateFormatError`` saying why
        and changes nothing. A loaded game at a bot's move plays on (unless paced)."""
        data = decode(text)
        if not (isinstance(data, dict) and "format" in data):  # a bare position: made a session file of this one's
            state = load_state(text, KungFuGame)
            assert isinstance(state, KungFuState)
            text = dump_session(self.FORMAT, self.FORMAT_VERSION, state, clone_rng(self.rng), self.seed,
                                [e for e in state.log if "roll" in e], **self._save_extra())
        super().load(text)
        if self.pending and not self.pace:
            trial = self.state.clone()
            self._play_on(trial)
            self._publish(trial, "Game loaded.")

    def _check_saved(self, saved: SavedSession) -> dict[str, Any]:
        seats = saved.extra.get("seats")
        if not isinstance(seats, list) or len(seats) != 2 or any(seat not in (PERSON, BOT) for seat in seats):
            raise StateFormatError("the seats are damaged")
        if set(saved.extra) != {"seats"}:
            raise StateFormatError("the file has fields a Kung Fu 2100 session does not write")
        state = saved.state
        assert isinstance(state, KungFuState)  # read with KungFuGame
        if saved.log != [e for e in state.log if "roll" in e]:
            raise StateFormatError("the log does not match the game's rolls")
        kinds = [PERSON if k == PERSON and not (i == 1 and state.game.solo) else BOT for i, k in enumerate(seats)]
        _check_playable(state, saved.rng, kinds)
        return {"seats": default_seats(*kinds)}

    def _restore(self, saved: SavedSession, extra: dict[str, Any]) -> None:
        state = saved.state
        assert isinstance(state, KungFuState)
        game = state.game
        assert isinstance(game, KungFuGame)
        self.scenario = game.scenario.key
        self.terminator_levels = {k: list(v) for k, v in game.terminator_levels.items()}
        self.seats = extra["seats"]
        self.bots = self._make_bots(game)
        self.selected = ""
        self.moves = []
        self.last_action = None
        self._combat_seen = None
        self._note_combat(state)
        self.viewer = self._first_viewer()


def way_text(way: Way) -> str:
    """A way in words: its squares, its cost against the points, the rooms it wakes."""
    wakes = ", ".join(way.wakes) if way.wakes else "no room"
    return (f"Way of {way.figure}: {' '.join(way.squares)} ({way.cost} of {way.points} movement points;"
            f" wakes {wakes})")


def outlook_open(state: KungFuState) -> bool:
    """Whether the whole-combat outlook may be shown: a combat before any chit is chosen."""
    c = state.combat
    return c is not None and c.step == "pick" and not c.chits


def outlook_of(state: KungFuState, max_nodes: int = 6000, games: int = 400, seed: int = 0) -> CombatOdds:
    """The whole-combat outlook of ``state`` (a snapshot: a page works it out on a thread)."""
    solo = state.game.solo
    return combat_odds(state, [HeuristicBot(0), HeuristicBot(1, solo=solo)], max_nodes=max_nodes, games=games,
                       seed=seed)


def _check_playable(state: KungFuState, rng: np.random.Generator, seats: list[str]) -> None:
    """A last check before a loaded game is swapped in: the side to move can move, and a bot seat can choose, on
    copies, so that a position the rules' checks let through never breaks the game after."""
    probe = state.clone()
    try:
        player = probe.current_player()
        if player == CHANCE:
            probe.chance_outcomes()
        elif player >= 0:
            if seats[player] == BOT:
                HeuristicBot(player, solo=state.game.solo).choose(probe, clone_rng(rng))
            else:
                probe.legal_actions()
    except (KeyError, IndexError, TypeError, ValueError, AssertionError, AttributeError) as exc:
        raise StateFormatError(f"the saved position cannot be played on ({type(exc).__name__})") from None


__all__ = ["SESSION_FORMAT", "SESSION_VERSION", "KungFuSession", "answer_column", "default_seats", "outlook_of",
           "outlook_open", "way_text"]
