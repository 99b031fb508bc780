"""The victory screen: which of the scenario's conditions decided the game, and in Solo the score line by line."""

from __future__ import annotations

import html

from engine.kf2100.figures import TERMINATORS
from engine.kf2100.session import KungFuSession

RESULTS = {"terminator_total_victory": "Terminator total victory", "terminator_victory": "Terminator victory",
           "draw": "Draw", "clone_master_victory": "Clone Master victory",
           "clone_master_total_victory": "Clone Master total victory"}


def conditions(s: KungFuSession) -> list[str]:
    """What stood at the end, in the words of the victory conditions: the Clone Master, the vital equipment, the
    Terminators (killed, escaped, still in the lair) and whether the turns ran out."""
    st = s.state
    terms = st.terminators()
    smashed = sum(1 for alive in st.equipment.values() if not alive)
    cm = st.figs["CM"].status
    out = [f"The Clone Master is {'dead' if cm == 'dead' else 'alive'}.",
           f"Vital equipment destroyed: {smashed} of {len(st.equipment)}."]
    for label, test in (("killed", lambda f: f.status == "dead"), ("escaped", lambda f: f.status == "escaped"),
                        ("still in the lair", lambda f: f.status not in ("dead", "escaped"))):
        ids = [f.id for f in terms if test(f)]
        if ids:
            out.append(f"Terminators {label}: {', '.join(ids)}.")
    if st.turn >= st.game.scenario.turns and cm != "dead" and any(f.status not in ("dead", "escaped") for f in terms):
        out.append(f"The {st.game.scenario.turns} turns ran out.")
    return out


def victory_html(s: KungFuSession) -> str:
    """The game's result with the conditions that decided it; empty while the game goes on."""
    st = s.state
    if st.phase != "over":
        return ""
    result = RESULTS.get(st.result, st.result.replace("_", " "))
    parts = [f"<h2 class='result'>{html.escape(result)}</h2>",
             "<ul>" + "".join(f"<li>{html.escape(c)}</li>" for c in conditions(s)) + "</ul>"]
    if st.game.solo:
        lines = st.solo_score()
        t, c = st.solo_points()
        rows = "".join(f"<tr><td>{'Terminators' if side == TERMINATORS else 'Clone Master'}</td>"
                       f"<td>{html.escape(what)}</td><td>{n}</td><td>{p}</td></tr>" for side, what, n, p in lines if n)
        parts.append("<b>Solo score</b><table class='odds'><tr><th>side</th><th>for</th><th>how many</th>"
                     f"<th>points</th></tr>{rows}</table><b>Terminators {t} · Clone Master {c}</b>"
                     + (" (the higher score wins)" if t != c else " (equal: a draw)"))
    else:
        parts.append(f"<i>Decided by the {html.escape(st.game.scenario.title)} scenario's victory conditions, on "
                     f"turn {st.turn}.</i>")
    return "".join(parts)

