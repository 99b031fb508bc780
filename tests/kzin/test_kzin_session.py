"""The session model without a browser: commands, refusals, odds, saving and loading."""

import json

import pytest
from kzin_helpers import draw, fresh, put_in_play

from engine.core import IllegalActionError, StateFormatError
from engine.core.session import BOT, Level, Seat
from engine.kzin.cards import CARDS, card
from engine.kzin.rules import Attack, Commit, Defend, Draw, FallBack
from engine.kzin.session import KzinSession


def play_until(session, phase, limit=200):
    """Fall back / pass until the player faces a decision of ``phase`` with a Fleet in play."""
    for _ in range(limit):
        d = session.decision()
        if d == phase and session.state.fleets_in_play():
            return True
        if d == "invasion":
            session.fall_back()
        elif d == "liberation":
            session.pass_turn()
        else:
            session.new_game(session.seed + 1)
    return False


def test_a_seed_reproduces_a_game():
    a, b = KzinSession(seed=11), KzinSession(seed=11)
    for s in (a, b):
        play_until(s, "liberation")
        s.select([c.kind for c in s.table() if c.selectable])
        s.attack()
    assert a.state.to_json() == b.state.to_json()
    assert a.log == b.log


def test_toggle_refuses_cards_that_add_nothing_and_changes_nothing():
    s = KzinSession(seed=4)
    assert play_until(s, "liberation")
    tech = card("Interstellar Trade").index
    before = (s.state.to_json(), list(s.selection))
    assert not s.toggle(tech)
    assert "not in play" in s.notice.text or "never committed" in s.notice.text
    assert not s.toggle(999)
    assert (s.state.to_json(), list(s.selection)) == before


def test_odds_follow_the_selection_and_the_log_tells_the_odds_it_had():
    s = KzinSession(seed=5)
    assert play_until(s, "liberation")
    assert s.win_probability() is None
    ok, reason = s.can("attack")
    assert not ok and "Fleet" in reason
    fleet = next(c for c in s.table() if c.type == "H")
    assert s.toggle(fleet.kind)
    p = s.win_probability()
    assert p is not None and 0 <= p <= 1
    assert s.can("attack") == (True, "")
    assert not s.can("defend")[0]
    assert s.force_table() is not None
    assert s.attack()
    battle = [e for e in s.log if e["event"] == "liberation battle"][-1]
    assert battle["odds"] == pytest.approx(float(p))
    assert f"You had {float(p):.0%}" in s.notice.text


def test_toggle_twice_unselects():
    s = KzinSession(seed=5)
    assert play_until(s, "liberation")
    fleet = next(c for c in s.table() if c.type == "H")
    copies = s.state.in_play[fleet.kind]
    for _ in range(copies):
        s.toggle(fleet.kind)
    assert s.selection.count(fleet.kind) == copies
    s.toggle(fleet.kind)
    assert s.selection.count(fleet.kind) == 0
    s.toggle(fleet.kind)
    assert s.selection.count(fleet.kind) == 1


def test_a_two_copy_card_cycles_through_none_one_two():
    s = KzinSession(seed=5)
    state = fresh()
    put_in_play(state, "Pirate Fleet", "Pirate Fleet")
    draw(state, "Marines")
    s.state = state
    kind = card("Pirate Fleet").index
    counts = []
    for _ in range(4):
        assert s.toggle(kind)
        counts.append(s.selection.count(kind))
    assert counts == [1, 2, 0, 1]


def test_a_draw_is_logged_on_its_own_turn():
    s = KzinSession(seed=2)
    for _ in range(10):
        play_until(s, "invasion")
        s.fall_back()
    starts = [i for i, e in enumerate(s.log) if e["event"] == "turn start"]
    for i in starts:
        assert s.log[i + 1]["event"] == "draw" and s.log[i + 1]["turn"] == s.log[i]["turn"]


def test_running_odds_of_an_old_game_are_dropped():
    s = KzinSession(seed=6)
    play_until(s, "liberation")
    s.pass_turn()
    calls = []

    def start_new_game_midway(progress):
        if not calls:
            s.new_game(7)
        calls.append(progress)

    s.estimate_running_odds(rollouts=100, on_progress=start_new_game_midway)
    assert s.running_odds == []


