"""The Kung Fu 2100 page without a browser: contract, clicks turned into commands, panels, charts, files."""

import ast
import pathlib

import holoviews as hv
import panel as pn
import pytest
from bokeh.document import Document

from apps import discover_games, kf2100
from apps.kf2100 import views
from apps.kf2100.lair import levels_text
from engine.core import dump_state
from engine.core.session import BOT, PERSON, Level
from engine.kf2100.bots import HeuristicBot
from engine.kf2100.odds import combat_odds
from engine.kf2100.session import KungFuSession, default_seats
from engine.kf2100.state import KungFuGame, skirmish
from engine.kf2100.steps import Step

pytestmark = pytest.mark.no_event_loop  # asyncio.run needs a thread without Playwright's running loop

hv.extension("bokeh", logo=False)
APP = pathlib.Path(kf2100.__file__).parent


def page(terminators=PERSON, clone_master=BOT, render=True, **params):
    p = kf2100.KungFuPage(session=KungFuSession(hand_over=True, seats=default_seats(terminators, clone_master),
                                                **params))
    if render:
        pn.panel(p).get_root(Document())
    return p


def combat_page(seed=5):
    p = page(seed=seed)
    p.session.load(dump_state(skirmish(KungFuGame("basic"), {"T1": "n9", "J3": "o9"}, phase="combat1")))
    return p, p.session


def test_contract_and_one_session_per_page():
    assert kf2100.ORDER == 2 and "\n" not in kf2100.DESCRIPTION and kf2100.TITLE == "Kung Fu 2100"
    assert "kf2100" in [g.slug for g in discover_games()]
    a, b = kf2100.create_app(), kf2100.create_app()
    assert a.session is not b.session and isinstance(a, pn.viewable.Viewer)
    assert not a.session.pace  # outside a server the bots play at once


def test_small_modules_typed_actions_and_no_private_names():
    """No module over ~400 lines, no action text parsed (``split``), no private Panel/Bokeh name, no _background."""
    for path in APP.glob("*.py"):
        text = path.read_text()
        assert len(text.splitlines()) <= 420, path.name
        assert ".split(" not in text and "_background" not in text, path.name
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
                owner = node.value
                assert isinstance(owner, ast.Name) and owner.id in ("self", "s", "cls"), (path.name, node.attr)


def test_board_draws_the_map_with_rooms_doors_equipment_and_the_elevation_edge():
    p = page()
    m = p.board.model
    what = dict(zip(m.base()["square"], m.base()["what"], strict=True))
    assert what["o1"].startswith("the armored front door") and what["c3"] == "Kitchen, the disposal entry"
    assert sum("clone bank" in w for w in what.values()) == 4 and sum("computer (" in w for w in what.values()) == 3
    assert {"Kitchen", "Loo", "Clone Master's quarters", "Central hall"} <= set(m.room_labels()["text"])
    assert len(m.elevation_edges()["x0"]) > 10


def test_clicks_enter_select_move_and_refuse_without_change():
    p = page(seed=2)
    s, b = p.session, p.board
    assert b.click_square("c3") and s.state.figs["T1"].entry == "disposal"
    assert b.click_square("c7") and s.state.figs["T2"].entry == "loo"
    before = s.save()
    assert not b.click_square("k9")  # not an entry
    assert s.notice.text.startswith("click where T3 waits") and s.notice.level is Level.WARNING and s.save() == before
    assert p.decisions.choose(next(c for c in p.decisions.shown().rows[0] if c.label == "T3 at the disposal"))
    assert s.state.step is Step.MOVE and s.person_to_move() == 0
    sent = {name: source.data for name, source in b.sources.items()}
    assert b.click_figure("T1")
    assert s.selected == "T1" and sorted(map(int, b.frames["costs"]["text"])) == sorted(s.reachable().values())
    # a selection changes the pieces only: the trail's and the way's sources keep the data they had, so nothing
    # is sent to the browser for them
    assert b.sources["rects"].data is not sent["rects"] and b.sources["texts"].data is not sent["texts"]
    assert b.sources["trail"].data is sent["trail"] and b.sources["way"].data is sent["way"]
    before = s.save()
    assert not b.click_square("a1")
    assert s.notice.text == "a1 is a wall: no figure may stand there" and s.save() == before
    assert b.click_square("c3")
    assert s.state.figs["T1"].pos == s.game.board.square("c3") and b.frames["trail"]["x0"]
    assert list(b.sources["trail"].data["x0"]) == b.frames["trail"]["x0"]


