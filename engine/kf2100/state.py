"""Kung Fu 2100 on the core protocol: turn sequence, hidden set-up, activation, the chit exchange.

Player 0 is the Terminator player, player 1 the Clone Master. Simultaneous secret chit choices are
played in turn, Terminators first, and ``player_view`` hides each side's unplayed chits (and the
identity of face-down counters) from the other. Every d6 is a chance node with six outcomes of 1/6.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, ClassVar

from engine.core import (
    CHANCE,
    TERMINAL,
    ChanceMode,
    Game,
    GameInfo,
    IllegalActionError,
    Information,
)
from engine.core.protocol import Action, malformed
from engine.core.serialize import check_schema, quote
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
    Roll,
    Wait,
)
from engine.kf2100.board import board_of, standard_board
from engine.kf2100.data import TECHNIQUES, RuleBook, rulebook
from engine.kf2100.figures import (
    CLONE_MASTER,
    D6,
    PHASE_TITLES,
    PHASES,
    PLAYER_NAMES,
    TERMINATORS,
    Combat,
    Figure,
    chit_multisets,
)
from engine.kf2100.state_save import SaveRules
from engine.kf2100.state_schema import _RulesFile
from engine.kf2100.steps import Step

__all__ = ["CHANCE", "CLONE_MASTER", "PHASES", "PHASE_TITLES", "PLAYER_NAMES", "TERMINAL", "TERMINATORS", "Combat",
           "Figure", "KungFuGame", "KungFuState", "Step", "chit_multisets", "skirmish"]


class KungFuState(SaveRules):
    """One Kung Fu 2100 position: the step it waits for, who acts, the legal moves and why others are refused.

    The rules' parts are its bases, one module each: set-up (``state_setup``), movement (``state_movement``),
    combat (``state_combat``), turn flow (``state_flow``), saving and views (``state_save``)."""

    __slots__ = ()

    game: KungFuGame

    # --- whose turn -------------------------------------------------------------------------------
    def current_player(self) -> int:
        step = self.step
        if step is Step.OVER:
            return TERMINAL
        if step is Step.ROLL:
            return CHANCE
        if step in (Step.BONUS_MOVE, Step.CM_WINDOW, Step.SETUP):
            return CLONE_MASTER
        if step in (Step.ENTRY, Step.DOOR, Step.LEAD):
            return TERMINATORS
        if step is Step.MOVE:
            return CLONE_MASTER if self.phase == "cm_move" else TERMINATORS
        c = self.combat
        assert c is not None
        if step is Step.PICK:
            return self.figs[c.to_pick[0]].side
        if step is Step.ATTACK:
            return c.turn
        if step is Step.LOSS:
            return self.figs[c.pending_loss].side
        return 1 - c.turn  # answer, aim

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
        return list(D6)  # a hit, the door, an untrained mob or a recovery

    def _compute_legal(self) -> list[Action]:
        step = self.step
        if step is Step.OVER:
            return []
        if step is Step.ROLL:
            return [a for a, _ in self.chance_outcomes()]
        if step is Step.BONUS_MOVE:
            return [*self._moves(self.figs["CM"], self.bonus_mp, bonus=True), End()]
        if step is Step.CM_WINDOW:
            return [Activate("CM"), End()]
        if step is Step.SETUP:
            return [Place(self.queue[0], self.name(sq)) for sq in self.setup_squares(self.figs[self.queue[0]])]
        if step is Step.ENTRY:
            return [Wait(self.queue[0], e) for e in ("door", "disposal", "loo")]
        if step is Step.MOVE:
            out: list[Action] = []
            if self.phase == "cm_move":
                if not self.game.solo:
                    out.extend(Activate(fid) for fid in self.activatable())
                for f in self.figs.values():
                    if f.side == CLONE_MASTER and f.mp > 0:
                        out.extend(self._moves(f, f.mp))
            else:
                for f in self.terminators():
                    out.extend(self._moves(f, f.mp))
                    if self._may_exit(f):
                        out.append(Exit(f.id))
            # the phase ends with one counter a square: no End while two share one (seed)
            return [*out, End()] if not self.stacks() else out
        if step is Step.DOOR:
            out = [DoorAttack(f.id, chit) for f in self.door_attackers() for chit in self.door_chit_options(f)]
            return [*out, End()]
        c = self.combat
        assert c is not None
        if step is Step.PICK:
            f = self.figs[c.to_pick[0]]
            return [Chits(f.id, m) for m in self.chit_choices(f)]
        if step is Step.LEAD:
            return [Lead(TERMINATORS), Lead(CLONE_MASTER)]
        if step is Step.ATTACK:
            return self._attacks(c, c.turn)
        if step is Step.ANSWER:
            return [Answer(fid, chit) for fid in c.members if fid in c.chits and self.figs[fid].side != c.turn
                    for chit in sorted(set(c.chits[fid]))]
        if step is Step.AIM:
            assert c.answer is not None
            fid, chit = c.answer
            return [Attack(fid, chit, t) for t in self.targets(c, self.figs[fid], chit)]
        f = self.figs[c.pending_loss]  # Step.LOSS
        return [Lose(f.id, t) for i, t in enumerate(TECHNIQUES) if f.levels[i] > 0]

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
        if isinstance(action, Move) and action.via:
            return self._route_refusal(action, player)
        if action in self.legal_actions():
            return None
        return self._explain(action, player)

    # --- the Clone Master's window at any time ------------------------------------------------------------
    def cm_window_refusal(self) -> str | None:
        """Why the Clone Master may not open his window now, or None. "At any time (even during the Terminator's
        turn) the Clone Master player may voluntarily activate the Clone Master counter" (seed). The engine
        opens a window at each phase start by itself; between, a session can offer it (a standing control for
        the Clone Master's player at a seat of his own) at any decision of the set-up of the Terminators, of a
        move phase or of the door step. Not within a chit exchange (our ruling: the combat's members are fixed
        once it is formed, and his bonus move would change them)."""
        cm = self.figs["CM"]
        if self.step is Step.OVER:
            return "the game is over"
        if cm.face_up or cm.status != "active":
            return "the Clone Master is not a face-down counter in the lair: there is nothing to reveal"
        if self.step in (Step.CM_WINDOW, Step.BONUS_MOVE):
            return "the Clone Master's window is open already"
        if self.step not in (Step.ENTRY, Step.MOVE, Step.DOOR):
            return (f"not now ({self.step_title()}): the Clone Master may reveal himself at any decision of a"
                    " move phase, the Terminators' set-up or the door step, but not within a chit exchange")
        return None

    def open_cm_window(self) -> None:
        """Open the Clone Master's window now (``cm_window_refusal`` says when he may): the Clone Master is then
        to act, with ``activate CM`` (and his bonus move) or ``end``, and play goes back to where it was. Raises
        IllegalActionError with the reason, changing nothing, when he may not."""
        reason = self.cm_window_refusal()
        if reason is not None:
            raise IllegalActionError(reason)
        self._legal = None
        self.cm_window = True

    # --- the Clone Master's standing control: an action of his taken out of turn ------------------------------
    def standing_actions(self, player: int) -> list[KFAction]:
        """What ``player`` may do now although it is not his turn: the Clone Master's ``activate CM`` wherever he
        may open his window (``cm_window_refusal``), for a page that gives his player a standing control (with a
        seat per browser; at one screen, the phase starts are his windows). Nothing for anyone else."""
        if player != CLONE_MASTER or self.cm_window_refusal() is not None:
            return []
        return [Activate("CM")]

    def standing_refusal(self, player: int, action: Action) -> str | None:
        """Why ``player`` may not take ``action`` out of turn now, or None."""
        if player != CLONE_MASTER:
            return "only the Clone Master may act out of turn (to reveal himself)"
        if action != Activate("CM"):
            return f"out of turn the Clone Master may only reveal himself (activate CM), not {str(action)[:40]}"
        return self.cm_window_refusal()

    def apply_standing_action(self, player: int, action: Action) -> None:
        """Take ``action`` out of turn: the Clone Master reveals himself at once (his window opened and taken), and
        his bonus move follows; play goes back where it was after it. Refused with its reason
        (IllegalActionError), changing nothing, when ``standing_refusal`` says no."""
        reason = self.standing_refusal(player, action)
        if reason is not None:
            raise IllegalActionError(reason)
        self.open_cm_window()
        self.apply_action(action)

    def _route_refusal(self, a: Move, player: int) -> str | None:
        """A move by a way of its own: legal when the move to its square is, and the way is one the figure can
        walk with the points it has (and, onto another counter, leaves it points to step off again)."""
        plain = Move(a.figure, a.square)
        if plain not in self.legal_actions():
            return self._explain(plain, player)
        f = self.figs[a.figure]
        way = self.route(f, a)
        if isinstance(way, str):
            return way
        _, cost = way
        points = self.bonus_mp if self.step is Step.BONUS_MOVE else f.mp
        if cost > points:
            return f"{a.figure} needs {cost} movement points by that way to {a.square} and has {points}"
        sq = self.board.square(a.square)
        if (sq in self.occupied() or self.stacks()) and not self._unstackable_after(f, sq, cost):
            return (f"by that way {a.figure} would have too few points left to step off {a.square} again:"
                    " the phase must end with one counter a square")
        return None

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
        if isinstance(a, DoorAttack) and f is not None and self.step is Step.DOOR:
            spent = self.door_chits.get(f.id, [])
            level = f.levels[TECHNIQUES.index(a.chit)]
            if f not in self.door_attackers():
                return f"{fid} is not at the armored door with an attack chit to spare"
            if spent.count(a.chit) >= level:
                return (f"{fid} has spent {spent.count(a.chit)} {a.chit} chit(s) on the door this phase and his"
                        f" {a.chit} level is {level}: a door attack spends one of his own attack chits")
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
            points = self.bonus_mp if (self.bonus_mp and fid == "CM") else f.mp
            tree = self.move_tree(f, 99)
            if sq not in tree:
                return f"{fid} cannot get to {a.square} (walls, equipment or the closed door are in the way)"
            if tree[sq][0] > points:
                return f"{fid} needs {tree[sq][0]} movement points to reach {a.square} and has {points}"
            others = [g for g in self.figs.values() if g.on_board and g.pos == sq and g is not f]
            if others and self.step is Step.BONUS_MOVE:
                return f"{a.square} is occupied: the Clone Master's bonus move ends on an empty square"
            if others or self.stacks():
                return (f"{fid} may not stop on {a.square} now: counters may share a square during a move phase,"
                        " but only one square at a time, and only while one of them can still step off it,"
                        " since the phase must end with one counter a square")
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
        if isinstance(a, End) and self.step is Step.MOVE and self.stacks():
            where = ", ".join(self.name(q) for q in self.stacks())
            who_there = " and ".join(g.id if (g.face_up or g.side == player) else "a counter"
                                     for g in self.figs.values() if g.on_board and self.name(g.pos) == where)
            return (f"{who_there} share {where}: only one counter may occupy a square at the end of the phase;"
                    " move one of them off first")
        if isinstance(a, Exit) and f is not None:
            if self.game.solo and not self.solo_may_escape(f):
                return (f"{fid} may escape only when down to 1-2 abilities, on the last turns,"
                        " or when the lair is smashed")
            return f"{fid} must stand on an open entry square with a movement point left to leave"
        return f"{a} is not legal now ({self.step_title()}, {who} to act)"

    def _apply(self, action: Action) -> None:
        self._legal = None
        step = self.step
        if step is Step.ROLL:
            self._apply_chance(action)  # type: ignore[arg-type]
        elif step is Step.BONUS_MOVE:
            if isinstance(action, Move):
                self._do_move(self.figs["CM"], action, bonus=True)
            self.bonus_mp = 0
        elif step is Step.CM_WINDOW:
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
            self.door_chits.setdefault(action.figure, []).append(action.chit)
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
            c.need = self.game.book.crt[c.attack[1]][self.answer_column(action.chit)]
            c.step = "roll"
        elif isinstance(action, Lose):
            c = self.combat
            assert c is not None
            c.pending_loss = ""
            self._lose(self.figs[action.figure], TECHNIQUES.index(action.technique))
            self._after_hit()
        self._settle()


class KungFuGame(Game):
    """Kung Fu 2100 with a scenario: ``basic``, ``advanced`` or ``solo``."""

    # state version 2: door_chits (the attack chits spent on the door) replaced door_tries (a count)
    info: ClassVar[GameInfo] = GameInfo("kf2100", "Kung Fu 2100", 2, ChanceMode.EXPLICIT, Information.IMPERFECT,
                                        -1.0, 1.0, 2)
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
            s.deal_rooms = self.solo_rooms(s)
        else:
            s.queue = [f.id for f in s.figs.values() if f.side == CLONE_MASTER and f.kind != "constabulary"]
        return s

    def solo_rooms(self, s: KungFuState) -> list[str]:
        """Solo set-up: the room each counter still to deal goes to, two to a room (corridors are not rooms
        here), round and round while counters are left, never more than a room's free squares."""
        n = sum(1 for f in s.figs.values() if f.status == "unplaced" and f.kind != "constabulary")
        room_space = {r: len(s.deal_squares(r)) for r, room in self.board.lair.rooms.items() if room.initials}
        per_room = self.scenario.solo["per_room"]
        out: list[str] = []
        while len(out) < n:
            before = len(out)
            for r in room_space:
                for _ in range(per_room):
                    if room_space[r] > 0 and len(out) < n:
                        out.append(r)
                        room_space[r] -= 1
            if len(out) == before:
                raise ValueError("the lair has no room for the solo counters")
        return out

    def state_from_dict(self, data: dict[str, Any]) -> KungFuState:
        """A saved position, refused unless the rules could have reached it (``SaveRules.from_data``)."""
        return KungFuState.from_data(self, data)


def skirmish(game: KungFuGame, placements: dict[str, str], phase: str = "move1", turn: int = 1,
             face_up: bool = True, waiting: dict[str, str] | None = None,
             levels: dict[str, list[int]] | None = None) -> KungFuState:
    """A position for tests, analysis and teaching: only the named figures stand in the lair (CM-side
    figures face up unless ``face_up`` is False), every other counter is off the map, and play starts
    at ``phase`` of ``turn``. Set-up is skipped."""
    s = game.new_initial_state()
    s.deal_rooms, s.queue = [], []
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
