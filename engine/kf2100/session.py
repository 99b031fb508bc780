"""A Kung Fu 2100 game being played: the model the dashboard (and a notebook) drives.

Rule options, seats and seed are parameters; commands are methods. Every command checks its input
first: a bad one raises ``IllegalActionError`` (a ``ValueError``) with the reason, puts the reason in
``status``, and changes nothing. After each command the bots and the dice play on until a human
seat must decide, so the session always rests on a human decision or the end of the game.

For a view that shows the bots' play step by step, ``pace=True`` stops before every bot or dice
action (set-up placements excepted: they are hidden anyway); ``step()`` then plays exactly one.
With both seats human (hot-seat) and ``hand_over=True``, ``handover`` names the side that must take the screen before it
may act (``take_screen``), and ``screen_view()`` shows only public information until it has.
"""

from __future__ import annotations

from typing import Any, NoReturn

import numpy as np
import param

from engine.core import CHANCE, Action, IllegalActionError, StateFormatError, load_state
from engine.core.rng import clone_rng, sample_outcome
from engine.core.serialize import decode, dump_session, load_session
from engine.kf2100.actions import (
    Activate,
    Answer,
    Attack,
    Chits,
    DoorAttack,
    End,
    Exit,
    KFAction,
    Lead,
    Lose,
    Move,
    Place,
    Wait,
)
from engine.kf2100.bots import HeuristicBot
from engine.kf2100.odds import CombatOdds, attack_odds, combat_odds, p_hit
from engine.kf2100.state import PHASE_TITLES, PLAYER_NAMES, KungFuGame, KungFuState

SEATS = ["human", "bot"]
SESSION_FORMAT = "tabletop-dojo/kf2100-session"
SESSION_VERSION = 1


