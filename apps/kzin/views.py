"""What the Man-Kzin Wars page shows, as pure functions of the session: text, tables and chart data.

Nothing here holds state or touches Panel: each function reads a :class:`~engine.kzin.session.KzinSession`
(and what it depends on) and returns HTML, a frame or plain data, so the views bind them to the session's
parameters and the tests call them directly. Every text that could come from a file is escaped here.
"""

from __future__ import annotations

import html
import math

import numpy as np
import pandas as pd

from engine.kzin.advisor import EXPERT, Advice
from engine.kzin.cards import (
    CARDS,
    CONQUEST,
    HUMAN_FLEET,
    INVASION,
    KZIN_FLEET,
    LIBERATION,
    SPACES,
    TACTICS,
    TECHNOLOGY,
    TYPE_PHASE,
)
from engine.kzin.session import CardView, KzinSession

TYPE_COLOURS = {HUMAN_FLEET: "#2563eb", TACTICS: "#059669", TECHNOLOGY: "#7c3aed", CONQUEST: "#dc2626",
                KZIN_FLEET: "#b45309"}
HUMAN_COLOUR, KZIN_COLOUR = "#2563eb", "#dc2626"
D10 = np.full(10, 0.1)
CHIP = ("<div style='display:inline-block;width:{width};min-height:58px;margin:4px;padding:6px 10px;"
        "border:1px solid #e5e7eb;border-left:7px solid {colour};border-radius:6px;background:{bg};"
        "font-size:13px;line-height:1.3'><b>{name}</b><br>{line2}<br><span style='color:#6b7280'>{line3}"
        "</span></div>")


def pct(p: float | None, digits: int = 1) -> str:
    return "—" if p is None or pd.isna(p) else f"{100 * p:.{digits}f}%"


def _chip(colour: str, bg: str, name: str, line2: str, line3: str, width: str = "178px") -> str:
    esc = html.escape
    return CHIP.format(width=width, colour=colour, bg=bg, name=esc(name), line2=esc(line2), line3=esc(line3))


def marker_space(session: KzinSession) -> int:
    return session.state.kem


def last_move(session: KzinSession) -> dict[str, list]:
    """The marker's last move as an arrow from the space it left (empty when it did not move)."""
    keys = ("x0", "x1", "y", "angle", "lx", "ly", "label")
    if not session.last_move:
        return {k: [] for k in keys}
    start, end = session.last_move
    return {"x0": [start], "x1": [end], "y": [1.18], "angle": [math.pi / 2 if end < start else -math.pi / 2],
            "lx": [(start + end) / 2], "ly": [1.3], "label": [f"last move {start} → {end}"]}


def force_sides(session: KzinSession) -> dict[str, tuple[int, int]]:
    """(dice, constant) of each side of the battle in view: the Kzinti alone until a Fleet is selected."""
    s = session.state
    if session.decision() is None:
        return {}
    battle = session.battle()
    if battle is None:
        return {"Kzinti": (session.kzin_dice(), s.kzin_const())}
    return {"Humans": (battle.human_dice(), battle.human_const()),
            "Kzinti": (battle.kzin_dice(), battle.kzin_const())}


def force_distribution(dice: int, const: int) -> tuple[np.ndarray, np.ndarray]:
    """P(force = x) of ``dice`` d10 plus ``const``: the forces and their probabilities."""
    p = np.ones(1)
    for _ in range(dice):
        p = np.convolve(p, D10)
    return np.arange(dice, 10 * dice + 1) + const, p


def forces_title(session: KzinSession) -> str:
    p = None if session.hides_odds() else session.win_probability()
    return "Force distributions" + ("" if p is None else f": you win {pct(float(p))}")


def running_data(running: list[dict]) -> dict[str, list[float]]:
    """The estimated chance of winning the game at the start of every turn, with its 95% interval."""
    rows = sorted(running or [], key=lambda e: e["turn"])
    return {k: [float(e[k]) for e in rows] for k in ("turn", "win", "low", "high")}


def status_html(session: KzinSession) -> str:
    s = session.state
    where = html.escape(SPACES[s.kem - 1]["location"])
    if s.phase == "over":
        return (f"<b>Game over: the {html.escape(str(s.winner))} won on turn {s.turn}.</b> Marker on space "
                f"{s.kem} ({where}).")
    return f"<b>Turn {s.turn}</b> · Expansion Marker on space <b>{s.kem}</b> ({where})"


