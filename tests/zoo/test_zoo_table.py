"""Kung-Fu Zoo at a table without a browser: what a seat's file seals and how it comes back, an edited file
refused, the seats following the number of teams, every click of a page gated by its seat, and the table's bot
waiting for the round's result to be seen."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from apps._tables import BotDriver, TablePage
from apps.zoo import ZooPage
from apps.zoo import adapter as za
from engine.core.seal import SEALED, TOKEN_FIELD, Sealer, sealed_class
from engine.core.session import BOT, PERSON
from engine.core.tables import TableRegistry, new_token
from engine.zoo.session import RoundResult
from engine.zoo.table import ZOO_TABLE, TableZooSession, hidden, summary

pytestmark = pytest.mark.no_event_loop  # the bot driver plays at once only with no running loop

LIGHT = replace(ZOO_TABLE, session_options={**ZOO_TABLE.session_options, "bot_candidates": 2, "bot_samples": 1})


@pytest.fixture
def sealer(tmp_path):
    return Sealer.in_folder(tmp_path)


@pytest.fixture
def registry(tmp_path, sealer):
    return TableRegistry(tmp_path / "tables", {"zoo": LIGHT}, sealer)


def flick(s, direction: float = 3.0, speed: float = 1.4) -> None:
    assert s.choose_die(s.state.flickable()[0]) and s.propose_flick(direction, speed), s.notice.text
    assert s.commit_flick() is not None, s.notice.text


def secrets_of(s) -> set[str]:
    """The seed and both generators' state words (the bots' and the battle's aim noise), as they would be written."""
    found = {str(s.seed)}
    for rng in (s.rng, s.state.rng):
        st = rng.bit_generator.state["state"]
        found |= {str(st["state"]), str(st["inc"])}
    return found


def fresh(sealer) -> TableZooSession:
    other = sealed_class(TableZooSession, hidden)(**LIGHT.session_options)
    other.sealer = sealer
    return other


def test_a_seats_file_seals_the_generators_and_the_seed_and_restores_the_whole_battle(registry, sealer):
    s = registry.create("zoo", new_token()).session
    flick(s)
    flick(s, -4.0, 1.2)
    text = s.save()
    body = json.loads(text)
    assert [x for x in secrets_of(s) if x in text] == []  # no seed, no generator word readable in the file
    assert body["seed"] == body["rng"] == body["game"]["state"]["rng"] == body["log"][0]["text"] == SEALED
    assert body["log"][1]["text"] == s.log[1]["text"] and TOKEN_FIELD in body  # the moves are the seat's to read
    other = fresh(sealer)
    other.load(text)
    assert other.state.to_json() == s.state.to_json() and other.seed == s.seed and other.log == s.log
    assert other.rng.bit_generator.state == s.rng.bit_generator.state
    # The same flick from both: the restored battle's own generator draws the same aim noise.
    flick(s, 7.0, 1.5)
    flick(other, 7.0, 1.5)
    assert other.state.to_json() == s.state.to_json() and other.last_frames == s.last_frames


def _move_a_die(body):
    die = next(iter(body["game"]["state"]["dice"]))
    body["game"]["state"]["dice"][die][1] = 99.0


def _forge_the_seed(body):
    body["seed"] = 12


def _break_the_seal(body):
    body[TOKEN_FIELD][0] = body[TOKEN_FIELD][0][:-4] + "AAAA"


@pytest.mark.parametrize(("edit", "reason"), [
    (_move_a_die, "changed after it was saved"),
    (_forge_the_seed, "changed after it was saved"),
    (_break_the_seal, "does not open with this server's key"),
])
def test_an_edited_file_is_refused_with_its_reason_and_the_battle_goes_on(registry, sealer, edit, reason):
    s = registry.create("zoo", new_token()).session
    flick(s)
    body = json.loads(s.save())
    edit(body)
    other = fresh(sealer)
    kept, version = other.state.to_json(), other.version
    assert not other.try_load(json.dumps(body))
    assert reason in other.notice.text and other.state.to_json() == kept and other.version == version


def test_a_file_sealed_by_another_server_is_refused(registry, tmp_path):
    s = registry.create("zoo", new_token()).session
    other = fresh(Sealer.in_folder(tmp_path / "elsewhere"))
    assert not other.try_load(s.save()) and "another Tabletop Dojo server" in other.notice.text


def test_the_seats_follow_the_number_of_teams_and_each_holder_keeps_their_place(registry):
    a, b = new_token(), new_token()
    table = registry.create("zoo", a)
    s = table.session
    assert table.take("P2 (Elephant)", b) == ""
    s.param.update(players=4, teams=["crocodile", "elephant", "gorilla", "zebra"])
    assert s.new_game()
    assert table.seat_names() == ["P1 (Crocodile)", "P2 (Elephant)", "P3 (Gorilla)", "P4 (Zebra)"]
    assert table.seats_of(a) == ["P1 (Crocodile)"] and table.seats_of(b) == ["P2 (Elephant)"]
    assert table.free_seats() == ["P3 (Gorilla)", "P4 (Zebra)"]
    assert table.hand_to_bot("P4 (Zebra)", a) == "" and [x.kind for x in s.seats] == [PERSON] * 3 + [BOT]
    s.seats = [*s.seats[:3], replace(s.seats[3], kind=PERSON)]  # the table, not the game, says who plays a team
    assert [x.kind for x in s.seats] == [PERSON] * 3 + [BOT]
    s.param.update(players=3, teams=["gorilla", "crocodile", "zebra"])
    assert s.new_game()
    assert table.seats_of(a) == ["P1 (Gorilla)"] and table.seats_of(b) == ["P2 (Crocodile)"]
    assert list(table.seats.values())[2] is None and len(table.seats) == 3
    assert "P1 (Gorilla) to flick" in summary(s) and "round 1" in summary(s)
    reopened = TableRegistry(registry.folder, registry.games, registry.sealer).get(table.id)
    assert reopened.seats == table.seats and reopened.session.state.to_json() == s.state.to_json()


