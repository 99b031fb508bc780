"""What the player clicks on the Kung-Fu Zoo page: the flick's controls, the abilities, the round's result,
and the game's controls.

Each is a :class:`panel.viewable.Viewer` over the session. A widget that mirrors a session parameter (the die,
the spot, the aim) is set from the session when it changes, and a player's change of it runs the session's
command through :func:`apps.commands.on_page`; a refused command says why in the notice and the widget goes
back to what the session holds. At a table each click first asks the page's ``may_act`` (see :func:`allowed`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import panel as pn
import param

from apps._files import GameFiles
from apps.commands import on_page
from apps.zoo import adapter, views
from apps.zoo.arena import PROPOSAL, Arena
from apps.zoo.panels import OddsPanel
from engine.core.session import BOT, PERSON, Level, Notice, Seat
from engine.zoo.constants import FACE_NAMES, TEAMS, abilities
from engine.zoo.session import ZooSession
from engine.zoo.table import secret_seed

MAY_ACT_DOC = ("At a table: asked before a click changes the battle; it says why not on this page (None: a "
               "page of one's own).")
MODES = {"Cage Battle": ("cage", False), "Points Battle": ("points", False), '"All Valley" Cage Battle': ("cage", True)}
BUTTON_MARGIN = (22, 6, 4, 6)


def allowed(may_act: Callable[..., bool] | None, move: bool = True) -> bool:
    """Whether this page may act now: always on a page of one's own; at a table as its gate says (a move or
    its aim is for the player to move; ``move=False``, a new game, a file or the odds' options, for any player)."""
    return may_act is None or bool(may_act(move=move))


def set_changed(widget: pn.viewable.Viewable, **values: Any) -> None:
    """Set only what differs: every property set costs a message to the page (and Panel's styling work)."""
    changed = {k: v for k, v in values.items() if getattr(widget, k) != v}
    if changed:
        widget.param.update(**changed)


class _Mirror:
    """Widgets set from the session are not commands: a change made while syncing is not sent back."""

    def __init__(self) -> None:
        self.syncing = False

    def sync(self, fn: Callable[[], None]) -> None:
        self.syncing = True
        try:
            fn()
        finally:
            self.syncing = False


