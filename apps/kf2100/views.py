"""What the Kung Fu 2100 page shows, as pure functions of the session: text, tables, chart data, decisions.

Nothing here holds state or touches Panel: each function reads a :class:`~engine.kf2100.session.KungFuSession`
(and the screen's view of it) and returns Markdown, HTML, a frame, plain data or the typed decisions of the step
in view (:func:`decisions`), so the components bind them to the session's parameters and the tests call them
directly. The decisions are typed actions from the session (never action text to parse); the step in view is
read once, from ``state.step``. Markdown is shown with raw HTML off and HTML is escaped here, so a word from a
file can never become markup.
"""

from __future__ import annotations

import html
from collections.abc import Collection
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import pandas as pd

from apps.kf2100.lair import KIND_COLOURS, KIND_NAMES, NAMES, levels_text
from engine.core import CHANCE
from engine.kf2100.actions import Activate, Answer, Attack, Chits, DoorAttack, End, Exit, KFAction, Lead, Lose, Wait
from engine.kf2100.data import ANSWER_COLUMNS, TECHNIQUES
from engine.kf2100.odds import CombatOdds, crt_table, mountain_heart_recovery, p_hit
from engine.kf2100.session import KungFuSession, answer_column
from engine.kf2100.state import PHASE_TITLES, PLAYER_NAMES
from engine.kf2100.steps import STEP_TITLES, Step

PHASE_ORDER = ("move1", "combat1", "move2", "cm_move", "combat2", "recovery")
ENTRY_LABELS = {"disposal": "the kitchen disposal", "loo": "the loo", "door": "the armored front door"}
COMBAT_STEPS = (Step.PICK, Step.LEAD, Step.ATTACK, Step.ANSWER, Step.AIM, Step.LOSS, Step.ROLL)


def pct(p: Any) -> str:
    return f"{100 * float(p):.0f}%"


def frac(p: Fraction | int) -> str:
    """A chance as a fraction ("2/3"); an int is a d6 target (hits on 1-n)."""
    q = p_hit(p) if isinstance(p, int) else p
    return f"{q.numerator}/{q.denominator}" if q not in (0, 1) else str(int(q))


# --- the decisions of the step in view -------------------------------------------------------------------

@dataclass(frozen=True)
class Choice:
    """A button: ``action`` is played when it is clicked (``arm``: the chit to play is chosen instead)."""

    label: str
    action: KFAction | None = None
    primary: bool = False
    arm: tuple[str, str] | None = None
    command: str = ""  # a session command without an action: "auto_setup", "take_screen", "undo"


@dataclass(frozen=True)
class Decisions:
    """What the side to act may do now: notes (Markdown) and rows of choices."""

    notes: tuple[str, ...]
    rows: tuple[tuple[Choice, ...], ...] = ()
    warning: bool = False
    waiting: bool = False


