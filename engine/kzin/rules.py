"""Man-Kzin Wars on the core protocol: the whole turn sequence with explicit chance nodes.

A turn: Draw (chance: a card, each remaining card equally likely) -> the card's phase acts ->
Invasion (Kzin Fleet: the player defends or falls back) or Technology/Deployment/Tactics/Conquest
(the card goes into play) -> Liberation (on a turn without invasion, the player may attack).

A battle is a few decisions then dice: the player commits cards one at a time (``commit <card>``),
then ``defend`` / ``attack``; ``fall back`` / ``pass`` decline. Committing one card per action keeps
``legal_actions()`` small however many cards are in play; the dashboard and the policies choose a
whole set and send it as a sequence. Then every d10 is a chance node: the Humans' d10, one per die of
each committed Tactics card, the Kzinti's d10, one per die of each dice Conquest card in play.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Annotated, Any, ClassVar, Literal

import msgspec
import param

from engine.core import CHANCE, TERMINAL, Action, ChanceMode, Game, GameInfo, Information, State
from engine.core.protocol import malformed
from engine.core.serialize import check_schema, quote
from engine.kzin.cards import (
    CARDS,
    CONQUEST,
    DECK_SIZE,
    EARTH,
    FULL_DECK,
    HOME_WORLDS,
    HUMAN_FLEET,
    INVASION,
    KZIN_FLEET,
    LIBERATION,
    NUM_KINDS,
    TECHNOLOGY,
    Card,
    card,
)
from engine.kzin.cards import PHASES as BATTLE_PHASES

HUMANS, KZINTI = "Humans", "Kzinti"
FLEET_KINDS = tuple(c.index for c in CARDS if c.type == HUMAN_FLEET)
TECH_KINDS = tuple(c.index for c in CARDS if c.type == TECHNOLOGY)
CONQUEST_KINDS = tuple(c.index for c in CARDS if c.type == CONQUEST)
D10 = tuple(range(1, 11))
P_D10 = Fraction(1, 10)


class KzinRules(param.Parameterized):
    """The rule options. Defaults are the project's rulings (``shared/design/man-kzin-wars.md``)."""

    reshuffle = param.Boolean(default=True, doc=(
        "When the deck runs out, shuffle the discards into a new deck and go on. "
        "Off: the game ends when the deck runs out and the Kzinti win."))
    kzin_fleet_force = param.Boolean(default=True, doc=(
        "The invading Kzin Fleet card's own force (+2 .. -2) adds to the Kzin force."))
    fallback_discards_conquest = param.Boolean(default=False, doc=(
        "Falling back also discards the Conquest cards in play (off: they stay)."))
    kzin_base_force = param.Integer(default=10, bounds=(0, 30), doc="The constant in the Kzin force, 1D10 + this.")
    start_space = param.Integer(default=9, bounds=(2, 11), doc="Where the Expansion Marker starts (9: Frontier).")

    def options(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in RULE_OPTIONS}


RULE_OPTIONS = ("reshuffle", "kzin_fleet_force", "fallback_discards_conquest", "kzin_base_force", "start_space")


def make_rules(**options: Any) -> KzinRules:
    """A rules object from keyword options; an unknown option or a bad value is a ``ValueError``."""
    unknown = set(options) - set(RULE_OPTIONS)
    if unknown:
        raise ValueError(f"unknown rule option(s) {', '.join(quote(k) for k in sorted(unknown)[:3])}; "
                         f"known: {', '.join(RULE_OPTIONS)}")
    for name, value in options.items():
        expected = bool if isinstance(KzinRules.param[name], param.Boolean) else int
        if type(value) is not expected:
            raise ValueError(f"rule option {name} must be {expected.__name__}, not {quote(value)}")
    try:
        return KzinRules(**options)
    except ValueError as exc:
        raise ValueError(f"bad rule option: {exc}") from None


# --- actions ------------------------------------------------------------------------------------