class FlickControls(pn.viewable.Viewer):
    """The animal, launch spot, face and aim of the flick (mirrored from the session), Commit, Pass the extra
    flick, and who starts the next round."""

    session = param.ClassSelector(class_=ZooSession)
    arena = param.ClassSelector(class_=Arena)
    odds = param.ClassSelector(class_=OddsPanel)
    may_act = param.Callable(default=None, doc=MAY_ACT_DOC)

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        s, a = self.session, self.arena
        self._mirror = _Mirror()
        self.die = pn.widgets.Select(label="Animal", options=[], width=110)
        self.spot = pn.widgets.Select(label="Launch spot", options=[], width=150)
        self.face = pn.widgets.RadioButtonGroup(label="Face set up", options=list(FACE_NAMES), value=s.face,
                                                margin=BUTTON_MARGIN)
        self.direction = pn.widgets.FloatInput(label="Direction (°)", value=s.direction, step=1.0, width=110)
        self.speed = pn.widgets.FloatInput(label="Speed (m/s)", value=s.speed, step=0.05, start=0.2, end=2.5,
                                           width=110)
        self.strike = pn.widgets.FloatSlider(label="Strike height (0 slides, 1 tumbles)", start=0.0,
                                             end=1.0, step=0.05, value=s.strike, width=230, margin=(4, 10))
        self._on(self.die, lambda v: v and v != s.die and s.choose_die(v))
        self._on(self.strike, lambda v: v != s.strike and s.set_strike(v), "value_throttled")  # on release
        self._on(self.spot, lambda v: v and v != s.spot and s.launch_spot(v))
        self._on(self.face, lambda v: v != s.face and s.set_face(v))
        self._on(self.direction, lambda _v: self._typed_aim())
        self._on(self.speed, lambda _v: self._typed_aim())
        live = a.live
        turn = [a.param.shown, a.param.animating, live.param.round_result, live.param.seats]  # as the arena shows it
        self.commit = pn.widgets.Button(
            label="Commit flick", color="primary", width=130, margin=BUTTON_MARGIN,
            disabled=pn.bind(lambda *_: not self.can_commit(), *turn, *(live.param[k] for k in PROPOSAL)))
        self.commit.on_click(on_page(self.commit_flick, s))
        self.replay = pn.widgets.Button(label="Replay slowly", width=120, margin=BUTTON_MARGIN,
                                        disabled=pn.bind(lambda *_: not (s.last_frames and a.settled()), *turn,
                                                         live.param.last_frames))
        self.replay.on_click(on_page(a.replay, s))  # the last flick again at a quarter of its speed
        self.pass_extra = pn.widgets.Button(label="Pass the extra flick", width=160, margin=BUTTON_MARGIN,
                                            visible=pn.bind(lambda *_: self._person_in("extra"), *turn))
        self.pass_extra.on_click(on_page(lambda: allowed(self.may_act) and s.pass_extra(), s))
        self.first = []
        for q in range(4):
            b = pn.widgets.Button(label=f"P{q + 1} starts", margin=(22, 4, 4, 4),
                                  visible=pn.bind(lambda *_, q=q: self._may_start(q), *turn))
            b.on_click(on_page(lambda q=q: allowed(self.may_act) and s.choose_first(q), s))
            self.first.append(b)
        live.param.watch(lambda *_e: self.follow(), [*PROPOSAL, "round_result"])  # on the page's own tick
        a.param.watch(lambda *_e: self.follow(), ["shown"])  # a move: once the arena shows it
        self.follow()

    def _on(self, widget: pn.widgets.Widget, command: Callable[[Any], Any], what: str = "value") -> None:
        def changed(event: Any) -> None:
            if not self._mirror.syncing:
                on_page(lambda: (not allowed(self.may_act) or command(event.new) is False) and self.follow(),
                        self.session)(event)

        widget.param.watch(changed, what)

    def _person_in(self, *phases: str) -> bool:
        s = self.session
        st = s.state
        return (st.phase in phases and s.seats[st.to_move].kind == PERSON and s.round_result is None
                and self.arena.settled())

    def _may_start(self, q: int) -> bool:
        st = self.session.state
        return self._person_in("first") and q < st.game.players and not st.eliminated[q]

    def can_commit(self) -> bool:
        return self._person_in("flick", "extra") and self.session.proposal_problem() is None

    def follow(self) -> None:
        """Set the widgets to what the session holds (not a command)."""
        self._mirror.sync(self._set_widgets)

    def _set_widgets(self) -> None:
        s = self.session
        st = s.state
        flickable = st.flickable() if st.phase in ("flick", "extra") and s.round_result is None else []
        set_changed(self.die, options=flickable)
        if s.die in flickable:
            set_changed(self.die, value=s.die)
        opts = s.spot_options()
        spots = list(opts["dots"]) + (["here"] if opts["here"] else [])
        if s.spot not in spots and s.proposed_flick() is not None and s.spot != "here":
            spots.append(s.spot)
        set_changed(self.spot, options=spots)
        if s.spot in spots:
            set_changed(self.spot, value=s.spot)
        set_changed(self.face, value=s.face, disabled=s.spot == "here")
        set_changed(self.direction, value=s.direction)
        set_changed(self.speed, value=s.speed)
        set_changed(self.strike, value=s.strike)
        for q, b in enumerate(self.first):
            if q < st.game.players:
                set_changed(b, label=f"{st.game.player_name(q)} starts")

    def _typed_aim(self) -> bool:
        s = self.session
        d, v = self.direction.value, self.speed.value
        if d is None or v is None or (d, v) == (s.direction, s.speed):
            return True
        return s.propose_flick(d, v)

    def commit_flick(self) -> bool:
        """Play the proposed flick; the odds shown for it go into its log entry."""
        s = self.session
        if not allowed(self.may_act):
            return False
        if not self.arena.settled():
            s.refuse("Wait for the flick to finish rolling.")
            return False
        flick = s.proposed_flick()
        odds = self.odds.odds_for(str(flick)) if flick is not None else None
        if odds is not None:
            s.note_odds(odds)
        return s.commit_flick() is not None

    def __panel__(self) -> pn.viewable.Viewable:
        return pn.Column(pn.Row(self.die, self.spot, self.direction, self.speed), pn.Row(self.face, self.strike),
                         pn.Row(self.commit, self.replay, self.pass_extra, *self.first), margin=0)


