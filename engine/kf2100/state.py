"""Kung Fu 2100 on the core protocol: turn sequence, hidden set-up, activation, the chit exchange.

Player 0 is the Terminator player, player 1 the Clone Master. Simultaneous secret chit choices are
played in turn, Terminators first, and ``player_view`` hides each side's unplayed chits (and the
identity of face-down counters) from the other. Every d6 is a chance node with six outcomes of 1/6.
"""

from __future__ import annotations

import itertools
import re
from fractions import Fraction
from typing import Annotated, Any, ClassVar, Literal

import msgspec

from engine.core import (
    CHANCE,
    TERMINAL,
    ChanceMode,
    Game,
    GameInfo,
    IllegalActionError,
    Information,
    State,
)
from engine.core.protocol import Action, malformed
from engine.core.serialize import check_schema, quote
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
from engine.kf2100.board import Board, board_of, standard_board
from engine.kf2100.data import CHIT_TECHNIQUES, GRADES, TECHNIQUES, WEAPON_CHITS, RuleBook, rulebook
from engine.kf2100.steps import STEP_OF_COMBAT, Step

TERMINATORS, CLONE_MASTER = 0, 1
PLAYER_NAMES = ("Terminators", "Clone Master")
HEART = TECHNIQUES.index("heart")
MONKEY = TECHNIQUES.index("monkey")
MELEE_CHITS = (*CHIT_TECHNIQUES, "weapon")
PHASES = ("setup", "entry", "move1", "combat1", "move2", "cm_move", "combat2", "recovery", "over")
PHASE_TITLES = {
    "setup": "Clone Master set-up", "entry": "Terminator set-up", "move1": "Terminator move I",
    "combat1": "Combat I", "move2": "Terminator move II", "cm_move": "Clone Master move",
    "combat2": "Combat II", "recovery": "Recovery", "over": "Game over",
}
STATUSES = ("unplaced", "waiting", "active", "unconscious", "dead", "escaped")
D6 = [(Roll(v), Fraction(1, 6)) for v in range(1, 7)]


class Figure:
    """One counter. Levels are current ability levels in TECHNIQUES order."""

    __slots__ = ("entry", "face_up", "id", "kind", "levels", "mp", "pos", "start", "status", "weapon")

    def __init__(self, fid: str, kind: str, levels: tuple[int, ...] = (0, 0, 0, 0, 0), weapon: str = "") -> None:
        self.id, self.kind, self.weapon = fid, kind, weapon
        self.start = tuple(levels)
        self.levels = list(levels)
        self.pos = -1
        self.status = "unplaced"
        self.face_up = False
        self.entry = ""
        self.mp = 0

    def copy(self) -> Figure:
        f = Figure.__new__(Figure)
        f.id, f.kind, f.weapon, f.start = self.id, self.kind, self.weapon, self.start
        f.levels, f.pos, f.status, f.face_up, f.entry, f.mp = list(self.levels), self.pos, self.status, \
            self.face_up, self.entry, self.mp
        return f

    @property
    def side(self) -> int:
        return TERMINATORS if self.kind == "terminator" else CLONE_MASTER

    @property
    def on_board(self) -> bool:
        return self.status in ("active", "unconscious")

    @property
    def conscious(self) -> bool:
        return self.status == "active"

    def combat_levels(self) -> int:
        return sum(self.levels[:HEART])

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "weapon": self.weapon, "start": list(self.start),
                "levels": list(self.levels), "pos": self.pos, "status": self.status, "face_up": self.face_up,
                "entry": self.entry, "mp": self.mp}


