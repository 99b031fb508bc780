"""Session files (what a dashboard saves): the shared writer and reader every game's session uses."""

from __future__ import annotations

import json

import pytest
from toy import DuelGame

from engine.core import StateFormatError, make_rng
from engine.core.serialize import dump_session, load_session, session_checksum

KIND = "tabletop-dojo/duel-session"


def saved(**extra) -> str:
    state = DuelGame().new_initial_state()
    rng = make_rng(4)
    rng.random(3)  # a generator part-way through its stream
    return dump_session(KIND, 2, state, rng, 4, [{"move": 0, "text": "start"}], **extra)


def test_a_session_file_round_trips_game_generator_seed_log_and_extras():
    text = saved(seats=["human", "bot"])
    back = load_session(text, KIND, 2, DuelGame, "saved duel")
    assert back.state.to_json() == DuelGame().new_initial_state().to_json()
    expected = make_rng(4)
    expected.random(3)
    assert back.rng.random() == expected.random()  # it draws on from where it was saved
    assert (back.seed, back.log, back.extra) == (4, [{"move": 0, "text": "start"}], {"seats": ["human", "bot"]})


@pytest.mark.parametrize(("damage", "words"), [
    (lambda d: "{", "not valid JSON"),
    (lambda d: [1, 2], "not a saved duel"),
    (lambda d: {**d, "format": "tabletop-dojo/chess-session"}, "not a saved duel"),
    (lambda d: {**d, "version": 1}, "format version 1; this program reads version 2"),
    (lambda d: {k: v for k, v in d.items() if k != "rng"}, "lacks rng"),
    (lambda d: {**d, "rng": {"bit_generator": "MT19937"}}, "generator's state is damaged"),
    (lambda d: {**d, "rng": {**d["rng"], "state": "x"}}, "generator's state is damaged"),
    (lambda d: {**d, "log": {"move": 0}}, "log is damaged"),
    (lambda d: {**d, "seed": -1}, "seed is damaged"),
    (lambda d: {**d, "seed": True}, "seed is damaged"),
    (lambda d: {**d, "game": {**d["game"], "checksum": "0" * 64}}, "changed after it was saved"),
    (lambda d: {**d, "log": []}, "changed after it was saved"),  # edited without re-signing
])
def test_a_damaged_session_file_is_refused_with_its_reason(damage, words):
    """Damage then re-sign (a consistent forgery), so each check is reached past the file's checksum."""
    data = damage(json.loads(saved()))
    if isinstance(data, dict) and "checksum" in data and "changed after" not in words:
        data["checksum"] = session_checksum(data)
    text = data if isinstance(data, str) else json.dumps(data)
    with pytest.raises(StateFormatError, match=words):
        load_session(text, KIND, 2, DuelGame, "saved duel")


def test_extra_fields_may_not_shadow_the_shared_ones():
    with pytest.raises(ValueError, match="format, game"):
        saved(format="mine", game="mine")


def test_check_entries_names_the_first_bad_entry():
    from engine.core.serialize import check_entries, is_count, is_probability, optional

    fields = {"turn": is_count, "odds": optional(is_probability)}
    good = [{"turn": 1, "odds": None}, {"turn": 2, "odds": 0.5}]
    assert check_entries(good, "log", fields) is good
    for bad, words in [({"turn": 1, "odds": 1.5}, "entry 2 has a bad or missing 'odds'"),
                       ({"odds": 0.5}, "entry 2 has a bad or missing 'turn'"),
                       ({"turn": True, "odds": 0.5}, "'turn'"), ("x", "entry 2 is not an object")]:
        with pytest.raises(StateFormatError, match=words):
            check_entries([good[0], bad], "log", fields)
    with pytest.raises(StateFormatError, match="bad 'note'"):
        check_entries([{"turn": 1, "odds": None, "note": 3}], "log", fields, {"note": lambda v: isinstance(v, str)})