def test_deck_counts_are_exact_chances():
    s = KzinSession(seed=2)
    t = s.deck_counts()
    assert t["left"].sum() == sum(s.state.pile)
    assert sum(t["p_next_exact"]) == 1


def test_save_and_load_restore_the_same_game_and_future():
    s = KzinSession(seed=8)
    play_until(s, "liberation")
    text = s.save()
    t = KzinSession(seed=99)
    t.load(text)
    assert t.state.to_json() == s.state.to_json() and t.log == s.log and t.seed == 8
    # The generator was saved too: both go on identically.
    for x in (s, t):
        x.pass_turn()
    assert t.state.to_json() == s.state.to_json()


@pytest.mark.parametrize("bad", [
    "{not json", json.dumps({"format": "something else"}), json.dumps([1, 2, 3]),
])
def test_a_bad_file_keeps_the_current_game(bad):
    s = KzinSession(seed=3)
    before = s.state.to_json()
    with pytest.raises(StateFormatError):
        s.load(bad)
    assert s.state.to_json() == before
    assert not s.try_load(bad)
    assert "Could not load" in s.notice.text and "goes on" in s.notice.text and s.notice.level == Level.DANGER
    assert s.state.to_json() == before


def test_a_tampered_file_is_refused():
    s = KzinSession(seed=3)
    data = json.loads(s.save())
    data["game"]["state"]["kem"] = 11
    other = KzinSession(seed=1)
    before = other.state.to_json()
    with pytest.raises(StateFormatError, match="changed after it was saved"):
        other.load(json.dumps(data))
    assert other.state.to_json() == before


def test_two_sessions_are_independent():
    a, b = KzinSession(seed=1), KzinSession(seed=1)
    play_until(a, "invasion")
    a.fall_back()
    assert b.state.turn == 1 or b.state.to_json() != a.state.to_json()
    assert a.log is not b.log


def test_new_game_uses_rule_options():
    s = KzinSession(seed=1, kzin_base_force=5, start_space=6)
    assert s.state.rules.kzin_base_force == 5 and s.state.kem in (5, 6)
    with pytest.raises(ValueError):
        KzinSession(kzin_base_force=100)


def test_advice_and_follow_advice():
    s = KzinSession(seed=5, advisor_rollouts=200)
    assert play_until(s, "liberation")
    advice = s.advice()
    assert advice is s.advice()  # cached per decision
    turn = s.state.turn
    assert s.follow_advice()
    assert s.state.turn > turn or s.state.is_terminal()


def test_running_odds_cover_every_turn():
    s = KzinSession(seed=6)
    for _ in range(3):
        play_until(s, "liberation")
        s.pass_turn()
    s.estimate_running_odds(rollouts=200)
    turns = [e["turn"] for e in s.running_odds]
    starts = sorted({e["turn"] for e in s.log if e["event"] == "turn start"})
    assert turns == starts and s.progress == 1.0
    assert all(e["low"] <= e["win"] <= e["high"] for e in s.running_odds)


def test_table_marks_unselectable_cards():
    s = KzinSession(seed=4)
    assert play_until(s, "liberation")
    for view in s.table():
        c = CARDS[view.kind]
        assert view.selectable == (c.committable and c.counts_in("liberation"))


def forged(text: str, change) -> str:
    """A saved session edited and re-signed: only the session's own checks can refuse it."""
    from engine.core.serialize import session_checksum

    data = json.loads(text)
    change(data)
    data["checksum"] = session_checksum(data)
    return json.dumps(data)


