"""What the player clicks on the Man-Kzin Wars page: the card tiles, the four decisions and the game controls.

Each is a :class:`panel.viewable.Viewer` over the session: its content is bound to the session's parameters,
and its clicks call the session's commands with typed actions (``Defend()``, ``FallBack()``), which refuse
an illegal one with a notice and change nothing.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import panel as pn
import param

from apps._files import GameFiles
from apps.commands import on_page
from apps.kzin import views
from apps.live import PageView
from engine.core.session import Level, Notice
from engine.kzin.cards import HUMAN_FLEET, TACTICS
from engine.kzin.rules import RULE_OPTIONS, Attack, Defend, FallBack, KzinAction, Pass
from engine.kzin.session import KzinSession
from engine.kzin.table import secret_seed

RULE_LABELS = {
    "reshuffle": "Reshuffle the discards when the deck runs out",
    "kzin_fleet_force": "The invading Kzin Fleet's own force counts",
    "fallback_discards_conquest": "Falling back discards the Conquest cards",
    "kzin_base_force": "Kzin base force",
    "start_space": "Marker starts on space",
}
MAY_ACT_DOC = ("Called before every click that plays: a table's page refuses a watcher or a browser without the seat "
               "(and says why on that page only) by returning False; None on a page of one's own.")
TILE_STYLES = """
:host(.tile) .bk-btn { height: 84px; width: 178px; white-space: pre-line; text-align: left; line-height: 1.3;
  font-size: 13px; border: 1px solid var(--tile-border); border-left: 7px solid var(--tile-colour);
  padding: 6px 10px; background: var(--tile-background) !important; color: var(--tile-text) !important;
  box-shadow: var(--tile-ring); }
:host(.tile) .bk-btn:disabled { opacity: 0.55; }
"""
"""Every tile's one stylesheet, set when the tile is made. What differs from tile to tile (its card type's colour,
selected or not) is in CSS variables of the tile's inline ``styles``: a stylesheet is a Bokeh model (changed from
another browser's click, at a table, Panel 1.9.4 would build it in that browser's document, and Bokeh refuses a
model in two documents), and a change of CSS classes makes a browser lay the whole page out again."""


class KzinView(PageView):
    """A part of the Man-Kzin Wars page: its views follow the session's parameters as this page has them."""

    session = param.ClassSelector(class_=KzinSession)
    LIVE = ("version", "selection", "guess", "predict", "notice", "predictions", "advisor", "advisor_rollouts")
    """What the page's text and controls follow (its charts follow a copy of their own: ``page.CHARTS_LIVE``)."""


def tile_styles(card_type: str, selected: bool) -> dict[str, str]:
    """The CSS variables of a tile of this card type (its colour; filled with it once selected)."""
    colour = views.TYPE_COLOURS[card_type]
    if selected:
        return {"--tile-colour": colour, "--tile-border": colour, "--tile-background": colour, "--tile-text": "#ffffff",
                "--tile-ring": "0 0 0 2px #111827"}
    return {"--tile-colour": colour, "--tile-border": "#d1d5db", "--tile-background": "#ffffff",
            "--tile-text": "#111827", "--tile-ring": "none"}


NO_TILES = "No Human Fleet or Tactics card in play."
TILE_POOL_START, TILE_POOL_STEP = 24, 8
"""Tiles the pool starts with (hidden), and grows by when the cards in play outnumber it. A new tile changes the
tiles' box, and a browser draws a changed box again whole, every tile with it (measured: 1.3-1.6 s of the other
browser's time at a table, where a tile relabelled or shown takes a few ms), and eight new tiles made in a click
took 80-100 ms of the server's (the worst decisions of ``python -m apps._bench``); a game that keeps its cards has
up to 26 in play. 24 to start with: the page takes about 30 ms longer to build for each 8."""