class Abilities(pn.viewable.Viewer):
    """The teams' ability cards and the button of the player to move: Chest Pound or Dust Kick on a target,
    the Trunk Shot's spot, or arming the Ambush (an explicit step: a rail click never arms it)."""

    session = param.ClassSelector(class_=ZooSession)
    arena = param.ClassSelector(class_=Arena)
    may_act = param.Callable(default=None, doc=MAY_ACT_DOC)

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        s = self.session
        self.target = pn.widgets.Select(label="Target", options=[], width=120, visible=False)
        self.button = pn.widgets.Button(label="Use ability", color="success", margin=BUTTON_MARGIN, disabled=True)
        self.button.on_click(on_page(self.use, s))
        self.cards = pn.pane.HTML(sizing_mode="stretch_width", margin=0)
        self.arena.param.watch(lambda *_e: self.follow(), ["shown"])
        self.arena.live.param.watch(lambda *_e: self.follow(), ["use_ability_flag", "round_result", "seats", "spot"])
        self.follow()

    def follow(self) -> None:
        s = self.session
        st = s.state
        set_changed(self.cards, object=views.cards_html(s))
        ready = (st.phase in ("flick", "extra") and s.seats[st.to_move].kind == PERSON and s.round_result is None
                 and st.ability_ready(st.to_move) and self.arena.settled())
        targets: list[str] = []
        label, disabled = "Use ability", True
        if ready:
            ab = abilities()[st.team(st.to_move)]
            if ab.key == "dust-kick":
                targets = [f"P{q + 1}" for q in range(st.game.players) if q != st.to_move and not st.eliminated[q]]
            elif ab.key == "chest-pound":
                targets = adapter.stunned(s, st.to_move)
            label = (("Disarm Ambush" if s.use_ability_flag else "Arm Ambush") if ab.key == "ambush" else
                     "Trunk Shot: flick from where it lies" if ab.key == "trunk-shot" else f"Use {ab.name}")
            disabled = ab.key in ("dust-kick", "chest-pound") and not targets
        set_changed(self.button, label=label, disabled=disabled)
        set_changed(self.target, options=targets, visible=bool(targets))

    def use(self) -> bool:
        s = self.session
        if not allowed(self.may_act):
            return False
        st = s.state
        if st.phase not in ("flick", "extra"):
            s.refuse("An ability is used on your own turn, before you flick.")
            return False
        key = abilities()[st.team(st.to_move)].key
        if key == "trunk-shot":
            return s.launch_spot("here")
        if key == "ambush":
            return s.arm_ability(not s.use_ability_flag)
        return s.use_ability(self.target.value or "")

    def __panel__(self) -> pn.viewable.Viewable:
        return pn.Column(self.cards, pn.Row(self.target, self.button), sizing_mode="stretch_width", margin=0)


class RoundCard(pn.viewable.Viewer):
    """The result card of the round just ended, over its final board, until Next round."""

    session = param.ClassSelector(class_=ZooSession)
    arena = param.ClassSelector(class_=Arena)
    may_act = param.Callable(default=None, doc=MAY_ACT_DOC)

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        s, a = self.session, self.arena
        shown = pn.bind(lambda result, animating, _v: result is not None and not animating,
                        a.live.param.round_result, a.param.animating, a.param.shown)
        self.card = pn.pane.HTML(pn.bind(lambda result, animating, _v: "" if animating else views.result_html(result),
                                         a.live.param.round_result, a.param.animating, a.param.shown),
                                 sizing_mode="stretch_width", name="round-result")
        self.next = pn.widgets.Button(label="Next round", color="primary", margin=(4, 6), visible=shown)
        self.next.on_click(on_page(lambda: allowed(self.may_act, move=False) and s.next_round(), s))
        self._box = pn.Column(self.card, self.next, visible=shown, sizing_mode="stretch_width", margin=(0, 10))

    def __panel__(self) -> pn.viewable.Viewable:
        return self._box