def test_a_combat_shows_chits_odds_and_the_exchange():
    p, s = combat_page()
    labels = [c.label for c in p.decisions.shown().rows[0]]
    assert "fist + kick + kick" in labels and p.combat_box.visible
    outlook = p.outlook.work_out()
    assert outlook is not None and outlook.exact and "Terminators take" in p.outlook.note.object
    assert p.decisions.choose(next(c for c in p.decisions.shown().rows[0] if c.label == "fist + kick + kick"))
    s.lead(0)
    assert not p.board.click_square("o9") and s.notice.text.startswith("pick the chit to play")
    p.decisions.choose(next(c for c in p.decisions.shown().rows[0] if c.arm == ("T1", "kick")))
    odds = views.odds_html(s, p.board.armed)
    assert "T1 Lightning Kick → J3" in odds and "67%" in odds
    assert len(p.crt_cells) == 6 and len({y for _, y in p.crt_cells}) == 1
    combat = views.combat_markdown(s, p.board.frames["view"], s.combat_log_start)
    assert "**J3** Jelly" in combat and levels_text(s.state.figs["T1"].to_dict()) in combat
    assert p.board.frames["marks"]["fill"].count("#ef4444") == 1  # the one target lit red
    assert p.board.click_square("o9")  # the bot answers and the die rolls at once (no pacing outside a server)
    roll = next(e for e in s.log if e["what"].startswith("T1 kick on J3"))
    combat = views.combat_markdown(s, p.board.frames["view"], s.combat_log_start)
    assert f"d6 {roll['roll']} (needed ≤ {roll['need']}" in combat


def test_a_simulated_outlook_shows_its_intervals_and_an_exact_one_says_exact():
    p, s = combat_page()
    exact = p.outlook.work_out()
    assert exact.exact and views.hits_title(exact) == "Hits in the whole combat (exact)"
    note = p.outlook.note.object
    assert "(exact)" in note and "interval" not in note
    data = views.hits_data(exact)
    assert data["low"] == data["p"] == data["high"]
    sampled = combat_odds(s.state, [HeuristicBot(0), HeuristicBot(1)], max_nodes=5, games=300, seed=1)
    p.outlook.outlook = (s.combat_key(), sampled)
    assert p.outlook.shown[1] is sampled
    assert views.hits_title(sampled) == "Hits in the whole combat (300 simulated combats)"
    assert "simulated over 300 combats" in p.outlook.note.object
    data = views.hits_data(sampled)
    assert all(lo <= q <= hi and hi > lo for lo, q, hi in zip(data["low"], data["p"], data["high"], strict=True))
    assert all("95% interval" in label for label in data["label"])
    for side in (0, 1):
        low, high = sampled.expected_interval(side)
        assert f"{sampled.expected(side):.2f} (95% interval {low:.2f}-{high:.2f})" in p.outlook.note.object
    s.load(dump_state(skirmish(KungFuGame("basic"), {"T1": "n9", "S1": "o9"}, phase="combat1")))
    # an outlook is for its own combat only: the sampled one is gone (the page may have worked out the new one)
    assert p.outlook.current() is not sampled and p.outlook.shown[1] is not sampled
    assert p.outlook.current() is None or p.outlook.outlook[0] == s.combat_key()


def test_hot_seat_board_hides_the_clone_masters_counters_until_he_takes_the_screen():
    p = page(PERSON, PERSON, seed=1)
    s, b = p.session, p.board
    d = p.decisions.shown()
    assert d.warning and "Hand the screen to the Clone Master" in d.notes[0]
    assert not b.click_square("k9") and s.notice.text.startswith("hand the screen")
    p.decisions.choose(d.rows[0][0])
    assert s.handover is None and s.viewer == 1
    assert p.decisions.choose(p.decisions.shown().rows[0][0])  # Place the rest automatically
    assert s.handover == 0
    names = b.frames["counters"]["name"]
    assert names.count("face-down counter") == 33 and "J1" not in names and "CM" not in names
    assert s.take_screen(0)
    assert "J1" not in b.frames["counters"]["name"]