def zoo_page(table, _token, may_act):
    return ZooPage(session=table.session, may_act=may_act, background=False)


def test_every_click_of_a_page_is_gated_by_its_seat_and_a_refusal_changes_nothing(registry):
    a, b, c = new_token(), new_token(), new_token()
    table = registry.create("zoo", a)
    s = table.session
    assert table.take("P2 (Elephant)", b) == ""
    mine, theirs, watching = (TablePage(t, zoo_page, table=table) for t in (a, b, c))
    kept, version, proposal = s.state.to_json(), s.version, str(s.proposed_flick())
    for page, why in ((theirs, "it is the P1 (Crocodile)'s move, and their seat is held by another player"),
                      (watching, "you are watching this table: only the players at it can act")):
        g = page.game
        assert not g.arena.tap(*za.bench_xy(0, 1)) and page.bar.said == f"Not done: {why}."
        g.arena.pan_start(-9.5, 150.0)
        assert not g.arena.pan_end(90.5, 150.0)
        g.flick.direction.value = 30.0  # typed in this page's box: refused, and the box goes back
        assert g.flick.direction.value == s.direction == 0.0
        assert not g.flick.commit_flick() and not g.abilities.use()
        g.flick.pass_extra.clicks += 1
        g.flick.first[1].clicks += 1
    assert not watching.game.controls.new_game() and not watching.game.controls.load_text(s.save())
    watching.game.controls.angle_sd.value = 20.0
    assert watching.game.controls.angle_sd.value == s.aim_angle_sd != 20.0
    assert s.state.to_json() == kept and s.version == version and str(s.proposed_flick()) == proposal
    assert mine.bar.said == ""
    # The player to move aims and flicks; then it is the other's move, and the first is refused in turn.
    assert mine.game.arena.tap(*za.bench_xy(0, 1)) and s.die == "C2"
    mine.game.arena.pan_start(-9.5, 150.0)
    assert mine.game.arena.pan_end(90.5, 150.0) and mine.game.flick.commit_flick()
    assert s.state.current_player() == 1 and not mine.game.flick.commit_flick()
    assert "P2 (Elephant)'s move" in mine.bar.said
    before = s.seed
    assert theirs.game.controls.new_game()  # a player at the table may start a new battle, from a secret seed
    assert s.seed != before and s.log[0]["text"].endswith(f"seed {s.seed}") and len(s.log) == 1
    shown = watching.game._log_frame(s)["move"].iloc[-1]
    assert shown.endswith("from a secret seed") and str(s.seed) not in shown
    assert watching.game.controls.seed.value is None and not watching.game.controls.seed.visible
    assert all(w.disabled for w in watching.game.controls.seats)  # the seat bar says who plays each team
    for page in (mine, theirs, watching):
        page.close()


def test_the_tables_bot_waits_for_the_rounds_result_and_next_round_wakes_it(registry):
    a = new_token()
    table = registry.create("zoo", a)
    s = table.session
    BotDriver(table)  # no running loop: it plays at once when poked
    flick(s)
    assert s.state.current_player() == 1
    s.round_result = RoundResult(1, "cage", ("P1 (Crocodile)", "P2 (Elephant)"), 0, "P1 won round 1.", (), (), (),
                                 False, ())
    assert table.hand_to_bot("P2 (Elephant)", a) == ""
    assert not s.bot_to_move() and len(s.log) == 2  # the players have not seen the result: the bot waits
    assert s.next_round()
    assert len(s.log) == 3 and s.log[-1]["player"] == 1 and s.state.current_player() == 0


def test_a_closed_page_leaves_no_watcher_on_the_tables_battle(registry):
    """The battle outlives every page of it: a closed page's arena, odds, controls and seat sync let go of it."""
    from apps._tables import watchers_of

    table = registry.create("zoo", new_token())
    first = TablePage(new_token(), zoo_page, table=table)
    baseline = len(watchers_of(table))
    pages = [TablePage(new_token(), zoo_page, table=table) for _ in range(3)]
    assert len(watchers_of(table)) > baseline
    for page in pages:
        page.close()
    assert len(watchers_of(table)) == baseline
    flick(table.session)  # the battle goes on for the page still open
    assert first.game.arena.shown == table.session.version
    first.close()


def test_a_flicks_animation_is_scheduled_on_every_page_before_their_other_redraws():
    """param calls a batch's watchers in the order their parameters were first set: a move sets the frames first,
    so each page's arena (watching the frames and the version, as ``Arena`` does) hears of a flick before the log,
    the notice and the proposal's watchers, and schedules its animation ahead of their redraws (measured at a
    two-browser table: the other page's animation began ~120-200 ms after the click on the server, 220-420 ms
    before, behind the redraws of both pages)."""
    from engine.zoo.session import ZooSession

    s = ZooSession(seed=3)
    heard: list[str] = []
    s.param.watch(lambda *_e: heard.append("log"), ["log"])
    s.param.watch(lambda *_e: heard.append("notice"), ["notice"])
    s.param.watch(lambda *_e: heard.append("aim"), ["die", "spot", "direction", "speed"])
    s.param.watch(lambda *events: heard.append(f"arena {sorted(e.name for e in events)}"), ["last_frames", "version"])
    assert s.apply(f"flick {s.state.flickable()[0]} from S-dot face=head dir=80.0 speed=1.3")
    assert heard[0] == "arena ['last_frames', 'version']" and heard.count(heard[0]) == 1
    assert {"log", "notice"} <= set(heard[1:])
