"""Hostile save files (issue 18, point 7): every bad file is refused with a short reason, never a Python error.

Each file is one the decoder or the checks once let through to a RecursionError, an OverflowError, a refusal
without a reason or a message repeating the upload. They are tried on a bare saved game (``load_state``) and on a
session file (``load_session``), of the toy duel and of the three games.
"""

from __future__ import annotations

import json

import pytest
from toy import DuelGame

from engine.core import StateFormatError, load_state, make_rng
from engine.core.serialize import MAX_SAVE_BYTES, dump_session, load_session, session_checksum
from engine.kf2100.state import KungFuGame
from engine.kzin.rules import KzinGame
from engine.zoo.game import ZooGame

KIND = "tabletop-dojo/duel-session"
MAX_MESSAGE = 300  # a refusal is a sentence, not a copy of the file


def _session() -> dict:
    state = DuelGame().new_initial_state()
    return json.loads(dump_session(KIND, 2, state, make_rng(4), 4, [{"move": 0, "text": "start"}]))


def _signed(data: dict) -> str:
    data["checksum"] = session_checksum(data)
    return json.dumps(data)


def _refusal(load, text) -> str:
    with pytest.raises(StateFormatError) as info:
        load(text)
    message = str(info.value)
    assert message and len(message) <= MAX_MESSAGE, message
    return message


def _load_session(text):
    return load_session(text, KIND, 2, DuelGame, "saved duel")


def _load_state(text):
    return load_state(text, DuelGame)


DEEP = "[" * 100_000 + "]" * 100_000
BARE = json.loads(DuelGame().new_initial_state().to_json())


@pytest.mark.parametrize(("text", "words"), [
    (DEEP, "nested too deeply"),
    ('{"a": ' * 50_000 + "1" + "}" * 50_000, "nested too deeply"),
    ('{"game": Infinity}', "not valid JSON"),
    ('{"game": NaN}', "not valid JSON"),
    ('{"game": -Infinity}', "not valid JSON"),
    ('{"game": 1e400}', "out of range"),
    ('{"game": ' + "9" * 5000 + "}", "out of range"),
    (b"\xff\xfe\x00{", "not UTF-8"),
    (b'{"game": "\xc3\x28"}', "not UTF-8"),
    ("\ud800{}", "not UTF-8"),
    ("", "not valid JSON"),
])
@pytest.mark.parametrize("load", [_load_session, _load_state], ids=["session", "bare game"])
def test_undecodable_files_are_refused_with_a_short_reason(load, text, words):
    assert words in _refusal(load, text)


@pytest.mark.parametrize("load", [_load_session, _load_state], ids=["session", "bare game"])
def test_a_file_over_the_size_limit_is_refused_before_it_is_read(load):
    text = json.dumps({"padding": "x" * MAX_SAVE_BYTES})
    message = _refusal(load, text)
    assert "too large" in message and f"{MAX_SAVE_BYTES // 1024 // 1024} MB" in message
    assert _refusal(load, text.encode()) == message


def test_a_huge_string_is_refused_without_being_repeated():
    data = _session()
    data["log"] = [{"move": 0, "text": "<b>" * 20_000}]
    message = _refusal(_load_session, _signed(data))
    assert "<b>" not in message


@pytest.mark.parametrize(("big", "words"), [(2**130, "out of range"), (-(2**130), "out of range"),
                                            (10**400, "out of range"), (2**128, "generator"), (-1, "generator"),
                                            (1.5, "generator"), ("7", "generator")])
def test_a_generator_state_too_large_for_its_bits_is_refused(big, words):
    for where in ("state", "inc"):
        data = _session()
        data["rng"]["state"][where] = big
        message = _refusal(_load_session, _signed(data))
        assert words in message
        assert words != "out of range" or f"rng.state.{where}" in message  # it says where
    data = _session()
    data["rng"]["has_uint32"] = 2
    assert "generator" in _refusal(_load_session, _signed(data))


@pytest.mark.parametrize(("field", "value"), [
    ("version", "<img src=x onerror=alert(1)>" * 100),
    ("format", "tabletop-dojo/" + "x" * 10_000),
    ("version", ["x" * 10_000]),
])
def test_a_quoted_field_is_quoted_short(field, value):
    data = _session()
    data[field] = value
    message = _refusal(_load_session, _signed(data))
    assert "x" * 100 not in message and "onerror=alert(1)><img" not in message


@pytest.mark.parametrize(("field", "value"), [
    ("game", "<img src=x onerror=alert(1)>" * 100),
    ("version", "9" * 1000),
    ("version", {"x": "y" * 10_000}),
])
def test_a_bare_games_quoted_field_is_quoted_short(field, value):
    data = dict(BARE, **{field: value})
    message = _refusal(_load_state, json.dumps(data))
    assert "9" * 100 not in message and "y" * 100 not in message and "onerror=alert(1)><img" not in message