def test_bad_file_is_refused_and_the_game_kept():
    p = page(seed=1)
    s, files = p.session, p.controls.files
    p.board.click_square("c3")
    kept = s.save()
    files.load_file(type("E", (), {"new": b"not json"})())
    assert s.notice.text.startswith("Could not load") and s.notice.level is Level.DANGER and s.save() == kept
    files.load_file(type("E", (), {"new": kept.encode()})())
    assert s.notice.text.startswith("Game loaded") and s.save() == kept


def test_the_same_file_loads_again_after_a_move():
    """The file input is cleared after a load, so choosing the same file again is a change and loads it."""
    p = page(seed=1)
    s, files = p.session, p.controls.files
    p.board.click_square("c3")
    saved = s.save().encode()
    cleared = []
    files.upload.clear = lambda: cleared.append(True)  # the browser's input is told to forget the file
    files.upload.value = saved
    assert s.notice.text.startswith("Game loaded") and s.save() == saved.decode() and cleared == [True]
    assert files.upload.value is None
    p.board.click_square("c7")
    assert s.state.figs["T2"].entry == "loo" and s.save() != saved.decode()
    files.upload.value = saved  # the very same bytes
    assert s.notice.text.startswith("Game loaded") and s.save() == saved.decode() and cleared == [True, True]
    assert s.state.figs["T2"].entry != "loo"


def test_new_game_takes_scenario_seats_and_seed_from_the_controls():
    p = page()
    c = p.controls
    c.scenario.value, c.seed.value = "solo", 7
    assert c.new_game()
    s = p.session
    assert s.scenario == "solo" and s.seed == 7 and s.state.figs["T1"].pos == s.game.board.square("g2")
    c.seed.value = -1
    assert not c.new_game()
    assert s.notice.level is Level.WARNING and s.seed == 7
    assert c.files.download.filename == "kung-fu-2100-solo-seed7-turn1.json"


def door_page(seed):
    p = page(seed=seed)
    p.session.load(dump_state(skirmish(KungFuGame("basic"), {}, waiting={"T1": "door"}, phase="combat1")))
    return p, p.session


def click(p, label):
    """Click a decision button by its label, as the browser would (through its on_click handler)."""
    p.decisions.buttons()[label].clicks += 1


def test_the_armored_door_by_its_buttons():
    p, s = door_page(seed=1)  # this seed's first die is a 2: the door breaks
    assert {"T1: punch the door", "T1: kick the door", "Leave the door"} <= set(p.decisions.buttons())
    assert p.combat_box.visible and "armored door" in views.combat_markdown(s, p.board.frames["view"], 0)
    click(p, "T1: kick the door")  # the die rolls at once outside a server
    assert s.log[-1]["what"] == "T1 kicks the armored door" and s.log[-1]["p"] == "1/3"
    assert s.log[-1]["roll"] == 2 and s.log[-1]["result"] == "door broken" and s.state.door_broken
    assert s.state.step is not Step.DOOR and "Leave the door" not in p.decisions.buttons()

    p, s = door_page(seed=0)  # a 6: the door holds, and the Terminators may leave it
    click(p, "T1: punch the door")
    assert s.log[-1]["result"] == "miss" and s.state.door_chits == {"T1": ["fist"]} and s.state.step is Step.DOOR
    click(p, "Leave the door")
    assert s.state.step is not Step.DOOR and not s.state.door_broken and "Leave the door" not in p.decisions.buttons()


def test_the_last_terminator_leaves_the_lair_by_its_button():
    p = page(seed=1)
    s = p.session
    position = skirmish(KungFuGame("basic"), {"T1": "c3"}, levels={})
    for fid in ("T2", "T3"):
        position.figs[fid].status = "dead"
    s.load(dump_state(position))
    click(p, "T1 leaves the lair")
    assert s.state.is_terminal() and s.state.result == "draw"
    assert "Game over: draw" in p.decisions.shown().notes[0] and not p.decisions.buttons()


