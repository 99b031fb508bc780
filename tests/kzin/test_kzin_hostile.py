"""Man-Kzin Wars against hostile input (issue 18): wrongly typed or out-of-range moves, forged save files."""

from __future__ import annotations

import pytest
from kzin_helpers import draw, fresh, put_in_play

from engine.core import IllegalActionError
from engine.kzin.cards import CARDS, NUM_KINDS, card
from engine.kzin.rules import Commit, Draw, Roll


def _invasion():
    s = fresh()
    put_in_play(s, "Marines", "Militia Home Fleet")
    draw(s, "Kzinti Armada")
    return s


@pytest.mark.parametrize("action", [Commit(99), Commit(NUM_KINDS), Commit("x"), Commit(1.0), Commit(True),
                                    Commit(None), Commit(["Marines"]), Commit(-1), Commit(-35)])
def test_a_wrong_commit_is_refused_and_changes_nothing(action):
    s = _invasion()
    assert str(action)  # a malformed move still prints (a view may show the refused move)
    before = s.to_json()
    with pytest.raises(IllegalActionError):
        s.apply_action(action)
    assert s.illegal_reason(action)
    assert s.to_json() == before


def test_a_negative_card_number_is_not_the_card_counted_from_the_end():
    """Commit(k - NUM_KINDS) named card k through Python's negative index, and was stored."""
    s = _invasion()
    k = card("Marines").index
    assert Commit(k) in s.legal_actions()
    with pytest.raises(IllegalActionError, match="no card number"):
        s.apply_action(Commit(k - NUM_KINDS))
    assert str(Commit(k - NUM_KINDS)) == f"commit card #{k - NUM_KINDS}"  # not the card the index would pick
    assert s.committed == []


@pytest.mark.parametrize("action", [Draw(99), Draw(-1), Draw("x"), Roll(11), Roll(0), Roll("3"), Roll(2.0)])
def test_wrong_chance_outcomes_are_refused(action):
    s = fresh()
    if isinstance(action, Roll):
        put_in_play(s, "Militia Home Fleet")
        draw(s, "Kzinti Armada")
        s.apply_action(Commit(card("Militia Home Fleet").index))
        s.apply_action("defend")
    before = s.to_json()
    with pytest.raises(IllegalActionError):
        s.apply_action(action)
    assert s.to_json() == before


@pytest.mark.parametrize("thing", [None, 3, "commit", b"defend", ["defend"]])
def test_things_that_are_not_moves_are_refused(thing):
    s = _invasion()
    with pytest.raises(IllegalActionError):
        s.apply_action(thing)


def test_every_card_name_round_trips():
    assert all(card(c.name) is c for c in CARDS)


# --- forged files: consistent checksums, impossible contents (point 5) ----------------------------------------------

import json  # noqa: E402

from kzin_helpers import roll  # noqa: E402

from engine.core import StateFormatError, dump_state, load_state  # noqa: E402
from engine.core.serialize import checksum, is_number, is_probability  # noqa: E402
from engine.kzin.rules import KzinGame  # noqa: E402

PAYLOAD = "<img src=x onerror=alert(1)>"
LONG = PAYLOAD * 3


def _after_a_battle():
    """An invasion defended with the Militia Home Fleet and lost: the state holds its last battle."""
    s = fresh()
    put_in_play(s, "Militia Home Fleet")
    draw(s, "Kzinti Armada")
    s.apply_action(Commit(card("Militia Home Fleet").index))
    s.apply_action("defend")
    roll(s, *([1] * (len(s.dice_plan()))))
    assert s.last_battle is not None and not s.last_battle.humans_won
    return s


def _forged(state, edit) -> str:
    data = json.loads(dump_state(state))
    edit(data["state"])
    data["checksum"] = checksum(data["rules"], data["state"])
    return json.dumps(data)


def _battle(**fields):
    return lambda st: st["last_battle"].update(fields)


FORGERIES = {
    "a Kzin force of 10**400": _battle(kzin_force=10**400),
    "a Kzin force of 10**30": _battle(kzin_force=10**30),
    "a human force of -10**9": _battle(human_force=-(10**9)),
    "a Kzin force its dice cannot make": _battle(kzin_force=99),
    "a human force its cards cannot make": _battle(human_force=80, humans_won=True),
    "a winner the forces do not give": _battle(humans_won=True),
    "a force as a float": _battle(kzin_force=12.0),
    "a force as text": _battle(kzin_force="12"),
    "a battle roll of 11": _battle(rolls=[11, 3]),
    "a battle of 500 dice": _battle(rolls=[5] * 500),
    "a battle committing a Kzin card": _battle(committed=["Kzinti Armada"]),
    "a battle committing a card that does not exist": _battle(committed=[LONG]),
    "a battle of an unknown phase": _battle(phase="conquest"),
    "a marker at 10**400": lambda st: st.update(kem=10**400),
    "a marker at 0": lambda st: st.update(kem=0),
    "a turn of 10**400": lambda st: st.update(turn=10**400),
    "a turn of 2**64": lambda st: st.update(turn=2**64),
    "a card count of 10**400": lambda st: st["discard"].update({"Marines": 10**400}),
    "a card count as a float": lambda st: st["deck"].update({"Marines": 1.0}),
    "a card named in markup": lambda st: st["deck"].update({LONG: 1}),
    "a card named by a very long text": lambda st: st["deck"].update({"x" * 500: 1}),
    "a winner who is not a side": lambda st: st.update(winner=PAYLOAD),
    "a drawn card that is not text": lambda st: st.update(drawn=7),
    "an unknown field": lambda st: st.update(html=PAYLOAD),
}


@pytest.mark.parametrize("edit", FORGERIES.values(), ids=FORGERIES.keys())
def test_a_forged_game_is_refused_with_a_short_reason(edit):
    with pytest.raises(StateFormatError) as info:
        load_state(_forged(_after_a_battle(), edit), KzinGame)
    message = str(info.value)
    assert len(message) <= 300 and "onerror" not in message and "x" * 50 not in message


def test_state_from_dict_refuses_a_huge_force_as_a_value_error():
    """The Kzin session replays its log's snapshots through state_from_dict: a forged one must be a ValueError."""
    data = _after_a_battle().to_dict()
    data["last_battle"]["kzin_force"] = 10**400
    with pytest.raises(ValueError):
        KzinGame().state_from_dict(data)


def test_the_unforged_battle_loads():
    s = _after_a_battle()
    assert load_state(_forged(s, lambda st: None), KzinGame).to_json() == s.to_json()


def test_a_mistyped_card_name_is_quoted_short_and_markup_not_at_all():
    with pytest.raises(ValueError, match="no card is called 'Marins'"):
        card("Marins")
    with pytest.raises(ValueError) as info:
        card("Marines" * 20)
    assert len(str(info.value)) < 80
    with pytest.raises(ValueError) as info:
        card(PAYLOAD)
    assert "<" not in str(info.value)


def test_a_number_check_never_overflows():
    assert not is_number(10**400) and not is_probability(10**400) and is_number(10**300)