@pytest.mark.parametrize("game_cls", [KzinGame, KungFuGame, ZooGame])
def test_every_game_refuses_the_hostile_files_in_its_own_loader(game_cls):
    for text in (DEEP, '{"game": NaN}', b"\xff{"):
        with pytest.raises(StateFormatError):
            load_state(text, game_cls)


def test_a_game_that_breaks_in_an_unexpected_way_still_gets_a_short_reason():
    """The rules' own errors, whatever their kind, come back as a StateFormatError of bounded length."""

    class Fragile(DuelGame):
        def state_from_dict(self, data):
            raise OverflowError("x" * 10_000)

    text = DuelGame().new_initial_state().to_json()
    message = _refusal(lambda t: load_state(t, Fragile), text)
    assert "inconsistent" in message


# --- mutation fuzz: any one value of a real saved game replaced, the file re-signed ---------------------------------

import numpy as np  # noqa: E402

from engine.core.rng import sample_outcome  # noqa: E402
from engine.core.serialize import checksum  # noqa: E402
from engine.kf2100.bots import HeuristicBot  # noqa: E402

HOSTILE_VALUES = [-1, 0, 1, 2, 23, 24, 10**6, 2**64, -(2**64), 1.5, -0.0, 1e300, "", "x", "T1", "C1",
                  "<img src=x onerror=alert(1)>", None, True, False, [], {}, [1], ["x"], {"a": 1}]


def _positions(game, seeds=(3, 4, 5), every: int = 5, max_steps: int = 300):
    """Positions of a few random games: the saved JSON of every ``every``-th step."""
    out = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        state = game.new_initial_state(rng) if game.info.chance_mode.value == "sampled" else game.new_initial_state()
        for step in range(max_steps):
            if state.is_terminal():
                break
            if state.is_chance_node():
                state.apply_action(sample_outcome(state.chance_outcomes(), rng))
            else:
                legal = state.legal_actions()
                state.apply_action(legal[int(rng.integers(len(legal)))])
            if step % every == 0:
                out.append(json.loads(state.to_json()))
    return out


def _leaves(obj, path=()):
    """Every (path, value) inside a JSON value, containers included."""
    yield path, obj
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _leaves(v, (*path, i))


def _mutated(envelope, rng):
    data = json.loads(json.dumps(envelope))
    paths = [p for p, _ in _leaves(data["state"]) if p]
    path = paths[int(rng.integers(len(paths)))]
    parent = data["state"]
    for key in path[:-1]:
        parent = parent[key]
    roll = rng.random()
    if roll < 0.1 and isinstance(parent, dict):
        del parent[path[-1]]
    elif roll < 0.15 and isinstance(parent, dict):
        parent["<b>extra</b>"] = 1
    else:
        parent[path[-1]] = HOSTILE_VALUES[int(rng.integers(len(HOSTILE_VALUES)))]
    data["checksum"] = checksum(data["rules"], data["state"])
    return data


def _play_on(state):
    """What a page and a bot do with a loaded game: it must not raise."""
    for p in range(state.game.info.num_players):
        json.dumps(state.player_view(p))
    if state.is_terminal():
        return
    if state.is_chance_node():
        outcomes = state.chance_outcomes()
        state.clone().apply_action(outcomes[0][0])
        return
    legal = state.legal_actions()
    assert legal
    if isinstance(state.game, KungFuGame):
        player = state.current_player()
        HeuristicBot(player, solo=state.game.solo).choose(state.clone(), np.random.default_rng(0))
    elif not isinstance(state.game, ZooGame):  # a Zoo flick runs the physics: the legal list is enough
        state.clone().apply_action(legal[0])


@pytest.mark.parametrize(("game", "mutations"), [(KzinGame(), 400), (KungFuGame("basic"), 300),
                                                 (KungFuGame("solo"), 150), (ZooGame("cage"), 250),
                                                 (ZooGame("points", players=3), 150)],
                         ids=["kzin", "kf2100", "kf2100-solo", "zoo", "zoo-points-3"])
def test_a_saved_game_with_any_one_value_forged_is_refused_or_plays_on(game, mutations):
    """Replace one value anywhere in real saved positions, re-sign: the file is refused with a StateFormatError, or
    it loads and can be shown and played on. Nothing else may happen (a KeyError in the bot, an OverflowError)."""
    rng = np.random.default_rng(7)
    positions = _positions(game)
    refused = loaded = 0
    for i in range(mutations):
        data = _mutated(positions[i % len(positions)], rng)
        envelope = {"game": game.info.name, "version": game.info.state_version, **data}
        try:
            state = load_state(json.dumps(envelope), type(game))
        except StateFormatError as exc:
            assert 0 < len(str(exc)) <= 300 and "onerror" not in str(exc)
            refused += 1
            continue
        _play_on(state)
        loaded += 1
    assert refused > mutations // 2  # most single forgeries break the position; some (a face_up flag) do not