class GameControls(pn.viewable.Viewer):
    """Mode, players, teams, seats (person or bot), seed and New game; the aim noise of the odds; the game files."""

    session = param.ClassSelector(class_=ZooSession)
    autosave = param.Boolean(default=False, doc="Keep the game on disk after every change (a served page).")
    may_act = param.Callable(default=None, doc=MAY_ACT_DOC)
    secret_seed = param.Boolean(default=False, doc="A table's battle: each new one is dealt from a fresh secret seed "
                                "that no page shows (the seed and the log replay every flick's aim noise).")

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        s = self.session
        self.mode = pn.widgets.Select(label="Mode", options=list(MODES), value="Cage Battle", width=190)
        self.players = pn.widgets.IntInput(label="Players", value=s.players, start=2, end=4, width=80)
        self.teams = [pn.widgets.Select(label=f"P{q + 1} team", options=list(TEAMS), value=TEAMS[q], width=105,
                                        visible=pn.bind(lambda n, q=q: q < (n or 2), self.players))
                      for q in range(4)]
        self.seats = [pn.widgets.Select(label=f"P{q + 1} seat", options=[PERSON, BOT],
                                        value=s.seats[q].kind if q < len(s.seats) else BOT, width=105,
                                        visible=pn.bind(lambda n, q=q: q < (n or 2), self.players))
                      for q in range(4)]
        self.seed = pn.widgets.IntInput(label="Seed", value=None if self.secret_seed else s.seed, start=0, width=100,
                                        visible=not self.secret_seed)
        self.new = pn.widgets.Button(label="New game", color="primary", margin=BUTTON_MARGIN)
        self.new.on_click(on_page(self.new_game))
        self.angle_sd = pn.widgets.FloatInput(label="Aim noise: angle sd (°)", value=s.aim_angle_sd, start=0, end=90,
                                              step=0.5, width=170)
        self.speed_sd = pn.widgets.FloatInput(label="Aim noise: speed sd (fraction)", value=s.aim_speed_sd, start=0,
                                              end=1, step=0.01, width=190)
        for w in (self.angle_sd, self.speed_sd):
            w.param.watch(lambda e: on_page(self._set_noise)(e), "value")
        self.files = GameFiles("zoo", "kung-fu-zoo.json", s, self.load_text, self.autosave, refuse=self._refuse_file)

    def new_game(self) -> bool:
        """A new battle with the options in the controls; a bad field keeps the battle."""
        s = self.session
        if not allowed(self.may_act, move=False):
            return False
        mode, valley = MODES[self.mode.value]
        n = int(self.players.value or 2)
        seed = secret_seed() if self.secret_seed else self.seed.value
        if seed is None or seed < 0:
            s.refuse("Enter a seed: a whole number from 0.")
            return False
        if n != s.players and self.may_act is not None and not self.may_act(move=False, seats=True):
            self.players.value = s.players  # at a table, only its maker may change the number of teams
            return False
        teams = [w.value for w in self.teams[:n]]
        if len(set(teams)) != n:
            s.refuse("Each player needs a different team.")
            return False
        old = {k: getattr(s, k) for k in ("mode", "players", "teams", "seats", "all_valley")}
        with param.parameterized.batch_call_watchers(s):
            s.param.update(mode=mode, players=n, teams=teams, all_valley=valley)
            s.seats = [Seat(f"P{q + 1}", w.value) for q, w in enumerate(self.seats[:n])]
            ok = s.new_game(int(seed))
            if not ok:
                s.param.update(**old)
        return ok

    def _set_noise(self) -> None:
        s = self.session
        if (self.angle_sd.value, self.speed_sd.value) == (s.aim_angle_sd, s.aim_speed_sd):
            return  # this page's inputs set back to the session's (below, or when another page changed them)
        if not allowed(self.may_act, move=False):
            self.angle_sd.value, self.speed_sd.value = s.aim_angle_sd, s.aim_speed_sd
            return
        try:
            s.param.update(aim_angle_sd=float(self.angle_sd.value), aim_speed_sd=float(self.speed_sd.value))
        except (TypeError, ValueError) as exc:
            s.refuse(f"Aim noise: {exc}")
            self.angle_sd.value, self.speed_sd.value = s.aim_angle_sd, s.aim_speed_sd

    def _refuse_file(self, reason: str) -> None:
        """A file the page would not even read (too big, unreadable): said like every other refusal of a file."""
        self.session.notice = Notice(f"Could not load: {reason}. Your battle goes on.", Level.DANGER)

    def load_text(self, text: str | bytes) -> bool:
        """Load a saved battle (a file's text, or the autosave); the controls then show its options."""
        s = self.session
        if not allowed(self.may_act, move=False) or not s.try_load(text):
            return False
        g = s.state.game
        self.mode.value = next(k for k, (m, v) in MODES.items() if m == g.mode and v == (g.all_valley and
                                                                                        g.players == 2))
        self.players.value = g.players
        if not self.secret_seed:
            self.seed.value = s.seed
        for q in range(g.players):
            self.teams[q].value = g.teams[q]
            self.seats[q].value = s.seats[q].kind
        self.angle_sd.value, self.speed_sd.value = s.aim_angle_sd, s.aim_speed_sd
        return True

    def __panel__(self) -> pn.viewable.Viewable:
        return pn.Column(
            # A FlexBox wraps: in a notebook cell the Game box is narrower than a tab's and New game was cut off.
            pn.FlexBox(self.mode, self.players, self.seed, self.new, flex_wrap="wrap", margin=0), pn.Row(*self.teams),
            pn.Row(*self.seats),
            pn.Row(self.angle_sd, self.speed_sd), self.files.row(with_warning=False),
            pn.pane.Markdown(f"*{views.DESIGN_NOTE}*", styles={"font-size": "12px", "color": "#6b7280"}),
            sizing_mode="stretch_width")
