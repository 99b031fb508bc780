"""The rules at hand: a digest of the seed's rules and our rulings, and the CRT as exact chances, on every page
(not only during a combat). The digest is the rules sheet's, in short; ``docs/rulings-kung-fu-2100.md`` has the
rulings in full."""

from __future__ import annotations

import html
from fractions import Fraction
from itertools import pairwise

from apps.kf2100.lair import NAMES
from engine.kf2100.odds import crt_table
from engine.kf2100.state import KungFuGame

RULES = """
**A turn**: Terminator move I (up to 5 squares) · Combat I · Terminator move II · Clone Master move (he may turn
face up one Jelly, one Servant and one Technician anywhere; face-up counters move their full movement) · Combat II
· Recovery (each unit with Mountain Heart rolls: 1-2 regains one level).

**Moving**: orthogonal; counters may pass through each other, but only one may stand on a square at the end of
the phase. Crossing the change of elevation costs 2 more, except for a Terminator or Jelly with an undamaged Monkey
Soul. A Terminator entering a room turns face up every Clone Master counter in it. The Clone Master may turn
himself face up at any time, and then makes a bonus move of up to 4 squares.

**Entering**: 1-2 Terminators a phase by the kitchen disposal, one by the loo; the armored front door breaks on
1-2, each try spending one of the Terminator's Fist or Kick chits.

**Combat**: hand to hand orthogonal at range 1; missiles orthogonal or diagonal with line of sight (spikes and armed
Technicians: 2 squares orthogonally, 1 diagonally; Local Constabulary: any range). Terminators pick 3 chits, Jellies
2, from their undamaged levels. The Terminators choose who leads; a side plays a chit, the other may answer with any
chit of its side, and the CRT is read **attack against answer, whoever answered**: a d6 at or under the number hits.
A hit costs one level (a Terminator at none is unconscious; a Jelly with no Mountain Heart is removed); any hit on a
Servant, Technician, Constabulary or vital equipment removes it. Unarmed Servants and Technicians attack untrained:
a hit on a d6 at or under the number of them next to the Terminator.
"""


def _cell(p: Fraction) -> str:
    return str(p.numerator) if p.denominator == 1 else f"{p.numerator}/{p.denominator}"


def crt_html() -> str:
    """The CRT as exact hit chances: attack chit down, answer across (None: no answer)."""
    table = crt_table()
    head = "".join(f"<th>{html.escape(NAMES.get(c, c))}</th>" for c in table.columns)
    body = "".join(f"<tr><th>{html.escape(NAMES.get(str(a), str(a)))}</th>"
                   + "".join(f"<td>{_cell(table.loc[a, c])}</td>" for c in table.columns) + "</tr>"
                   for a in table.index)
    return (f"<b>CRT: chance of a hit</b> (attack ↓, answer →)<table class='odds crt-reference'><tr><th></th>{head}"
            f"</tr>{body}</table>")


HEAT = ((0.0, (255, 255, 204)), (0.5, (253, 141, 60)), (1.0, (189, 0, 38)))
"""The heat of a hit chance, pale yellow to dark red (the YlOrRd scale's ends and middle)."""

CRT_CSS = """
table.crt-heat { border-collapse: collapse; font-size: 12px; margin: 4px 0; }
table.crt-heat th { font-weight: 600; padding: 2px 6px; text-align: right; }
table.crt-heat thead th { text-align: center; }
table.crt-heat td { width: 52px; height: 24px; text-align: center; border: 2px solid #ffffff; color: #111827; }
table.crt-heat td.hot { color: #ffffff; }
table.crt-heat td.outlined { border: 3px solid #2563eb; font-weight: 700; }
"""


def heat(p: float) -> str:
    """The CSS colour of a hit chance ``p`` on :data:`HEAT`."""
    for (p0, c0), (p1, c1) in pairwise(HEAT):
        if p <= p1:
            t = (p - p0) / (p1 - p0)
            return "#" + "".join(f"{round(a + t * (b - a)):02x}" for a, b in zip(c0, c1, strict=True))
    return "#" + "".join(f"{v:02x}" for v in HEAT[-1][1])


def crt_heat_html(outlined: list[tuple[int, int]]) -> str:
    """The CRT of the combat box: each cell its exact chance, coloured by it, and the cells ``outlined`` (x: the
    answer's column, y: the attack's row counted from the bottom, as :func:`apps.kf2100.views.crt_target` gives
    them) framed: the attack about to be played, or the one being answered or rolled.

    A table of text, not a chart: a combat step redraws it in about a millisecond where the HoloViews heat map
    took 17-40 ms, and its numbers can be read, selected and copied."""
    table = crt_table()
    attacks = list(table.index)
    marked = set(outlined)
    head = "".join(f"<th>{html.escape(NAMES.get(c, c))}</th>" for c in table.columns)
    rows = []
    for i, a in enumerate(attacks):
        y = len(attacks) - 1 - i
        cells = []
        for x, c in enumerate(table.columns):
            p = table.loc[a, c]
            classes = " ".join(k for k, on in (("hot", p > Fraction(1, 2)), ("outlined", (x, y) in marked)) if on)
            cls = f" class='{classes}'" if classes else ""
            cells.append(f"<td{cls} style='background:{heat(float(p))}'>{_cell(p)}</td>")
        rows.append(f"<tr><th>{html.escape(NAMES.get(str(a), str(a)))}</th>{''.join(cells)}</tr>")
    return (f"<b>CRT: chance of a hit</b> (attack ↓, answer →)<table class='crt-heat'><thead><tr><th></th>{head}"
            f"</tr></thead><tbody>{''.join(rows)}</tbody></table>")


GRADES = """**Victory** (Basic and Advanced): *Terminator total victory*: the Clone Master killed, all seven pieces of
vital equipment destroyed and a Terminator escaped · *Terminator victory*: the Clone Master killed and all seven
destroyed · *Clone Master victory*: the Clone Master dead, every Terminator killed, some equipment left · *Clone
Master total victory*: he lives and every Terminator is killed · anything else at the end: a draw."""


def victory_markdown(scenario: str) -> str:
    """How the scenario is won: the grades, or in Solo the points (from the scenarios' data file)."""
    game = KungFuGame(scenario)
    s = game.scenario
    if not game.solo:
        return f"**{html.escape(s.title)}**: {s.turns} turns.\n\n{GRADES}"
    pts = game.book.scenarios.solo_points
    return (f"**{html.escape(s.title)}**: {s.turns} turns. The Terminator scores {pts['clone_master']} for the Clone "
            f"Master, {pts['equipment']} a piece of vital equipment, {pts['jelly']} a Jelly, and a bonus of "
            f"{pts['everything_bonus']} for the Clone Master and all seven pieces; the Clone Master scores "
            f"{pts['terminator_killed']} for killing the Terminator, {pts['terminator_recaptured']} for keeping him in "
            "the lair to the end. Most points wins.")