class CardTiles(KzinView):
    """The Human Fleets and Tactics in play, one tile a copy: a click selects or unselects it for the battle.

    The tiles are a pool of buttons that follows the table: a tile is shown, relabelled or hidden when the
    cards or the selection change, never built again, so a click always lands on a live button and a long
    game does not pile up widgets."""

    may_act = param.Callable(default=None, doc=MAY_ACT_DOC)

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.buttons: list[pn.widgets.Button] = []
        self._keys: list[tuple[int, int]] = []  # (kind, copy) of each shown tile
        self._box = pn.FlexBox(margin=0)
        # Said or emptied, never hidden and shown (see Decisions: each would lay the page out again).
        self._empty = pn.pane.Markdown("", styles={"color": "#6b7280"})
        self.live.param.watch(self._follow, ["version", "selection"])
        self._follow()

    def _follow(self, *_events: Any) -> None:
        table = [v for v in self.session.table() if v.type in (HUMAN_FLEET, TACTICS)]
        while len(self.buttons) < max(len(table), TILE_POOL_START):  # grows a row at a time (see TILE_POOL_STEP)
            step = TILE_POOL_STEP if self.buttons else TILE_POOL_START
            for slot in range(len(self.buttons), len(self.buttons) + step):
                tile = pn.widgets.Button(margin=4, css_classes=["tile"], stylesheets=[TILE_STYLES], visible=False)
                tile.on_click(lambda _e, slot=slot: self._clicked(slot))
                self.buttons.append(tile)
        for slot, tile in enumerate(self.buttons):
            if slot >= len(table):
                if tile.visible:
                    tile.visible = False
                continue
            v = table[slot]
            new = {"label": views.tile_label(v), "disabled": not v.selectable, "visible": True,
                   "styles": tile_styles(v.type, v.selected)}
            changed = {k: x for k, x in new.items() if getattr(tile, k) != x}
            if changed:
                tile.param.update(**changed)
        self._keys = [(v.kind, v.copy) for v in table]
        if len(self._box.objects) != len(self.buttons):
            self._box.objects = list(self.buttons)
        said = "" if table else NO_TILES
        if self._empty.object != said:
            self._empty.object = said

    def shown(self) -> list[pn.widgets.Button]:
        """The tiles on the table now, in the table's order."""
        return self.buttons[: len(self._keys)]

    def _clicked(self, slot: int) -> None:
        """A tile's click, for the card it showed when it was clicked (read now, played on the page's tick)."""
        if slot >= len(self._keys):
            self.session.refuse("that card is no longer in play")
            return
        on_page(partial(self.click, *self._keys[slot]), self.session)(None)

    def click(self, kind: int, copy: int) -> bool:
        """Select or unselect one copy of a card in play."""
        if self.may_act is not None and not self.may_act():
            return False
        kinds = views.choose_copy(self.session, kind, copy)
        if kinds is None:
            self.session.refuse("that card is no longer in play")
            return False
        return self.session.select(kinds)

    def __panel__(self) -> pn.viewable.Viewable:
        return pn.Column(self._box, self._empty, margin=0, sizing_mode="stretch_width")


DECISION_SLOTS = ((Defend(), Attack()), (FallBack(), Pass()))
"""The two decision buttons: to fight (defend in an Invasion, attack in a Liberation) and to decline (fall back in
an Invasion, pass in a Liberation)."""


class Decisions(KzinView):
    """Defend or fall back in an Invasion, attack or pass in a Liberation; why a disabled one cannot be taken.

    Two buttons, one to fight and one to decline, relabelled with the phase: four buttons of which the phase showed
    two were hidden and shown at most moves, and a browser lays the whole page out again, every chart redrawn, for
    each part hidden or shown (measured: four such layouts a move, 40-400 ms each, in another browser at a table;
    a new label is drawn in place)."""

    may_act = param.Callable(default=None, doc=MAY_ACT_DOC)

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        s, live = self.session, self.live
        self.slots: list[pn.widgets.Button] = []
        for choices in DECISION_SLOTS:
            button = pn.widgets.Button(
                label=pn.bind(lambda _v, c=choices: str(self.offered(c) or c[0]).capitalize(), live.param.version),
                width=110, margin=(4, 6), color="primary" if choices[0] == Defend() else "default",
                visible=pn.bind(lambda _v, c=choices: self.offered(c) is not None, live.param.version),
                disabled=pn.bind(lambda _v, _sel, c=choices: not self._can(self.offered(c)), live.param.version,
                                 live.param.selection))
            button.on_click(lambda _e, c=choices: self._clicked(c))
            self.slots.append(button)
        self.reasons = pn.pane.HTML(pn.bind(lambda _v, _sel: views.reasons_html(s), live.param.version,
                                            live.param.selection),
                                    styles={"color": "#6b7280", "font-size": "13px"}, margin=(0, 8))

    def offered(self, choices: tuple[KzinAction, ...]) -> KzinAction | None:
        """The one of ``choices`` that the game offers now (None when it offers neither: the game is over)."""
        return next((a for a in choices if a in self.session.decisions()), None)

    def _can(self, action: KzinAction | None) -> bool:
        return action is not None and self.session.can(action)[0]

    @property
    def buttons(self) -> dict[str, pn.widgets.Button]:
        """The decision buttons shown now, by the decision each makes ("defend", "fall back", ...)."""
        offered = ((self.offered(c), b) for b, c in zip(self.slots, DECISION_SLOTS, strict=True))
        return {str(a): b for a, b in offered if a is not None}

    def _clicked(self, choices: tuple[KzinAction, ...]) -> None:
        """A button's click, for the decision it showed when it was clicked (read now, made on the page's tick)."""
        action = self.offered(choices)
        if action is None:
            self.session.refuse("there is no decision to make: the game is over")
            return
        on_page(partial(self.decide, action), self.session)(None)

    def decide(self, action: KzinAction) -> bool:
        if self.may_act is not None and not self.may_act():
            return False
        return self.session.attempt(self.session.play, action)

    def __panel__(self) -> pn.viewable.Viewable:
        return pn.Column(pn.Row(*self.slots, margin=(4, 0)), self.reasons, sizing_mode="stretch_width")