class KungFuSession(param.Parameterized):
    """One game of Kung Fu 2100 with its seats, dice and log."""

    scenario: param.Selector[str] = param.Selector(objects=["basic", "advanced", "solo"], default="basic",
                                                   doc="Scenario")
    seed = param.Integer(default=0, bounds=(0, None), doc="Seed of the dice (and the bots' ties)")
    terminators: param.Selector[str] = param.Selector(objects=SEATS, default="human", doc="Who plays the Terminators")
    clone_master: param.Selector[str] = param.Selector(objects=SEATS, default="bot",
                                                       doc="Who plays the Clone Master (solo: the AI)")
    terminator_levels = param.Dict(default={}, doc="Optional point-buy: Terminator -> 5 levels adding up to 7")
    selected = param.String(default="", doc="The selected figure")
    status = param.String(default="", doc="What is happening, or why a command was refused")
    log = param.List(default=[], doc="Every d6 rolled, with the chance it had")
    version = param.Integer(default=0, doc="Bumped after every change, for views to watch")
    pace = param.Boolean(default=False, doc="Stop before each bot or dice action; step() plays one")
    hand_over = param.Boolean(default=False, doc="Hot-seat: a side must take the screen before it acts")
    viewer = param.Integer(default=-1, bounds=(-1, 1), doc="The side looking at the screen (-1: nobody yet)")
    last_action = param.String(default="", doc="The last action played, by anyone")

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.new_game()

    # --- game life ---------------------------------------------------------------------------------
    def new_game(self) -> None:
        """Start the chosen scenario afresh with the chosen seed and seats."""
        try:
            game = KungFuGame(self.scenario, terminator_levels=self.terminator_levels or None)
        except ValueError as exc:
            self.status = f"Refused: {exc}"
            raise
        self.game = game
        self.state: KungFuState = self.game.new_initial_state()
        self.rng = np.random.default_rng(self.seed)
        self.bots = [HeuristicBot(0), HeuristicBot(1, solo=self.game.solo)]
        self.selected = ""
        self.moves: list[tuple[str, str, str]] = []
        self.viewer = self._first_viewer()
        self._advance()

    @param.depends("scenario", "seed", "terminators", "clone_master", "terminator_levels", watch=True)
    def _restart(self) -> None:
        try:
            self.new_game()
        except ValueError:
            with param.parameterized.discard_events(self):  # keep the game and show the options it has
                self.terminator_levels = {k: list(v) for k, v in self.game.terminator_levels.items()}
            raise

    def seat(self, player: int) -> str:
        if player == 1 and self.game.solo:
            return "bot"
        return self.terminators if player == 0 else self.clone_master

    def hot_seat(self) -> bool:
        """Both sides played by humans on one screen."""
        return self.seat(0) == "human" and self.seat(1) == "human"

    def _first_viewer(self) -> int:
        if self.hot_seat():
            return -1
        return 1 if self.seat(0) == "bot" and self.seat(1) == "human" else 0

    @property
    def handover(self) -> int | None:
        """Hot-seat: the side that must take the screen before it may act (None: no hand-over due)."""
        p = self.human_player()
        return p if self.hand_over and self.hot_seat() and p is not None and p != self.viewer else None

    def take_screen(self, player: int) -> None:
        """Hot-seat: the side to act has the screen now; its secrets may be shown."""
        if self.handover != player:
            self._refuse(f"it is not the {PLAYER_NAMES[player]}' turn to take the screen"
                         if player in (0, 1) else f"no side {player}")
        self.viewer = player
        self._refresh()

    @property
    def pending(self) -> bool:
        """A bot or the dice are to act next (only ever True with ``pace``)."""
        s = self.state
        return not s.is_terminal() and (s.current_player() == CHANCE or self.seat(s.current_player()) == "bot")

    def step(self) -> str:
        """Play the next bot or dice action (with ``pace``); the text of what was played, or "" if none."""
        if not self.pending:
            return ""
        s = self.state
        p = s.current_player()
        action = sample_outcome(s.chance_outcomes(), self.rng) if p == CHANCE else self.bots[p].choose(s, self.rng)
        self._play(action)
        self._advance()
        return str(action)

    def auto_setup(self) -> None:
        """Place the human Clone Master's remaining counters as the bot would."""
        if self.state.phase != "setup" or self.human_player() != 1:
            self._refuse("only the Clone Master's set-up can be placed automatically")
        if self.handover is not None:
            self._refuse(f"hand the screen to the {PLAYER_NAMES[self.handover]} first")
        bot = HeuristicBot(1, solo=False)
        while self.state.phase == "setup" and self.state.current_player() == 1:
            self._play(bot.choose(self.state, self.rng))
        self.selected = ""
        self._advance()

    def _play(self, action: Action) -> None:
        """Apply a checked action and note it for the view (moves with where they came from)."""
        s = self.state
        if isinstance(action, Move):
            f = s.figs[action.figure]
            start = s.name(f.pos) if f.pos >= 0 else f.entry
            s.apply_action(action)
            self.moves = [*self.moves[-5:], (action.figure, start, action.square)]
        else:
            s.apply_action(action)
        self.last_action = str(action)

    @property
    def to_move(self) -> int:
        return self.state.current_player()

    def human_player(self) -> int | None:
        """The human seat that must decide now (None when the game is over)."""
        p = self.to_move
        return p if p >= 0 and self.seat(p) == "human" else None

    def _advance(self, limit: int = 200_000) -> None:
        for _ in range(limit):
            s = self.state
            if s.is_terminal():
                break
            p = s.current_player()
            if self.pace and s.phase != "setup" and (p == CHANCE or self.seat(p) == "bot"):
                break
            if p == CHANCE:
                self._play(sample_outcome(s.chance_outcomes(), self.rng))
            elif self.seat(p) == "bot":
                self._play(self.bots[p].choose(s, self.rng))
            else:
                break
        self._refresh()

    def _refresh(self, message: str | None = None) -> None:
        s = self.state
        self.log = [e for e in s.log if "roll" in e]
        if message is None:
            if s.is_terminal():
                message = f"Game over: {s.result.replace('_', ' ')}"
                if self.game.solo:
                    t, cm = s.solo_points()
                    message += f" (Terminator {t} points, Clone Master {cm})"
            elif self.handover is not None:
                message = (f"Turn {s.turn}, {PHASE_TITLES[s.phase]}: "
                           f"hand the screen to the {PLAYER_NAMES[self.handover]}")
            elif s.current_player() == CHANCE:
                message = f"Turn {s.turn}, {PHASE_TITLES[s.phase]}: the dice roll"
            else:
                message = f"Turn {s.turn}, {PHASE_TITLES[s.phase]}: {PLAYER_NAMES[s.current_player()]} to act"
        self.status = message
        self.version += 1

    # --- commands --------------------------------------------------------------------------------------
    def act(self, action: KFAction | str) -> None:
        """Play any legal action (or its text) for the human to move; refuse anything else unchanged."""
        player = self.human_player()
        if player is None:
            self._refuse("it is not a human player's turn" if not self.state.is_terminal() else "the game is over")
        if self.handover is not None:
            self._refuse(f"hand the screen to the {PLAYER_NAMES[self.handover]} first")
        try:
            parsed = self.state.parse_action(action) if isinstance(action, str) else action
            reason = self.state.illegal_reason(parsed)
        except IllegalActionError as exc:
            reason = str(exc)
        if reason is not None:
            self._refuse(reason)
        self.moves = []
        self._play(parsed)
        self.selected = ""
        self._advance()

    def _refuse(self, reason: str) -> NoReturn:
        self._refresh(f"Refused: {reason}")
        raise IllegalActionError(reason)

    def refuse(self, reason: str) -> None:
        """Refuse a view's input (a click that means nothing here): the reason goes to ``status``."""
        self._refuse(reason)

    def legal(self) -> list[str]:
        return [str(a) for a in self.state.legal_actions()] if self.human_player() is not None else []

    def select(self, figure: str) -> None:
        """Select one of the human's figures (to see where it can go)."""
        player = self.human_player()
        f = self.state.figs.get(figure.upper())
        if player is None or f is None or f.side != player:
            self._refuse(f"{figure} is not one of your figures")
        if self.handover is not None:
            self._refuse(f"hand the screen to the {PLAYER_NAMES[self.handover]} first")
        self.selected = f.id
        self._refresh(f"{f.id} selected")

    def reachable(self, figure: str | None = None) -> dict[str, int]:
        """Squares the selected figure may move to now, with their cost in movement points."""
        fid = (figure or self.selected).upper()
        if not fid or fid not in self.state.figs:
            return {}
        moves = {a.square for a in self.state.legal_actions() if isinstance(a, Move) and a.figure == fid}
        return {sq: c for sq, c in self.state.reachable(fid).items() if sq in moves}

    def move(self, square: str, figure: str | None = None) -> None:
        fid = (figure or self.selected).upper()
        if not fid:
            self._refuse("select a figure first")
        self.act(Move(fid, square.lower()))

    def place(self, figure: str, square: str) -> None:
        self.act(Place(figure.upper(), square.lower()))

    def wait_at(self, figure: str, entry: str) -> None:
        self.act(Wait(figure.upper(), entry))

    def exit(self, figure: str) -> None:
        self.act(Exit(figure.upper()))

    def activate(self, figure: str) -> None:
        self.act(Activate(figure.upper()))

    def end(self) -> None:
        self.act(End())

    def kick_door(self, figure: str, chit: str = "kick") -> None:
        self.act(DoorAttack(figure.upper(), chit))

    def choose_chits(self, figure: str, chits: list[str]) -> None:
        """Pick a figure's secret chits for this combat (any order)."""
        order = ("fist", "kick", "mist", "monkey", "weapon", "spikes", "gun")
        bad = [c for c in chits if c not in order]
        if bad:
            self._refuse(f"{bad[0]!r} is not a chit")
        self.act(Chits(figure.upper(), tuple(sorted(chits, key=order.index))))

    def lead(self, side: int) -> None:
        self.act(Lead(side))

    def attack(self, figure: str, chit: str, target: str) -> None:
        self.act(Attack(figure.upper(), chit, target.upper()))

    def answer(self, figure: str, chit: str) -> None:
        self.act(Answer(figure.upper(), chit))

    def lose(self, figure: str, technique: str) -> None:
        self.act(Lose(figure.upper(), technique))

    # --- what to show ----------------------------------------------------------------------------------
    def view(self, player: int | None = None) -> dict[str, Any]:
        """The board as ``player`` (default: the human to move, else the Terminators) may see it."""
        if player is None:
            player = self.human_player()
            if player is None:
                player = 0 if self.seat(0) == "human" or self.seat(1) != "human" else 1
        return self.state.player_view(player)

    def screen_view(self) -> dict[str, Any]:
        """What the screen may show now: the looking side's view, or only public information while a
        hot-seat hand-over is due (face-down counters anonymous, every unplayed chit a count)."""
        if self.handover is None and self.viewer in (0, 1):
            return self.state.player_view(self.viewer)
        view = self.state.player_view(0)
        if view["combat"] is not None:
            view["combat"]["chits"] = {k: (v if isinstance(v, int) else len(v))
                                       for k, v in view["combat"]["chits"].items()}
        view["placing"] = None
        return view

    def odds(self, figure: str, chit: str, target: str) -> dict[str, float]:
        """Hit chance of a proposed attack against each answer the other side could give; an unknown figure,
        chit or target, or a chit the figure cannot play, is refused (reason in ``status``), nothing changed."""
        try:
            chances = attack_odds(self.state, Attack(figure.upper(), chit, target.upper()))
        except ValueError as exc:
            self._refuse(str(exc))
        return {k: float(v) for k, v in chances.items()}

    def decision_odds(self) -> list[dict[str, Any]]:
        """The chances behind each legal combat decision of the human to move.

        Attacks: the hit chance against every answer the foe could give. Answers: the hit chance of the
        pending attack if answered so (only the target's own chit protects it; any other is read on None).
        """
        if self.human_player() is None or self.state.combat is None:
            return []
        c = self.state.combat
        crt = self.game.book.crt
        out: list[dict[str, Any]] = []
        for a in self.state.legal_actions():
            if isinstance(a, Attack):
                out.append({"action": str(a), "kind": "attack",
                            "p_hit": {k: float(v) for k, v in attack_odds(self.state, a).items()}})
            elif isinstance(a, Answer) and c.attack is not None:
                column = "none"
                if a.figure == c.attack[2]:
                    column = a.chit if a.chit in ("fist", "kick", "mist", "monkey") else "weapon"
                out.append({"action": str(a), "kind": "answer", "column": column,
                            "p_hit": float(p_hit(crt[c.attack[1]][column]))})
        return out

    def hint(self) -> str:
        """What the heuristic bot would play in the human's place (it sees only the human's view)."""
        player = self.human_player()
        if player is None:
            return ""
        return str(HeuristicBot(player, solo=False).choose(self.state, None))

    def combat_outlook(self, max_nodes: int = 20_000, games: int = 1000) -> CombatOdds:
        """Hits each side may take in the combat about to be fought, both sides played by the bots.

        Offered only before any chit is chosen, so it reveals nothing either side has picked.
        """
        c = self.state.combat
        if c is None or c.step != "pick" or c.chits:
            self._refuse("the outlook of a combat is shown before its chits are chosen")
        return combat_odds(self.state, self.bots, max_nodes=max_nodes, games=games, seed=self.seed)

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

    @staticmethod
    def _check_playable(state: KungFuState, rng: np.random.Generator, seats: list[str]) -> None:
        """A last check before a loaded game is swapped in: the side to move can move, and a bot seat can
        choose, on copies, so that a position the rules' checks let through never breaks the game after."""
        probe = state.clone()
        try:
            player = probe.current_player()
            if player == CHANCE:
                probe.chance_outcomes()
            elif player >= 0:
                bot = seats[player] == "bot" or (player == 1 and state.game.solo)
                if bot:
                    HeuristicBot(player, solo=state.game.solo).choose(probe, clone_rng(rng))
                else:
                    probe.legal_actions()
        except (KeyError, IndexError, TypeError, ValueError, AssertionError, AttributeError) as exc:
            raise StateFormatError(f"the saved position cannot be played on ({type(exc).__name__})") from None

    # --- files ----------------------------------------------------------------------------------------
    def save(self) -> str:
        """The session as JSON: the saved game (core envelope), its seed and seats, and the dice's generator,
        so that a loaded game goes on exactly as this one would."""
        return dump_session(SESSION_FORMAT, SESSION_VERSION, self.state, self.rng, self.seed, self.log,
                            seats=[self.terminators, self.clone_master])

    def load(self, text: str | bytes) -> None:
        """Load a saved session, or a bare saved game (a position: the seats and the dice stay this
        session's); a corrupt, tampered or forged file is refused with its reason and the current game kept:
        nothing of this session changes until the file has passed every check."""
        try:
            data = decode(text)
            if isinstance(data, dict) and "format" in data:
                saved = load_session(text, SESSION_FORMAT, SESSION_VERSION, KungFuGame, "saved Kung Fu 2100 game")
                seats = saved.extra.get("seats")
                if not isinstance(seats, list) or len(seats) != 2 or any(seat not in SEATS for seat in seats):
                    raise StateFormatError("the seats are damaged")
                if set(saved.extra) != {"seats"}:
                    raise StateFormatError("the file has fields a Kung Fu 2100 session does not write")
                state, rng, seed = saved.state, saved.rng, saved.seed
            else:
                state = load_state(text, KungFuGame)
                rng, seed, seats = self.rng, self.seed, [self.terminators, self.clone_master]
            assert isinstance(state, KungFuState)  # read with KungFuGame
            self._check_playable(state, rng, seats)
        except StateFormatError as exc:
            self._refuse(str(exc))
        assert isinstance(state, KungFuState)
        with param.parameterized.discard_events(self):
            self.scenario = state.game.scenario.key
            self.terminator_levels = {k: list(v) for k, v in state.game.terminator_levels.items()}
            self.seed, self.terminators, self.clone_master = seed, seats[0], seats[1]
        self.rng = rng
        self.game, self.state = state.game, state
        self.bots = [HeuristicBot(0), HeuristicBot(1, solo=self.game.solo)]
        self.selected = ""
        self.moves = []
        self.viewer = self._first_viewer()
        self._advance()