class KzinAction(Action):
    """Base of the game's moves; ``KzinAction.parse`` reads any of them."""

    __slots__ = ()

    @classmethod
    def parse(cls, text: str) -> KzinAction:
        words = text.strip()
        low = words.casefold()
        for simple in (FallBack(), Defend(), Attack(), Pass()):
            if low == str(simple):
                return simple
        if low.startswith("commit "):
            return Commit(card(words[7:]).index)
        if low.startswith("draw "):
            return Draw(card(words[5:]).index)
        if low.startswith("roll "):
            value = int(words[5:])
            if value not in D10:
                raise ValueError(f"a d10 shows 1 to 10, not {value}")
            return Roll(value)
        raise ValueError("expected draw <card>, roll <1-10>, commit <card>, defend, attack, fall back or pass")


def _card_name(kind: Any) -> str:
    """A move's card by name; a number that is no card (the rules refuse it) as itself, not as the card that
    Python's negative index would pick, nor an IndexError."""
    if type(kind) is int and 0 <= kind < NUM_KINDS:
        return CARDS[kind].name
    return f"card #{repr(kind)[:20]}"


@dataclass(frozen=True, slots=True)
class Draw(KzinAction):
    kind: int

    def __str__(self) -> str:
        return f"draw {_card_name(self.kind)}"


@dataclass(frozen=True, slots=True)
class Roll(KzinAction):
    value: int

    def __str__(self) -> str:
        return f"roll {self.value}"


@dataclass(frozen=True, slots=True)
class Commit(KzinAction):
    kind: int

    def __str__(self) -> str:
        return f"commit {_card_name(self.kind)}"


@dataclass(frozen=True, slots=True)
class FallBack(KzinAction):
    def __str__(self) -> str:
        return "fall back"


@dataclass(frozen=True, slots=True)
class Defend(KzinAction):
    def __str__(self) -> str:
        return "defend"


@dataclass(frozen=True, slots=True)
class Attack(KzinAction):
    def __str__(self) -> str:
        return "attack"


@dataclass(frozen=True, slots=True)
class Pass(KzinAction):
    def __str__(self) -> str:
        return "pass"


# --- phases -------------------------------------------------------------------------------------

DRAW = "draw"
INVASION_DECISION, INVASION_BATTLE = "invasion", "invasion battle"
LIBERATION_DECISION, LIBERATION_BATTLE = "liberation", "liberation battle"
OVER = "over"
PHASES = (DRAW, INVASION_DECISION, INVASION_BATTLE, LIBERATION_DECISION, LIBERATION_BATTLE, OVER)
BATTLE_PHASE = {INVASION_DECISION: INVASION, INVASION_BATTLE: INVASION,
                LIBERATION_DECISION: LIBERATION, LIBERATION_BATTLE: LIBERATION}


@dataclass(frozen=True)
class BattleResult:
    """What the last battle was and how it ended (kept for logs and teaching)."""

    phase: str
    human_force: int
    kzin_force: int
    humans_won: bool
    committed: tuple[int, ...]
    rolls: tuple[int, ...]


