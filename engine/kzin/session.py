"""The session model: one game of Man-Kzin Wars for the people watching it, with no UI import.

``KzinSession`` is a :class:`~engine.core.session.GameSession`: the rule options and the seed are
parameters, the player's moves are typed actions (``play(Commit(k))`` selects a card for the commitment,
``play(Defend())`` fights with the selection, ``play(FallBack())`` declines), and everything a view shows is
a method or parameter computed from the state (derived values have no side effects). Chance is played by
the session's seeded generator, so a seed reproduces a game. The named commands (``toggle``, ``defend``,
``fall_back``, ``attack``, ``pass_turn``, ``follow_advice``) are the views' attempts: a refusal becomes a
warning notice, returns False and leaves the game exactly as it was.

The advisor and the running odds are slow (rollouts): :meth:`KzinSession.advice_for` and
:func:`estimate_turn` are pure, so a view can run them on a worker thread over a snapshot and hand the
result back (:meth:`KzinSession.record_running_odds` drops the estimates of a game no longer in play).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass
from fractions import Fraction
from typing import Any

import pandas as pd
import param

from engine.core import IllegalActionError, StateFormatError, make_rng, wilson_interval
from engine.core.rng import sample_outcome
from engine.core.serialize import (
    SavedSession,
    check_entries,
    is_count,
    is_probability,
    is_text,
    optional,
)
from engine.core.session import GameSession, Level, Notice, Seat
from engine.kzin.advisor import ADVISORS, EXPERT, Advice, advise, expert_advice
from engine.kzin.cards import CARDS, EARTH, HOME_WORLDS, HUMAN_FLEET, INVASION, SPACES, TYPE_NAMES
from engine.kzin.odds import Battle
from engine.kzin.rules import (
    HUMANS,
    KZINTI,
    OVER,
    RULE_OPTIONS,
    Attack,
    Commit,
    Defend,
    Draw,
    FallBack,
    KzinAction,
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
PREDICTION_FIELDS = {"turn": is_count, "guess": is_probability, "exact": is_probability,
                     "won": lambda v: type(v) is bool}
RUNNING_ODDS_FIELDS = {"turn": is_count, "win": is_probability, "low": is_probability, "high": is_probability}
DECISIONS = (Defend(), FallBack(), Attack(), Pass())
"""The four decisions a player makes, in the order a page shows them."""


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


def estimate_turn(rules: KzinRules, snapshot: dict[str, Any], rollouts: int, seed: int) -> dict[str, Any]:
    """The chance of winning the game from a turn's start (a log snapshot), by fast rollouts under the
    default (threshold) policy, with its 95% Wilson interval: one running-odds entry."""
    from engine.kzin.fast import rollout_wins

    state = KzinGame(rules=rules).state_from_dict(snapshot)
    if state.phase == OVER:
        wins, n = (rollouts if state.winner != KZINTI else 0), rollouts
    else:
        wins, n = rollout_wins(state, "threshold", rollouts, seed=seed)
    low, high = wilson_interval(wins, n)
    return {"turn": state.turn, "win": wins / n, "low": low, "high": high}


class KzinSession(GameSession):
    """One game of Man-Kzin Wars: one seat, the Humans, played by a person or by the advisor."""

    FORMAT = SESSION_FORMAT
    FORMAT_VERSION = SESSION_VERSION
    GAME = KzinGame
    WHAT = "saved Man-Kzin Wars game"

    reshuffle = param.Boolean(default=True, doc=KzinRules.param.reshuffle.doc)
    kzin_fleet_force = param.Boolean(default=True, doc=KzinRules.param.kzin_fleet_force.doc)
    fallback_discards_conquest = param.Boolean(default=False, doc=KzinRules.param.fallback_discards_conquest.doc)
    kzin_base_force = param.Integer(default=10, bounds=(0, 30), doc=KzinRules.param.kzin_base_force.doc)
    start_space = param.Integer(default=9, bounds=(2, 11), doc=KzinRules.param.start_space.doc)
    advisor_rollouts = param.Integer(default=4000, bounds=(50, 20000), doc="Rollouts per state for the advisor.")
    advisor: param.Selector = param.Selector(default="rollouts", objects=list(ADVISORS),
                             doc="Who advises: 'rollouts' (today's advisor) or 'expert' (the learned expert).")

    state: param.ClassSelector[KzinState] = param.ClassSelector(  # type: ignore[assignment]
        class_=KzinState, doc="The game in progress.")
    seats = param.List(default=[Seat(HUMANS)], item_type=Seat, doc="The one seat: the Humans.")
    selection = param.List(default=[], item_type=int, doc="Card kinds selected for the commitment (one per copy).")
    running_odds = param.List(default=[], doc="Estimated chance of winning the game at the start of each turn.")
    progress = param.Number(default=0.0, bounds=(0, 1), doc="Progress of estimate_running_odds.")
    last_move = param.Tuple(default=None, length=2, allow_None=True, doc="The marker's last move (from, to).")
    guess = param.Number(default=None, allow_None=True, bounds=(0, 1),
                         doc="The player's own estimate of the chance to win the battle in view.")
    predictions = param.List(default=[], doc="Each battle the player estimated: turn, guess, exact chance, won.")
    predict = param.Boolean(default=False, doc="Predict, then see: the exact battle chance is hidden until the "
                            "player has typed their own estimate.")

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self._advice_cache: tuple[Any, Advice] | None = None
        self._advice_lock = threading.Lock()  # the pages of a table ask at once: the second waits for the first's
        self.param.watch(self._forget_guess, ["selection"])  # a guess is for one commitment
        if self.state is None:
            self.new_game()

    # --- commands ---------------------------------------------------------------------------
    def new_game(self, seed: int | None = None) -> bool:
        """Start a new game with the current rule options and ``seed`` (default: the seed parameter)."""
        if seed is not None:
            if type(seed) is not int or seed < 0:
                self.refuse(f"the seed must be a whole number from 0, not {seed!r}")
                return False
            self.seed = seed
        rules = KzinRules(**{k: getattr(self, k) for k in RULE_OPTIONS})
        self.rng = make_rng(self.seed)
        state = KzinGame(rules=rules).new_initial_state()
        drawn = self._advance(state)  # before the game is published: views and workers never see it half dealt
        with param.parameterized.batch_call_watchers(self):
            self.game_number += 1
            self.log = [_entry(1, "new game", f"seed {self.seed}", None, ""), *drawn]
            self.running_odds = []
            self.predictions = []
            self.guess = None
            self.last_move = None
            self.selection = []
            self.state = state
            self.notice = self._turn_notice()
            self._changed()
        return True

    def _play(self, action: Any) -> None:
        if not isinstance(action, KzinAction) or isinstance(action, (Draw, Roll)):
            raise IllegalActionError(f"{action} is not a move of the Humans: chance is played by the session")
        if isinstance(action, Commit):
            self._commit(action.kind)
        elif isinstance(action, (Defend, Attack)):
            self._fight(action)
        elif isinstance(action, (FallBack, Pass)):
            self._decline(action)
        else:
            raise IllegalActionError(f"{action} is not a move of the Humans")

    def toggle(self, kind: int) -> bool:
        """Select one more copy of a card for the commitment, or clear it once every copy is selected.

        With two copies in play the selection cycles 0, 1, 2, 0. A card that adds nothing is refused.
        """
        reason = self._commit_refusal(kind)
        if reason:
            self.refuse(reason)
            return False
        if self.selection.count(kind) < self._uncommitted(kind):
            self._commit(kind)
        else:
            self.selection = [k for k in self.selection if k != kind]  # every copy was selected: clear them
        return True

    def select(self, kinds: list[int]) -> bool:
        """Replace the selection (e.g. with the advisor's recommendation)."""
        if not isinstance(kinds, list) or any(type(k) is not int for k in kinds):
            self.refuse("a selection is a list of card numbers")
            return False
        for k in set(kinds):
            reason = self._commit_refusal(k) or (
                f"only {self._uncommitted(k)} {CARDS[k].name} in play" if kinds.count(k) > self._uncommitted(k)
                else "")
            if reason:
                self.refuse(reason)
                return False
        self.selection = list(kinds)
        return True

    def defend(self) -> bool:
        """Defend the invasion with the selected cards."""
        return self.attempt(self.play, Defend())

    def attack(self) -> bool:
        """Attack in the Liberation phase with the selected cards."""
        return self.attempt(self.play, Attack())

    def fall_back(self) -> bool:
        return self.attempt(self.play, FallBack())

    def pass_turn(self) -> bool:
        return self.attempt(self.play, Pass())

    def follow_advice(self) -> bool:
        """Play what the advisor recommends."""
        return self.attempt(self._bot_move)

    def _bot_move(self) -> None:
        advice = self.advice()
        if advice is None:
            raise IllegalActionError("there is no decision to advise on")
        self._play_advice(advice)

    def play_advice(self, advice: Advice, version: int) -> bool:
        """Play a recommendation worked out earlier (on a worker thread) for the game at ``version``: refused
        once the game has moved on."""
        return self.attempt(self._play_advice, advice, version)

    def _play_advice(self, advice: Advice, version: int | None = None) -> None:
        if version is not None and version != self.version:
            raise IllegalActionError("that advice was for an earlier decision")
        rec = advice.recommended
        if rec.battle_odds is None:
            self.play(FallBack() if advice.phase == INVASION else Pass())
            return
        self._fight(Defend() if advice.phase == INVASION else Attack(), list(rec.cards))  # the selection is not touched

    def _forget_guess(self, *_events: Any) -> None:
        self.guess = None

    def hides_odds(self) -> bool:
        """Whether the exact chance of the battle in view is hidden: predict-then-see mode before a guess."""
        return self.predict and self.guess is None and self.battle() is not None

    # --- derived views (no side effects) --------------------------------------------------------
    def decision(self) -> str | None:
        """'invasion' or 'liberation' when the player must decide, else None."""
        return None if self.state.current_player() != 0 else self.state.battle_phase

    def decisions(self) -> tuple[KzinAction, ...]:
        """The two decisions of the battle phase the player faces (none when nothing is to decide)."""
        phase = self.decision()
        if phase is None:
            return ()
        return (Defend(), FallBack()) if phase == INVASION else (Attack(), Pass())

    def can(self, action: KzinAction | str, cards: list[int] | None = None) -> tuple[bool, str]:
        """Whether a decision (an action, or its notation) is legal now with ``cards`` (default: the selection),
        and why not."""
        if isinstance(action, str):
            by_name = {str(a): a for a in DECISIONS}
            if action not in by_name:
                return False, f"there is no decision called {action[:20]!r}"
            action = by_name[action]
        cards = self.selection if cards is None else cards
        s = self.state
        if s.phase == OVER:
            return False, "the game is over: start a new game"
        phase = self.decision()
        if isinstance(action, (Defend, Attack)):
            wanted = INVASION if isinstance(action, Defend) else "liberation"
            if phase != wanted:
                return False, f"there is no {wanted} battle to {action} in now"
            if not any(CARDS[k].type == HUMAN_FLEET for k in cards):
                return False, ("you have no Fleet in play" if not s.fleets_in_play()
                               else f"select at least one Fleet to {action}")
            return True, ""
        probe = s.clone()
        probe.committed = []
        reason = probe.illegal_reason(action)
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
                    reason = f"counts only in the {str(c.only_phase).capitalize()} phase"
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

    def kzin_dice(self) -> int:
        """How many d10 the Kzinti roll: one, plus the dice of the Conquest cards in play."""
        return 1 + sum(c.dice for c in self.state.conquest_in_play())

    def kzin_force_table(self) -> pd.DataFrame | None:
        """The Kzin force alone (shown before any Fleet is selected)."""
        if not self.decision():
            return None
        from engine.core import dist

        die = dist.dice_sum(self.kzin_dice(), 10) + self.state.kzin_const()
        t = dist.table(die, name="force")
        t.insert(0, "side", "Kzinti")
        return t

    def advice(self) -> Advice | None:
        """The advisor's ranking for the current decision (cached per decision)."""
        return self.advice_for(self.state, self.version)

    def advice_for(self, state: KzinState, version: int) -> Advice | None:
        """The advisor's ranking for ``state``, the game at ``version`` (a snapshot a worker thread was handed):
        computed once per version and rollout count, and kept for ``advice()`` and ``follow_advice()``."""
        if state.current_player() != 0:
            return None
        key = (version, self.advisor_rollouts, self.advisor)
        with self._advice_lock:  # one computation per key, however many pages (a table's) ask for it at once
            cached = self._advice_cache
            if cached is not None and cached[0] == key:
                return cached[1]
            if self.advisor == EXPERT:
                advice = expert_advice(state)
            else:
                advice = advise(state, rollouts=self.advisor_rollouts, seed=self.seed + state.turn)
            self._advice_cache = (key, advice)
            return advice

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
        return f"Turn {s.turn}. The Expansion Marker is on space {s.kem} ({where}). {self.prompt()}"

    def calibration(self) -> dict[str, float] | None:
        """How well the player's estimates did over the game: their Brier score (mean squared gap between the
        estimate and what happened, 0 best), the exact odds' own Brier score over the same battles (what perfect
        estimates would have scored: the luck in it), and the mean gap between estimate and exact chance."""
        rows = self.predictions
        if not rows:
            return None
        n = len(rows)
        return {"battles": n,
                "brier": sum((r["guess"] - r["won"]) ** 2 for r in rows) / n,
                "exact_brier": sum((r["exact"] - r["won"]) ** 2 for r in rows) / n,
                "mean_gap": sum(abs(r["guess"] - r["exact"]) for r in rows) / n}

    # --- running odds (rollouts: a view runs estimate_turn on a worker thread) ----------------------
    def running_odds_todo(self) -> list[dict[str, Any]]:
        """The log's turn starts that have no running-odds estimate yet (each with its ``snapshot``)."""
        done = {e["turn"] for e in self.running_odds}
        return [e for e in self.log if e.get("event") == "turn start" and e["turn"] not in done]

    def record_running_odds(self, game_number: int, entries: list[dict[str, Any]]) -> bool:
        """Merge estimates made for game ``game_number``; estimates of a game no longer in play are dropped."""
        if game_number != self.game_number:
            return False
        have = {e["turn"] for e in self.running_odds}
        merged = [*self.running_odds, *(e for e in entries if e["turn"] not in have)]
        self.running_odds = sorted(merged, key=lambda e: e["turn"])
        return True

    def estimate_running_odds(self, rollouts: int = 4000, on_progress: Callable[[float], None] | None = None) -> None:
        """Estimate, here and now, the chance of winning from the start of every turn that lacks an estimate."""
        game_number, rules, todo = self.game_number, self.state.rules, self.running_odds_todo()
        for i, entry in enumerate(todo):
            result = estimate_turn(rules, entry["snapshot"], rollouts, seed=self.seed + entry["turn"])
            if not self.record_running_odds(game_number, [result]):
                return  # a new game started meanwhile: these estimates belong to the old one
            self.progress = (i + 1) / len(todo)
            if on_progress:
                on_progress(self.progress)
        self.progress = 1.0

    # --- saving (the path itself is GameSession's) ---------------------------------------------------
    def _save_extra(self) -> dict[str, Any]:
        return {"running_odds": self.running_odds, "predictions": self.predictions}

    def _check_saved(self, saved: SavedSession) -> dict[str, Any]:
        check_entries(saved.log, "game log", LOG_FIELDS, {"snapshot": lambda v: isinstance(v, dict)})
        for entry in saved.log:
            if "snapshot" in entry:  # the running odds replay from these: the rules must accept each one
                saved.state.game.state_from_dict(entry["snapshot"])
        odds = check_entries(saved.extra.get("running_odds", []), "running odds", RUNNING_ODDS_FIELDS)
        if any(not e["low"] <= e["win"] <= e["high"] for e in odds):
            raise StateFormatError("the running odds are damaged: an estimate outside its interval")
        predictions = check_entries(saved.extra.get("predictions", []), "predictions", PREDICTION_FIELDS)
        return {"running_odds": odds, "predictions": predictions}

    def _restore(self, saved: SavedSession, extra: dict[str, Any]) -> None:
        assert isinstance(saved.state, KzinState)  # load_session read it with KzinGame
        rules = saved.state.rules
        for k in RULE_OPTIONS:
            setattr(self, k, getattr(rules, k))
        self.running_odds = extra["running_odds"]
        self.predictions = extra["predictions"]
        self.guess = None
        self.selection = []
        self.last_move = None

    @staticmethod
    def _json_default(obj: Any) -> Any:
        if isinstance(obj, Fraction):
            return float(obj)
        if hasattr(obj, "__dataclass_fields__"):
            return asdict(obj)
        raise TypeError(f"cannot save {type(obj).__name__}")

    # --- internals ----------------------------------------------------------------------------
    def _uncommitted(self, kind: int) -> int:
        return self.state.uncommitted()[kind]

    def _commit_refusal(self, kind: Any) -> str:
        if type(kind) is not int or not 0 <= kind < len(CARDS):
            return f"there is no card number {str(kind)[:20]!r}"
        c = CARDS[kind]
        phase = self.decision()
        if phase is None:
            return "there is no battle to commit cards to now"
        if self.state.in_play[kind] == 0:
            return f"{c.name} is not in play"
        if not c.committable:
            return f"{c.name} is a {c.type_name} card: it is never committed"
        if not c.counts_in(phase):
            return f"{c.name} counts only in the {str(c.only_phase).capitalize()} phase: it would add nothing now"
        return ""

    def _commit(self, kind: int) -> None:
        """Add one more copy of a card to the selection for the commitment."""
        reason = self._commit_refusal(kind)
        if not reason and self.selection.count(kind) >= self._uncommitted(kind):
            reason = f"every {CARDS[kind].name} in play is selected already"
        if reason:
            raise IllegalActionError(reason)
        self.selection = [*self.selection, kind]

    def _fight(self, action: Defend | Attack, cards: list[int] | None = None) -> None:
        """Fight with ``cards`` (default: the selection); every check is made on a copy before anything changes."""
        cards = list(self.selection if cards is None else cards)
        ok, reason = self.can(action, cards)
        if not ok:
            raise IllegalActionError(reason)
        s = self.state
        trial = s.clone()
        trial.committed = []
        for k in cards:
            trial.apply_action(Commit(k))
        trial.apply_action(action)
        odds = Battle.from_state(s, cards).win_probability()
        phase = s.battle_phase
        before = s.kem
        turn = s.turn
        names = ", ".join(CARDS[k].name for k in cards)
        plan = trial.dice_plan()
        human_const, kzin_const = trial.human_const(), trial.kzin_const()
        rolls = self._roll_battle(trial)
        lb = trial.last_battle
        assert lb is not None  # the battle was just rolled
        verdict = "won" if lb.humans_won else "lost"
        battle = _entry(turn, f"{phase} battle", f"{action} with {names}; "
                        f"{dice_text(plan, rolls, human_const, kzin_const)}", float(odds), verdict)
        said = f"You had {float(odds):.0%} and {verdict} ({lb.human_force} vs {lb.kzin_force})."
        predicted = None
        if self.guess is not None:
            predicted = {"turn": turn, "guess": float(self.guess), "exact": float(odds), "won": bool(lb.humans_won)}
            said += f" You had guessed {self.guess:.0%}."
        self._settle(trial, before, battle, Notice(said, Level.SUCCESS if lb.humans_won else Level.WARNING),
                     predicted)

    def _decline(self, action: FallBack | Pass) -> None:
        s = self.state
        reason = s.illegal_reason(action)
        if reason:
            raise IllegalActionError(reason)
        trial = s.clone()
        trial.committed = []
        before, turn = s.kem, s.turn
        trial.apply_action(action)
        detail = "the marker moves toward Earth" if isinstance(action, FallBack) else "no attack this turn"
        self._settle(trial, before, _entry(turn, str(action), detail, None, ""),
                     Notice("You fell back." if isinstance(action, FallBack) else "You passed."))

    def _roll_battle(self, trial: KzinState) -> list[int]:
        rolls = []
        while trial.current_player() < 0 and trial.phase != OVER and trial.battle_phase is not None:
            outcome = sample_outcome(trial.chance_outcomes(), self.rng)
            assert isinstance(outcome, Roll)
            rolls.append(outcome.value)
            trial.apply_action(outcome)
        return rolls

    def _settle(self, trial: KzinState, marker_before: int, entry: dict, said: Notice,
                predicted: dict[str, Any] | None = None) -> None:
        """Publish a decided turn: ``trial`` is played on to the next decision first, then the state, its log
        and the notice change together, so a view or a worker thread never sees the turn half played."""
        drawn = self._advance(trial)
        passed = passed_turns(drawn, trial.turn)
        if passed:
            said = Notice(f"{said.text} {passed}", said.level)
        with param.parameterized.batch_call_watchers(self):
            self.log = [*self.log, entry, *drawn]
            if predicted is not None:
                self.predictions = [*self.predictions, predicted]
            self.selection = []
            self.guess = None
            self.state = trial
            if trial.kem != marker_before:
                self.last_move = (marker_before, trial.kem)
            after = self._turn_notice()
            level = after.level if after.level in (Level.SUCCESS, Level.DANGER) or said.level == Level.INFO \
                else said.level
            self.notice = Notice(f"{said.text} {after.text}".strip(), level)
            self._changed()

    def _advance(self, s: KzinState) -> list[dict]:
        """Play chance (card draws) on ``s`` until the player must decide or the game ends: the log entries."""
        entries = []
        while s.current_player() < 0 and s.phase != OVER:
            if s.phase == "draw":
                entries.append(_entry(s.turn, "turn start", f"marker on {s.kem}", None, "", snapshot=s.to_dict()))
                draw = sample_outcome(s.chance_outcomes(), self.rng)
                assert isinstance(draw, Draw)
                c = CARDS[draw.kind]
                p = Fraction(s.pile[draw.kind], sum(s.pile))
                turn = s.turn  # a draw that needs no decision ends the turn
                entries.append(_entry(turn, "draw", f"{c.name} ({c.type_name})", float(p), ""))
                s.apply_action(draw)
            else:  # dice of a battle already committed (only after loading a mid-battle save)
                s.apply_action(sample_outcome(s.chance_outcomes(), self.rng))
        if s.phase == OVER:
            entries.append(_entry(s.turn, "game over", f"{s.winner} win", None, str(s.winner)))
        return entries

    def _turn_notice(self) -> Notice:
        """The prompt of the decision now, at the level it deserves (an invasion warns, the end is final)."""
        s = self.state
        if s.phase == OVER:
            return Notice(self.prompt(), Level.SUCCESS if s.winner != KZINTI else Level.DANGER)
        return Notice(self.prompt(), Level.WARNING if s.phase == "invasion" else Level.INFO)

    def prompt(self) -> str:
        s = self.state
        if s.phase == OVER:
            return f"Game over: the {s.winner} won."
        fleet = s.invading_fleet()
        if s.phase == "invasion" and fleet is not None:
            if not s.fleets_in_play():
                return f"{fleet.name} invades! You have no Fleet: you must fall back."
            return f"{fleet.name} invades! Select Fleets and Tactics and defend, or fall back."
        if s.phase == "liberation":
            return "Liberation: select Fleets and Tactics and attack, or pass."
        return ""


def dice_text(plan: list[tuple[str, str]], rolls: list[int], human_const: int, kzin_const: int) -> str:
    """A battle's dice labelled by side and source, with each side's total:
    "Humans: Human d10 3, Marines d10 1, +9 = 13; Kzinti: Kzin d10 4, +10 = 14"."""
    parts = []
    for side, const in ((HUMANS, human_const), (KZINTI, kzin_const)):
        dice = [f"{label} {r}" for (who, label), r in zip(plan, rolls, strict=True) if who == side]
        total = const + sum(r for (who, _), r in zip(plan, rolls, strict=True) if who == side)
        parts.append(f"{side}: {', '.join(dice)}, {const:+d} = {total}")
    return "; ".join(parts)


def passed_turns(drawn: list[dict], now: int) -> str:
    """The turns played out with no decision since the last one (a Technology or Tactics card drawn, an
    invasion with no Fleet to defend): one sentence, so the player sees them pass and not only in the log."""
    passed = [e for e in drawn if e["event"] == "draw" and e["turn"] < now]
    if not passed:
        return ""
    turns = sorted({e["turn"] for e in passed})
    span = f"Turn {turns[0]}" if len(turns) == 1 else f"Turns {turns[0]}-{turns[-1]}"
    cards = "; ".join(f"{e['turn']}: {e['detail']}" for e in passed)
    return f"{span} passed without a decision ({cards})."


def _entry(turn: int, event: str, detail: str, odds: float | None, outcome: str,
           snapshot: dict | None = None) -> dict:
    """One log entry (``snapshot``: the state at a turn's start, for the running odds)."""
    entry = {"turn": turn, "event": event, "detail": detail, "odds": odds, "outcome": outcome}
    if snapshot is not None:
        entry["snapshot"] = snapshot
    return entry


__all__ = ["DECISIONS", "EARTH", "HOME_WORLDS", "CardView", "KzinSession", "dice_text", "estimate_turn", "passed_turns"]