def drawn_html(session: KzinSession) -> str:
    """The card drawn this turn and what it does."""
    s = session.state
    if s.drawn is None:
        return "<div style='color:#6b7280'>No card drawn: the game is over.</div>"
    c = CARDS[s.drawn]
    if c.type == KZIN_FLEET:
        what = f"Invasion! Kzin force now: {s.kzin_const():+d} plus {session.kzin_dice()}d10."
    else:
        what = f"Played in the {TYPE_PHASE[c.type]} phase; it is now in play."
    force = "" if c.type == TECHNOLOGY else f" · force {c.force_text()}"
    return _chip(TYPE_COLOURS[c.type], "#fffbeb", c.name, f"{c.type_name}{force}", what, width="auto")


def conquest_line(session: KzinSession) -> str:
    """What the Conquest cards in play add to every Kzin force, phase by phase (Stasis Fields and Military
    Outposts add +2 more in Liberation): the text the odds are computed from, not a separate sum."""
    conquest = session.state.conquest_in_play()
    consts = {phase: sum(c.const_in(phase) for c in conquest) for phase in (INVASION, LIBERATION)}
    dice = {phase: sum(c.dice_in(phase) for c in conquest) for phase in (INVASION, LIBERATION)}

    def force(phase: str) -> str:
        return f"{consts[phase]:+d}" + (f" and {dice[phase]}d10" if dice[phase] else "")

    if force(INVASION) == force(LIBERATION):
        return f"{force(INVASION)} to every Kzin force"
    return f"{force(INVASION)} in an Invasion, {force(LIBERATION)} in a Liberation, to every Kzin force"


def table_html(session: KzinSession) -> str:
    """Conquest and Technology cards in play (never committed), and the technology count."""
    s = session.state
    tech = s.technology()
    names = ", ".join(c.name for c in s.cards_in_play() if c.type == TECHNOLOGY)
    parts = [f"<div style='margin:2px 4px'><b>Technology in play: {tech}</b> (every Fleet +{tech})"
             + (f": {html.escape(names)}" if tech else "") + "</div>"]
    conquest = s.conquest_in_play()
    if conquest:
        parts.append(f"<div style='margin:6px 4px 0 4px' class='conquest'><b>Kzinti Conquest in play:</b> "
                     f"{html.escape(conquest_line(session))}</div>")
        for c in conquest:
            extra = f"; {c.bonus:+d} in {c.bonus_phase.capitalize()}" if c.bonus_phase else ""
            parts.append(_chip(TYPE_COLOURS[CONQUEST], "#fef2f2", c.name, f"Kzinti Conquest · {c.force_text()}{extra}",
                               "never committed"))
    else:
        parts.append("<div style='margin:6px 4px;color:#6b7280'>No Kzinti Conquest card in play.</div>")
    return "".join(parts)


def odds_html(session: KzinSession) -> str:
    """The exact chance of winning this battle with the selected cards."""
    phase = session.decision()
    if phase is None:
        return "<p>No battle to decide now.</p>"
    s = session.state
    kzin = f"{session.kzin_dice()}d10 {s.kzin_const():+d}"
    battle = session.battle()
    head = f"<h4 style='margin:4px 0'>{phase.capitalize()} battle</h4>"
    if battle is None:
        hint = ("You have no Fleet in play: you must fall back." if not s.fleets_in_play()
                else "Select at least one Fleet to see your chance of winning.")
        return f"{head}<p>Kzinti force: {kzin}.</p><p>{hint}</p>"
    if session.hides_odds():
        return (f"{head}<p>Predict, then see: type your own estimate of the chance to win this battle, and the exact "
                f"chance appears beside it.</p><p>Kzinti force: {kzin}.</p>")
    p = battle.win_probability()
    guess = "" if session.guess is None else (
        f"<p class='guess'>Your estimate: {pct(session.guess, 0)}, off by "
        f"{100 * abs(session.guess - float(p)):.1f} points.</p>")
    return (f"{guess}{head}<p>Chance to win this battle: <span class='win' style='font-size:1.6em;font-weight:700;"
            f"color:{HUMAN_COLOUR}'>{pct(float(p))}</span> (exactly {p.numerator}/{p.denominator})</p>"
            f"<p>Humans: {battle.human_dice()}d10 {battle.human_const():+d} against {kzin}; "
            f"ties go to the Humans.</p>")


