"""The Kung Fu 2100 page without a browser: contract, clicks turned into commands, panels, files."""

import holoviews as hv
import panel as pn

from apps import discover_games, kf2100
from apps._kf2100_board import levels_text
from engine.core import dump_state
from engine.kf2100.bots import HeuristicBot
from engine.kf2100.odds import combat_odds
from engine.kf2100.state import KungFuGame, skirmish

hv.extension("bokeh", logo=False)


def dashboard(**params):
    return kf2100.KungFuDashboard(session=kf2100.KungFuSession(hand_over=True, **params))


def click(d, square):
    d.click(*d.model.centre(*d.model.col_row(square)))


def test_contract_and_one_session_per_page():
    assert kf2100.ORDER == 2 and "\n" not in kf2100.DESCRIPTION and kf2100.TITLE == "Kung Fu 2100"
    assert "kf2100" in [g.slug for g in discover_games()]
    a, b = kf2100.create_app(), kf2100.create_app()
    assert a.dashboard.session is not b.dashboard.session
    assert not a.dashboard.session.pace  # outside a server the bots play at once


def test_board_draws_the_map_with_rooms_doors_equipment_and_the_elevation_edge():
    d = dashboard()
    base = d.model.base()
    what = dict(zip(base["square"], base["what"], strict=True))
    assert what["o1"].startswith("the armored front door") and what["c3"] == "Kitchen, the disposal entry"
    assert sum("clone bank" in w for w in what.values()) == 4 and sum("computer (" in w for w in what.values()) == 3
    names = d.model.room_labels()["text"]
    assert {"Kitchen", "Loo", "Clone Master's quarters", "Central hall"} <= set(names)
    assert len(d.model.elevation_edges()["x0"]) > 10


def test_clicks_enter_select_move_and_refuse_without_change():
    d = dashboard(seed=2)
    s = d.session
    click(d, "c3")
    assert s.state.figs["T1"].entry == "disposal"
    click(d, "c7")
    assert s.state.figs["T2"].entry == "loo"
    before = s.save()
    click(d, "k9")  # not an entry
    assert s.status.startswith("Refused: click where T3 waits") and s.save() == before
    d.act("T3 waits at disposal")
    assert s.state.phase == "move1" and s.human_player() == 0
    d.click(*d.model.centre(*d._frames["where"]["T1"]))
    assert s.selected == "T1" and sorted(map(int, d._frames["costs"]["text"])) == sorted(s.reachable().values())
    before = s.save()
    click(d, "a1")
    assert s.status == "Refused: a1 is a wall: no figure may stand there" and s.save() == before
    click(d, "c3")
    assert s.state.figs["T1"].pos == s.game.board.square("c3") and d._frames["trail"]["x0"]


def test_a_combat_shows_chits_odds_and_the_exchange():
    d = dashboard(seed=5)
    s = d.session
    s.load(dump_state(skirmish(KungFuGame("basic"), {"T1": "n9", "J3": "o9"}, phase="combat1")))
    labels = [o.label for o in d._decide.objects[-1]]
    assert "fist + kick + kick" in labels and d._combat_box.visible
    d.wait_idle()
    assert d.outlook is not None and d.outlook[1].exact and "Terminators take" in d._hits_note.object
    d.act("chits T1 fist+kick+kick")
    d.act("lead terminators")
    click(d, "o9")
    assert s.status.startswith("Refused: pick the chit to play")
    d.arm("T1", "kick")
    assert "T1 Lightning Kick → J3" in d._odds_html.object and "67%" in d._odds_html.object
    assert list(d._crt_mark.data["attack"]) == ["kick"] * 6
    assert "**J3** Jelly" in d._combat_html.object
    assert levels_text(s.state.figs["T1"].to_dict()) in d._combat_html.object
    click(d, "o9")  # the bot answers and the die rolls at once (no pacing outside a server)
    roll = next(e for e in s.log if e["what"].startswith("T1 kick on J3"))
    assert f"d6 {roll['roll']} (needed ≤ {roll['need']}" in d._combat_html.object


def test_a_simulated_outlook_shows_its_intervals_and_an_exact_one_says_exact():
    d = dashboard(seed=5)
    s = d.session
    s.load(dump_state(skirmish(KungFuGame("basic"), {"T1": "n9", "J3": "o9"}, phase="combat1")))
    d.wait_idle()
    exact = d.outlook[1]
    assert exact.exact and d._hits_fig.title.text == "Hits in the whole combat (exact)"
    assert "(exact)" in d._hits_note.object and "interval" not in d._hits_note.object
    assert not d._hits_whisker.visible and list(d._hits_src.data["low"]) == list(d._hits_src.data["p"])
    sampled = combat_odds(s.state, [HeuristicBot(0), HeuristicBot(1)], max_nodes=5, games=300, seed=1)
    d.outlook = (d._combat_key, sampled)
    assert d._hits_fig.title.text == "Hits in the whole combat (300 simulated combats)"
    assert d._hits_whisker.visible and "simulated over 300 combats" in d._hits_note.object
    data = d._hits_src.data
    assert all(lo <= p <= hi and hi > lo for lo, p, hi in zip(data["low"], data["p"], data["high"], strict=True))
    assert all("95% interval" in label for label in data["label"])
    for side in (0, 1):
        low, high = sampled.expected_interval(side)
        assert f"{sampled.expected(side):.2f} (95% interval {low:.2f}-{high:.2f})" in d._hits_note.object