class GameControls(KzinView):
    """The seed and rule options of the next game, New game, and the game files (save, load, resume)."""

    autosave = param.Boolean(default=False, doc="Keep the game on disk after every change (a served page).")
    may_act = param.Callable(default=None, doc="Called with move=False before a new game or a file: a table's "
                             "page refuses a watcher there (and says why); None on a page of one's own.")
    secret_seed = param.Boolean(default=False, doc="A table's game: each new game is dealt from a fresh secret seed "
                                "that no page shows (the seed and the log foretell every card and die).")

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        s = self.session
        self.seed = pn.widgets.IntInput(label="Seed", value=None if self.secret_seed else s.seed, start=0, width=110,
                                        visible=not self.secret_seed)
        self.rules: dict[str, pn.widgets.Widget] = {}
        for k in RULE_OPTIONS:
            p = s.param[k]
            if isinstance(p, param.Boolean):
                self.rules[k] = pn.widgets.Checkbox(label=RULE_LABELS[k], value=getattr(s, k))
            else:
                self.rules[k] = pn.widgets.IntInput(label=RULE_LABELS[k], value=getattr(s, k), start=p.bounds[0],
                                                    end=p.bounds[1], width=150)
        self.new = pn.widgets.Button(label="New game", color="primary", margin=(22, 6, 4, 6))
        self.new.on_click(on_page(self.new_game))
        self.files = GameFiles("kzin", self._filename(), s, self.load_text, self.autosave, refuse=self._refuse_file)
        self.live.param.watch(self._follow_game, ["version"])

    def new_game(self) -> bool:
        """Start a new game with the seed and rule options in the controls; a bad field keeps the game."""
        s = self.session
        if self.may_act is not None and not self.may_act(move=False):
            return False
        seed = secret_seed() if self.secret_seed else self.seed.value
        if seed is None or seed < 0:
            s.refuse("Enter a seed: a whole number from 0.")
            return False
        options = {k: w.value for k, w in self.rules.items()}
        for k, value in options.items():  # checked before anything changes: a refused option keeps the game
            bounds = getattr(s.param[k], "bounds", None)
            if bounds is not None and (value is None or not bounds[0] <= value <= bounds[1]):
                s.refuse(f"Enter {RULE_LABELS[k]}: a whole number from {bounds[0]} to {bounds[1]}.")
                return False
        with param.parameterized.batch_call_watchers(s):
            s.param.update(**options)
            return s.new_game(int(seed))

    def load_text(self, text: str | bytes) -> bool:
        """Load a saved game (a file's text, or the autosave); the controls then show its seed and rules."""
        if self.may_act is not None and not self.may_act(move=False):
            return False
        if not self.session.try_load(text):
            return False
        if not self.secret_seed:
            self.seed.value = self.session.seed
        for k, w in self.rules.items():
            w.value = getattr(self.session, k)
        return True

    def _refuse_file(self, reason: str) -> None:
        """A file the page would not read (too large, unreadable): said where every refusal of a file is said."""
        self.session.notice = Notice(f"Could not load: {reason}. Your game goes on.", Level.DANGER)

    def _filename(self) -> str:
        if self.secret_seed:
            return f"man-kzin-wars-turn{self.session.state.turn}.json"
        return f"man-kzin-wars-seed{self.session.seed}-turn{self.session.state.turn}.json"

    def _follow_game(self, *_events: Any) -> None:
        self.files.download.filename = self._filename()

    def __panel__(self) -> pn.viewable.Viewable:
        numbers = [w for w in self.rules.values() if isinstance(w, pn.widgets.IntInput)]
        boxes = [w for w in self.rules.values() if isinstance(w, pn.widgets.Checkbox)]
        # Only a served page has the Experiments page beside it (a notebook has no server routes).
        compare = pn.pane.Markdown("[Compare the rulings' win rates](/experiments?run=kzin-rulings) (Experiments: "
                                   "every combination of the rulings above, played on Dask, with intervals)",
                                   margin=(0, 10), name="compare-rulings",
                                   visible=pn.state.curdoc is not None and pn.state.curdoc.session_context is not None)
        return pn.Column(pn.Row(self.seed, *numbers, self.new), *boxes, compare, self.files.row(with_warning=False),
                         sizing_mode="stretch_width")
