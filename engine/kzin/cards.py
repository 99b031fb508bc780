"""The 95 cards of Man-Kzin Wars, read from ``cards.csv`` at import.

The rules refer to card fields (type, constant force, dice, phase limits), never to card names, so
the deck can be edited as data. Each distinct card is a *kind* with an index; the deck is a count of
copies per kind (card order is chance, never stored).
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from importlib import resources

INVASION = "invasion"
LIBERATION = "liberation"
PHASES = (INVASION, LIBERATION)

KZIN_FLEET, CONQUEST, HUMAN_FLEET, TACTICS, TECHNOLOGY = "K", "C", "H", "T", "R"
TYPE_NAMES = {
    KZIN_FLEET: "Kzin Fleet",
    CONQUEST: "Kzinti Conquest",
    HUMAN_FLEET: "Human Fleet",
    TACTICS: "Human Tactics",
    TECHNOLOGY: "Human Technology",
}
# The phase in which a drawn card of each type acts (the seed's turn sequence).
TYPE_PHASE = {KZIN_FLEET: "Invasion", TECHNOLOGY: "Technology", HUMAN_FLEET: "Deployment",
              TACTICS: "Tactics", CONQUEST: "Conquest"}

_FORCE = re.compile(r"^(?:(?P<const>[+-]?\d+)|(?P<dice>\d)D10|(?P<x>X)|(?P<none>-+))$")


@dataclass(frozen=True, slots=True)
class Card:
    """One kind of card. ``force`` is ``const`` plus ``dice`` d10s, plus X when ``reinforcements``."""

    index: int
    name: str
    type: str
    const: int
    dice: int
    reinforcements: bool
    copies: int
    only_phase: str | None
    bonus_phase: str | None
    bonus: int
    note: str

    @property
    def type_name(self) -> str:
        return TYPE_NAMES[self.type]

    @property
    def is_human(self) -> bool:
        return self.type in (HUMAN_FLEET, TACTICS, TECHNOLOGY)

    @property
    def committable(self) -> bool:
        return self.type in (HUMAN_FLEET, TACTICS)

    def counts_in(self, phase: str | None) -> bool:
        """Whether committing this card adds anything in ``phase`` (phase-only Tactics do not elsewhere).

        ``phase`` is a state's ``battle_phase``: None outside a battle, where the Kzin force is still shown."""
        return self.only_phase is None or self.only_phase == phase

    def const_in(self, phase: str | None, technology: int = 0, kem: int = 9) -> int:
        """The constant part of this card's force in a battle of ``phase``.

        Fleets add one per Technology card in play; Reinforcements add X = Human-controlled
        spaces = ``kem - 1``; phase bonuses (Militia, Stasis Fields...) apply in their phase.
        """
        if not self.counts_in(phase):
            return 0
        value = self.const + (self.bonus if self.bonus_phase == phase else 0)
        if self.type == HUMAN_FLEET:
            value += technology
        if self.reinforcements:
            value += kem - 1
        return value

    def dice_in(self, phase: str | None) -> int:
        return self.dice if self.counts_in(phase) else 0

    def force_text(self) -> str:
        if self.type == TECHNOLOGY:
            return "---"
        if self.reinforcements:
            return "+X"
        if self.dice:
            return f"+{self.dice}D10"
        return f"{self.const:+d}"


def _parse_card(index: int, row: dict[str, str], line: int) -> Card:
    def fail(msg: str) -> ValueError:
        return ValueError(f"cards.csv line {line}: {msg}")

    ctype = row["type"].strip()
    if ctype not in TYPE_NAMES:
        raise fail(f"unknown type {ctype!r}")
    m = _FORCE.match(row["force"].strip())
    if not m:
        raise fail(f"cannot read force {row['force']!r}")
    if (ctype == TECHNOLOGY) != bool(m["none"]):
        raise fail("Technology cards, and only they, have no force")
    only = row["only_phase"].strip() or None
    bonus_phase = row["bonus_phase"].strip() or None
    for value in (only, bonus_phase):
        if value not in (None, *PHASES):
            raise fail(f"unknown phase {value!r}")
    copies = int(row["copies"])
    if copies < 1:
        raise fail("copies must be at least 1")
    return Card(
        index=index,
        name=row["name"].strip(),
        type=ctype,
        const=int(m["const"]) if m["const"] else 0,
        dice=int(m["dice"]) if m["dice"] else 0,
        reinforcements=bool(m["x"]),
        copies=copies,
        only_phase=only,
        bonus_phase=bonus_phase,
        bonus=int(row["bonus"] or 0),
        note=row["note"].strip(),
    )


def load_cards(text: str) -> tuple[Card, ...]:
    """Parse the card list, reporting the line of any error."""
    rows = csv.DictReader(text.splitlines())
    cards = tuple(_parse_card(i, row, i + 2) for i, row in enumerate(rows))
    names = [c.name for c in cards]
    if len(set(names)) != len(names):
        raise ValueError("cards.csv: duplicate card names")
    return cards


CARDS: tuple[Card, ...] = load_cards(resources.files(__package__).joinpath("cards.csv").read_text(encoding="utf-8"))
NUM_KINDS = len(CARDS)
DECK_SIZE = sum(c.copies for c in CARDS)
FULL_DECK: tuple[int, ...] = tuple(c.copies for c in CARDS)
_BY_NAME = {c.name.casefold(): c for c in CARDS}
# Typographic apostrophes in the data; accept the plain one when reading a name.
_BY_NAME.update({c.name.replace("’", "'").casefold(): c for c in CARDS})


def card(name: str) -> Card:
    """The card called ``name`` (case-insensitive); ``ValueError`` naming the problem if none is. The name is
    quoted short (a file's or a player's text, never repeated at length)."""
    if not isinstance(name, str):
        raise ValueError(f"a card is named by text, not by a {type(name).__name__}")
    try:
        return _BY_NAME[name.strip().casefold()]
    except KeyError:
        if not _NAME_LIKE.fullmatch(name):  # not even shaped like a name (markup, control characters): not quoted
            raise ValueError("no card is called that: the name holds characters no card name has") from None
        shown = repr(name) if len(name) <= 40 else repr(name[:37]) + "..."
        raise ValueError(f"no card is called {shown}") from None


_NAME_LIKE = re.compile(r"[\w ,&'’.-]*")
"""The characters a card name may have (letters, digits, spaces and a little punctuation); "&" stays plain text."""


def track() -> list[dict[str, str]]:
    """The 12 spaces from Earth to the Kzin Home Worlds."""
    text = resources.files(__package__).joinpath("track.csv").read_text(encoding="utf-8")
    return list(csv.DictReader(text.splitlines()))


SPACES = track()
EARTH, HOME_WORLDS = 1, len(SPACES)
