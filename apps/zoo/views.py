"""What the Kung-Fu Zoo page shows, as pure functions of the session (and the odds worked out for it).

Every text from the game (names, moves, events) is escaped, so nothing read from a saved file can become
markup. No Panel here: the components in :mod:`apps.zoo.page`, :mod:`apps.zoo.panels` and
:mod:`apps.zoo.controls` bind these to the session's parameters.
"""

from __future__ import annotations

import html
from typing import Any

import pandas as pd

from apps.zoo.adapter import FACE_LETTERS, TEAM_COLOURS
from engine.core.session import BOT
from engine.zoo.odds import OUTCOMES, FlickOdds
from engine.zoo.session import RoundResult, ZooSession

MUTED = "color:#6b7280"
DESIGN_NOTE = ("The rules give no dimensions: the arena (300 mm square, 45 mm cages), the dice, the materials of "
               "the 3-D physics (MuJoCo) and the strike height are our design, and so are two abilities (Gorilla's "
               "Chest Pound and Crocodile's Ambush); Zebra's and Elephant's follow the retail cards' wording.")


def pct(p: float) -> str:
    return f"{100 * p:.1f}%"


def status_html(session: ZooSession) -> str:
    """Battle, round, score, what decides the round now (animals still fighting in a Cage Battle, points on
    the table in a Points Battle), and whose turn it is."""
    s = session.state
    g = s.game
    if g.mode == "cage" and not g.multiplayer:
        score = " · ".join(f"{g.player_name(q)}: {s.wins[q]} round(s) won" for q in range(g.players))
    elif g.mode == "cage":
        score = " · ".join(f"{g.player_name(q)}: {'out' if s.eliminated[q] else 'in play'}" for q in range(g.players))
    else:
        score = " · ".join(f"{g.player_name(q)}: {s.points[q]} points" for q in range(g.players))
    if g.mode == "cage":
        label, css = "Animals still fighting", "fighting"
        now = " · ".join(f"{g.player_name(q)} {'out' if s.eliminated[q] else s.still_fighting(q)}"
                         for q in range(g.players))
    else:
        label, css = "Points on the table now", "table-points"
        now = " · ".join(f"{g.player_name(q)} {s.round_score(q)}" for q in range(g.players))
    prompt = ("The round is over: see its result, then go on to the next round." if session.round_result is not None
              else session.prompt())
    return (f"<div class='status'><b>{html.escape(g.title())}, round {s.round_no}</b> · <span class='score'>"
            f"{html.escape(score)}</span><br><span style='{MUTED}'>{label}: <span class='{css}'>"
            f"{html.escape(now)}</span></span><br><b class='prompt'>{html.escape(prompt)}</b></div>")


def result_html(result: RoundResult | None) -> str:
    """The result card of the round just ended: the winner and how (Cage Battle); each animal's face and points,
    both totals and their difference (Points Battle); and the battle's winner once it is over."""
    if result is None:
        return ""
    names = result.players
    rows = ""
    if result.mode == "cage":
        assert result.winner is not None
        head = f"{html.escape(names[result.winner])} wins round {result.round_no}"
        body = f"<p class='how'>{html.escape(result.how)}</p>"
    else:
        head = f"Round {result.round_no}: the points"
        for q, name in enumerate(names):
            mine = [a for a in result.animals if a.player == q]
            faces = ", ".join(f"{html.escape(a.die)} {html.escape(a.face)} ({FACE_LETTERS[a.face]}) {a.points:+d}"
                              for a in mine) or "no animal in the arena"
            rows += (f"<tr><td><b>{html.escape(name)}</b></td><td class='animals'>{faces}</td>"
                     f"<td class='total' style='font-weight:700'>{result.totals[q]}</td>"
                     f"<td>{result.gained[q]:+d}</td></tr>")
        diff = result.difference
        lead = (f"{html.escape(names[0])} leads by {diff}" if diff > 0 else
                f"{html.escape(names[0])} trails by {-diff}" if diff < 0 else "level")
        body = (f"<table class='points'><tr><th>player</th><th>each animal: face and points</th><th>total</th>"
                f"<th>scored</th></tr>{rows}</table><p>Difference: <b class='difference'>{diff:+d}</b> ({lead}).</p>")
    over = ""
    if result.battle_over:
        won = " and ".join(html.escape(names[q]) for q in result.battle_winners)
        over = f"<p class='battle-over'><b>The battle is over: {won} won.</b></p>"
    return (f"<div class='round-result' role='status' style='border:2px solid #f59e0b;border-radius:8px;"
            f"padding:6px 12px;background:#fffbeb'><h4 style='margin:4px 0'>{head}</h4>{body}{over}</div>")