def decisions(s: KungFuSession, armed: tuple[str, str] | None, held: Collection[int] = (0, 1)) -> Decisions:
    """The decision panel of the step in view, from the session's typed legal actions; a page that does not hold
    the side to move (``held``: the sides it holds) is told only whom it waits for."""
    st = s.state
    step = st.step
    if step is Step.OVER:
        return Decisions((f"**Game over: {st.result.replace('_', ' ')}.** Start a new game below.",))
    if s.handover is not None:
        who, other = PLAYER_NAMES[s.handover], PLAYER_NAMES[1 - s.handover]
        own = "'" if who.endswith("s") else "'s"
        return Decisions((f"**Hand the screen to the {who}.** {other}: look away. The {who}{own} secrets stay "
                          "hidden until they press the button.",),
                         ((Choice(f"I am the {who}: show my side", primary=True, command="take_screen"),),),
                         warning=True)
    player = s.person_to_move()
    if player is not None and player not in held:
        return Decisions((f"Waiting for the {PLAYER_NAMES[player]}…",), waiting=True)
    if player is None:
        who = "the dice" if st.current_player() == CHANCE else f"the {PLAYER_NAMES[st.current_player()]} (bot)"
        return Decisions((f"Waiting for {who}…",), waiting=True)
    legal = s.legal()
    head = f"**{PLAYER_NAMES[player]} to act.**"
    end = next((a for a in legal if isinstance(a, End)), None)
    if step is Step.SETUP:
        f = st.figs[st.queue[0]]
        return Decisions((head, f"Click a highlighted square to place **{f.id}** ({KIND_NAMES[f.kind]}), face "
                          f"down. {len(st.queue)} counters left."),
                         ((Choice("Place the rest automatically", primary=True, command="auto_setup"),),))
    if step is Step.ENTRY:
        fid = st.queue[0]
        return Decisions((head, f"Where does **{fid}** wait to enter? Click the disposal, the loo or the door, or:"),
                         (tuple(Choice(f"{a.figure} at the {a.entry}", a) for a in legal if isinstance(a, Wait)),))
    if step is Step.BONUS_MOVE:
        return Decisions((head, f"The Clone Master's bonus move of up to {st.bonus_mp}: click a green square."),
                         ((Choice("No bonus move", end),),))
    if step is Step.CM_WINDOW:
        reveal = next(a for a in legal if isinstance(a, Activate))
        return Decisions((head, "The Clone Master may reveal himself now (and make a bonus move)."),
                         ((Choice("Reveal the Clone Master", reveal, primary=True), Choice("Stay hidden", end)),))
    if step is Step.DOOR:
        verbs = {"fist": "punch the door", "kick": "kick the door"}
        door = tuple(Choice(f"{a.figure}: {verbs[a.chit]}", a) for a in legal if isinstance(a, DoorAttack))
        return Decisions((head, "Terminators at the armored door may spend a chit on it (it breaks on 1-2, 33%)."),
                         (door, (Choice("Leave the door", end),)))
    if step is Step.MOVE:
        how = ("Click a face-up figure, then a green square (the number is its cost). Click a face-down counter "
               "(orange) to activate it: one Jelly, Servant and Technician a move." if player == 1 else
               "Click a Terminator (waiting ones sit by their entry), then a green square (the number is its "
               "movement cost).")
        exits = tuple(Choice(f"{a.figure} leaves the lair", a) for a in legal if isinstance(a, Exit))
        return Decisions((head, how), (*((exits,) if exits else ()),
                                       (Choice(f"End {PHASE_TITLES[st.phase]}", end, primary=True),)))
    return _combat_decisions(s, head, step, legal, armed)


def _combat_decisions(s: KungFuSession, head: str, step: Step, legal: list[KFAction],
                      armed: tuple[str, str] | None) -> Decisions:
    st = s.state
    c = st.combat
    assert c is not None  # a combat step
    if step is Step.PICK:
        fid = c.to_pick[0]
        _, n = st.chit_options(st.figs[fid])
        return Decisions((head, f"Pick **{fid}**'s {n} secret chits ({levels_text(st.figs[fid].to_dict())}):"),
                         (tuple(Choice(" + ".join(a.chits), a) for a in legal if isinstance(a, Chits)),))
    if step is Step.LEAD:
        leads = {a.side: a for a in legal if isinstance(a, Lead)}
        return Decisions((head, "Who plays the first chit?"),
                         ((Choice("Terminators lead", leads[0], primary=True),
                           Choice("Clone Master leads", leads[1])),))
    if step is Step.AIM and c.answer:
        return Decisions((head, f"**{c.answer[0]}**'s answering {NAMES[c.answer[1]]} becomes the attack: click a "
                          "red target on the board."))
    if step is Step.ATTACK:
        options = sorted({(a.figure, a.chit) for a in legal if isinstance(a, Attack)})
        return Decisions((head, "Pick the chit to play, then click its target (red) on the board:"),
                         (tuple(Choice(f"{f}: {NAMES[ch]}", primary=armed == (f, ch), arm=(f, ch))
                                for f, ch in options),))
    if step is Step.ANSWER and c.attack is not None:
        fid, chit, target = c.attack
        odds = {d["action"]: d["p_hit"] for d in s.decision_odds()}
        return Decisions((head, f"**{fid}** plays {NAMES[chit]} on **{target}**. Answer with:"),
                         (tuple(Choice(f"{a.figure} {a.chit} (hit {pct(odds[a])})"
                                       if a in odds else str(a), a) for a in legal if isinstance(a, Answer)),))
    if step is Step.LOSS:
        return Decisions((head, f"**{c.pending_loss}** is hit: choose the level to lose."),
                         (tuple(Choice(f"Lose {NAMES[a.technique]}", a) for a in legal if isinstance(a, Lose)),))
    return Decisions((head,))


