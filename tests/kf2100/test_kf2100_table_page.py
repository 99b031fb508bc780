"""A Kung Fu 2100 page at a table, outside a browser: what a page holding one side (or none) builds its views
from. The Terminators' page names no face-down counter and shows none of the Clone Master's decisions, odds or
notices while he decides; the Clone Master's page shows his; a watcher's shows neither side's chits; the
table's hand-over is on only while one browser holds both seats."""

from __future__ import annotations

import pytest

from apps.kf2100 import keep_hand_over, views
from apps.kf2100.lair import armed_after, frames
from apps.kf2100.page import KungFuPage
from apps.kf2100.sides import Sides
from engine.core import dump_state
from engine.core.seal import Sealer
from engine.core.session import BOT, PERSON, Level
from engine.core.tables import TableRegistry, new_token
from engine.kf2100.actions import Attack, Chits
from engine.kf2100.session import KungFuSession, default_seats
from engine.kf2100.steps import Step
from engine.kf2100.table import KF2100_TABLE


def combat_session() -> tuple[KungFuSession, str]:
    """Both seats played by people, T1 next to a Jelly in the kitchen, the combat at its Attack step after both
    picked their chits (the Terminators to lead)."""
    s = KungFuSession(seed=11)
    s.seats = default_seats(PERSON, PERSON)
    st = s.state.clone()
    jelly = next(f for f in st.figs.values() if f.kind == "jelly" and not f.face_up)
    jelly.pos = st.game.board.square("e2")
    s.load(dump_state(st))
    for fid, entry in (("T1", "disposal"), ("T2", "disposal"), ("T3", "loo")):
        assert s.wait_at(fid, entry)
    assert s.end() and s.move("c3", "T1") and s.move("d2", "T1") and s.end() and s.end(), s.notice.text
    assert s.attempt(s.play, Chits("T1", ("fist", "fist", "kick")))
    return s, jelly.id


def hidden_ids(s: KungFuSession) -> list[str]:
    return [f.id for f in s.state.figs.values() if f.side == 1 and not f.face_up]


def page_of(s: KungFuSession, held: list[int]) -> KungFuPage:
    return KungFuPage(session=s, sides=Sides(held=held), at_table=True)


def shown_names(page: KungFuPage) -> set[str]:
    board = page.board.frames
    return {*board["counters"]["name"], *board["labels"]["text"], *board["where"]}


def test_the_terminators_page_names_no_face_down_counter_and_waits_while_the_clone_master_picks():
    s, jelly = combat_session()
    assert s.state.step is Step.PICK and s.person_to_move() == 1
    mine, theirs = page_of(s, [0]), page_of(s, [1])
    assert not shown_names(mine) & set(hidden_ids(s)) and jelly in shown_names(mine)
    assert set(hidden_ids(s)) - {f.id for f in s.state.figs.values() if not f.on_board} <= shown_names(theirs)
    assert mine.decisions.shown() == views.Decisions(("Waiting for the Clone Master…",), waiting=True)
    assert any(isinstance(c.action, Chits) for row in theirs.decisions.shown().rows for c in row)
    assert views.combat_markdown(s, mine.sides.view(s), 0).count("3 hidden") == 0  # its own chits, by name
    assert "fist fist kick" in views.combat_markdown(s, mine.sides.view(s), 0)
    # A refusal answers the Clone Master's own click: his page says it, the Terminators' page the public prompt.
    s.refuse(f"{jelly} cannot pick those chits")
    assert theirs.sides.notice(s).text.startswith(jelly)
    assert mine.sides.notice(s).text == s.prompt() and mine.sides.notice(s).level is Level.INFO


def test_no_odds_armed_chit_or_highlight_of_the_other_sides_legal_moves_reach_a_page():
    s, _ = combat_session()
    pick = next(a for a in s.legal() if isinstance(a, Chits))
    assert s.attempt(s.play, pick) and s.lead(1)  # the Clone Master leads: his attack chits are his secret
    assert s.state.step is Step.ATTACK and s.person_to_move() == 1
    mine, theirs = page_of(s, [0]), page_of(s, [1])
    option = next((a.figure, a.chit) for a in s.legal() if isinstance(a, Attack))
    assert armed_after(s, option, theirs.sides) == option and armed_after(s, option, mine.sides) is None
    target = "#ef4444"  # a target of the armed chit, highlighted
    assert target in frames(s, theirs.board.model, option, theirs.sides)["marks"]["fill"]
    assert target not in frames(s, mine.board.model, option, mine.sides)["marks"]["fill"]
    assert "Chance to hit" in views.odds_html(s, None, acting=theirs.sides.acting(s) is not None)
    assert "Chance to hit" not in views.odds_html(s, None, acting=mine.sides.acting(s) is not None)
    assert mine.decisions.shown().waiting and not theirs.decisions.shown().waiting
    watcher = page_of(s, [])
    combat = views.combat_markdown(s, watcher.sides.view(s), 0)
    assert "3 hidden" in combat and f"{len(pick.chits)} hidden" in combat  # neither side's chits, by name
    assert not shown_names(watcher) & set(hidden_ids(s))


def test_a_click_on_the_wrong_side_is_refused_by_the_gate_and_changes_nothing():
    s, _ = combat_session()
    said: list[str] = []

    def may_act(move: bool = True) -> bool:
        said.append("refused")
        return False

    page = KungFuPage(session=s, sides=Sides(held=[0]), at_table=True, may_act=may_act)
    version = s.version
    assert not page.board.click_figure("T1")
    assert not page.controls.new_game()
    assert s.version == version and said == ["refused", "refused"]


@pytest.mark.parametrize(("second", "hand_over"), [("same", True), ("other", False), ("bot", False)])
def test_the_hand_over_is_on_only_while_one_browser_holds_both_seats(tmp_path, second, hand_over):
    reg = TableRegistry(tmp_path / "tables", {"kf2100": KF2100_TABLE}, Sealer.in_folder(tmp_path))
    token = new_token()
    table = reg.create("kf2100", token)
    keep_hand_over(table)
    assert not table.session.hand_over
    if second == "bot":
        assert table.hand_to_bot("Clone Master", token) == ""
        assert table.session.seat(1) == BOT
    else:
        assert table.take("Clone Master", token if second == "same" else new_token()) == ""
    assert table.session.hand_over is hand_over
    if hand_over:
        assert table.leave("Clone Master", token) == "" and not table.session.hand_over