class KzinState(State):
    """One position. Cards are counts per kind: ``pile`` (the deck), ``discard`` and ``in_play``.

    A drawn Kzin Fleet card is held in ``drawn`` until its battle or fall-back discards it; any
    other drawn card goes straight into play (``drawn`` still names it for the turn's display).
    """

    __slots__ = ("committed", "discard", "drawn", "in_play", "kem", "last_battle", "phase", "pile", "rolls",
                 "turn", "winner")
    game: KzinGame  # State.game, known to be this game's

    def __init__(self, game: KzinGame) -> None:
        super().__init__(game)
        self.kem: int = game.rules.start_space
        self.turn = 1
        self.phase = DRAW
        self.pile: list[int] = list(FULL_DECK)
        self.discard: list[int] = [0] * NUM_KINDS
        self.in_play: list[int] = [0] * NUM_KINDS
        self.drawn: int | None = None
        self.committed: list[int] = []
        self.rolls: list[int] = []
        self.winner: str | None = None
        self.last_battle: BattleResult | None = None

    # --- facts the player sees ---------------------------------------------------------------
    @property
    def rules(self) -> KzinRules:
        return self.game.rules

    @property
    def battle_phase(self) -> str | None:
        """``invasion`` or ``liberation`` while a battle is being decided or fought, else None."""
        return BATTLE_PHASE.get(self.phase)

    def technology(self) -> int:
        in_play = self.in_play
        return sum(in_play[k] for k in TECH_KINDS)

    def fleets_in_play(self) -> int:
        in_play = self.in_play
        return sum(in_play[k] for k in FLEET_KINDS)

    def cards_in_play(self) -> list[Card]:
        """Every card in play, one entry per copy."""
        return [CARDS[k] for k, n in enumerate(self.in_play) if n for _ in range(n)]

    def conquest_in_play(self) -> list[Card]:
        in_play = self.in_play
        return [CARDS[k] for k in CONQUEST_KINDS if in_play[k] for _ in range(in_play[k])]

    def uncommitted(self) -> list[int]:
        """Copies in play not yet committed, per kind."""
        left = list(self.in_play)
        for k in self.committed:
            left[k] -= 1
        return left

    def committable(self) -> list[Card]:
        """Kinds that may be committed now (in play, a copy left, and adding something in this phase)."""
        phase = self.battle_phase
        if self.phase not in (INVASION_DECISION, LIBERATION_DECISION):
            return []
        left = self.uncommitted()
        return [c for c in CARDS if left[c.index] > 0 and c.committable and c.counts_in(phase)]

    def invading_fleet(self) -> Card | None:
        return CARDS[self.drawn] if self.drawn is not None and CARDS[self.drawn].type == KZIN_FLEET else None

    def dice_plan(self) -> list[tuple[str, str]]:
        """The battle's d10s in rolling order, as (side, label)."""
        phase = self.battle_phase
        plan = [(HUMANS, "Human d10")]
        for k in self.committed:
            c = CARDS[k]
            plan += [(HUMANS, f"{c.name} d10")] * c.dice_in(phase)
        plan.append((KZINTI, "Kzin d10"))
        for c in self.conquest_in_play():
            plan += [(KZINTI, f"{c.name} d10")] * c.dice
        return plan

    def human_const(self) -> int:
        phase, tech = self.battle_phase, self.technology()
        return sum(CARDS[k].const_in(phase, tech, self.kem) for k in self.committed)

    def kzin_const(self) -> int:
        """The Kzin force without dice: base, the invading fleet (option), Conquest cards in play."""
        phase = self.battle_phase
        total = self.rules.kzin_base_force
        fleet = self.invading_fleet()
        if phase == INVASION and fleet is not None and self.rules.kzin_fleet_force:
            total += fleet.const
        return total + sum(c.const_in(phase) for c in self.conquest_in_play())

    # --- protocol ----------------------------------------------------------------------------
    def current_player(self) -> int:
        if self.phase in (INVASION_DECISION, LIBERATION_DECISION):
            return 0
        if self.phase == OVER:
            return TERMINAL
        return CHANCE

    def chance_outcomes(self) -> list[tuple[Action, Fraction]]:
        if self.phase == DRAW:
            total = sum(self.pile)
            return [(Draw(k), Fraction(n, total)) for k, n in enumerate(self.pile) if n]
        if self.phase in (INVASION_BATTLE, LIBERATION_BATTLE):
            return [(Roll(v), P_D10) for v in D10]
        return super().chance_outcomes()

    def sample_chance(self, rng: Any) -> Action:
        """As ``chance_outcomes`` would draw, without building Fractions: simulation's hot path."""
        if self.phase == DRAW:
            r = int(rng.integers(sum(self.pile)))
            for k, n in enumerate(self.pile):
                if r < n:
                    return Draw(k)
                r -= n
        if self.phase in (INVASION_BATTLE, LIBERATION_BATTLE):
            return Roll(int(rng.integers(1, 11)))
        return super().sample_chance(rng)

    def legal_actions(self) -> list[Action]:
        phase = self.phase
        if phase == OVER:
            return []
        if self.current_player() == CHANCE:
            return [a for a, _ in self.chance_outcomes()]
        actions: list[Action] = [FallBack() if phase == INVASION_DECISION else Pass()]
        actions += [Commit(c.index) for c in self.committable()]
        if any(CARDS[k].type == HUMAN_FLEET for k in self.committed):
            actions.append(Defend() if phase == INVASION_DECISION else Attack())
        return actions

    def illegal_reason(self, action: Action) -> str | None:
        reason = malformed(action)
        if reason is not None:
            return reason
        if isinstance(action, (Draw, Commit)) and not 0 <= action.kind < NUM_KINDS:
            return f"there is no card number {action.kind} (the cards are numbered 0-{NUM_KINDS - 1})"
        if isinstance(action, Roll) and action.value not in D10:
            return f"a d10 shows 1 to 10, not {action.value}"
        phase = self.phase
        if phase == OVER:
            return "the game is over"
        if self.current_player() == CHANCE:
            return super().illegal_reason(action)
        if not isinstance(action, KzinAction):
            return f"{action} is not a Man-Kzin Wars move"
        if isinstance(action, (Draw, Roll)):
            return f"it is the player's decision in the {phase} phase, not a {type(action).__name__.lower()}"
        battle = self.battle_phase
        if isinstance(action, (FallBack, Defend)) and phase != INVASION_DECISION:
            return f"'{action}' answers an invasion; this is the Liberation phase (attack or pass)"
        if isinstance(action, (Attack, Pass)) and phase != LIBERATION_DECISION:
            return f"'{action}' is for the Liberation phase; the Kzinti are invading (defend or fall back)"
        if isinstance(action, Commit):
            c = CARDS[action.kind]
            if not c.committable:
                return f"{c.name} is a {c.type_name} card; only Fleets and Tactics are committed"
            if self.in_play[c.index] == 0:
                return f"{c.name} is not in play"
            if self.uncommitted()[c.index] == 0:
                return f"every copy of {c.name} in play is already committed"
            if c.only_phase is not None and not c.counts_in(battle):
                return f"{c.name} counts only in the {c.only_phase.capitalize()} phase; it adds nothing here"
            return None
        if isinstance(action, (Defend, Attack)):
            if not any(CARDS[k].type == HUMAN_FLEET for k in self.committed):
                if self.fleets_in_play() == 0:
                    return "you have no Fleet in play" + (": you must fall back" if battle == INVASION else "")
                return f"commit at least one Fleet to {action}"
        return None

    def _apply(self, action: Action) -> None:
        phase = self.phase
        if isinstance(action, Draw):
            self._draw(action.kind)
        elif isinstance(action, Roll):
            self.rolls.append(action.value)
            if len(self.rolls) == len(self.dice_plan()):
                self._resolve_battle()
        elif isinstance(action, Commit):
            self.committed.append(action.kind)
        elif isinstance(action, (Defend, Attack)):
            self.phase = INVASION_BATTLE if phase == INVASION_DECISION else LIBERATION_BATTLE
        elif isinstance(action, FallBack):
            self._discard_drawn()
            if self.rules.fallback_discards_conquest:
                self._discard_conquest()
            self.committed = []
            self._move_marker(-1)
            self._end_turn()
        elif isinstance(action, Pass):
            self.committed = []
            self._end_turn()

    def returns(self) -> list[float]:
        return [1.0 if self.winner == HUMANS else 0.0]

    # --- turn mechanics ----------------------------------------------------------------------
    def _draw(self, kind: int) -> None:
        self.pile[kind] -= 1
        self.drawn = kind
        c = CARDS[kind]
        if c.type == KZIN_FLEET:
            self.phase = INVASION_DECISION
            return
        self.in_play[kind] += 1
        self._start_liberation()

    def _start_liberation(self) -> None:
        if self.fleets_in_play():
            self.phase = LIBERATION_DECISION
        else:
            self._end_turn()

    def _resolve_battle(self) -> None:
        plan = self.dice_plan()
        human = self.human_const() + sum(r for (side, _), r in zip(plan, self.rolls, strict=True) if side == HUMANS)
        kzin = self.kzin_const() + sum(r for (side, _), r in zip(plan, self.rolls, strict=True) if side == KZINTI)
        won = human >= kzin  # Humans win ties
        self.last_battle = BattleResult(BATTLE_PHASE[self.phase], human, kzin, won, tuple(self.committed),
                                        tuple(self.rolls))
        self._finish_battle(won)

    def after_battle(self, committed: list[int], humans_won: bool) -> KzinState:
        """A copy of this decision's state after a battle with ``committed`` that ended as given.

        Used by the advisor: a battle's consequences depend on the dice only through who won, so
        the exact odds weight these two states and rollouts start from each.
        """
        if self.phase not in (INVASION_DECISION, LIBERATION_DECISION):
            raise ValueError("no battle is being decided now")
        after = self.clone()
        after.committed = list(committed)
        after._finish_battle(humans_won)
        return after

    def after_declining(self) -> KzinState:
        """A copy of this decision's state after falling back (invasion) or passing (liberation)."""
        after = self.clone()
        after._apply(FallBack() if self.phase == INVASION_DECISION else Pass())
        return after

    def _finish_battle(self, won: bool) -> None:
        battle = self.battle_phase
        self._discard_drawn()
        self._discard_conquest()
        for k in self.committed:
            self.in_play[k] -= 1
            self.discard[k] += 1
        self.committed = []
        self.rolls = []
        if battle == INVASION and not won:
            self._move_marker(-1)
        elif battle == LIBERATION and won:
            self._move_marker(+1)
        self._end_turn()

    def _discard_drawn(self) -> None:
        fleet = self.invading_fleet()
        if fleet is not None:
            self.discard[fleet.index] += 1

    def _discard_conquest(self) -> None:
        in_play, discard = self.in_play, self.discard
        for k in CONQUEST_KINDS:
            if in_play[k]:
                discard[k] += in_play[k]
                in_play[k] = 0

    def _move_marker(self, step: int) -> None:
        self.kem += step
        if self.kem <= EARTH:
            self.winner = KZINTI
        elif self.kem >= HOME_WORLDS:
            self.winner = HUMANS

    def _end_turn(self) -> None:
        self.drawn = None
        if self.winner is not None:
            self.phase = OVER
            return
        if not any(self.pile):
            if not self.rules.reshuffle or not any(self.discard):
                self.winner = KZINTI
                self.phase = OVER
                return
            self.pile, self.discard = self.discard, [0] * NUM_KINDS
        self.turn += 1
        self.phase = DRAW

    # --- copies and persistence --------------------------------------------------------------
    def clone(self) -> KzinState:
        c = KzinState.__new__(KzinState)
        c.game = self.game
        c.kem, c.turn, c.phase = self.kem, self.turn, self.phase
        c.pile, c.discard, c.in_play = self.pile[:], self.discard[:], self.in_play[:]
        c.drawn, c.committed, c.rolls = self.drawn, self.committed[:], self.rolls[:]
        c.winner, c.last_battle = self.winner, self.last_battle
        return c

    def to_dict(self) -> dict[str, Any]:
        def names(counts: list[int]) -> dict[str, int]:
            return {CARDS[k].name: n for k, n in enumerate(counts) if n}

        lb = self.last_battle
        return {
            "kem": self.kem,
            "turn": self.turn,
            "phase": self.phase,
            "deck": names(self.pile),
            "discard": names(self.discard),
            "in_play": names(self.in_play),
            "drawn": None if self.drawn is None else CARDS[self.drawn].name,
            "committed": [CARDS[k].name for k in self.committed],
            "rolls": list(self.rolls),
            "winner": self.winner,
            "last_battle": None if lb is None else {
                "phase": lb.phase, "human_force": lb.human_force, "kzin_force": lb.kzin_force,
                "humans_won": lb.humans_won, "committed": [CARDS[k].name for k in lb.committed],
                "rolls": list(lb.rolls)},
        }

    def player_view(self, player: int) -> dict[str, Any]:
        """Everything but the deck's order, which the engine never stores: the counts are public."""
        return self.to_dict()

    def __str__(self) -> str:
        return (f"turn {self.turn}, {self.phase}, marker on {self.kem}"
                f"{'' if self.winner is None else ', ' + self.winner + ' won'}")