# --- every game's session says why, in its message, and keeps its game ------------------------------------------------

from engine.kf2100.session import KungFuSession  # noqa: E402
from engine.kzin.session import KzinSession  # noqa: E402
from engine.zoo.session import ZooSession  # noqa: E402


def _kf2100():
    s = KungFuSession(seed=1)
    return s, lambda text: (s.try_load(text), s.notice.text)[1]


def _kzin():
    s = KzinSession(seed=1)
    return s, lambda text: (s.try_load(text), s.notice.text)[1]


def _zoo():
    s = ZooSession(seed=1, odds_workers=1)
    return s, lambda text: (s.try_load(text), s.notice.text)[1]


HOSTILE = {
    "nested 100,000 deep": (DEEP, "nested too deeply"),
    "Infinity": ('{"format": Infinity}', "not valid JSON"),
    "NaN": ('{"format": NaN}', "not valid JSON"),
    "1e400": ('{"format": 1e400}', "out of range"),
    "a generator state of 2**130": (None, "out of range"),
    "over the size limit": (" " * (MAX_SAVE_BYTES + 1), "too large"),
    "not UTF-8": (b'{"format": "\xff"}', "not UTF-8"),
}


@pytest.mark.parametrize("make", [_kf2100, _kzin, _zoo], ids=["kf2100", "kzin", "zoo"])
@pytest.mark.parametrize("case", HOSTILE.values(), ids=HOSTILE.keys())
def test_every_session_refuses_a_hostile_file_saying_why_and_keeps_its_game(make, case):
    session, load = make()
    text, words = case
    if text is None:  # the session's own file with its generator's state forged, re-signed
        data = json.loads(session.save())
        data["rng"]["state"]["state"] = 2**130
        text = _signed(data)
    before = session.save()
    message = load(text)
    assert words in message and len(message) <= 400, message
    assert session.save() == before


def test_a_log_line_check_refuses_markup_control_characters_and_length():
    from engine.core.serialize import is_line

    assert is_line("T1 kick on J3 (answer none)") and is_line("Ships & Men: 3 vs 2")
    assert not any(is_line(v) for v in ("<img src=x onerror=alert(1)>", "a\nb", "x" * 201, 3, None))


RULE_FORGERIES = [
    (KzinGame, {"<img src=x onerror=alert(1)>": 1}), (KzinGame, {"kzin_base_force": 10**30}),
    (KzinGame, {"reshuffle": "yes"}), (KzinGame, {"start_space": [9]}),
    (KungFuGame, {"<img src=x onerror=alert(1)>": 1}), (KungFuGame, {"scenario": ["basic"]}),
    (KungFuGame, {"scenario": "<img src=x onerror=alert(1)>"}), (KungFuGame, {"terminator_levels": {"T1": "x"}}),
    (KungFuGame, {"terminator_levels": {"T1": [7, 0, 0, 0, 10**20]}}),
    (ZooGame, {"<img src=x onerror=alert(1)>": 1}), (ZooGame, {"players": 2.0}), (ZooGame, {"teams": [["x"]]}),
    (ZooGame, {"mode": "<img src=x onerror=alert(1)>"}), (ZooGame, {"starting_player": 9}),
]


@pytest.mark.parametrize(("game_cls", "rules"), RULE_FORGERIES)
def test_forged_rule_options_are_refused_with_a_short_plain_reason(game_cls, rules):
    data = json.loads(game_cls().new_initial_state(make_rng(0)).to_json())
    data["rules"] = {**data["rules"], **rules}
    data["checksum"] = checksum(data["rules"], data["state"])
    message = _refusal(lambda t: load_state(t, game_cls), json.dumps(data))
    assert "onerror" not in message and "1" * 15 not in message


@pytest.mark.parametrize("field", ["version", "game"])
@pytest.mark.parametrize("load", [_load_session, _load_state], ids=["session", "bare game"])
def test_markup_in_a_quoted_field_is_described_not_repeated(field, load):
    """Issue 18, point 1 (engine side): the refusal of a file whose version or game is markup holds no markup."""
    data = _session() if load is _load_session else dict(BARE)
    data[field] = "<img src=x onerror=alert(1)>"
    text = _signed(data) if load is _load_session else json.dumps(data)
    message = _refusal(load, text)
    assert "<" not in message and "onerror" not in message
    if load is _load_state or field == "version":  # a session's "game" is the saved game's envelope, not a name
        data[field] = "v9"
        assert "'v9'" in _refusal(load, _signed(data) if load is _load_session else json.dumps(data))