def odds_html(odds: FlickOdds | None, busy: bool, why_not: str, points: bool = True) -> str:
    """The odds of the aimed flick with 95% intervals, or why there are none (``why_not``); the expected points
    only when points count (a Points Battle): in a Cage Battle they decide nothing and would only distract."""
    if why_not:
        return f"<p class='no-odds' style='{MUTED}'>{html.escape(why_not)}</p>"
    if odds is None:
        return "<p>Estimating the odds…</p>"

    def row(name: str, p: Any, cls: str) -> str:
        return (f"<tr><td>{name}</td><td class='{cls}' style='font-weight:700'>{pct(p.value)}</td>"
                f"<td style='{MUTED}'>{pct(p.low)} – {pct(p.high)}</td></tr>")

    points_row = (f"<tr><td>Expected points</td><td class='p-points' style='font-weight:700'>{odds.points_mean:+.2f}"
                  f"</td><td style='{MUTED}'>{odds.points_low:+.2f} to {odds.points_high:+.2f}</td></tr>"
                  if points else "")
    faces = "".join(f"<td style='padding:0 6px'>{k}<br><b>{pct(odds.outcomes[k].value)}</b><br>"
                    f"<span style='{MUTED};font-size:11px'>{pct(odds.outcomes[k].low)}–"
                    f"{pct(odds.outcomes[k].high)}</span></td>" for k in OUTCOMES)
    return (f"<table class='odds'><tr><th></th><th>chance</th><th>95% interval</th></tr>"
            f"{row('Cage an opponent', odds.cage_opponent, 'p-cage')}"
            f"{row('Lose your own animal', odds.lose_own, 'p-lose')}"
            f"{row('Extra flick', odds.extra_flick, 'p-extra')}"
            f"{row('Foul', odds.foul, 'p-foul')}{points_row}</table>"
            f"<div style='margin-top:4px'>Where the flicked animal ends:</div>"
            f"<table style='font-size:12px;text-align:center'><tr>{faces}</tr></table>"
            f"<div class='odds-n' style='{MUTED};font-size:12px'>{odds.samples} simulated flicks, aim noise "
            f"{odds.noise.angle_sd:g}° and {100 * odds.noise.speed_sd:g}% of the speed"
            f"{' · refining…' if busy else ''}</div>")


def why_no_odds(session: ZooSession, animating: bool) -> str:
    """Why there are no odds of a flick to work out now ("" when there are): the reason is said, so a map or
    an estimate never waits for ever."""
    st = session.state
    if animating:
        return "The flick is playing out…"
    if session.round_result is not None:
        return "The round is over: no flick to estimate."
    if st.phase == "over":
        return "The battle is over."
    if st.phase not in ("flick", "extra"):
        return f"No flick to estimate now: {session.prompt()}"
    if session.seats[st.to_move].kind == BOT:
        return f"{st.describe_player()} is played by the computer: no odds are worked out for its flick."
    if not session.aim_preview():
        return "Eyes closed (Dust Kick): no aim preview and no odds for this flick."
    flick = session.proposed_flick()
    if flick is None:
        return "Choose one of your animals to flick."
    problem = session.proposal_problem()
    if problem is not None:
        return f"Not yet playable: {problem}."
    return ""


MEASURES = {"caging": "Caging odds", "points": "Expected points"}
"""What the heat map can show per cell: the chance of caging an opponent, or the expected change of the lead."""


def heat_title(grid: pd.DataFrame | None, why_not: str, mapped: int = 0, cells: int = 0,
               measure: str = "caging") -> str:
    """The heat map's title says what was measured, how far it is, or why there is none: a cell is a few
    simulated flicks, so a map with no caging is "none in N flicks each", never "no aim cages here"."""
    what = MEASURES[measure]
    if why_not:
        return f"{what} by aim: none now. {why_not}"
    if grid is None or len(grid) == 0:
        return f"{what} by aim: mapping… {mapped} of {cells} cells" if cells else f"{what} by aim: mapping…"
    n = int(grid["samples"].min())
    each = f"{n} flicks" if n == int(grid["samples"].max()) else f"{n}+ flicks"
    partial = f" ({mapped} of {cells} cells so far)" if cells and mapped < cells else ""
    if measure == "points":
        return f"Expected points by aim, {each} a cell: click to aim{partial}"
    if float(grid["p_cage_opponent"].max()) == 0.0:
        return f"Caging odds by aim: no cell caged in {each} each{partial}"
    return f"Caging odds by aim, % of {each} a cell: click to aim{partial}"