class KzinGame(Game):
    """Man-Kzin Wars with a set of rule options."""

    info: ClassVar[GameInfo] = GameInfo(
        name="kzin", title="Man-Kzin Wars", num_players=1, chance_mode=ChanceMode.EXPLICIT,
        information=Information.PERFECT, min_utility=0.0, max_utility=1.0, state_version=1)
    action_type = KzinAction

    def __init__(self, rules: KzinRules | None = None, **options: Any) -> None:
        if rules is not None and options:
            raise ValueError("give either a rules object or rule options, not both")
        self.rules = rules if rules is not None else make_rules(**options)

    def new_initial_state(self, rng: Any = None) -> KzinState:
        return KzinState(self)

    def rule_options(self) -> dict[str, Any]:
        return self.rules.options()

    def player_name(self, player: int) -> str:
        return "the Humans"

    def state_from_dict(self, data: dict[str, Any]) -> KzinState:
        return _state_from_dict(self, data)


# --- the saved state's schema (msgspec): every field's type and range, before the rules look at its meaning ---
MAX_DICE = 2 + sum(c.copies * c.dice for c in CARDS)
"""The most d10s one battle can roll: the Humans' and the Kzinti's, and every die card in the deck."""
FORCE_LIMIT = 40 + sum(c.copies * (abs(c.const) + abs(c.bonus) + 10 * c.dice + DECK_SIZE + HOME_WORLDS)
                       for c in CARDS)