# --- the side panels ---------------------------------------------------------------------------------------

def side_markdown(s: KungFuSession, secret_seed: bool = False) -> str:
    """Turn and phase, scenario clock, seats, victory status (the seed unless it is a table's secret)."""
    st = s.state
    sc = s.game.scenario
    turns = sc.turns
    phases = " → ".join(f"**{PHASE_TITLES[p]}**" if p == st.phase else PHASE_TITLES[p] for p in PHASE_ORDER)
    hot_seat = " (hot-seat)" if s.hot_seat() and s.hand_over else ""  # at a table, two browsers are no hot-seat
    seats = f"Terminators: {s.seat(0)} · Clone Master: {s.seat(1)}{hot_seat}"
    seed = "" if secret_seed else f" · seed {s.seed}"
    lines = [f"**{sc.title} scenario · turn {min(st.turn, turns)} of {turns}** ({max(0, turns - st.turn)} after "
             f"this){seed}", f"Phase: {PHASE_TITLES[st.phase]}" if st.phase in ("setup", "entry", "over")
             else phases, f"Step: {STEP_TITLES[st.step]}", seats]
    if st.is_terminal():
        lines.append(f"**Result: {st.result.replace('_', ' ')}**")
    else:
        lines.append(f"If the game ended now: *{st.grade().replace('_', ' ')}*")
    if s.game.solo:
        t, cm = st.solo_points()
        lines.append(f"Solo points: Terminator {t}, Clone Master {cm}")
    cm_fig = st.figs["CM"]
    cm_text = "dead" if cm_fig.status == "dead" else ("face up" if cm_fig.face_up else "hidden")
    lines.append(f"Armored door: {'broken' if st.door_broken else 'closed'} · Clone Master: {cm_text}")
    return "\n\n".join(lines)


def equipment_markdown(s: KungFuSession) -> str:
    lair = s.game.board.lair
    rows = [f"**{sum(s.state.equipment.values())} of {len(lair.equipment)} pieces left**", ""]
    for eid, (sq, kind) in lair.equipment.items():
        alive = s.state.equipment[eid]
        room = lair.rooms[s.game.board.cells[sq].room].name
        mark = "" if alive else "~~"
        rows.append(f"- {mark}{eid} {kind.replace('_', ' ')}, {room} ({s.game.board.names[sq]}){mark}"
                    + ("" if alive else " — destroyed"))
    return "\n".join(rows)


def figures_frame(view: dict[str, Any]) -> pd.DataFrame:
    """The figures the screen may show, with their levels left (damage)."""
    rows = []
    for f in view["figures"]:
        if f["status"] == "unplaced":
            continue
        where = f["square"] if f["square"] else (f"at the {f['entry']}" if f["entry"] else "")
        hidden = "" if f["face_up"] or f["kind"] == "terminator" else " (face down)"
        rows.append({"figure": f["id"], "what": KIND_NAMES[f["kind"]] + hidden, "where": where,
                     "status": f["status"], "levels left": levels_text(f) or "one hit removes"})
    return pd.DataFrame(rows, columns=["figure", "what", "where", "status", "levels left"])


def heart_markdown(s: KungFuSession, view: dict[str, Any]) -> str:
    """Mountain Heart: who is down, the chance to recover next turn and by the end, and the rolls made."""
    turns_left = max(0, s.game.scenario.turns - s.state.turn + 1)
    at_most = s.game.book.units.rules["recovery_at_most"]
    p = p_hit(at_most)
    lines = [f"Each Recovery phase a d6 of 1-{at_most} ({frac(p)}) regains one level of Mountain Heart."]
    h = TECHNIQUES.index("heart")
    for f in view["figures"]:
        if not f["start"][h] or f["status"] in ("dead", "escaped", "unplaced"):
            continue
        lost = f["start"][h] - f["levels"][h]
        if lost:
            back = 1 - mountain_heart_recovery(lost, turns_left).get(0, 0)
            lines.append(f"- **{f['id']}** Heart {f['levels'][h]}/{f['start'][h]}: next roll {pct(p)}, at least "
                         f"one level back in {turns_left} turn(s) {pct(back)}")
        else:
            lines.append(f"- {f['id']} Heart {f['levels'][h]}/{f['start'][h]} (nothing to recover)")
    for e in [e for e in s.log if "Mountain Heart" in e["what"]][-6:]:
        lines.append(f"- turn {e['turn']}: {e['what']}: rolled {e['roll']} (chance {e['p']}) → {e['result']}")
    return "\n".join(lines)