class Combat:
    """One combat of a combat phase and where its chit exchange stands."""

    __slots__ = ("answer", "attack", "chits", "members", "need", "pending_loss", "step", "to_pick", "turn",
                 "untrained")

    def __init__(self, members: list[str]) -> None:
        self.members = members            # figure ids of both sides and equipment ids, sorted
        self.to_pick: list[str] = []      # figures still to choose chits, Terminators first
        self.chits: dict[str, list[str]] = {}
        self.step = "pick"                # pick, lead, attack, answer, roll, loss, aim, untrained, done
        self.turn = TERMINATORS           # the side to play a fresh attack chit
        self.attack: tuple[str, str, str] | None = None   # figure, chit, target
        self.answer: tuple[str, str] | None = None        # figure, chit (None: answered on None)
        self.need = 0
        self.pending_loss = ""            # the figure that must choose a level to lose
        self.untrained: list[tuple[str, int]] = []        # (target, number of untrained attackers)

    def copy(self) -> Combat:
        c = Combat.__new__(Combat)
        c.members, c.to_pick = list(self.members), list(self.to_pick)
        c.chits = {k: list(v) for k, v in self.chits.items()}
        c.step, c.turn, c.attack, c.answer, c.need = self.step, self.turn, self.attack, self.answer, self.need
        c.pending_loss, c.untrained = self.pending_loss, list(self.untrained)
        return c

    def to_dict(self) -> dict[str, Any]:
        return {"members": list(self.members), "to_pick": list(self.to_pick),
                "chits": {k: list(v) for k, v in self.chits.items()}, "step": self.step, "turn": self.turn,
                "attack": list(self.attack) if self.attack else None,
                "answer": list(self.answer) if self.answer else None, "need": self.need,
                "pending_loss": self.pending_loss, "untrained": [list(u) for u in self.untrained]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Combat:
        c = cls([str(m) for m in d["members"]])
        c.to_pick = [str(x) for x in d["to_pick"]]
        c.chits = {str(k): [str(x) for x in v] for k, v in d["chits"].items()}
        c.step, c.turn, c.need, c.pending_loss = str(d["step"]), int(d["turn"]), int(d["need"]), str(d["pending_loss"])
        c.attack = tuple(str(x) for x in d["attack"]) if d["attack"] else None  # type: ignore[assignment]
        c.answer = tuple(str(x) for x in d["answer"]) if d["answer"] else None  # type: ignore[assignment]
        c.untrained = [(str(t), int(n)) for t, n in d["untrained"]]
        if c.step not in ("pick", "lead", "attack", "answer", "roll", "loss", "aim", "untrained", "done"):
            raise ValueError(f"unknown combat step {c.step!r}")
        return c

# --- the saved state's schema (msgspec): every field's type and range, before the rules look at its meaning ---
_ID = r"(?:CM|[A-Z]{1,2}[0-9]{1,2})"
_Id = Annotated[str, msgspec.Meta(pattern=f"^{_ID}$")]
_IdOrNone = Annotated[str, msgspec.Meta(pattern=f"^(?:{_ID})?$")]
_Chit = Literal[CHIT_TECHNIQUES + WEAPON_CHITS]
_Entry = Literal["door", "disposal", "loo"]
_Small = Annotated[int, msgspec.Meta(ge=0, le=20)]
_Level = Annotated[int, msgspec.Meta(ge=0, le=9)]
_Square = Annotated[str, msgspec.Meta(pattern="^[a-z][0-9]{1,2}$")]
_Turn = Annotated[int, msgspec.Meta(ge=1, le=99)]
_Phase = Literal[PHASES]
_CHANCES = tuple(str(Fraction(k, 6)) for k in range(7))
COMBAT_STEPS = ("pick", "lead", "attack", "answer", "roll", "loss", "aim", "untrained", "done")


class _FigureFile(msgspec.Struct, forbid_unknown_fields=True):
    id: _Id
    kind: str
    weapon: str
    start: Annotated[list[_Level], msgspec.Meta(max_length=len(TECHNIQUES))]
    levels: Annotated[list[_Level], msgspec.Meta(max_length=len(TECHNIQUES))]
    pos: Annotated[int, msgspec.Meta(ge=-1, le=9999)]
    status: Literal[STATUSES]
    face_up: bool
    entry: Literal["", "door", "disposal", "loo"]
    mp: _Small


class _CombatFile(msgspec.Struct, forbid_unknown_fields=True):
    members: list[_Id]
    to_pick: list[_Id]
    chits: dict[_Id, Annotated[list[_Chit], msgspec.Meta(max_length=20)]]
    step: Literal[COMBAT_STEPS]
    turn: Literal[0, 1]
    attack: tuple[_Id, _Chit, _Id] | None
    answer: tuple[_Id, _Chit] | None
    need: Annotated[int, msgspec.Meta(ge=0, le=6)]
    pending_loss: _IdOrNone
    untrained: list[tuple[_Id, Annotated[int, msgspec.Meta(ge=1, le=20)]]]


class _StateFile(msgspec.Struct, forbid_unknown_fields=True):
    turn: _Turn
    phase: _Phase
    door_broken: bool
    bonus_mp: _Small
    figures: Annotated[list[_FigureFile], msgspec.Meta(max_length=99)]
    equipment: dict[_Id, bool]
    entered: dict[_Entry, _Small]
    activated: Annotated[list[str], msgspec.Meta(max_length=20)]
    door_step: bool
    door_tries: dict[_Id, _Small]
    combats: Annotated[list[list[_Id]], msgspec.Meta(max_length=99)]
    cm_window: bool
    opened: bool
    combat: _CombatFile | None
    queue: Annotated[list[Annotated[str, msgspec.Meta(pattern=f"^(?:door:{_ID}:(?:fist|kick)|{_ID})$")]],
                     msgspec.Meta(max_length=99)]
    deal_slots: Annotated[list[_Square], msgspec.Meta(max_length=99)]
    constabulary_in: Annotated[int, msgspec.Meta(ge=0, le=99)]
    result: Literal[("", *GRADES)]
    log: list[dict[str, Any]]


class _RulesFile(msgspec.Struct, forbid_unknown_fields=True):
    scenario: Annotated[str, msgspec.Meta(max_length=20)] = "basic"
    terminator_levels: dict[_Id, Annotated[list[_Level], msgspec.Meta(max_length=len(TECHNIQUES))]] | None = None


class _EventEntry(msgspec.Struct, forbid_unknown_fields=True):
    turn: _Turn
    phase: _Phase
    event: Annotated[str, msgspec.Meta(max_length=120)]


class _RollEntry(msgspec.Struct, forbid_unknown_fields=True):
    turn: _Turn
    phase: _Phase
    roll: Annotated[int, msgspec.Meta(ge=1, le=6)]
    need: _Small
    what: Annotated[str, msgspec.Meta(max_length=120)]
    p: Literal[_CHANCES]
    result: Literal["door broken", "recovers a level", "hit", "miss"]
    target: _Id | msgspec.UnsetType = msgspec.UNSET
    target_side: Literal[0, 1] | msgspec.UnsetType = msgspec.UNSET


def _log_patterns(board: Board) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The log lines the rules write (``_event`` and ``_roll_log``), as patterns: a saved log holds nothing else."""
    fig, tech = _ID, "|".join(TECHNIQUES)
    rooms = "|".join(re.escape(r.name) for r in board.lair.rooms.values())
    grades = "|".join(g.replace("_", " ") for g in GRADES)
    events = "|".join([
        f"{fig} destroyed", f"{fig} loses a level of (?:{tech})", f"{fig} is unconscious", f"{fig} (?:killed|removed)",
        f"{fig} escapes through the (?:door|disposal|loo)", f"{fig} enters by the (?:door|disposal|loo)",
        f"{fig} regains consciousness", f"{fig} arrives at the front door", f"game over: (?:{grades})",
        f"{fig} activated \\((?:{fig} entered the (?:{rooms})|nearest the Terminator|by the Clone Master)\\)",
    ])
    chit = "|".join((*CHIT_TECHNIQUES, *WEAPON_CHITS))
    rolls = "|".join([
        f"{fig} (?:fist|kick)s the armored door", f"{fig} Mountain Heart recovery",
        f"untrained attack by [0-9]{{1,2}} on {fig}",
        f"{fig} (?:{chit}) on {fig} \\(answer (?:none|{fig} (?:{chit}))\\)",
    ])
    return re.compile(f"(?:{events})"), re.compile(f"(?:{rolls})")



def chit_multisets(options: dict[str, int], n: int) -> list[tuple[str, ...]]:
    """Every way to pick ``n`` chits (order ignored) with at most ``options[c]`` of chit ``c``."""
    pool = [c for c, k in options.items() for _ in range(k)]
    return sorted(set(itertools.combinations(pool, n)))


class KungFuState(State):
    __slots__ = ("_legal", "activated", "bonus_mp", "cm_window", "combat", "combats", "constabulary_in", "deal_slots",
                 "door_broken", "door_step", "door_tries", "entered", "equipment", "figs", "log", "opened", "phase",
                 "queue", "result", "turn")

    game: KungFuGame

    def __init__(self, game: KungFuGame) -> None:
        super().__init__(game)
        self.turn = 1
        self.phase = "setup"
        self.figs: dict[str, Figure] = {}
        self.equipment: dict[str, bool] = dict.fromkeys(game.board.lair.equipment, True)
        self.door_broken = False
        self.entered: dict[str, int] = {}       # entry -> Terminators through it this move phase
        self.activated: list[str] = []          # activation classes used this Clone Master move
        self.bonus_mp = 0                       # > 0: the Clone Master's bonus move is pending
        self.door_step = False
        self.cm_window = False                  # the Clone Master's chance to reveal himself before a phase
        self.opened = True                      # this combat phase's door step and combats have begun
        self.door_tries: dict[str, int] = {}    # chits spent on the door this combat phase
        self.combats: list[list[str]] = []      # combats of this phase still to fight
        self.combat: Combat | None = None
        self.queue: list[str] = []              # set-up order, or figures still to roll for recovery
        self.deal_slots: list[int] = []         # solo: squares still to deal a counter to
        self.constabulary_in = 0
        self.result = ""
        self.log: list[dict[str, Any]] = []
        self._legal: list[Action] | None = None

    # --- helpers --------------------------------------------------------------------------------
    @property
    def board(self) -> Board:
        return self.game.board

    def name(self, sq: int) -> str:
        return self.board.names[sq]

    def at(self, sq: int) -> Figure | None:
        for f in self.figs.values():
            if f.pos == sq and f.status in ("active", "unconscious"):
                return f
        return None

    def occupied(self) -> set[int]:
        return {f.pos for f in self.figs.values() if f.on_board}

    def terminators(self) -> list[Figure]:
        return [f for f in self.figs.values() if f.kind == "terminator"]

    def utype(self, f: Figure):
        return self.game.book.units.types[f.kind]

    def can_monkey(self, f: Figure) -> bool:
        return f.kind in ("terminator", "jelly") and f.levels[MONKEY] > 0

    def effective(self, f: Figure) -> bool:
        """Conscious and with a combat level left (else only untrained attacks, or running)."""
        return f.conscious and f.combat_levels() > 0

    def rules(self) -> dict[str, Any]:
        return self.game.book.units.rules

    def scenario(self):
        return self.game.scenario

    # --- whose turn -------------------------------------------------------------------------------
    @property
    def step(self) -> Step:
        """The one thing the game waits for now, from the phase, the flags and the combat's step."""
        if self.phase == "over":
            return Step.OVER
        if self.bonus_mp > 0:
            return Step.BONUS_MOVE
        if self.cm_window:
            return Step.CM_WINDOW
        if self.phase == "setup":
            return Step.ROLL if self.deal_slots else Step.SETUP
        if self.phase == "entry":
            return Step.ENTRY
        if self.phase in ("move1", "move2", "cm_move"):
            return Step.MOVE
        if self.phase == "recovery":
            return Step.ROLL
        if self.door_step:
            return Step.ROLL if self.queue and self.queue[0].startswith("door:") else Step.DOOR
        c = self.combat
        if c is None or c.step == "done":
            raise AssertionError(f"no step in {self.phase} with no combat being fought")
        return STEP_OF_COMBAT[c.step]

    def current_player(self) -> int:
        if self.phase == "over":
            return TERMINAL
        if self.bonus_mp > 0 or self.cm_window:
            return CLONE_MASTER
        if self.phase == "setup":
            return CHANCE if self.deal_slots else CLONE_MASTER
        if self.phase == "entry":
            return TERMINATORS
        if self.phase in ("move1", "move2"):
            return TERMINATORS
        if self.phase == "cm_move":
            return CLONE_MASTER
        if self.phase == "recovery":
            return CHANCE
        # combat phases
        if self.door_step:
            return CHANCE if self.queue and self.queue[0].startswith("door:") else TERMINATORS
        c = self.combat
        assert c is not None
        if c.step == "pick":
            return self.figs[c.to_pick[0]].side
        if c.step == "lead":
            return TERMINATORS
        if c.step == "attack":
            return c.turn
        if c.step == "answer":
            return 1 - c.turn
        if c.step == "aim":
            return 1 - c.turn
        if c.step == "loss":
            return self.figs[c.pending_loss].side
        return CHANCE  # roll, untrained

    # --- legal actions ------------------------------------------------------------------------------
    def legal_actions(self) -> list[Action]:
        if self._legal is None:
            self._legal = self._compute_legal()
        return list(self._legal)

    def chance_outcomes(self) -> list[tuple[Action, Fraction]]:
        if self.current_player() != CHANCE:
            raise IllegalActionError(f"{self.describe_player()} is to move, not chance")
        if self.phase == "setup":
            return self._deal_outcomes()
        return list(D6)

    def _compute_legal(self) -> list[Action]:
        p = self.current_player()
        if p == TERMINAL:
            return []
        if p == CHANCE:
            return [a for a, _ in self.chance_outcomes()]
        if self.bonus_mp > 0:
            cm = self.figs["CM"]
            return [*self._moves(cm, self.bonus_mp), End()]
        if self.cm_window:
            return [Activate("CM"), End()]
        if self.phase == "setup":
            return [Place(self.queue[0], self.name(sq)) for sq in self.setup_squares(self.figs[self.queue[0]])]
        if self.phase == "entry":
            fid = self.queue[0]
            return [Wait(fid, e) for e in ("door", "disposal", "loo")]
        if self.phase in ("move1", "move2"):
            out: list[Action] = []
            taken = self.occupied()
            for f in self.terminators():
                out.extend(self._moves(f, f.mp, taken))
                if self._may_exit(f):
                    out.append(Exit(f.id))
            return [*out, End()]
        if self.phase == "cm_move":
            out = []
            if not self.game.solo:
                out.extend(Activate(fid) for fid in self.activatable())
            taken = self.occupied()
            for f in self.figs.values():
                if f.side == CLONE_MASTER and f.mp > 0:
                    out.extend(self._moves(f, f.mp, taken))
            return [*out, End()]
        if self.door_step:
            out = [DoorAttack(f.id, chit) for f in self.door_attackers() for chit in ("fist", "kick")
                   if f.levels[TECHNIQUES.index(chit)] > 0]
            return [*out, End()]
        c = self.combat
        assert c is not None
        if c.step == "pick":
            f = self.figs[c.to_pick[0]]
            return [Chits(f.id, m) for m in self.chit_choices(f)]
        if c.step == "lead":
            return [Lead(TERMINATORS), Lead(CLONE_MASTER)]
        if c.step == "attack":
            return self._attacks(c, c.turn)
        if c.step == "answer":
            return [Answer(fid, chit) for fid in c.members if fid in c.chits and self.figs[fid].side != c.turn
                    for chit in sorted(set(c.chits[fid]))]
        if c.step == "aim":
            assert c.answer is not None
            fid, chit = c.answer
            return [Attack(fid, chit, t) for t in self.targets(c, self.figs[fid], chit)]
        if c.step == "loss":
            f = self.figs[c.pending_loss]
            return [Lose(f.id, t) for i, t in enumerate(TECHNIQUES) if f.levels[i] > 0]
        raise AssertionError(f"no decision at combat step {c.step}")

    # --- set-up -----------------------------------------------------------------------------------------
    def setup_squares(self, f: Figure) -> list[int]:
        """Where a counter may start: its rooms' initials allow it, empty, never next to the armored door."""
        board = self.board
        taken = self.occupied()
        door_adjacent = set(board.neighbours[board.front_door])
        letter = {"servant": "S", "unarmed_technician": "T", "armed_technician": "T", "jelly": "J"}.get(f.kind)
        out = []
        for sq, cell in enumerate(board.cells):
            if cell.kind != "floor" or sq in taken or sq in door_adjacent:
                continue
            if letter is not None:
                if cell.room is None or letter not in board.lair.rooms[cell.room].initials:
                    continue
            out.append(sq)
        return out

    def _deal_outcomes(self) -> list[tuple[Action, Fraction]]:
        pool = [f for f in self.figs.values() if f.status == "unplaced" and f.pos < 0 and f.kind != "constabulary"]
        counts: dict[str, int] = {}
        for f in pool:
            key = f.id if f.kind == "jelly" else f.kind
            counts[key] = counts.get(key, 0) + 1
        total = len(pool)
        return [(Deal(k), Fraction(n, total)) for k, n in sorted(counts.items())]

    # --- movement ----------------------------------------------------------------------------------------
    def move_tree(self, f: Figure, points: int) -> dict[int, tuple[int, int]]:
        """Cheapest paths for ``f`` with ``points`` to spend (from outside when waiting at an entry)."""
        board = self.board
        if points <= 0:
            return {}
        door_open = self.door_broken or f.kind == "constabulary"
        if f.status == "waiting":
            if not self._entry_open(f):
                return {}
            start = board.entry_squares[f.entry]
            tree = board.reachable(start, points, self.can_monkey(f), door_open, start_cost=1)
        elif f.status == "active" and (f.side == TERMINATORS or f.face_up):
            tree = board.reachable(f.pos, points, self.can_monkey(f), door_open)
        else:
            return {}
        return tree

    def reachable(self, fid: str) -> dict[str, int]:
        """Squares the figure may end its move on now, with their movement cost."""
        f = self.figs[fid]
        points = self.bonus_mp if (self.bonus_mp and fid == "CM") else f.mp
        taken = self.occupied()
        return {self.name(sq): cost for sq, (cost, _) in sorted(self.move_tree(f, points).items())
                if sq not in taken and self.board.is_floor(sq)}

    def _moves(self, f: Figure, points: int, taken: set[int] | None = None) -> list[Action]:
        if points <= 0 or f.status not in ("active", "waiting"):
            return []
        if f.side == CLONE_MASTER and not f.face_up:
            return []
        taken = self.occupied() if taken is None else taken
        return [Move(f.id, self.name(sq)) for sq in sorted(self.move_tree(f, points))
                if sq not in taken and self.board.is_floor(sq)]

    def _entry_open(self, f: Figure) -> bool:
        rules = self.rules()
        if f.kind == "constabulary":
            return True
        if f.entry == "door":
            return self.door_broken
        limit = rules["disposal_per_phase"] if f.entry == "disposal" else rules["loo_per_phase"]
        return self.entered.get(f.entry, 0) < limit

    def _exit_entry(self, f: Figure) -> str | None:
        """The way out from where ``f`` stands: the disposal or loo square, or next to the broken door."""
        for entry, sq in self.board.entries.items():
            if f.pos == sq:
                return entry
        if self.door_broken and f.pos >= 0 and self.board.adjacent(f.pos, self.board.front_door):
            return "door"
        return None

    def _may_exit(self, f: Figure) -> bool:
        if f.kind != "terminator" or f.status != "active" or f.mp < 1:
            return False
        entry = self._exit_entry(f)
        if entry is None:
            return False
        if entry != "door":
            limit = self.rules()["disposal_per_phase"] if entry == "disposal" else self.rules()["loo_per_phase"]
            if self.entered.get(entry, 0) >= limit:
                return False
        if self.game.solo:
            return self.solo_may_escape(f)
        return True

    def solo_may_escape(self, f: Figure) -> bool:
        solo = self.scenario().solo
        total = sum(f.levels)
        return (0 < total <= solo["escape_levels_at_most"] or self.turn >= solo["escape_from_turn"]
                or (self.figs["CM"].status == "dead" and not any(self.equipment.values())))

    # --- activation -------------------------------------------------------------------------------------
    def activatable(self) -> list[str]:
        """Face-down counters the Clone Master may turn up now (one Jelly, Servant, Technician a move)."""
        used = set(self.activated)
        out = []
        for f in self.figs.values():
            if f.status != "active" or f.face_up or f.side != CLONE_MASTER:
                continue
            cls = self.utype(f).activation
            if cls == "clone_master" or (cls and cls not in used):
                out.append(f.id)
        return out

    def _activate(self, f: Figure, why: str) -> None:
        f.face_up = True
        self.log.append({"turn": self.turn, "phase": self.phase, "event": f"{f.id} activated ({why})"})
        if f.kind == "clone_master":
            self.bonus_mp = self.utype(f).bonus_move

    def _enter_rooms(self, f: Figure, path: list[int]) -> None:
        rooms = {self.board.room(sq) for sq in path} - {None}
        for g in list(self.figs.values()):
            if g.side == CLONE_MASTER and g.status == "active" and not g.face_up and g.pos >= 0 \
                    and (room := self.board.room(g.pos)) is not None and room in rooms:
                self._activate(g, f"{f.id} entered the {self.board.lair.rooms[room].name}")

    def _solo_activation(self) -> None:
        """Solo: the two face-down counters nearest the Terminator are activated."""
        t = next((f for f in self.terminators() if f.on_board), None)
        if t is None:
            return
        dist = self.board.walking_distance(t.pos)
        hidden = [f for f in self.figs.values() if f.side == CLONE_MASTER and f.status == "active" and not f.face_up]
        hidden.sort(key=lambda f: (dist.get(f.pos, 999), f.pos))
        for f in hidden[:2]:
            self._activate(f, "nearest the Terminator")

    # --- combat formation ----------------------------------------------------------------------------------
    def _weapon(self, f: Figure):
        return self.game.book.units.weapons.get(f.weapon) if f.weapon else None

    def can_strike(self, f: Figure, sq: int) -> bool:
        """Whether ``f`` could strike something on ``sq`` this combat phase (hand to hand or missile)."""
        if not f.conscious or (f.side == CLONE_MASTER and not f.face_up) or f.pos < 0:
            return False
        if self.board.adjacent(f.pos, sq):
            return True
        w = self._weapon(f)
        if w is not None and w.kind == "missile":
            return self.board.in_missile_range(f.pos, sq, w.range_orthogonal, w.range_diagonal,
                                               self.utype(f).unlimited_range)
        return False

    def in_reach(self, f: Figure, chit: str, sq: int) -> bool:
        if chit in MELEE_CHITS:
            return self.board.adjacent(f.pos, sq)
        w = self._weapon(f)
        assert w is not None
        return self.board.in_missile_range(f.pos, sq, w.range_orthogonal, w.range_diagonal,
                                           self.utype(f).unlimited_range)

    def form_combats(self) -> list[list[str]]:
        """The seed's rule: Terminators who can strike, or be struck by, the same foe fight together."""
        terms = [f for f in self.terminators() if f.on_board]
        foes = [f for f in self.figs.values() if f.side == CLONE_MASTER and f.on_board and f.face_up]
        edges: dict[str, set[str]] = {}

        def link(a: str, b: str) -> None:
            edges.setdefault(a, set()).add(b)
            edges.setdefault(b, set()).add(a)

        for t in terms:
            for e in foes:
                if self.can_strike(t, e.pos) or self.can_strike(e, t.pos):
                    link(t.id, e.id)
            if t.conscious:
                for eid, alive in self.equipment.items():
                    if alive and self.board.adjacent(t.pos, self.board.lair.equipment[eid][0]):
                        link(t.id, eid)
        seen: set[str] = set()
        combats = []
        for t in terms:
            if t.id in seen or t.id not in edges:
                continue
            group, stack = set(), [t.id]
            while stack:
                x = stack.pop()
                if x in group:
                    continue
                group.add(x)
                stack.extend(edges.get(x, ()))
            seen |= group
            combats.append(sorted(group, key=self._member_key))
        return combats

    def _member_key(self, x: str) -> tuple[int, str]:
        if x.startswith("E"):
            return (2, x)
        return (self.figs[x].side, f"{len(x):02d}{x}")

    def chit_options(self, f: Figure) -> tuple[dict[str, int], int]:
        """Chits ``f`` may pick (at most its level of each technique) and how many it picks."""
        options = {t: f.levels[i] for i, t in enumerate(CHIT_TECHNIQUES) if f.levels[i] > 0}
        w = self._weapon(f)
        if w is not None:
            options[w.key] = w.max_chits
        n = self.utype(f).chits - self.door_tries.get(f.id, 0)
        return options, max(0, min(n, sum(options.values())))

    def chit_choices(self, f: Figure) -> list[tuple[str, ...]]:
        options, n = self.chit_options(f)
        return chit_multisets(options, n)

    def _start_combat(self) -> None:
        members = [x for x in self.combats.pop(0)
                   if (self.equipment[x] if x.startswith("E") else self.figs[x].on_board)]
        sides = {self.figs[x].side if not x.startswith("E") else CLONE_MASTER for x in members}
        if sides != {TERMINATORS, CLONE_MASTER}:
            return  # someone fell in an earlier combat of the phase
        c = Combat(members)
        for fid in members:
            if fid.startswith("E"):
                continue
            f = self.figs[fid]
            if f.conscious and self.chit_options(f)[1] > 0:
                c.to_pick.append(fid)
        self.combat = c
        if not c.to_pick:
            self._end_exchange()

    def targets(self, c: Combat, f: Figure, chit: str) -> list[str]:
        """Enemies in this combat that ``f``'s chit can reach."""
        if not f.conscious:
            return []
        out = []
        for x in c.members:
            if x.startswith("E"):
                sq = self.board.lair.equipment[x][0]
                if f.side == TERMINATORS and self.equipment[x] and self.in_reach(f, chit, sq):
                    out.append(x)
                continue
            g = self.figs[x]
            if g.side != f.side and g.on_board and self.in_reach(f, chit, g.pos):
                out.append(x)
        return out

    def _attacks(self, c: Combat, side: int) -> list[Action]:
        out: list[Action] = []
        for fid in c.members:
            if fid in c.chits and self.figs[fid].side == side:
                f = self.figs[fid]
                for chit in sorted(set(c.chits[fid])):
                    out.extend(Attack(fid, chit, t) for t in self.targets(c, f, chit))
        return out

    def _has_chits(self, c: Combat, side: int) -> bool:
        return any(c.chits.get(fid) for fid in c.members if not fid.startswith("E") and self.figs[fid].side == side)

    def _next_attack(self, c: Combat, side: int) -> None:
        """Hand the next fresh attack to ``side`` if it can play one, else to the other, else stop."""
        for s in (side, 1 - side):
            if self._attacks(c, s):
                c.turn, c.step, c.attack, c.answer = s, "attack", None, None
                return
        self._end_exchange()

    def _end_exchange(self) -> None:
        c = self.combat
        assert c is not None
        c.chits = {}
        c.attack = c.answer = None
        c.untrained = []
        for x in c.members:
            if x.startswith("E"):
                continue
            target = self.figs[x]
            if not target.on_board:
                continue
            n = sum(1 for g in self.figs.values() if g.side != target.side and self._untrained(g)
                    and self.board.adjacent(g.pos, target.pos))
            if n:
                c.untrained.append((x, n))
        c.step = "untrained"
        self._settle()

    def _untrained(self, g: Figure) -> bool:
        if not g.conscious or g.pos < 0 or (g.side == CLONE_MASTER and not g.face_up):
            return False
        return bool(self.utype(g).untrained) or (g.kind in ("terminator", "jelly") and g.combat_levels() == 0)

    # --- hits -----------------------------------------------------------------------------------------------
    def _hit(self, target: str) -> None:
        c = self.combat
        assert c is not None
        if target.startswith("E"):
            self.equipment[target] = False
            self._event(f"{target} destroyed")
            return
        f = self.figs[target]
        if f.status == "unconscious" or f.kind not in ("terminator", "jelly"):
            self._kill(f)
            return
        options = [i for i in range(len(TECHNIQUES)) if f.levels[i] > 0]
        if len(options) == 1:
            self._lose(f, options[0])
        else:
            c.pending_loss = f.id

    def _lose(self, f: Figure, i: int) -> None:
        f.levels[i] -= 1
        self._event(f"{f.id} loses a level of {TECHNIQUES[i]}")
        c = self.combat
        if sum(f.levels) == 0:
            if f.kind == "terminator" or f.start[HEART] > 0:
                f.status = "unconscious"
                self._event(f"{f.id} is unconscious")
            else:
                self._kill(f)
        if c is not None and f.id in c.chits:
            if not f.conscious:
                c.chits.pop(f.id)
            else:
                kept: list[str] = []
                counts: dict[str, int] = {}
                for chit in c.chits[f.id]:
                    counts[chit] = counts.get(chit, 0) + 1
                    if chit not in CHIT_TECHNIQUES or counts[chit] <= f.levels[TECHNIQUES.index(chit)]:
                        kept.append(chit)
                c.chits[f.id] = kept

    def _kill(self, f: Figure) -> None:
        f.status = "dead"
        f.pos = -1
        self._event(f"{f.id} {'killed' if f.kind in ('terminator', 'jelly', 'clone_master') else 'removed'}")
        if self.combat is not None:
            self.combat.chits.pop(f.id, None)

    def _event(self, text: str) -> None:
        self.log.append({"turn": self.turn, "phase": self.phase, "event": text})

    def _roll_log(self, what: str, value: int, need: int, success: str, target: str = "") -> None:
        """Every d6 with the chance it had of succeeding (the target, if any, for counting hits)."""
        p = Fraction(max(0, min(need, 6)), 6)
        entry = {"turn": self.turn, "phase": self.phase, "roll": value, "need": need, "what": what,
                 "p": str(p), "result": success if value <= need else "miss"}
        if target:
            entry["target"] = target
            entry["target_side"] = CLONE_MASTER if target.startswith("E") else self.figs[target].side
        self.log.append(entry)

    # --- applying ----------------------------------------------------------------------------------------
    def illegal_reason(self, action: Action) -> str | None:
        reason = malformed(action)
        if reason is not None:
            return reason
        if not isinstance(action, KFAction):
            return f"a {type(action).__name__} is not a Kung Fu 2100 move"
        if isinstance(action, Lead) and action.side not in (TERMINATORS, CLONE_MASTER):
            return f"the side to lead is 0 (Terminators) or 1 (Clone Master), not {action.side}"
        if isinstance(action, Roll) and not 1 <= action.value <= 6:
            return f"a d6 shows 1 to 6, not {action.value}"
        player = self.current_player()
        if player == TERMINAL:
            return "the game is over"
        if action in self.legal_actions():
            return None
        return self._explain(action, player)

    def _explain(self, a: Action, player: int) -> str:
        """Why an action is refused, in the game's words."""
        who = PLAYER_NAMES[player] if player >= 0 else "chance"
        fid = getattr(a, "figure", None)
        if player == CHANCE:
            return f"{a} is not a possible roll here"
        if fid is not None and fid not in self.figs and not str(fid).startswith("E"):
            return f"there is no figure {fid}"
        f = self.figs.get(fid) if fid else None
        if f is not None and f.side != player:
            return f"{fid} belongs to the {PLAYER_NAMES[f.side]}; it is the {who}'s turn"
        if isinstance(a, Move) and f is not None:
            if f.side == CLONE_MASTER and not f.face_up:
                return f"{fid} is face down: it must be activated before it moves"
            try:
                sq = self.board.square(a.square)
            except ValueError as exc:
                return str(exc)
            if not self.board.is_floor(sq):
                kind = self.board.cells[sq].kind
                what = {"wall": "a wall", "equipment": "vital equipment"}.get(kind, "the armored door")
                return f"{a.square} is {what}: no figure may stand there"
            other = self.at(sq)
            if other is not None and other is not f:
                who_there = other.id if other.face_up or other.side == player else "a counter"
                return (f"{a.square} is occupied by {who_there}:"
                        " figures may pass through each other but never end stacked")
            points = self.bonus_mp if (self.bonus_mp and fid == "CM") else f.mp
            tree = self.move_tree(f, 99)
            if sq not in tree:
                return f"{fid} cannot get to {a.square} (walls, equipment or the closed door are in the way)"
            return f"{fid} needs {tree[sq][0]} movement points to reach {a.square} and has {points}"
        if isinstance(a, Chits) and f is not None:
            options, n = self.chit_options(f)
            for chit in set(a.chits):
                if a.chits.count(chit) > options.get(chit, 0):
                    return f"{fid} has no {chit} chit to pick (levels or weapon allow {options.get(chit, 0)})"
            if len(a.chits) != n:
                return f"{fid} picks exactly {n} chits"
        if isinstance(a, (Attack, Answer)) and self.combat is not None and f is not None:
            have = self.combat.chits.get(f.id, [])
            if a.chit not in have:
                return f"{fid} has no unplayed {a.chit} chit in this combat"
            if isinstance(a, Attack):
                return f"{a.target} is not an enemy in this combat that {fid}'s {a.chit} can reach"
        if isinstance(a, Exit) and f is not None:
            if self.game.solo and not self.solo_may_escape(f):
                return (f"{fid} may escape only when down to 1-2 abilities, on the last turns,"
                        " or when the lair is smashed")
            return f"{fid} must stand on an open entry square with a movement point left to leave"
        return f"{a} is not legal now ({PHASE_TITLES[self.phase]}, {who} to act)"

    def _apply(self, action: Action) -> None:
        self._legal = None
        player = self.current_player()
        if player == CHANCE:
            self._apply_chance(action)  # type: ignore[arg-type]
        elif self.bonus_mp > 0:
            if isinstance(action, Move):
                self._do_move(self.figs["CM"], action, bonus=True)
            self.bonus_mp = 0
        elif self.cm_window:
            self.cm_window = False
            if isinstance(action, Activate):
                self._activate(self.figs["CM"], "by the Clone Master")
        elif isinstance(action, Place):
            f = self.figs[action.figure]
            f.pos, f.status = self.board.square(action.square), "active"
            self.queue.pop(0)
            if not self.queue:
                self._begin_entry()
        elif isinstance(action, Wait):
            f = self.figs[action.figure]
            f.entry, f.status = action.entry, "waiting"
            self.queue.pop(0)
            if not self.queue:
                self._begin_phase("move1")
        elif isinstance(action, Move):
            self._do_move(self.figs[action.figure], action)
        elif isinstance(action, Exit):
            f = self.figs[action.figure]
            entry = self._exit_entry(f)
            assert entry is not None
            self.entered[entry] = self.entered.get(entry, 0) + 1
            f.status, f.pos, f.mp = "escaped", -1, 0
            self._event(f"{f.id} escapes through the {entry}")
            self._check_end()
        elif isinstance(action, Activate):
            f = self.figs[action.figure]
            cls = self.utype(f).activation
            if cls != "clone_master":
                self.activated.append(cls)
            f.mp = self.utype(f).move
            self._activate(f, "by the Clone Master")
        elif isinstance(action, End):
            self._end_step()
        elif isinstance(action, DoorAttack):
            self.door_tries[action.figure] = self.door_tries.get(action.figure, 0) + 1
            self.queue = [f"door:{action.figure}:{action.chit}"]
        elif isinstance(action, Chits):
            c = self.combat
            assert c is not None
            c.chits[action.figure] = list(action.chits)
            c.to_pick.pop(0)
            if not c.to_pick:
                c.step = "lead"
        elif isinstance(action, Lead):
            assert self.combat is not None
            self._next_attack(self.combat, action.side)
        elif isinstance(action, Attack):
            self._do_attack(action)
        elif isinstance(action, Answer):
            c = self.combat
            assert c is not None and c.attack is not None
            c.chits[action.figure].remove(action.chit)
            c.answer = (action.figure, action.chit)
            column = "none"
            if action.figure == c.attack[2]:
                column = "weapon" if action.chit not in CHIT_TECHNIQUES else action.chit
            c.need = self.game.book.crt[c.attack[1]][column]
            c.step = "roll"
        elif isinstance(action, Lose):
            c = self.combat
            assert c is not None
            c.pending_loss = ""
            self._lose(self.figs[action.figure], TECHNIQUES.index(action.technique))
            self._after_hit()
        self._settle()

    def _do_move(self, f: Figure, action: Move, bonus: bool = False) -> None:
        sq = self.board.square(action.square)
        points = self.bonus_mp if bonus else f.mp
        tree = self.move_tree(f, points)
        path = Board.path(tree, sq)
        cost = tree[sq][0]
        if f.status == "waiting":
            if f.kind == "terminator":
                self.entered[f.entry] = self.entered.get(f.entry, 0) + 1
            f.status = "active"
            f.face_up = f.face_up or f.kind == "constabulary"
            self._event(f"{f.id} enters by the {f.entry}")
        f.pos = sq
        if not bonus:
            f.mp -= cost
        if f.kind == "terminator":
            self._enter_rooms(f, path)

    def _do_attack(self, a: Attack) -> None:
        c = self.combat
        assert c is not None
        if c.step != "aim":
            c.chits[a.figure].remove(a.chit)
        c.turn = self.figs[a.figure].side
        c.attack = (a.figure, a.chit, a.target)
        c.answer = None
        defender = 1 - self.figs[a.figure].side
        if self._has_chits(c, defender):
            c.step = "answer"
        else:
            c.need = self.game.book.crt[a.chit]["none"]
            c.step = "roll"

    def _apply_chance(self, action: Roll | Deal) -> None:
        if isinstance(action, Deal):
            self._deal(action.counter)
            return
        value = action.value
        if self.door_step:
            _, fid, chit = self.queue.pop(0).split(":")
            need = self.rules()["door_breaks_at_most"]
            self._roll_log(f"{fid} {chit}s the armored door", value, need, "door broken")
            if value <= need:
                self.door_broken = True
            return
        if self.phase == "recovery":
            fid = self.queue.pop(0)
            f = self.figs[fid]
            need = self.rules()["recovery_at_most"]
            self._roll_log(f"{fid} Mountain Heart recovery", value, need, "recovers a level")
            if value <= need:
                f.levels[HEART] += 1
                if f.status == "unconscious":
                    f.status = "active"
                    self._event(f"{fid} regains consciousness")
            return
        c = self.combat
        assert c is not None
        if c.step == "untrained":
            target, n = c.untrained.pop(0)
            self._roll_log(f"untrained attack by {n} on {target}", value, n, "hit", target)
            if value <= n and self.figs[target].on_board:
                self._hit(target)
                if c.pending_loss:
                    c.step = "loss"
            return
        assert c.attack is not None
        fid, chit, target = c.attack
        answer = f"{c.answer[0]} {c.answer[1]}" if c.answer else "none"
        self._roll_log(f"{fid} {chit} on {target} (answer {answer})", value, c.need, "hit", target)
        if value <= c.need:
            still_there = (target.startswith("E") and self.equipment[target]) or \
                (not target.startswith("E") and self.figs[target].on_board)
            if still_there:
                self._hit(target)
        if c.pending_loss:
            c.step = "loss"
        else:
            self._after_hit()

    def _after_hit(self) -> None:
        """After a roll (and any level lost): the answer chit becomes the next attack, or play moves on."""
        c = self.combat
        assert c is not None
        if c.attack is None:  # a loss from an untrained attack
            c.step = "untrained"
            return
        if c.answer is not None:
            fid, chit = c.answer
            f = self.figs[fid]
            if self.targets(c, f, chit):
                c.step = "aim"
                return
            self._next_attack(c, 1 - c.turn)
        else:
            self._next_attack(c, c.turn)

    def _deal(self, counter: str) -> None:
        sq = self.deal_slots.pop(0)
        pool = [f for f in self.figs.values() if f.status == "unplaced" and f.pos < 0 and f.kind != "constabulary"]
        f = next(f for f in pool if f.id == counter or (f.kind == counter and f.kind != "jelly"))
        f.pos, f.status = sq, "active"
        if not self.deal_slots:
            self._begin_phase("move1")

    # --- phase flow -----------------------------------------------------------------------------------------
    def _settle(self) -> None:
        """Advance through steps that need nobody's decision."""
        while True:
            if self.phase == "over" or self.bonus_mp > 0 or self.cm_window:
                return
            if self.phase in ("combat1", "combat2"):
                if not self.opened:
                    self._open_combat()
                    continue
                if self.door_step:
                    if not self.queue and not self.door_attackers():
                        self._end_step()
                        continue
                    return
                c = self.combat
                if c is None:
                    if self.combats:
                        self._start_combat()
                        continue
                    self._next_phase()
                    continue
                if c.step == "untrained" and not c.untrained:
                    self.combat = None
                    if self._check_end():
                        return
                    continue
                return
            if self.phase == "recovery" and not self.queue:
                self._next_phase()
                continue
            return

    def _end_step(self) -> None:
        if self.door_step:
            self.door_step = False
            self.combats = self.form_combats()
            self.combat = None
            return
        self._next_phase()

    def _next_phase(self) -> None:
        order = ("move1", "combat1", "move2", "cm_move", "combat2", "recovery")
        if self.phase == "recovery":
            self.turn += 1
            if self.turn > self.scenario().turns:
                self._finish()
                return
            self._begin_phase("move1")
            return
        self._begin_phase(order[order.index(self.phase) + 1])

    def _begin_entry(self) -> None:
        self.phase = "entry"
        self.queue = [f.id for f in self.terminators()]

    def _begin_phase(self, phase: str) -> None:
        self.phase = phase
        self.entered = {}
        self.combat = None
        self.combats = []
        self.queue = []
        if self._check_end():
            return
        if phase in ("move1", "move2"):
            for f in self.terminators():
                f.mp = self.utype(f).move if f.status in ("active", "waiting") else 0
        elif phase == "cm_move":
            self.activated = []
            sc = self.scenario()
            if sc.constabulary_per_turn and self.turn >= sc.constabulary_from_turn:
                reserve = [f for f in self.figs.values() if f.kind == "constabulary" and f.status == "unplaced"]
                for f in reserve[: sc.constabulary_per_turn]:
                    f.status, f.entry, f.face_up = "waiting", "door", True
                    self.constabulary_in += 1
                    self._event(f"{f.id} arrives at the front door")
            for f in self.figs.values():
                if f.side == CLONE_MASTER:
                    f.mp = self.utype(f).move if (f.status in ("active", "waiting") and f.face_up) else 0
            if self.game.solo:
                self._solo_activation()
        elif phase in ("combat1", "combat2"):
            self.door_tries = {}
            self.opened = False  # the door step and the combats start once the Clone Master's window closes
        elif phase == "recovery":
            self.queue = [f.id for f in self.figs.values() if f.on_board and f.start[HEART] > 0
                          and f.levels[HEART] < f.start[HEART]]
        cm = self.figs["CM"]
        if phase in ("move1", "move2", "combat1", "combat2") and cm.status == "active" and not cm.face_up:
            self.cm_window = True  # the Clone Master may reveal himself at any time: here, before each phase
        if phase in ("move1", "move2", "cm_move"):
            for f in self.figs.values():
                if f.side != (CLONE_MASTER if phase == "cm_move" else TERMINATORS):
                    f.mp = 0

    def _open_combat(self) -> None:
        self.opened = True
        if not self.door_broken and self.door_attackers():
            self.door_step = True
        else:
            self.combats = self.form_combats()

    def door_attackers(self) -> list[Figure]:
        """Terminators at the unbroken front door (waiting outside, or inside next to it) with chits to spare."""
        if self.door_broken:
            return []
        door = self.board.front_door
        out = []
        for f in self.terminators():
            at_door = (f.status == "waiting" and f.entry == "door") or \
                (f.status == "active" and self.board.adjacent(f.pos, door))
            if (at_door and f.conscious) or (at_door and f.status == "waiting"):
                if (f.levels[0] or f.levels[1]) and self.door_tries.get(f.id, 0) < self.rules()["door_tries_per_phase"]:
                    out.append(f)
        return out

    def _check_end(self) -> bool:
        terms = self.terminators()
        if terms and all(f.status in ("dead", "escaped") for f in terms):
            self._finish()
            return True
        return False

    def _finish(self) -> None:
        self.phase = "over"
        self.bonus_mp = 0
        self.combat = None
        self.combats = []
        self.queue = []
        self.door_step = False
        self.cm_window = False
        self.result = self.grade()
        self._event(f"game over: {self.result.replace('_', ' ')}")

    # --- outcome -----------------------------------------------------------------------------------------
    def grade(self) -> str:
        """The graded result by the scenario's victory conditions (solo: by points)."""
        if self.game.solo:
            t, cm = self.solo_points()
            return "terminator_victory" if t > cm else "clone_master_victory" if cm > t else "draw"
        terms = self.terminators()
        cm_dead = self.figs["CM"].status == "dead"
        smashed = not any(self.equipment.values())
        all_killed = all(f.status == "dead" for f in terms)
        if cm_dead and smashed:
            return "terminator_total_victory" if any(f.status == "escaped" for f in terms) else "terminator_victory"
        if all_killed and not cm_dead:
            return "clone_master_total_victory"
        if all_killed and cm_dead and not smashed:
            return "clone_master_victory"
        return "draw"

    def solo_points(self) -> tuple[int, int]:
        """(Terminator points, Clone Master points) by the solo scenario's scoring."""
        pts = self.game.book.scenarios.solo_points
        cm_dead = self.figs["CM"].status == "dead"
        smashed = sum(1 for alive in self.equipment.values() if not alive)
        jellies = sum(1 for f in self.figs.values() if f.kind == "jelly" and f.status == "dead")
        t = pts["clone_master"] * cm_dead + pts["equipment"] * smashed + pts["jelly"] * jellies
        if cm_dead and smashed == len(self.equipment):
            t += pts["everything_bonus"]
        cm = 0
        for f in self.terminators():
            if f.status == "dead":
                cm += pts["terminator_killed"]
            elif f.status != "escaped" and self.phase == "over":
                cm += pts["terminator_recaptured"]
        return t, cm

    def returns(self) -> list[float]:
        if self.phase != "over":
            return [0.0, 0.0]
        if self.game.solo:
            v = {"terminator_victory": 1.0, "clone_master_victory": -1.0}.get(self.result, 0.0)
        else:
            v = self.game.book.scenarios.grades[self.result]
        return [v, -v]

    # --- copies and views -------------------------------------------------------------------------------------
    def clone(self) -> KungFuState:
        s = KungFuState.__new__(KungFuState)
        s.game = self.game
        s.turn, s.phase, s.door_broken, s.bonus_mp = self.turn, self.phase, self.door_broken, self.bonus_mp
        s.figs = {k: f.copy() for k, f in self.figs.items()}
        s.equipment = dict(self.equipment)
        s.entered, s.activated, s.door_step = dict(self.entered), list(self.activated), self.door_step
        s.door_tries = dict(self.door_tries)
        s.cm_window, s.opened = self.cm_window, self.opened
        s.combats = [list(c) for c in self.combats]
        s.combat = self.combat.copy() if self.combat else None
        s.queue, s.deal_slots = list(self.queue), list(self.deal_slots)
        s.constabulary_in, s.result = self.constabulary_in, self.result
        s.log = list(self.log)
        s._legal = self._legal
        return s

    def to_dict(self) -> dict[str, Any]:
        return {
            "turn": self.turn, "phase": self.phase, "door_broken": self.door_broken, "bonus_mp": self.bonus_mp,
            "figures": [f.to_dict() for f in self.figs.values()], "equipment": dict(self.equipment),
            "entered": dict(self.entered), "activated": list(self.activated), "door_step": self.door_step,
            "door_tries": dict(self.door_tries), "combats": [list(c) for c in self.combats],
            "cm_window": self.cm_window, "opened": self.opened,
            "combat": self.combat.to_dict() if self.combat else None, "queue": list(self.queue),
            "deal_slots": [self.name(sq) for sq in self.deal_slots], "constabulary_in": self.constabulary_in,
            "result": self.result, "log": [dict(e) for e in self.log],
        }

    # --- checks of a saved position (state_from_dict) ------------------------------------------------------
    def _check_combat(self, c: Combat) -> None:
        """Every figure a saved combat names is one of its members, and each one's chits are ones it could pick."""
        members = set(c.members)
        figures = [x for x in c.members if not x.startswith("E")]
        if {self.figs[x].side for x in figures} | ({CLONE_MASTER} if len(figures) < len(members) else set()) \
                != {TERMINATORS, CLONE_MASTER}:
            raise ValueError("a combat needs figures of both sides")
        named = [*c.to_pick, *c.chits, *(c.attack[::2] if c.attack else ()), *(c.answer[:1] if c.answer else ()),
                 *(t for t, _ in c.untrained), *([c.pending_loss] if c.pending_loss else [])]
        for x in named:
            if x not in members:
                raise ValueError(f"the combat names {x}, who is not in it")
        if len(set(c.to_pick)) != len(c.to_pick) or set(c.to_pick) & set(c.chits):
            raise ValueError("a figure picks its chits twice")
        for fid in [*c.to_pick, *c.chits]:
            if fid.startswith("E") or not self.figs[fid].conscious:
                raise ValueError(f"{fid} cannot hold chits")
        for fid, chits in c.chits.items():
            options, n = self.chit_options(self.figs[fid])
            if len(chits) > n or any(chits.count(x) > options.get(x, 0) for x in set(chits)):
                raise ValueError(f"{fid} holds chits it could not have picked")
        if c.attack is not None:
            fid, _, target = c.attack
            if fid.startswith("E") or (not target.startswith("E") and self.figs[target].side == self.figs[fid].side):
                raise ValueError("an attack that is not on an enemy")
        if c.answer is not None and (c.answer[0].startswith("E") or c.attack is None):
            raise ValueError("an answer to no attack")
        if c.step in ("answer", "roll", "aim") and c.attack is None:
            raise ValueError(f"a combat at its {c.step} step with no attack")
        if c.step == "untrained" and c.attack is not None:
            raise ValueError("untrained attacks while a chit attack is pending")

    def _checked_log(self, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The saved log, each entry of one of the two shapes the rules write and its text one they write."""
        events, rolls = _log_patterns(self.board)
        out = []
        for i, e in enumerate(entries):
            what = f"log entry {i + 1}"
            if "roll" in e:
                r = check_schema(e, _RollEntry, f"{what} is damaged")
                if not rolls.fullmatch(r.what):
                    raise ValueError(f"{what} is not a roll the rules write")
                if r.p != str(Fraction(max(0, min(r.need, 6)), 6)) or (r.result == "miss") != (r.roll > r.need):
                    raise ValueError(f"{what}: its chance or result does not match its roll")
                if r.target is not msgspec.UNSET:
                    side = CLONE_MASTER if r.target.startswith("E") else (
                        self.figs[r.target].side if r.target in self.figs else None)
                    if (r.target not in self.figs and r.target not in self.equipment) or r.target_side != side:
                        raise ValueError(f"{what} names a target that is not in the game")
                elif r.target_side is not msgspec.UNSET:
                    raise ValueError(f"{what} has a target side but no target")
            else:
                ev = check_schema(e, _EventEntry, f"{what} is damaged")
                if not events.fullmatch(ev.event):
                    raise ValueError(f"{what} is not an event the rules write")
            if e["turn"] > self.turn:
                raise ValueError(f"{what} is from turn {e['turn']}, after this one")
            out.append(dict(e))
        return out

    def player_view(self, player: int) -> dict[str, Any]:
        """What one side may know: face-down counters are anonymous to the Terminators, and each side's
        unplayed chits are hidden from the other (only their number shows)."""
        figures = []
        hidden = []
        for f in self.figs.values():
            d = f.to_dict()
            if f.side != player and f.side == CLONE_MASTER and not f.face_up:
                if f.pos >= 0 and f.status in ("active", "unconscious"):
                    hidden.append(self.name(f.pos))
                continue
            d["square"] = self.name(f.pos) if f.pos >= 0 else None
            figures.append(d)
        combat = None
        if self.combat is not None:
            combat = self.combat.to_dict()
            combat["chits"] = {k: (list(v) if self.figs[k].side == player else len(v))
                               for k, v in self.combat.chits.items()}
        view = {
            "player": player, "scenario": self.game.scenario.key, "turn": self.turn, "phase": self.phase,
            "to_move": self.current_player(), "door_broken": self.door_broken, "bonus_mp": self.bonus_mp,
            "figures": figures, "face_down": sorted(hidden), "equipment": dict(self.equipment),
            "combat": combat, "combats_waiting": len(self.combats), "door_step": self.door_step,
            "result": self.result, "log": [dict(e) for e in self.log],  # rolls and public events only
            "placing": self.queue[0] if (self.phase == "setup" and self.queue and player == CLONE_MASTER) else None,
        }
        return view


class KungFuGame(Game):
    """Kung Fu 2100 with a scenario: ``basic``, ``advanced`` or ``solo``."""

    info: ClassVar[GameInfo] = GameInfo("kf2100", "Kung Fu 2100", 2, ChanceMode.EXPLICIT, Information.IMPERFECT,
                                        -1.0, 1.0, 1)
    action_type = KFAction

    def __init__(self, scenario: str = "basic", terminator_levels: dict[str, list[int]] | None = None,
                 book: RuleBook | None = None) -> None:
        self.book = book or rulebook()
        if scenario not in self.book.scenarios.scenarios:
            raise ValueError(f"no scenario {quote(scenario)}; choose one of {', '.join(self.book.scenarios.scenarios)}")
        self.scenario = self.book.scenarios.scenarios[scenario]
        self.solo = self.scenario.setup == "solo"
        self.board = standard_board() if book is None else board_of(self.book)
        self.terminator_levels = self._point_buy(terminator_levels or {})

    def _point_buy(self, levels: dict[str, list[int]]) -> dict[str, tuple[int, ...]]:
        """The optional point-buy: each Terminator spreads his 7 levels, with at least 1 in Fist or Kick."""
        out = {}
        for fid, lv in levels.items():
            if fid not in self.scenario.terminators:
                raise ValueError(f"{fid} is not a Terminator of the {self.scenario.title} scenario")
            total = sum(self.book.units.terminators[fid])
            if (not isinstance(lv, (list, tuple)) or len(lv) != len(TECHNIQUES)
                    or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in lv)):
                raise ValueError(f"{fid}: levels are {len(TECHNIQUES)} whole numbers (fist, kick, mist, monkey, heart)")
            if sum(lv) != total:
                raise ValueError(f"{fid}: the levels must add up to {total}, not {sum(lv)}")
            if lv[0] + lv[1] < 1:
                raise ValueError(f"{fid}: at least one level must go to Iron Fist or Lightning Kick")
            out[fid] = tuple(lv)
        return out

    def player_name(self, player: int) -> str:
        return PLAYER_NAMES[player]

    def rule_options(self) -> dict[str, Any]:
        options: dict[str, Any] = {"scenario": self.scenario.key}
        if self.terminator_levels:
            options["terminator_levels"] = {k: list(v) for k, v in self.terminator_levels.items()}
        return options

    @classmethod
    def from_rule_options(cls, options: dict[str, Any]) -> KungFuGame:
        unknown = set(options) - {"scenario", "terminator_levels"}
        if unknown:
            raise ValueError(f"unknown rule options: {', '.join(quote(k) for k in sorted(unknown)[:3])}")
        check_schema(options, _RulesFile, "the rule options are damaged")
        return cls(**options)

    def roster(self) -> list[Figure]:
        """Every counter of the scenario's mix, in set-up order."""
        units, sc = self.book.units, self.scenario
        out = [Figure(t, "terminator", self.terminator_levels.get(t, units.terminators[t])) for t in sc.terminators]
        armed = {key: t.weapon for key, t in units.types.items()}  # a unit type's weapon, from units.toml
        out.append(Figure("CM", "clone_master", weapon=armed["clone_master"]))
        for j in sc.jellies:
            levels, weapon = units.jellies[j]
            out.append(Figure(j, "jelly", levels, weapon))
        for prefix, kind, count in (("A", "armed_technician", sc.armed_technicians),
                                    ("U", "unarmed_technician", sc.unarmed_technicians),
                                    ("S", "servant", sc.servants),
                                    ("LC", "constabulary", sc.constabulary_total)):
            out += [Figure(f"{prefix}{i}", kind, weapon=armed[kind]) for i in range(1, count + 1)]
        return out

    def new_initial_state(self, rng: Any = None) -> KungFuState:
        s = KungFuState(self)
        s.figs = {f.id: f for f in self.roster()}
        if self.solo:
            solo = self.scenario.solo
            t = s.figs[self.scenario.terminators[0]]
            t.pos, t.status = self.board.square(solo["terminator_square"]), "active"
            cm = s.figs["CM"]
            cm.pos, cm.status, cm.face_up = self.board.square(solo["clone_master_square"]), "active", True
            j = s.figs[solo["face_up_jelly"]]
            j.pos, j.status, j.face_up = self.board.square(solo["jelly_square"]), "active", True
            s.deal_slots = self.solo_slots(s)
        else:
            s.queue = [f.id for f in s.figs.values() if f.side == CLONE_MASTER and f.kind != "constabulary"]
        return s

    def solo_slots(self, s: KungFuState) -> list[int]:
        """Solo set-up squares: counters go two to a room (corridors are not rooms here), round and
        round, on the room's squares in reading order that are free and not next to the armored door."""
        n = sum(1 for f in s.figs.values() if f.status == "unplaced" and f.kind != "constabulary")
        taken = s.occupied()
        door_adjacent = set(self.board.neighbours[self.board.front_door])
        free = {r: [sq for sq in sqs if sq not in taken and sq not in door_adjacent]
                for r, sqs in self.board.rooms.items()}
        per_room = self.scenario.solo["per_room"]
        slots: list[int] = []
        rooms = [r for r, room in self.board.lair.rooms.items() if room.initials]  # not the corridors
        while len(slots) < n:
            before = len(slots)
            for r in rooms:
                for _ in range(per_room):
                    if free[r] and len(slots) < n:
                        slots.append(free[r].pop(0))
            if len(slots) == before:
                raise ValueError("the lair has no room for the solo counters")
        return slots

    def state_from_dict(self, data: dict[str, Any]) -> KungFuState:
        """A saved position, refused unless the rules could have reached it: the schema checks every field's type
        and range, then every figure, square, chit, combat and log line is checked against the scenario."""
        check_schema(data, _StateFile, "the saved position is damaged")
        s = KungFuState(self)
        roster = {f.id: f for f in self.roster()}
        board = self.board
        figures = data["figures"]
        if [d["id"] for d in figures] != list(roster):
            raise ValueError("the figures do not match the scenario's counter mix")
        seen_pos: set[int] = set()
        for d in figures:
            f = roster[d["id"]]
            if d["kind"] != f.kind or tuple(d["start"]) != f.start or d["weapon"] != f.weapon:
                raise ValueError(f"{f.id} is not the counter of the unit sheet")
            levels = list(d["levels"])
            if len(levels) != len(TECHNIQUES) or any(not 0 <= v <= s0 for v, s0 in zip(levels, f.start, strict=True)):
                raise ValueError(f"{f.id} has impossible levels {levels}")
            status, pos = d["status"], d["pos"]
            if pos >= 0:
                if pos >= len(board.cells):
                    raise ValueError(f"{f.id} stands off the map")
                if pos == board.front_door:
                    raise ValueError(f"{f.id} stands on the armored door (no figure ever ends a move there)")
                if not board.is_floor(pos):
                    raise ValueError(f"{f.id} stands on {board.names[pos]}, a square no figure may occupy")
                if pos in seen_pos:
                    raise ValueError(f"two figures stand on {board.names[pos]}")
                seen_pos.add(pos)
            if (status in ("active", "unconscious")) != (pos >= 0):
                raise ValueError(f"{f.id} is {status} but its square is {pos}")
            if status == "unconscious" and sum(levels) != 0:
                raise ValueError(f"{f.id} is unconscious with levels left")
            if status == "waiting" and not d["entry"]:
                raise ValueError(f"{f.id} is waiting at no entry")
            if d["entry"] and f.kind not in ("terminator", "constabulary"):
                raise ValueError(f"{f.id} is not a figure that comes in from outside")
            if status == "escaped" and f.kind != "terminator":
                raise ValueError(f"{f.id} cannot escape: only Terminators leave the lair")
            f.levels, f.status, f.pos, f.face_up, f.entry = levels, status, pos, d["face_up"], d["entry"]
            f.mp = d["mp"]
        s.figs = roster
        s.phase = data["phase"]
        s.turn = data["turn"]
        if not 1 <= s.turn <= self.scenario.turns + 1:
            raise ValueError(f"turn {s.turn} is outside the scenario's {self.scenario.turns} turns")
        s.door_broken, s.bonus_mp, s.door_step = data["door_broken"], data["bonus_mp"], data["door_step"]
        if set(data["equipment"]) != set(s.equipment):
            raise ValueError("the equipment list is not the lair's seven pieces")
        s.equipment = {k: data["equipment"][k] for k in s.equipment}
        s.entered = dict(data["entered"])
        terminators = {f.id for f in s.terminators()}
        if sum(n for e, n in s.entered.items() if e != "door") > len(terminators):
            raise ValueError("more Terminators entered than there are")
        classes = {t.activation for t in self.book.units.types.values()} - {""}
        s.activated = list(data["activated"])
        if any(x not in classes for x in s.activated) or len(set(s.activated)) != len(s.activated):
            raise ValueError("an activation class that is not on the unit sheet, or used twice")
        s.door_tries = dict(data["door_tries"])
        for fid, n in s.door_tries.items():
            if fid not in terminators or n > s.utype(roster[fid]).chits:
                raise ValueError(f"{fid} cannot have spent {n} chits on the door")
        s.cm_window, s.opened = data["cm_window"], data["opened"]
        if s.cm_window and (s.figs["CM"].face_up or s.figs["CM"].status != "active"):
            raise ValueError("only a face-down Clone Master can have a window to reveal himself")
        s.combats = [list(c) for c in data["combats"]]
        s.combat = Combat.from_dict(data["combat"]) if data["combat"] else None
        for c in [*s.combats, *([s.combat.members] if s.combat else [])]:
            for x in c:
                if x not in roster and x not in s.equipment:
                    raise ValueError(f"combat member {x!r} is not in the game")
            if len(set(c)) != len(c):
                raise ValueError("a combat names a figure twice")
        if s.combat is not None:
            s._check_combat(s.combat)
        s.queue = list(data["queue"])
        for item in s.queue:
            fid = item.split(":")[1] if item.startswith("door:") else item
            if fid not in roster or (item.startswith("door:") and fid not in terminators):
                raise ValueError(f"the queue names {fid!r}, who cannot be there")
        if len(set(s.queue)) != len(s.queue):
            raise ValueError("the queue names a figure twice")
        s.deal_slots = [board.square(x) for x in data["deal_slots"]]
        if any(not board.is_floor(sq) or sq == board.front_door for sq in s.deal_slots):
            raise ValueError("a set-up square that is not floor")
        s.constabulary_in = data["constabulary_in"]
        if s.constabulary_in > self.scenario.constabulary_total:
            raise ValueError(f"{s.constabulary_in} Constabulary came in; the scenario has "
                             f"{self.scenario.constabulary_total}")
        s.result = data["result"]
        if (s.phase == "over") != bool(s.result):
            raise ValueError("a finished game needs a result, an unfinished one none")
        s.log = s._checked_log(data["log"])
        if s.phase in ("combat1", "combat2") and s.opened and not (s.door_step or s.cm_window or s.bonus_mp) \
                and s.combat is None:
            raise ValueError("a combat phase with no combat being fought")
        if s.combat is not None and s.combat.step == "pick" and not s.combat.to_pick:
            raise ValueError("a combat waiting for chits nobody has to pick")
        if s.combat is not None and s.combat.step == "loss" and s.combat.pending_loss not in s.figs:
            raise ValueError("a hit waiting for a figure that is not in the game")
        try:
            if s.phase != "over" and s.current_player() != CHANCE and not s.legal_actions():
                raise ValueError("the saved position has no legal move")
            if s.current_player() == CHANCE:
                s.chance_outcomes()
        except (AssertionError, KeyError, IndexError, TypeError) as exc:
            raise ValueError(f"the saved position is not one the rules can reach ({type(exc).__name__})") from None
        return s


def skirmish(game: KungFuGame, placements: dict[str, str], phase: str = "move1", turn: int = 1,
             face_up: bool = True, waiting: dict[str, str] | None = None,
             levels: dict[str, list[int]] | None = None) -> KungFuState:
    """A position for tests, analysis and teaching: only the named figures stand in the lair (CM-side
    figures face up unless ``face_up`` is False), every other counter is off the map, and play starts
    at ``phase`` of ``turn``. Set-up is skipped."""
    s = game.new_initial_state()
    s.deal_slots, s.queue = [], []
    for f in s.figs.values():
        f.pos, f.status, f.face_up = -1, "unplaced", False
    for fid, square in placements.items():
        f = s.figs[fid]
        f.pos, f.status, f.face_up = game.board.square(square), "active", face_up or f.side == TERMINATORS
    for fid, entry in (waiting or {}).items():
        s.figs[fid].status, s.figs[fid].entry = "waiting", entry
    for fid, lv in (levels or {}).items():
        s.figs[fid].levels = list(lv)
    s.turn = turn
    s._begin_phase(phase)
    s._settle()
    return s