"""No force of either side comes near this: every card's constant, bonus and dice, technology and the marker."""
_Name = Annotated[str, msgspec.Meta(max_length=60)]
_Copies = Annotated[int, msgspec.Meta(ge=1, le=DECK_SIZE)]
_D10 = Annotated[int, msgspec.Meta(ge=1, le=10)]
_Force = Annotated[int, msgspec.Meta(ge=-FORCE_LIMIT, le=FORCE_LIMIT)]


class _BattleFile(msgspec.Struct, forbid_unknown_fields=True):
    phase: Literal[BATTLE_PHASES]
    human_force: _Force
    kzin_force: _Force
    humans_won: bool
    committed: Annotated[list[_Name], msgspec.Meta(max_length=DECK_SIZE)]
    rolls: Annotated[list[_D10], msgspec.Meta(min_length=2, max_length=MAX_DICE)]


class _StateFile(msgspec.Struct, forbid_unknown_fields=True):
    kem: Annotated[int, msgspec.Meta(ge=EARTH, le=HOME_WORLDS)]
    turn: Annotated[int, msgspec.Meta(ge=1, le=10**6)]
    phase: Literal[PHASES]
    deck: dict[_Name, _Copies]
    discard: dict[_Name, _Copies]
    in_play: dict[_Name, _Copies]
    drawn: _Name | None
    committed: Annotated[list[_Name], msgspec.Meta(max_length=DECK_SIZE)]
    rolls: Annotated[list[_D10], msgspec.Meta(max_length=MAX_DICE)]
    winner: Literal[HUMANS, KZINTI] | None
    last_battle: _BattleFile | None = None