def log_frame(s: KungFuSession) -> pd.DataFrame:
    """Every d6 rolled, newest first, with the chance it had of succeeding."""
    rows = [{"turn": e["turn"], "phase": PHASE_TITLES.get(e["phase"], e["phase"]), "roll": e["what"],
             "d6": e["roll"], "needed": f"≤ {e['need']}", "chance it had": f"{e['p']} ({pct(Fraction(e['p']))})",
             "result": e["result"]} for e in reversed(s.log)]
    return pd.DataFrame(rows, columns=["turn", "phase", "roll", "d6", "needed", "chance it had", "result"])


# --- the combat -------------------------------------------------------------------------------------------

def combat_log_start(s: KungFuSession, key: Any, start: tuple[Any, int] | None) -> tuple[Any, int]:
    """(combat key, index of the state's log where this combat's exchange begins)."""
    if start is not None and start[0] == key:
        return start
    return key, len(s.state.log)


def combat_markdown(s: KungFuSession, view: dict[str, Any], log_start: int) -> str:
    """The figures in the combat, the chits each side holds (the other side's as a count), the exchange so far."""
    st = s.state
    c = view["combat"]
    if c is None:
        return "The Terminators at the armored door decide." if st.step is Step.DOOR else "No combat now."
    figs = {f["id"]: f for f in view["figures"]}
    rows = ["| figure | levels left | chits |", "|---|---|---|"]
    for m in c["members"]:
        if m.startswith("E"):
            rows.append(f"| {m} (equipment) | one hit destroys | |")
            continue
        f = figs.get(m)
        if f is None:
            continue
        chits = c["chits"].get(m)
        shown = "—" if chits is None else (f"{chits} hidden" if isinstance(chits, int) else " ".join(chits) or "none")
        rows.append(f"| **{m}** {KIND_NAMES[f['kind']]} | {levels_text(f) or 'one hit removes'} | {shown} |")
    lines = [f"**Combat: {STEP_TITLES[st.step]}** ({view['combats_waiting']} more combat(s) waiting this phase)", "",
             "\n".join(rows), ""]
    if c["attack"]:
        fid, chit, target = c["attack"]
        answer = f"answered by {c['answer'][0]} {c['answer'][1]}" if c["answer"] else "not answered yet"
        need = f": hits on 1-{c['need']} ({frac(p_hit(c['need']))})" if st.step is Step.ROLL and c["need"] else ""
        lines.append(f"Now: **{fid} {NAMES[chit]} → {target}**, {answer}{need}")
    events = view["log"][log_start:]
    if events:
        lines += ["", "**The exchange so far**"]
        for e in events[-8:]:
            if "roll" in e:
                lines.append(f"- {e['what']}: d6 {e['roll']} (needed ≤ {e['need']}, {e['p']}) → **{e['result']}**")
            else:
                lines.append(f"- {e['event']}")
    return "\n".join(lines)


def odds_html(s: KungFuSession, armed: tuple[str, str] | None, acting: bool = True) -> str:
    """For the chit about to be played: the hit chance against each possible answer (or, answering, of the
    attack by each answer). Only on a page ``acting`` for the side to decide: the odds of another side's legal
    attacks would tell which chits it holds."""
    rows = s.decision_odds() if acting else []
    attacks = [d for d in rows if d["kind"] == "attack"]
    if armed is not None:
        attacks = [d for d in attacks if (d["action"].figure, d["action"].chit) == armed]
    esc = html.escape
    if attacks:
        cols = [c for c in ANSWER_COLUMNS if any(c in d["p_hit"] for d in attacks)]
        head = "".join(f"<th>{esc(NAMES[c])}</th>" for c in cols)
        body = ""
        for d in attacks:
            a: Attack = d["action"]
            cells = "".join(f"<td>{pct(d['p_hit'][c])}</td>" if c in d["p_hit"] else "<td>—</td>" for c in cols)
            body += f"<tr><td>{esc(f'{a.figure} {NAMES[a.chit]} → {a.target}')}</td>{cells}</tr>"
        return ("<b>Chance to hit, by the answer given</b> (None: no answer; an answer by any figure of the other "
                "side is read on its chit)"
                f"<table class='odds'><tr><th>attack</th>{head}</tr>{body}</table>")
    answers = [d for d in rows if d["kind"] == "answer"]
    if answers:
        body = "".join(f"<tr><td>{esc(str(d['action']))}</td><td>{esc(NAMES[d['column']])}</td>"
                       f"<td>{pct(d['p_hit'])}</td></tr>" for d in answers)
        return ("<b>The attack's chance to hit, by your answer</b><table class='odds'><tr><th>answer</th>"
                f"<th>read on</th><th>hit</th></tr>{body}</table>")
    c = s.state.combat
    if c is not None and c.attack is not None and s.state.step is Step.ROLL and c.need:
        return f"<b>The die needs 1-{c.need}: {pct(p_hit(c.need))}</b>"
    return "<i>The hit chances appear when a chit is about to be played.</i>"