HEAT_COLUMNS = ("direction", "speed", "p", "w", "h", "text", "tc", "aim", "tip", "count")


def heat_data(grid: pd.DataFrame | None, width: float = 15.0, height: float = 0.4,
              measure: str = "caging") -> dict[str, list[Any]]:
    """The grid as heat-map cells (direction x speed), coloured by ``p``: the caging odds, or the expected
    points (the mean change of the flicker's lead over the cell's flicks). A cell's estimate comes from only a
    few flicks, so its hover text gives the 95% interval (``tip``: Wilson for the odds, normal for the mean)
    and the count (``count``): 0 of 18 is not "never"."""
    if grid is None or len(grid) == 0:
        return {k: [] for k in HEAT_COLUMNS}
    tips, counts = [], []
    if measure == "points":
        values = [float(v) for v in grid["points_mean"]]
        for m, low, high, n in zip(values, grid["points_low"], grid["points_high"], grid["samples"], strict=True):
            tips.append(f"{m:+.2f} points (95% interval {low:+.2f} to {high:+.2f})")
            counts.append(f"mean change of your lead over {int(n)} flicks")
        text = [f"{v:+.1f}" if v else "0" for v in values]
        top = heat_scale(grid, measure)[1]
        colours = ["#f9fafb" if abs(v) > top / 2 else "#111827" for v in values]  # dark on the pale middle
    else:
        values = [float(v) for v in grid["p_cage_opponent"]]
        for p, low, high, n in zip(values, grid["p_cage_opponent_low"], grid["p_cage_opponent_high"],
                                   grid["samples"], strict=True):
            tips.append(f"{100 * p:.1f}% (95% interval {100 * low:.1f}–{100 * high:.1f}%)")
            counts.append(f"{round(p * n)} of {int(n)} flicks caged an opponent")
        text = [f"{100 * v:.0f}" if v > 0 else "" for v in values]
        colours = ["#f9fafb"] * len(values)
    return {"direction": [float(v) for v in grid["direction"]], "speed": [float(v) for v in grid["speed"]],
            "p": values, "w": [width] * len(grid), "h": [height] * len(grid), "text": text, "tc": colours,
            "aim": [f"{d:g}° at {v:g} m/s" for d, v in zip(grid["direction"], grid["speed"], strict=True)],
            "tip": tips, "count": counts}


def heat_scale(grid: pd.DataFrame | None, measure: str) -> tuple[float, float]:
    """The colour scale's ends: 0-1 for the odds; for the points symmetric about 0 (gain against loss), at least
    one point wide."""
    if measure != "points":
        return 0.0, 1.0
    top = max(1.0, float(grid["points_mean"].abs().max())) if grid is not None and len(grid) else 1.0
    return -top, top


def cards_html(session: ZooSession) -> str:
    """Each team's ability card: ready, spent this round, armed for the flick, or not in play."""
    s = session.state
    out = []
    for c in session.cards():
        mine = s.phase != "over" and c["player"] == s.to_move
        state = ("not in play (Points Battle)" if not c["in_play"] else "spent this round" if c["spent"] else
                 "armed for this flick" if mine and session.use_ability_flag else "ready")
        out.append(f"<div class='card' style='border-left:6px solid {TEAM_COLOURS[c['team']]};padding:2px 8px;"
                   f"margin:4px 0'><b>{html.escape(s.game.player_name(c['player']))}{' (to move)' if mine else ''}: "
                   f"{html.escape(c['ability'])}</b> · <i class='ability-state'>{state}</i><br>"
                   f"<span style='font-size:12px'>{html.escape(c['text'])}</span></div>")
    return "".join(out)


def log_frame(session: ZooSession) -> pd.DataFrame:
    """Every move, newest first, with the odds shown for it when it was an aimed flick."""
    rows = []
    g = session.state.game
    for e in reversed(session.log):
        o = e.get("odds")
        points = f", points {o['points']:+.2f}" if o and g.mode == "points" else ""  # points count in no Cage Battle
        odds = "" if not o else (f"cage {pct(o['cage_opponent'])} ({pct(o['cage_low'])}–{pct(o['cage_high'])}), "
                                 f"lose own {pct(o['lose_own'])}{points} (n={o['samples']})")
        who = "" if e.get("player") is None else g.player_name(e["player"])
        rows.append({"#": e["move"], "player": who, "move": e["text"], "what happened": "; ".join(e["events"]),
                     "odds shown": odds})
    return pd.DataFrame(rows, columns=["#", "player", "move", "what happened", "odds shown"])