@pytest.mark.parametrize(("change", "words"), [
    (lambda d: d["log"][0].update(odds="abc"), "game log is damaged: entry 1 has a bad or missing 'odds'"),
    (lambda d: d["log"].append({"turn": 2, "event": "draw"}), "bad or missing 'detail'"),
    (lambda d: d["running_odds"].append({"turn": "x", "win": 0.5, "low": 0.4, "high": 0.6}), "running odds"),
    (lambda d: d["running_odds"].append({"turn": 3, "win": 0.9, "low": 0.4, "high": 0.6}), "outside its interval"),
    (lambda d: next(e for e in d["log"] if "snapshot" in e)["snapshot"].update(kem=40), "Could not load"),
])
def test_a_forged_log_with_a_good_checksum_is_refused(change, words):
    s = KzinSession(seed=3)
    play_until(s, "liberation")
    s.running_odds = [{"turn": 1, "win": 0.01, "low": 0.005, "high": 0.02}]
    other = KzinSession(seed=1)
    before = other.state.to_json()
    assert not other.try_load(forged(s.save(), change))
    assert words in other.notice.text and "goes on" in other.notice.text and other.state.to_json() == before


def test_draws_are_played_before_the_game_is_published(monkeypatch):
    """A view or a worker thread reading ``session.state`` never sees a game half dealt or a turn half played:
    the draws happen on a state that is not yet the session's, and the state, log and version change together."""
    s = KzinSession(seed=3)
    seen = []
    advance = KzinSession._advance

    def spy(self, state):
        seen.append(self.state is state)
        return advance(self, state)

    monkeypatch.setattr(KzinSession, "_advance", spy)
    versions = []
    s.param.watch(lambda e: versions.append((e.new, s.state.current_player(), len(s.log))), ["version"])
    s.new_game(4)
    s.fall_back() if s.decision() == "invasion" else s.pass_turn()
    assert len(seen) == 2 and not any(seen)
    assert [player for _, player, _ in versions] == [0, 0]  # each change is seen at the player's decision
    assert versions[1][2] > versions[0][2] > 1


def test_play_takes_typed_actions_and_refuses_the_rest_changing_nothing():
    s = KzinSession(seed=5)
    assert play_until(s, "liberation")
    before = (s.state.to_json(), list(s.selection), s.version, list(s.log))
    fleet = next(c for c in s.table() if c.type == "H")
    for bad in ("attack", Defend(), FallBack(), Draw(0), Commit(999), Commit(-1), Commit("x"), None, 3):
        with pytest.raises(IllegalActionError):
            s.play(bad)
        assert (s.state.to_json(), list(s.selection), s.version, list(s.log)) == before
    with pytest.raises(IllegalActionError, match="select at least one Fleet"):
        s.play(Attack())
    s.play(Commit(fleet.kind))
    assert s.selection == [fleet.kind]
    for _ in range(s.state.in_play[fleet.kind] - 1):
        s.play(Commit(fleet.kind))
    with pytest.raises(IllegalActionError, match="selected already"):
        s.play(Commit(fleet.kind))
    turn = s.state.turn
    s.play(Attack())
    assert s.state.turn > turn and s.selection == [] and s.log[-1]["turn"] >= turn


def test_a_refusal_is_a_warning_notice_and_keeps_the_version():
    s = KzinSession(seed=5)
    assert play_until(s, "liberation")
    version = s.version
    assert not s.attack()
    assert s.notice.level == Level.WARNING and "Fleet" in s.notice.text and s.version == version
    assert s.pass_turn() and s.version > version


def test_notices_carry_their_level_not_words_to_search():
    s = KzinSession(seed=5)
    assert play_until(s, "invasion")
    assert s.notice.level == Level.WARNING and "invades" in s.notice.text
    assert s.fall_back()
    levels = set()
    for _ in range(60):
        if s.state.phase == "over":
            break
        s.follow_advice()
        levels.add(s.notice.level)
    assert s.state.phase == "over"
    assert s.notice.level == (Level.SUCCESS if s.state.winner == "Humans" else Level.DANGER)


def test_a_bot_seat_plays_the_advice_and_a_person_seat_is_not_stepped():
    s = KzinSession(seed=5, advisor_rollouts=100)
    with pytest.raises(IllegalActionError, match="no bot"):
        s.step()
    s.seats = [Seat("Humans", BOT)]
    assert s.bot_to_move()
    turn = s.state.turn
    s.step()
    assert s.state.turn > turn
    with pytest.raises(ValueError):
        Seat("Humans", "robot")