def crt_target(s: KungFuSession, armed: tuple[str, str] | None) -> list[tuple[int, int]]:
    """The CRT cells to outline (x, y): the attack being answered or rolled, or the whole row of the chit
    about to be played."""
    attacks = list(crt_table().index)
    c = s.state.combat
    if c is None:
        return []
    if c.attack is not None and s.state.step in (Step.ANSWER, Step.ROLL):
        col = answer_column(c.attack, c.answer)
        return [(ANSWER_COLUMNS.index(col), len(attacks) - 1 - attacks.index(c.attack[1]))]
    if armed is not None and armed[1] in attacks:
        y = len(attacks) - 1 - attacks.index(armed[1])
        return [(j, y) for j in range(len(ANSWER_COLUMNS))]
    return []


def hits_data(outlook: CombatOdds | None) -> dict[str, list]:
    """Bars of P(hits) for each side in the whole combat, with the 95% interval of each bar (zero width when
    the outlook is exact)."""
    out: dict[str, list] = {"x": [], "p": [], "low": [], "high": [], "colour": [], "label": []}
    if outlook is None:
        return out
    for side, colour, offset in ((0, KIND_COLOURS["terminator"], -0.18), (1, KIND_COLOURS["jelly"], 0.18)):
        intervals = outlook.marginal_intervals(side)
        for k, p in outlook.marginal(side).items():
            low, high = intervals[k]
            out["x"].append(k + offset)
            out["p"].append(float(p))
            out["low"].append(low)
            out["high"].append(high)
            out["colour"].append(colour)
            extent = "exact" if outlook.exact else f"95% interval {100 * low:.1f}-{100 * high:.1f}%"
            out["label"].append(f"{PLAYER_NAMES[side]} take {k} hit(s): {100 * float(p):.1f}% ({extent})")
    return out


def outlook_note(outlook: CombatOdds | None, key: Any) -> str:
    """The mean hits of each side: exact, or simulated with its 95% interval and the number of combats."""
    if key is None:
        return "No combat now."
    if outlook is None:
        return "The outlook is worked out before the chits are chosen…"
    parts = []
    for side, colour, who in ((0, KIND_COLOURS["terminator"], "Terminators take"),
                              (1, KIND_COLOURS["jelly"], "the Clone Master's side")):
        mean = outlook.expected(side)
        if outlook.exact:
            text = f"{mean:.2f}"
        else:
            low, high = outlook.expected_interval(side)
            text = f"{mean:.2f} (95% interval {low:.2f}-{high:.2f})"
        parts.append(f"<span style='color:{colour}'>■</span> {who} {text}")
    how = "exact" if outlook.exact else f"simulated over {outlook.games} combats; bars show 95% Wilson intervals"
    return f"{parts[0]} on average, {parts[1]}; both sides played as the bots would ({how})."


def hits_title(outlook: CombatOdds | None) -> str:
    return "Hits in the whole combat" + (f" ({outlook.source})" if outlook is not None else "")


__all__ = ["COMBAT_STEPS", "ENTRY_LABELS", "Choice", "Decisions", "combat_markdown",
           "crt_target", "decisions", "equipment_markdown", "figures_frame", "heart_markdown", "hits_data",
           "hits_title", "log_frame", "odds_html", "outlook_note", "side_markdown"]