def calibration_html(session: KzinSession) -> str:
    """The player's calibration over the game: their Brier score beside the exact odds' own."""
    c = session.calibration()
    if c is None:
        return ""
    return (f"<p class='calibration'>Your estimates over {c['battles']} battle(s): Brier score {c['brier']:.3f} "
            f"(the exact odds would have scored {c['exact_brier']:.3f}; 0 is perfect, 0.25 a coin's guess), "
            f"{100 * c['mean_gap']:.1f} points from the exact chance on average.</p>")


def reasons_html(session: KzinSession) -> str:
    """Why each decision of the phase cannot be taken now (the buttons are disabled for these)."""
    if session.state.phase == "over":
        return "The game is over: start a new game below."
    lines = []
    for action in session.decisions():
        ok, reason = session.can(action)
        if not ok:
            lines.append(f"{str(action).capitalize()}: {reason}")
    return "<br>".join(html.escape(r) for r in lines)


def deck_frame(session: KzinSession) -> pd.DataFrame:
    t = session.deck_counts()
    if t["left"].sum() == 0:
        empty = ("deck empty: the discards are reshuffled at the end of this turn" if session.state.rules.reshuffle
                 else "deck empty: the game ends this turn (no reshuffle)")
        chances = [empty] * len(t)
    else:
        chances = [f"{100 * p:.1f}% ({e.numerator}/{e.denominator})"
                   for p, e in zip(t["p_next"], t["p_next_exact"], strict=True)]
    return pd.DataFrame({"card type": t["type"], "left in deck": t["left"], "chance next": chances})


def log_frame(session: KzinSession) -> pd.DataFrame:
    """The game's log, newest first, with each roll's probability."""
    t = session.log_frame().iloc[::-1].reset_index(drop=True)
    t["odds"] = [pct(p) for p in t["odds"]]
    return t.rename(columns={"odds": "chance it had"})


def advice_html(advice: Advice) -> str:
    rec = advice.recommended
    battle = "" if rec.battle_odds is None else f"battle {pct(float(rec.battle_odds))}, "
    notes = f" <i>{html.escape('; '.join(advice.notes))}</i>." if advice.notes else ""
    if advice.rollout_policy == EXPERT:
        return (f"<p class='advice'>The expert plays: <b>{html.escape(rec.describe())}</b>: {battle}game "
                f"{pct(rec.game_win, 2)} by its learned table.{notes}</p>")
    return (f"<p class='advice'>Recommended: <b>{html.escape(rec.describe())}</b>: {battle}game "
            f"{pct(rec.game_win, 2)} ({pct(rec.game_low, 2)} – {pct(rec.game_high, 2)}), by "
            f"{advice.rollouts_per_state} rollouts a state.{notes}</p>")


def margin_html(advice: Advice) -> str:
    """How sure the advisor is that its best option is best: the lead over the next option, with its interval."""
    m = advice.margin()
    if m is None:
        return ""
    verdict = ("separated: the best is best" if m.separated
               else "not separated: the two may be equally good, or the order may turn with more rollouts")
    return (f"<p class='margin'>Lead over <i>{html.escape(m.runner_up)}</i>: {100 * m.difference:+.2f} points "
            f"(95% interval {100 * m.low:+.2f} to {100 * m.high:+.2f}), {verdict}.</p>")


def advice_frame(advice: Advice) -> pd.DataFrame:
    t = advice.table()
    return pd.DataFrame({
        "": ["★" if r else "" for r in t["recommended"]],
        "option": t["option"],
        "battle": [pct(p) for p in t["battle_odds"]],
        "game": [pct(p, 2) for p in t["game_win"]],
        "95% interval": ["learned estimate" if advice.rollout_policy == EXPERT else f"{pct(lo, 2)} – {pct(hi, 2)}"
                         for lo, hi in zip(t["game_low"], t["game_high"], strict=True)],
        "what it does": t["effect"],
    })


def tile_label(view: CardView) -> str:
    mark = "✓ " if view.selected else ""
    third = view.reason if view.reason else ("selected" if view.selected else "click to commit")
    return f"{mark}{view.name}\n{view.force}\n{third}"


def choose_copy(session: KzinSession, kind: int, copy: int) -> list[int] | None:
    """The selection after a click on one copy of a card (None when that copy is no longer in play)."""
    view = next((v for v in session.table() if (v.kind, v.copy) == (kind, copy)), None)
    if view is None:
        return None
    kinds = list(session.selection)
    if view.selected:
        kinds.remove(kind)
    else:
        kinds.append(kind)
    return kinds