def _counts(data: Any, what: str) -> list[int]:
    out = [0] * NUM_KINDS
    for name, n in data.items():
        out[card(name).index] += n
    return out


def _state_from_dict(game: KzinGame, data: dict[str, Any]) -> KzinState:
    check_schema(data, _StateFile, "the saved game is damaged")
    s = KzinState(game)
    s.kem, s.turn, s.phase = data["kem"], data["turn"], data["phase"]
    s.pile, s.discard, s.in_play = (_counts(data[k], k) for k in ("deck", "discard", "in_play"))
    s.drawn = None if data["drawn"] is None else card(data["drawn"]).index
    s.committed = [card(n).index for n in data["committed"]]
    s.rolls = list(data["rolls"])
    s.winner = data["winner"]
    lb = data.get("last_battle")
    if lb is not None:
        s.last_battle = BattleResult(lb["phase"], lb["human_force"], lb["kzin_force"], lb["humans_won"],
                                     tuple(card(n).index for n in lb["committed"]), tuple(lb["rolls"]))
        _check_battle(s.last_battle, game.rules)
    _validate(s)
    return s


def _check_battle(b: BattleResult, rules: KzinRules) -> None:
    """A saved last battle as one the rules could have fought: committed cards that count in its phase, the dice
    its cards roll, each side's force within what its cards and dice make, and the winner the forces give."""
    for k in b.committed:
        c = CARDS[k]
        if not c.committable or not c.counts_in(b.phase):
            raise ValueError(f"the last battle: {c.name} cannot be committed in the {b.phase} phase")
    if not any(CARDS[k].type == HUMAN_FLEET for k in b.committed):
        raise ValueError("the last battle was fought without a Fleet")
    human_dice = 1 + sum(CARDS[k].dice_in(b.phase) for k in b.committed)
    if len(b.rolls) <= human_dice:
        raise ValueError("the last battle's dice are not its cards' dice")
    techs = sum(CARDS[k].copies for k in TECH_KINDS)
    consts = [(CARDS[k].const_in(b.phase, 0, EARTH + 1), CARDS[k].const_in(b.phase, techs, HOME_WORLDS - 1))
              for k in b.committed]
    human_rolls = sum(b.rolls[:human_dice])
    if not sum(lo for lo, _ in consts) + human_rolls <= b.human_force <= sum(hi for _, hi in consts) + human_rolls:
        raise ValueError("the last battle's human force is not what its cards and dice make")
    conquest = [CARDS[k] for k in CONQUEST_KINDS]
    kzin_rolls = sum(b.rolls[human_dice:])
    fleet = max(abs(c.const) for c in CARDS if c.type == KZIN_FLEET) if b.phase == INVASION else 0
    spread = fleet + sum(c.copies * abs(c.const_in(b.phase)) for c in conquest)
    if not rules.kzin_base_force + kzin_rolls - spread <= b.kzin_force <= rules.kzin_base_force + kzin_rolls + spread:
        raise ValueError("the last battle's Kzin force is not what its cards and dice make")
    if b.humans_won != (b.human_force >= b.kzin_force):
        raise ValueError("the last battle's winner is not the one its forces give")