def test_hot_seat_board_hides_the_clone_masters_counters_until_he_takes_the_screen():
    d = dashboard(terminators="human", clone_master="human", seed=1)
    s = d.session
    assert "Hand the screen to the Clone Master" in d._decide.objects[0].object
    click(d, "k9")
    assert s.status.startswith("Refused: hand the screen")
    d.take_screen(1)
    d.auto_setup()
    assert s.handover == 0
    names = d._frames["counters"]["name"]
    assert names.count("face-down counter") == 33 and "J1" not in names and "CM" not in names
    d.take_screen(0)
    assert "J1" not in d._frames["counters"]["name"]


def test_bad_file_is_refused_and_the_game_kept():
    d = dashboard(seed=1)
    s = d.session
    click(d, "c3")
    kept = s.save()
    d._files.load_file(type("E", (), {"new": b"not json"})())
    assert s.status.startswith("Could not load the file") and s.save() == kept
    d._files.load_file(type("E", (), {"new": kept.encode()})())
    assert s.status.startswith("Game loaded") and s.save() == kept


def test_the_same_file_loads_again_after_a_move():
    """The file input is cleared after a load, so choosing the same file again is a change and loads it."""
    d = dashboard(seed=1)
    s = d.session
    click(d, "c3")
    saved = s.save().encode()
    cleared = []
    d._files.upload.clear = lambda: cleared.append(True)  # the browser's input is told to forget the file
    d._files.upload.value = saved
    assert s.status.startswith("Game loaded") and s.save() == saved.decode() and cleared == [True]
    assert d._files.upload.value is None
    click(d, "c7")
    assert s.state.figs["T2"].entry == "loo" and s.save() != saved.decode()
    d._files.upload.value = saved  # the very same bytes
    assert s.status.startswith("Game loaded") and s.save() == saved.decode() and cleared == [True, True]
    assert s.state.figs["T2"].entry != "loo"


def test_new_game_takes_scenario_seats_and_seed_from_the_controls():
    d = dashboard()
    d._scenario.value, d._seed.value = "solo", 7
    d.new_game()
    s = d.session
    assert s.scenario == "solo" and s.seed == 7 and s.state.figs["T1"].pos == s.game.board.square("g2")
    d._seed.value = -1
    d.new_game()
    assert s.status.startswith("Refused") and s.seed == 7


def test_benchmark_prints_its_figures(capsys):
    rows = kf2100.benchmark(repeats=2)
    out = capsys.readouterr().out
    assert rows[0][0].startswith("kf2100 board click") and " ms" in out
    assert all(ms > 0 for _, ms in rows)



def buttons(d):
    """The decision panel's buttons by label (they sit in rows and boxes)."""
    found, todo = {}, list(d._decide.objects)
    while todo:
        obj = todo.pop()
        if isinstance(obj, pn.widgets.Button):
            found[obj.label] = obj
        todo += list(getattr(obj, "objects", []))
    return found


def door_page(seed):
    d = dashboard(seed=seed)
    d.session.load(dump_state(skirmish(KungFuGame("basic"), {}, waiting={"T1": "door"}, phase="combat1")))
    return d, d.session


def test_the_armored_door_by_its_buttons():
    d, s = door_page(seed=1)  # this seed's first die is a 2: the door breaks
    assert {"T1: punch the door", "T1: kick the door", "Leave the door"} <= set(buttons(d))
    assert d._combat_box.visible and "armored door" in d._combat_html.object
    buttons(d)["T1: kick the door"].clicks += 1  # the die rolls at once outside a server
    assert s.log[-1]["what"] == "T1 kicks the armored door" and s.log[-1]["p"] == "1/3"
    assert s.log[-1]["roll"] == 2 and s.log[-1]["result"] == "door broken" and s.state.door_broken
    assert not s.state.door_step and "Leave the door" not in buttons(d)

    d, s = door_page(seed=0)  # a 6: the door holds, and the Terminators may leave it
    buttons(d)["T1: punch the door"].clicks += 1
    assert s.log[-1]["result"] == "miss" and s.state.door_tries == {"T1": 1} and s.state.door_step
    buttons(d)["Leave the door"].clicks += 1
    assert not s.state.door_step and not s.state.door_broken and "Leave the door" not in buttons(d)


def test_the_last_terminator_leaves_the_lair_by_its_button():
    d = dashboard(seed=1)
    s = d.session
    position = skirmish(KungFuGame("basic"), {"T1": "c3"}, levels={})
    for fid in ("T2", "T3"):
        position.figs[fid].status = "dead"
    s.load(dump_state(position))
    buttons(d)["T1 leaves the lair"].clicks += 1
    assert s.state.is_terminal() and s.state.result == "draw"
    assert "Game over: draw" in d._decide.objects[0].object and not buttons(d)
