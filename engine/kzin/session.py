"""The session model: one player's game of Man-Kzin Wars, with no UI import.

A ``KzinSession`` wraps one game for one browser tab or notebook: the rule options and the seed are
parameters, the player's commands are methods (``toggle``, ``defend``, ``fall_back``, ``attack``,
``pass_turn``, ``new_game``, ``save``, ``load``), and everything a view shows is a method or parameter
computed from the state (derived values have no side effects). Chance is played by the session's
seeded generator, so a seed reproduces a game. Commands that cannot be carried out raise nothing at
the view: they set ``message`` and leave the game exactly as it was.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass
from fractions import Fraction
from typing import Any

import pandas as pd
import param

from engine.core import IllegalActionError, StateFormatError, make_rng
from engine.core.rng import sample_outcome
from engine.core.serialize import (
    check_entries,
    dump_session,
    is_count,
    is_probability,
    is_text,
    load_session,
    optional,
)
from engine.kzin.advisor import Advice, advise
from engine.kzin.cards import CARDS, EARTH, HOME_WORLDS, HUMAN_FLEET, INVASION, SPACES, TYPE_NAMES
from engine.kzin.odds import Battle
from engine.kzin.rules import (
    KZINTI,
    OVER,
    RULE_OPTIONS,
    Attack,
    Commit,
    Defend,
    Draw,
    FallBack,
    KzinGame,
    KzinRules,
    KzinState,
    Pass,
    Roll,
)

SESSION_FORMAT = "tabletop-dojo/kzin-session"
SESSION_VERSION = 2  # 2: the whole file checksummed, the log and running odds checked entry by entry
LOG_FIELDS = {"turn": is_count, "event": is_text, "detail": is_text, "odds": optional(is_probability),
              "outcome": is_text}
RUNNING_ODDS_FIELDS = {"turn": is_count, "win": is_probability, "low": is_probability, "high": is_probability}


@dataclass(frozen=True)
class CardView:
    """A card in play as the table shows it."""

    kind: int
    copy: int  # 0 or 1 for the two copies of a Fleet
    name: str
    type: str
    force: str  # e.g. "+3 (+5 with technology)" as a short text
    selectable: bool
    selected: bool
    reason: str  # why it cannot be selected, when it cannot


class KzinSession(param.Parameterized):
    """One game of Man-Kzin Wars for one user."""

    seed = param.Integer(default=1, bounds=(0, None), doc="Seed of the next new game.")
    reshuffle = param.Boolean(default=True, doc=KzinRules.param.reshuffle.doc)
    kzin_fleet_force = param.Boolean(default=True, doc=KzinRules.param.kzin_fleet_force.doc)
    fallback_discards_conquest = param.Boolean(default=False, doc=KzinRules.param.fallback_discards_conquest.doc)
    kzin_base_force = param.Integer(default=10, bounds=(0, 30), doc=KzinRules.param.kzin_base_force.doc)
    start_space = param.Integer(default=9, bounds=(2, 11), doc=KzinRules.param.start_space.doc)
    advisor_rollouts = param.Integer(default=4000, bounds=(50, 20000), doc="Rollouts per state for the advisor.")

    state = param.ClassSelector(class_=KzinState, doc="The game in progress.")
    selection = param.List(default=[], item_type=int, doc="Card kinds selected for the commitment (one per copy).")
    message = param.String(default="", doc="What just happened, or why a command was refused.")
    log = param.List(default=[], doc="One dict per event of the game.")
    running_odds = param.List(default=[], doc="Estimated chance of winning the game at the start of each turn.")
    progress = param.Number(default=0.0, bounds=(0, 1), doc="Progress of the background rollouts.")
    last_move = param.Tuple(default=None, length=2, allow_None=True, doc="The marker's last move (from, to).")
    version = param.Integer(default=0, doc="Bumped on every change of the game, for views to depend on.")

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self._lock = threading.Lock()
        self._rng = make_rng(self.seed)
        self._advice_cache: tuple[Any, Advice] | None = None
        self._game_id = 0  # changes with every new or loaded game: stale background results are dropped
        if self.state is None:
            self.new_game()

    # --- commands ---------------------------------------------------------------------------
    def new_game(self, seed: int | None = None) -> None:
        """Start a new game with the current rule options and ``seed`` (default: the seed parameter)."""
        if seed is not None:
            if type(seed) is not int or seed < 0:
                self.message = f"the seed must be a whole number from 0, not {seed!r}"
                return
            self.seed = seed
        rules = KzinRules(**{k: getattr(self, k) for k in RULE_OPTIONS})
        self._rng = make_rng(self.seed)
        self._game_id += 1
        state = KzinGame(rules=rules).new_initial_state()
        drawn = self._advance(state)  # before the game is published: views and workers never see it half dealt
        with param.parameterized.batch_call_watchers(self):
            self.log = [_entry(1, "new game", f"seed {self.seed}", None, ""), *drawn]
            self.running_odds = []
            self.last_move = None
            self.selection = []
            self.state = state
            self.message = self._prompt()
            self._changed()

    def toggle(self, kind: int) -> bool:
        """Select one more copy of a card for the commitment, or clear it once every copy is selected.

        With two copies in play the selection cycles 0, 1, 2, 0. A card that adds nothing is refused.
        """
        reason = self._toggle_refusal(kind)
        if reason:
            self.message = reason
            return False
        selected = list(self.selection)
        if selected.count(kind) < self._uncommitted(kind):
            selected.append(kind)  # one more copy
        else:
            selected = [k for k in selected if k != kind]  # every copy was selected: clear them
        self.selection = selected
        self.message = self._prompt()
        return True

    def select(self, kinds: list[int]) -> bool:
        """Replace the selection (e.g. with the advisor's recommendation)."""
        for k in set(kinds):
            reason = self._toggle_refusal(k)
            if reason:
                self.message = reason
                return False
            if kinds.count(k) > self._uncommitted(k):
                self.message = f"only {self._uncommitted(k)} {CARDS[k].name} in play"
                return False
        self.selection = list(kinds)
        self.message = self._prompt()
        return True

    def defend(self) -> bool:
        """Defend the invasion with the selected cards."""
        return self._fight(Defend())

    def attack(self) -> bool:
        """Attack in the Liberation phase with the selected cards."""
        return self._fight(Attack())

    def fall_back(self) -> bool:
        return self._decline(FallBack())

    def pass_turn(self) -> bool:
        return self._decline(Pass())

    def follow_advice(self) -> bool:
        """Select what the advisor recommends and play it."""
        advice = self.advice()
        if advice is None:
            self.message = "there is no decision to advise on"
            return False
        rec = advice.recommended
        if rec.battle_odds is None:
            return self._decline(FallBack() if advice.phase == INVASION else Pass())
        self.selection = list(rec.cards)
        return self._fight(Defend() if advice.phase == INVASION else Attack())

    # --- derived views (no side effects) --------------------------------------------------------
    def decision(self) -> str | None:
        """'invasion' or 'liberation' when the player must decide, else None."""
        return None if self.state.current_player() != 0 else self.state.battle_phase

    def can(self, command: str) -> tuple[bool, str]:
        """Whether a command is legal now, and why not: the view enables buttons from this."""
        s = self.state
        if s.phase == OVER:
            return False, "the game is over: start a new game"
        action = {"defend": Defend(), "attack": Attack(), "fall back": FallBack(), "pass": Pass()}[command]
        probe = s.clone()
        probe.committed = []
        reason = probe.illegal_reason(action) if isinstance(action, (FallBack, Pass)) else None
        if reason is None and isinstance(action, (Defend, Attack)):
            wrong = probe.illegal_reason(FallBack() if isinstance(action, Defend) else Pass())
            if wrong:
                return False, wrong
            if not any(CARDS[k].type == HUMAN_FLEET for k in self.selection):
                return False, ("you have no Fleet in play" if not s.fleets_in_play()
                               else f"select at least one Fleet to {command}")
        return reason is None, reason or ""

    def table(self) -> list[CardView]:
        """Every card in play, one entry per copy, with whether it can be selected now."""
        s = self.state
        phase = s.battle_phase if self.decision() else None
        tech = s.technology()
        views = []
        remaining_selected = list(self.selection)
        for c in CARDS:
            for copy in range(s.in_play[c.index]):
                selected = c.index in remaining_selected
                if selected:
                    remaining_selected.remove(c.index)
                if c.type == HUMAN_FLEET:
                    force = f"{c.const + tech:+d}" + (f" ({c.const:+d} +{tech} tech)" if tech else "")
                    if c.bonus_phase:
                        force += f", {c.bonus:+d} in {c.bonus_phase.capitalize()}"
                else:
                    force = c.force_text() if not c.reinforcements else f"+X (X = {s.kem - 1} now)"
                reason = ""
                if not c.committable:
                    reason = f"{c.type_name} cards are not committed"
                elif phase is None:
                    reason = "no battle to commit to now"
                elif not c.counts_in(phase):
                    reason = f"counts only in the {c.only_phase.capitalize()} phase"
                views.append(CardView(c.index, copy, c.name, c.type, force, not reason, selected, reason))
        return views

    def battle(self) -> Battle | None:
        """The battle with the current selection, or None when it has no Fleet or there is no decision."""
        if not self.decision() or not any(CARDS[k].type == HUMAN_FLEET for k in self.selection):
            return None
        return Battle.from_state(self.state, self.selection)

    def win_probability(self) -> Fraction | None:
        b = self.battle()
        return None if b is None else b.win_probability()

    def force_table(self) -> pd.DataFrame | None:
        b = self.battle()
        return None if b is None else b.force_table()

    def kzin_force_table(self) -> pd.DataFrame | None:
        """The Kzin force alone (shown before any Fleet is selected)."""
        if not self.decision():
            return None
        s = self.state
        from engine.core import dist

        die = dist.dice_sum(1 + sum(c.dice for c in s.conquest_in_play()), 10) + s.kzin_const()
        t = dist.table(die, name="force")
        t.insert(0, "side", "Kzinti")
        return t

    def advice(self) -> Advice | None:
        """The advisor's ranking for the current decision (cached per decision)."""
        if not self.decision():
            return None
        s = self.state
        key = (self.version, self.advisor_rollouts)
        if self._advice_cache is None or self._advice_cache[0] != key:
            self._advice_cache = (key, advise(s, rollouts=self.advisor_rollouts, seed=self.seed + s.turn))
        return self._advice_cache[1]

    def deck_counts(self) -> pd.DataFrame:
        """Cards left in the deck by type, and the exact chance that the next card is of each type.

        With the deck empty the chances are None: the next card comes from the discards reshuffled at the end
        of this turn, and which cards those are depends on the decision still to be made."""
        pile = self.state.pile
        total = sum(pile)
        rows = []
        for t, name in TYPE_NAMES.items():
            n = sum(pile[c.index] for c in CARDS if c.type == t)
            p = Fraction(n, total) if total else None
            rows.append({"type": name, "left": n, "p_next": None if p is None else float(p), "p_next_exact": p})
        return pd.DataFrame(rows)

    def track(self) -> pd.DataFrame:
        """The 12 spaces with their side and where the marker is."""
        frame = pd.DataFrame(SPACES)
        frame["space"] = frame["space"].astype(int)
        frame["marker"] = frame["space"] == self.state.kem
        return frame

    def log_frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.log, columns=["turn", "event", "detail", "odds", "outcome"])

    def status(self) -> str:
        s = self.state
        where = SPACES[s.kem - 1]["location"]
        if s.phase == OVER:
            return f"{s.winner} won on turn {s.turn}. The marker is on {s.kem} ({where})."
        return f"Turn {s.turn}. The Expansion Marker is on space {s.kem} ({where}). {self._prompt()}"

    # --- saving -----------------------------------------------------------------------------
    def save(self) -> str:
        """The whole session as JSON: the saved game (core envelope), the generator, the log."""
        return dump_session(SESSION_FORMAT, SESSION_VERSION, self.state, self._rng, self.seed, self.log,
                            default=_json_default, running_odds=self.running_odds)

    def load(self, text: str | bytes) -> bool:
        """Load a saved session; a bad file sets ``message`` and the current game stays."""
        try:
            saved = load_session(text, SESSION_FORMAT, SESSION_VERSION, KzinGame, "saved Man-Kzin Wars game")
            check_entries(saved.log, "game log", LOG_FIELDS, {"snapshot": lambda v: isinstance(v, dict)})
            for entry in saved.log:
                if "snapshot" in entry:  # the running odds replay from these: the rules must accept each one
                    saved.state.game.state_from_dict(entry["snapshot"])
            odds = check_entries(saved.extra.get("running_odds", []), "running odds", RUNNING_ODDS_FIELDS)
            if any(not e["low"] <= e["win"] <= e["high"] for e in odds):
                raise StateFormatError("the running odds are damaged: an estimate outside its interval")
        except (StateFormatError, KeyError, TypeError, ValueError) as exc:  # a snapshot the rules refuse
            self.message = f"Could not load: {exc}. Your game goes on."
            return False
        state, rng, seed, log = saved.state, saved.rng, saved.seed, saved.log
        rules = state.rules
        with param.parameterized.batch_call_watchers(self):
            for k in RULE_OPTIONS:
                setattr(self, k, getattr(rules, k))
            self.seed = seed
            self._rng = rng
            self._game_id += 1
            self.log = log
            self.running_odds = odds
            self.selection = []
            self.last_move = None
            self.state = state
            self.message = "Game loaded. " + self._prompt()
            self._changed()
        return True

    # --- running odds (rollouts; the view runs this off the main thread) -------------------------
    def estimate_running_odds(self, rollouts: int = 4000, on_progress: Callable[[float], None] | None = None) -> None:
        """Estimate the chance of winning from the start of every turn so far that lacks an estimate.

        Each estimate is made by fast rollouts under the default (threshold) policy from the state
        at the start of that turn, recorded in the log as ``snapshot``.
        """
        from engine.core import wilson_interval
        from engine.kzin.fast import rollout_wins

        with self._lock:
            game_id = self._game_id
            done = {e["turn"] for e in self.running_odds}
            todo = [e for e in self.log if e.get("event") == "turn start" and e["turn"] not in done]
            results = list(self.running_odds)
            game = KzinGame(rules=self.state.rules)
            for i, entry in enumerate(todo):
                state = game.state_from_dict(entry["snapshot"])
                if state.phase == OVER:
                    wins, n = (rollouts if state.winner != KZINTI else 0), rollouts
                else:
                    wins, n = rollout_wins(state, "threshold", rollouts, seed=self.seed + entry["turn"])
                low, high = wilson_interval(wins, n)
                results.append({"turn": entry["turn"], "win": wins / n, "low": low, "high": high})
                if game_id != self._game_id:
                    return  # a new game started meanwhile: these estimates belong to the old one
                self.progress = (i + 1) / len(todo)
                if on_progress:
                    on_progress(self.progress)
            results.sort(key=lambda e: e["turn"])
            if game_id == self._game_id:
                self.running_odds = results
                self.progress = 1.0

    # --- internals ----------------------------------------------------------------------------
    def _changed(self) -> None:
        self.version += 1

    def _uncommitted(self, kind: int) -> int:
        return self.state.uncommitted()[kind]

    def _toggle_refusal(self, kind: int) -> str:
        if type(kind) is not int or not 0 <= kind < len(CARDS):
            return f"there is no card number {kind!r}"
        c = CARDS[kind]
        phase = self.decision()
        if phase is None:
            return "there is no battle to commit cards to now"
        if self.state.in_play[kind] == 0:
            return f"{c.name} is not in play"
        if not c.committable:
            return f"{c.name} is a {c.type_name} card: it is never committed"
        if not c.counts_in(phase):
            return f"{c.name} counts only in the {c.only_phase.capitalize()} phase: it would add nothing now"
        return ""

    def _fight(self, action: Defend | Attack) -> bool:
        ok, reason = self.can(str(action))
        if not ok:
            self.message = reason
            return False
        s = self.state
        trial = s.clone()
        try:
            trial.committed = []
            for k in self.selection:
                trial.apply_action(Commit(k))
            trial.apply_action(action)
        except IllegalActionError as exc:
            self.message = str(exc)
            return False
        odds = Battle.from_state(s, self.selection).win_probability()
        phase = s.battle_phase
        before = s.kem
        turn = s.turn
        names = ", ".join(CARDS[k].name for k in self.selection)
        rolls = self._roll_battle(trial)
        lb = trial.last_battle
        verdict = "won" if lb.humans_won else "lost"
        battle = _entry(turn, f"{phase} battle", f"{action} with {names}; dice {rolls}; "
                        f"Humans {lb.human_force} vs Kzinti {lb.kzin_force}", float(odds), verdict)
        self._settle(trial, before, battle,
                     f"You had {float(odds):.0%} and {verdict} ({lb.human_force} vs {lb.kzin_force}).")
        return True

    def _decline(self, action: FallBack | Pass) -> bool:
        s = self.state
        reason = s.illegal_reason(action)
        if reason:
            self.message = reason
            return False
        trial = s.clone()
        trial.committed = []
        before, turn = s.kem, s.turn
        trial.apply_action(action)
        detail = "the marker moves toward Earth" if isinstance(action, FallBack) else "no attack this turn"
        self._settle(trial, before, _entry(turn, str(action), detail, None, ""),
                     "You fell back." if isinstance(action, FallBack) else "You passed.")
        return True

    def _roll_battle(self, trial: KzinState) -> list[int]:
        rolls = []
        while trial.current_player() < 0 and trial.phase != OVER and trial.battle_phase is not None:
            outcome = sample_outcome(trial.chance_outcomes(), self._rng)
            assert isinstance(outcome, Roll)
            rolls.append(outcome.value)
            trial.apply_action(outcome)
        return rolls

    def _settle(self, trial: KzinState, marker_before: int, entry: dict, message: str) -> None:
        """Publish a decided turn: ``trial`` is played on to the next decision first, then the state, its log
        and the message change together, so a view or a worker thread never sees the turn half played."""
        drawn = self._advance(trial)
        with param.parameterized.batch_call_watchers(self):
            self.log = [*self.log, entry, *drawn]
            self.selection = []
            self.state = trial
            if trial.kem != marker_before:
                self.last_move = (marker_before, trial.kem)
            self.message = f"{message} {self._prompt()}".strip()
            self._changed()

    def _advance(self, s: KzinState) -> list[dict]:
        """Play chance (card draws) on ``s`` until the player must decide or the game ends: the log entries."""
        entries = []
        while s.current_player() < 0 and s.phase != OVER:
            if s.phase == "draw":
                entries.append(_entry(s.turn, "turn start", f"marker on {s.kem}", None, "", snapshot=s.to_dict()))
                draw = sample_outcome(s.chance_outcomes(), self._rng)
                assert isinstance(draw, Draw)
                c = CARDS[draw.kind]
                p = Fraction(s.pile[draw.kind], sum(s.pile))
                turn = s.turn  # a draw that needs no decision ends the turn
                entries.append(_entry(turn, "draw", f"{c.name} ({c.type_name})", float(p), ""))
                s.apply_action(draw)
            else:  # dice of a battle already committed (only after loading a mid-battle save)
                s.apply_action(sample_outcome(s.chance_outcomes(), self._rng))
        if s.phase == OVER:
            entries.append(_entry(s.turn, "game over", f"{s.winner} win", None, s.winner))
        return entries

    def _prompt(self) -> str:
        s = self.state
        if s.phase == OVER:
            return f"Game over: the {s.winner} won."
        fleet = s.invading_fleet()
        if s.phase == "invasion":
            if not s.fleets_in_play():
                return f"{fleet.name} invades! You have no Fleet: you must fall back."
            return f"{fleet.name} invades! Select Fleets and Tactics and defend, or fall back."
        if s.phase == "liberation":
            return "Liberation: select Fleets and Tactics and attack, or pass."
        return ""


def _entry(turn: int, event: str, detail: str, odds: float | None, outcome: str,
           snapshot: dict | None = None) -> dict:
    """One log entry (``snapshot``: the state at a turn's start, for the running odds)."""
    entry = {"turn": turn, "event": event, "detail": detail, "odds": odds, "outcome": outcome}
    if snapshot is not None:
        entry["snapshot"] = snapshot
    return entry


def _json_default(obj: Any) -> Any:
    if isinstance(obj, Fraction):
        return float(obj)
    if hasattr(obj, "__dataclass_fields__"):
        return asdict(obj)
    raise TypeError(f"cannot save {type(obj).__name__}")


__all__ = ["EARTH", "HOME_WORLDS", "CardView", "KzinSession"]