def test_advice_for_an_earlier_decision_is_refused():
    s = KzinSession(seed=5, advisor_rollouts=100)
    advice, version = s.advice(), s.version
    assert s.pass_turn() if s.decision() == "liberation" else s.fall_back()
    before = s.state.to_json()
    assert not s.play_advice(advice, version)
    assert "earlier decision" in s.notice.text and s.state.to_json() == before


def test_the_log_labels_each_die_by_side_and_source_and_the_totals_add_up():
    s = KzinSession(seed=5, advisor_rollouts=100)
    for _ in range(12):
        s.follow_advice()
    battles = [e for e in s.log if e["event"].endswith("battle")]
    assert battles
    for e in battles:
        humans, kzinti = e["detail"].split("; ", 1)[1].split("; ")
        for side, text in (("Humans", humans), ("Kzinti", kzinti)):
            head, total = text.rsplit(" = ", 1)
            assert head.startswith(f"{side}: ") and " d10 " in head
            dice, const = head.removeprefix(f"{side}: ").rsplit(", ", 1)
            rolls = [int(d.rsplit(" ", 1)[1]) for d in dice.split(", ")]
            assert all(1 <= r <= 10 for r in rolls) and sum(rolls) + int(const) == int(total)
        assert (int(humans.rsplit(" = ", 1)[1]) >= int(kzinti.rsplit(" = ", 1)[1])) == (e["outcome"] == "won")


def test_turns_that_pass_without_a_decision_are_told_at_the_next_one():
    s = KzinSession(seed=5, advisor_rollouts=100)
    told = []
    for _ in range(12):
        turn = s.state.turn
        s.follow_advice()
        passed = sorted({e["turn"] for e in s.log if e["event"] == "draw" and turn < e["turn"] < s.state.turn})
        if passed:
            told.append(passed)
            span = f"Turn {passed[0]}" if len(passed) == 1 else f"Turns {passed[0]}-{passed[-1]}"
            assert f"{span} passed without a decision" in s.notice.text
        else:
            assert "passed without a decision" not in s.notice.text
    assert told  # seed 5 has such turns (6, 9-10, 14-18, ...)


def test_a_refused_advice_play_leaves_the_selection_and_the_guess_as_they_were():
    s = KzinSession(seed=5, advisor_rollouts=100)
    assert play_until(s, "liberation")
    advice, version = s.advice(), s.version
    fleet = next(c for c in s.table() if c.selectable and c.type == "H")
    s.select([fleet.kind])
    s.guess = 0.4
    assert not s.play_advice(advice, version + 1)
    assert s.selection == [fleet.kind] and s.guess == 0.4 and s.version == version


def test_a_scored_estimate_is_published_with_the_battle_it_scores():
    s = KzinSession(seed=5, advisor_rollouts=100)
    assert play_until(s, "liberation")
    fleet = next(c for c in s.table() if c.selectable and c.type == "H")
    s.select([fleet.kind])
    s.guess = 0.4
    seen = []
    s.param.watch(lambda e: seen.append((len(e.new), s.version, len(s.log))), ["predictions"])
    version, log = s.version, len(s.log)
    assert s.attack()
    assert seen == [(1, s.version, len(s.log))] and s.version > version and len(s.log) > log


def test_pages_asking_for_the_same_advice_at_once_share_one_computation(monkeypatch):
    """A table's pages share its session and each asks for the advice on a worker thread as the decision comes:
    the advisor runs once per decision, and every page gets that one ranking."""
    from threads_helpers import asked_at_once, slowed

    import engine.kzin.session as ks

    s = KzinSession(seed=5)
    while s.decision() is None:
        s.play(s.state.legal_actions()[0])
    calls: list[int] = []
    monkeypatch.setattr(ks, "advise", slowed(ks.advise, calls))
    state, version = s.state.clone(), s.version
    got = asked_at_once(lambda: s.advice_for(state, version))
    assert len(calls) == 1
    assert len(got) == 3 and got[0] is not None and all(a is got[0] for a in got)