def _validate(s: KzinState) -> None:
    """Refuse any state the rules cannot reach: every card accounted for exactly once, and so on."""
    held = s.invading_fleet()
    if s.phase in (INVASION_DECISION, INVASION_BATTLE) and held is None:
        raise ValueError("an invasion needs a drawn Kzin Fleet card")
    if held is not None and s.phase not in (INVASION_DECISION, INVASION_BATTLE):
        raise ValueError("a Kzin Fleet card is held outside an invasion")
    for c in CARDS:
        total = s.pile[c.index] + s.discard[c.index] + s.in_play[c.index] + (held is c)
        if total != c.copies:
            raise ValueError(f"{c.name}: {total} copies accounted for, the deck has {c.copies}")
        if s.in_play[c.index] and c.type == KZIN_FLEET:
            raise ValueError(f"{c.name} cannot be in play")
    if s.phase in (INVASION_DECISION, INVASION_BATTLE, LIBERATION_DECISION, LIBERATION_BATTLE):
        left = s.uncommitted()
        if any(n < 0 for n in left):
            raise ValueError("more copies committed than are in play")
        for k in s.committed:
            c = CARDS[k]
            if not c.committable or not c.counts_in(s.battle_phase):
                raise ValueError(f"{c.name} cannot be committed in the {s.battle_phase} phase")
    elif s.committed:
        raise ValueError("cards are committed outside a battle")
    battle = s.phase in (INVASION_BATTLE, LIBERATION_BATTLE)
    if battle and not any(CARDS[k].type == HUMAN_FLEET for k in s.committed):
        raise ValueError("a battle needs at least one committed Fleet")
    if s.rolls and not battle:
        raise ValueError("dice rolled outside a battle")
    if any(r not in D10 for r in s.rolls) or (battle and len(s.rolls) >= len(s.dice_plan())):
        raise ValueError("impossible dice")
    if s.phase == LIBERATION_DECISION and not s.fleets_in_play():
        raise ValueError("Liberation needs a Fleet in play")
    if s.winner not in (None, HUMANS, KZINTI) or (s.winner is None) == (s.phase == OVER):
        raise ValueError("the winner does not match the phase")
    if s.phase != OVER and not EARTH < s.kem < HOME_WORLDS:
        raise ValueError("the marker is on a victory space but the game goes on")
    if s.phase == DRAW and not any(s.pile):
        raise ValueError("a draw from an empty deck")
