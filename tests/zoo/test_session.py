"""The session model the dashboard is built on: commands, refusals that change nothing, bots, saving."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from engine.zoo.bot import OddsBot
from engine.zoo.session import Rehearsal, ZooSession


def snapshot(session: ZooSession) -> str:
    return session.state.to_json()


def test_build_propose_estimate_and_commit_a_flick() -> None:
    s = ZooSession(seed=3, seats=["person", "person"], odds_workers=1)
    assert s.state.current_player() == 0 and "P1 (Crocodile) to make a flick" in s.notice.text
    assert s.choose_die("C2") and s.launch_spot("W-dot") and s.set_face("back")
    assert s.propose_flick(10.0, 1.1)
    assert str(s.proposed_flick()) == "flick C2 from W-dot face=back dir=10.0 speed=1.1"
    line = s.aim_line()
    assert line is not None and line["x"] == -9.5 and line["y"] == 150.0 and line["heading"] == 10.0
    assert abs(line["slide"] - 1100.0**2 / (2 * 0.35 * 9810)) < 1e-6
    odds = s.odds(samples=20)
    assert odds is not None and odds.samples == 20 and odds.flick == str(s.proposed_flick())
    grid = s.odds_grid([0.0, 10.0], [0.8, 1.1], samples=4)
    assert grid is not None and len(grid) == 4 and grid["p_lose_own"].between(0, 1).all()
    frames = s.commit_flick()
    assert frames and "C2" in frames[0]["dice"]
    assert s.last_frames == frames and s.state.current_player() == 1
    assert s.log[-1]["text"] == "flick C2 from W-dot face=back dir=10.0 speed=1.1"
    assert s.die.startswith("E")  # the proposal moved on to the next player's animals


def test_refused_commands_say_why_and_change_nothing() -> None:
    s = ZooSession(seed=3, seats=["person", "bot"], odds_workers=1)
    before, version = snapshot(s), s.version
    for command, words in [
        (lambda: s.choose_die("E1"), "belongs to"),
        (lambda: s.choose_die("Q9"), "no animal"),
        (lambda: s.launch_spot("middle"), "a spot is"),
        (lambda: s.launch_spot("S@100"), "ambush"),
        (lambda: s.set_face("wings"), "no face"),
        (lambda: s.propose_flick(95.0, 1.0), "within 80"),
        (lambda: s.propose_flick(0.0, 4.0), "speed must be"),
        (lambda: s.propose_flick("left", 1.0), "numbers"),
        (lambda: s.place("C1", 100, 100), "no animal to place"),
        (lambda: s.pass_extra(), "extra flick"),
        (lambda: s.choose_first(1), "start of a round"),
        (lambda: s.play_bot(), "not a computer player's turn"),
        (lambda: s.apply("jump"), "cannot read"),
        (lambda: s.new_game(seed=-1), "seed"),
        (lambda: s.try_load("not json"), "not valid JSON"),
        (lambda: s.try_load(json.dumps({"format": "chess"})), "not a saved Kung-Fu Zoo"),
    ]:
        assert not command(), words
        assert words.lower() in s.notice.text.lower(), (words, s.notice.text)
        assert snapshot(s) == before
    assert s.version == version and (s.direction, s.speed) == (0.0, 1.2)


def test_bot_seat_moves_and_person_cannot_move_for_it() -> None:
    s = ZooSession(seed=2, seats=["person", "bot"], bot_candidates=3, bot_samples=1)
    assert s.commit_flick() is not None
    assert s.bot_to_move()
    assert s.commit_flick() is None and "computer" in s.notice.text
    frames = s.play_bot()
    assert frames is not None and s.state.current_player() == 0 and len(s.log) == 3


def test_a_bot_flick_is_logged_with_the_odds_it_was_chosen_by() -> None:
    """Both ways the computer moves (at once, or thought out off the page's loop and then played) log
    its flick with the odds of its final scoring, as a person's flick is logged with the odds shown."""
    s = ZooSession(seed=4, seats=["bot", "bot"], bot_candidates=3, bot_samples=2, odds_workers=1)
    while s.state.phase != "flick":
        assert s.play_bot() is not None
    assert s.play_bot()
    choice = s.think_bot()
    assert choice is not None and s.play_bot(choice)
    flicks = [e for e in s.log if e["text"].startswith("flick")]
    assert len(flicks) == 2
    for entry in flicks:
        odds = entry["odds"]
        assert odds["samples"] == OddsBot().refine_samples
        assert 0 <= odds["cage_low"] <= odds["cage_opponent"] <= odds["cage_high"] <= 1
        assert 0 <= odds["lose_low"] <= odds["lose_own"] <= odds["lose_high"] <= 1


def test_save_and_load_round_trip_and_bad_files_keep_the_battle() -> None:
    s = ZooSession(seed=5, mode="points", players=3, seats=["person", "bot", "person"], odds_workers=1)
    s.commit_flick()
    text = s.save()
    other = ZooSession(seed=9)
    assert other.try_load(text)
    assert snapshot(other) == snapshot(s) and other.seats == s.seats and other.log == s.log
    assert other.players == 3 and other.mode == "points"
    damaged = json.loads(text)
    damaged["game"]["state"]["points"] = [1, 2, 3]
    before = snapshot(other)
    assert not other.try_load(json.dumps(damaged)) and "checksum" in other.notice.text and snapshot(other) == before


def test_placing_an_animal_knocked_out(monkeypatch) -> None:
    from helpers import Script, in_arena

    s = ZooSession(seed=1, seats=["person", "person"], odds_workers=1)
    in_arena(s.state)
    s.state.rail_rule = None
    Script(monkeypatch).then(left={"E2": "W"})
    assert s.choose_die("C1") and s.commit_flick() is not None
    assert s.state.phase == "place" and "places E2 face-up" in s.notice.text
    assert not s.place("E2", 150.0, 262.5, "back") and "face-up" in s.notice.text
    assert s.place("E2", 150.0, 262.5) and s.state.dice["E2"].status == "arena"


def test_dust_kick_hides_the_odds() -> None:
    s = ZooSession(seed=1, teams=["gorilla", "zebra"], seats=["person", "person"], odds_workers=1)
    s.commit_flick()
    assert s.use_ability("P1")
    s.choose_die("Z1")
    s.commit_flick()
    assert not s.aim_preview() and s.odds(samples=10) is None and "Dust Kick" in s.notice.text
    assert s.aim_line() is None


def test_trunk_shot_and_ambush_through_the_session() -> None:
    from helpers import in_arena

    s = ZooSession(seed=1, teams=["elephant", "crocodile"], seats=["person", "person"], odds_workers=1)
    in_arena(s.state)
    s.state.rail_rule = None
    assert s.spot_options("E2") == {"dots": ["N-dot", "E-dot", "S-dot", "W-dot"], "anywhere": False,
                                    "anywhere_needs_ability": False, "here": True, "along": [40.0, 260.0]}
    assert s.choose_die("E2") and s.launch_spot("here") and s.use_ability_flag
    assert s.propose_flick(200.0, 0.8)
    assert str(s.proposed_flick()) == "flick E2 from here dir=200.0 speed=0.8 ability"
    assert s.commit_flick() is not None and s.state.spent == [True, False]
    assert s.spot_options("C1")["anywhere_needs_ability"]
    assert s.choose_die("C1") and not s.launch_spot("E@100") and "ability" in s.notice.text
    assert not s.use_ability_flag  # a rail click never arms the Ambush: its own step does
    assert s.arm_ability() and s.use_ability_flag
    assert s.launch_spot("E@100") and s.propose_flick(-15.0, 1.0)
    assert s.commit_flick() is not None and s.state.spent == [True, True]


@pytest.mark.parametrize(("change", "words"), [
    (lambda d: d["log"].append({"foo": 1}), "battle log is damaged: entry 3 has a bad or missing 'move'"),
    (lambda d: d["log"][0].update(player=7), "a player who is not in the battle"),
    (lambda d: d["log"][0].update(odds={"samples": 3}), "odds in the battle log is damaged"),
    (lambda d: d["log"][0].update(events="hit"), "bad or missing 'events'"),
])
def test_a_forged_log_with_a_good_checksum_is_refused(change, words) -> None:
    from engine.core.serialize import session_checksum

    s = ZooSession(seed=5, seats=["person", "person"], odds_workers=1)
    s.commit_flick()
    data = json.loads(s.save())
    change(data)
    data["checksum"] = session_checksum(data)
    other = ZooSession(seed=9, odds_workers=1)
    before = snapshot(other)
    assert not other.try_load(json.dumps(data))
    assert words in other.notice.text and snapshot(other) == before


def test_play_refuses_an_illegal_or_foreign_action_and_changes_nothing() -> None:
    from engine.core import IllegalActionError
    from engine.core.session import Level
    from engine.zoo.actions import Flick, Pass

    s = ZooSession(seed=3, seats=["person", "bot"], odds_workers=1)
    before, version = snapshot(s), s.version
    for action in (Pass(), Flick("E1", "S", None, "head", 0.0, 1.0), "flick C1 from S-dot", 7):
        with pytest.raises(IllegalActionError):
            s.play(action)
        assert snapshot(s) == before and s.version == version
    assert not s.attempt(s.play, Pass()) and s.notice.level is Level.WARNING and "extra flick" in s.notice.text
    with pytest.raises(IllegalActionError, match="no bot is to move"):
        s.step()
    s.play(Flick("C1", "S", None, "head", 0.0, 1.0))
    assert s.bot_to_move() and s.seats[1].kind == "bot" and s.seats[1].name == "P2 (Elephant)"
    with pytest.raises(IllegalActionError, match="computer"):
        s.play(Flick("E1", "S", None, "head", 0.0, 1.0))
    s.step()
    assert s.state.current_player() == 0 and len(s.log) == 3


def _play_until_a_round_ends(s: ZooSession, moves: int = 200) -> None:
    for _ in range(moves):
        if s.round_result is not None:
            return
        s.step()
    raise AssertionError("no round ended")


def test_a_points_round_ends_on_its_result_with_each_animal_face_and_points() -> None:
    from engine.zoo.constants import face_points

    s = ZooSession(seed=2, mode="points", seats=["bot", "bot"], bot_candidates=2, bot_samples=1, odds_workers=1)
    _play_until_a_round_ends(s)
    r = s.round_result
    assert r.mode == "points" and r.round_no == 1 and r.winner is None
    assert r.animals and all(a.points == face_points(a.face) for a in r.animals)
    totals = tuple(sum(a.points for a in r.animals if a.player == q) for q in (0, 1))
    assert r.totals == totals and r.difference == totals[0] - totals[1]
    assert r.gained == (max(r.difference, 0), max(-r.difference, 0))  # the seed's Points Battle rule
    assert s.state.points == list(r.gained) or s.state.round_no == 2
    assert s.next_round() and s.round_result is None and not s.next_round()


def test_a_cage_round_ends_on_its_winner_and_how() -> None:
    s = ZooSession(seed=1, seats=["bot", "bot"], bot_candidates=2, bot_samples=1, odds_workers=1)
    _play_until_a_round_ends(s)
    r = s.round_result
    assert r.mode == "cage" and r.winner in (0, 1) and s.state.wins[r.winner] == 1
    assert r.how.startswith(f"{r.players[r.winner]} won round 1") and "no animal left fighting" in r.how
    board = {d for d, die in s.state.dice.items() if die.status == "arena"}
    assert {a.die for a in r.animals} == board  # the board as the round ended: still there until the next round


def _played(s: ZooSession) -> tuple[str, list, list]:
    return s.state.to_json(), s.last_frames, [e["text"] for e in s.log]


def _rehearse_on_a_worker(s: ZooSession, rehearsal: Rehearsal) -> None:
    with ThreadPoolExecutor(1) as pool:  # as a page does: another thread, with its own copy of the physics
        pool.submit(s.rehearse, rehearsal).result()


def test_a_rehearsed_flick_commits_exactly_as_one_played_on_the_click() -> None:
    """The proposed flick played ahead on a copy (off the page's loop) is what the commit of that very flick takes:
    the battle, its generator, the frames and the log come out as a flick simulated on the click, flick after flick;
    a rehearsal of another aim, or of a battle that has moved on since, is not taken."""
    plain = ZooSession(seed=7, seats=["person", "person"], odds_workers=1)
    ahead = ZooSession(seed=7, seats=["person", "person"], odds_workers=1)
    for n in range(6):
        for s in (plain, ahead):
            assert s.propose_flick(-20.0 + 8 * n, 0.9 + 0.1 * n) or s.state.phase not in ("flick", "extra")
        if ahead.state.phase not in ("flick", "extra"):
            break
        rehearsal = ahead.rehearsal()
        assert rehearsal is not None and rehearsal.version == ahead.version
        if n == 2:  # the player re-aims after the rehearsal: the click simulates its own flick
            ahead.rehearse(rehearsal)
            for s in (plain, ahead):
                assert s.propose_flick(5.0, 1.3)
        elif n == 4:  # another copy of the battle, played already: another move is made first
            ahead.rehearse(rehearsal)
            stale = ahead.rehearsal()
            assert stale is not None
            for s in (plain, ahead):
                assert s.commit_flick() is not None
            assert ahead.state.phase in ("flick", "extra") and ahead.propose_flick(stale.flick.direction,
                                                                                   stale.flick.speed)
            assert plain.propose_flick(stale.flick.direction, stale.flick.speed)
            ahead.rehearse(stale)  # of the version before the last move: not taken
        else:
            _rehearse_on_a_worker(ahead, rehearsal)
        kept = ahead._rehearsed
        assert kept is not None
        assert plain.commit_flick() is not None and ahead.commit_flick() is not None
        assert (ahead.state is kept.state) == (n not in (2, 4))  # the copy taken, not simulated again
        assert _played(ahead) == _played(plain)
        assert ahead._rehearsed is None  # a rehearsal is used once
    assert n == 5