def test_a_button_of_an_earlier_moment_changes_nothing():
    p = page(seed=1)
    s = p.session
    p.board.click_square("c3")
    button = p.decisions.buttons()["T2 at the loo"]
    p.board.click_square("c7")  # T2 waits at the loo already: the button's click is for an earlier moment
    before = s.save()
    button.clicks += 1
    assert s.save() == before and "T2 waits at loo is not legal now" in s.notice.text


def test_a_click_in_the_browser_updates_the_board_in_place():
    """A click the browser writes into the board's gesture source (a message applied as Panel's notebook handler
    does) runs as a click on the board, and changes the data of the board's sources, not its figure."""
    from pyviz_comms import Comm

    p = page(seed=2, render=False)
    b, s = p.board, p.session
    doc = Document()
    doc.add_root(pn.panel(p).get_root(doc, Comm()))  # as in a notebook cell
    renderers = list(b.figure.renderers)
    x, y = b.model.centre(*b.model.col_row("c3"))
    doc.hold()
    try:
        doc.apply_json_patch({"events": [{"kind": "ModelChanged", "model": {"id": b.gesture.id}, "attr": "data",
                                          "new": {"kind": ["tap"], "x0": [x], "y0": [y], "x1": [x], "y1": [y],
                                                  "seq": [1]}}]}, setter="browser")
    finally:
        doc.unhold()
    assert s.state.figs["T1"].entry == "disposal", s.notice.text
    assert list(b.sources["rects"].data["fill"]) == b.frames["marks"]["fill"] + b.frames["counters"]["fill"]
    assert b.figure.renderers == renderers and b.figure.name == "board"
    assert any("detail" in r.data_source.data for r in b.figure.renderers)


def test_the_benchmark_prints_its_figures(capsys):
    from apps._bench import BENCHMARKS

    rows = BENCHMARKS["kf2100"](repeats=2)
    out = capsys.readouterr().out
    names = {name.rsplit(" + ", 1)[0] for name, _ in rows}
    assert names == {"kf2100 board click", "kf2100 decision", "kf2100 bot step"}
    assert all(ms > 0 for _, ms in rows) and "ms" in out


def test_pages_asking_for_the_same_outlook_at_once_share_one_computation(monkeypatch):
    """A table's pages share its session and each works out the combat's outlook on a worker thread: it is
    worked out once per combat, and every page gets that one result."""
    from threads_helpers import asked_at_once, slowed

    import engine.kf2100.session as ks

    p, s = combat_page()
    calls: list[int] = []
    monkeypatch.setattr(ks, "outlook_of", slowed(ks.outlook_of, calls))
    key, state = s.combat_key(), s.state.clone()
    games = p.outlook.games + 1  # not the outlook the page has already worked out
    got = asked_at_once(lambda: s.outlook_for(state, key, 6000, games))
    assert len(calls) == 1 and len(got) == 3 and all(o is got[0] for o in got)
    assert s.outlook_for(state, key, 6000, games) is got[0] and len(calls) == 1  # kept for the next page


def test_a_redraw_keeps_the_notes_and_rows_still_shown():
    """The decision panel's redraw (after every change, a bot's step while this page waits included) keeps each
    note and row of buttons still shown as the same pane, so Panel keeps their Bokeh models and the browser is
    sent only what changed (it once rebuilt every pane, ~10-75 ms of a click); its buttons still play."""
    p = page(seed=1)
    s = p.session
    view = p.decisions.__panel__()
    before = list(view.objects)
    assert before and "T1 at the loo" in p.decisions.buttons()
    p.board.param.trigger("armed")  # a redraw that changes nothing
    assert all(a is b for a, b in zip(view.objects, before, strict=True))
    click(p, "T1 at the disposal")
    after = list(view.objects)
    assert after[0] is before[0] and after[0].object == "**Terminators to act.**"  # the same note: kept
    assert "**T2**" in after[1].object and after[2] is not before[2]  # the question and its buttons: new
    assert "T2 at the loo" in p.decisions.buttons() and "T1 at the loo" not in p.decisions.buttons()
    label = next(iter(p.decisions.buttons()))
    version = s.version
    click(p, label)
    assert s.version > version
