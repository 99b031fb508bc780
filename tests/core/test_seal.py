"""Sealed saves (engine/core/seal.py): a seat's file restores the whole game here, hides what it must, and an
edited or foreign file is refused with its reason."""

from __future__ import annotations

import json
import stat

import pytest

from engine.core import StateFormatError
from engine.core.seal import SEALED, TOKEN_FIELD, Sealer, load_key, sealed_class
from engine.kzin.session import KzinSession
from engine.kzin.table import hidden, secret_seed


@pytest.fixture
def sealer(tmp_path):
    return Sealer.in_folder(tmp_path)


def sealed_session(sealer, **params):
    session = sealed_class(KzinSession, hidden)(seed=secret_seed(), **params)
    session.sealer = sealer
    return session


def played(session, moves=3):
    for _ in range(moves):
        if session.decision() is None:
            break
        assert session.fall_back() if session.decision() == "invasion" else session.pass_turn()
    return session


def secrets_of(session) -> list[str]:
    state = session.rng.bit_generator.state["state"]
    return [str(session.seed), str(state["state"]), str(state["inc"])]


def test_a_sealed_file_restores_the_whole_game_generator_included(sealer):
    s = played(sealed_session(sealer))
    text = s.save()
    back = sealed_session(sealer)
    back.load(text)
    assert back.state.to_dict() == s.state.to_dict() and back.log == s.log and back.seed == s.seed
    assert back.rng.bit_generator.state == s.rng.bit_generator.state
    played(s), played(back)  # the same generator: the same cards and dice from here on
    assert back.log == s.log


def test_the_hidden_part_is_not_readable_in_the_file(sealer):
    s = played(sealed_session(sealer))
    text = s.save()
    assert not any(x in text for x in secrets_of(s))
    data = json.loads(text)
    assert data["rng"] == SEALED and data["seed"] == SEALED and data["log"][0]["detail"] == SEALED
    assert data["log"][1:] == json.loads(KzinSession.save(s))["log"][1:]  # what the seat saw stays readable
    plain = KzinSession.save(s)  # the engine's own save, for notebooks: everything in the clear
    assert all(x in plain for x in secrets_of(s))


@pytest.mark.parametrize("edit, reason", [
    (lambda d: d["log"][-1].update(detail="Humans win"), "no longer matches its seal"),
    (lambda d: d["game"]["state"].update(kem=11), "no longer matches its seal"),
    (lambda d: d.update({TOKEN_FIELD: [d[TOKEN_FIELD][0][:-4] + "AAAA", *d[TOKEN_FIELD][1:]]}), "does not open"),
    (lambda d: d.update({TOKEN_FIELD: "x" * 50}), "sealed part is damaged"),
])
def test_an_edited_file_is_refused_with_its_reason_and_the_game_goes_on(sealer, edit, reason):
    s = played(sealed_session(sealer))
    data = json.loads(s.save())
    edit(data)
    other = sealed_session(sealer)
    before = other.state.to_dict()
    with pytest.raises(StateFormatError, match=reason):
        other.load(json.dumps(data))
    assert other.state.to_dict() == before


def test_a_file_sealed_by_another_server_is_refused(sealer, tmp_path):
    text = played(sealed_session(sealer)).save()
    elsewhere = sealed_session(Sealer.in_folder(tmp_path / "other"))
    with pytest.raises(StateFormatError, match="another Tabletop Dojo server"):
        elsewhere.load(text)


def test_a_plain_file_still_loads_at_a_table(sealer):
    plain = KzinSession(seed=7)
    played(plain)
    s = sealed_session(sealer)
    s.load(plain.save())
    assert s.seed == 7 and s.state.to_dict() == plain.state.to_dict()


def test_the_key_is_made_once_and_kept_private(tmp_path):
    key = load_key(tmp_path)
    assert load_key(tmp_path) == key
    assert stat.S_IMODE((tmp_path / "seal.key").stat().st_mode) == 0o600
