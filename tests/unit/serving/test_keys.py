"""API keys: hashes only, constant-time lookup, grants bound to one agent and its listed users."""

from __future__ import annotations

from pathlib import Path

import pytest

from prefrontal.errors import ConfigurationError
from prefrontal.serving.keys import (
    KEYS_ENV,
    KEYS_FILE_ENV,
    KeyGrant,
    KeyRing,
    hash_key,
    key_entry,
    new_key,
)


def grant(key: str, agent: str = "atlas", users: tuple[str, ...] = ("maya",)) -> KeyGrant:
    return KeyGrant(name=f"{agent}-key", sha256=hash_key(key), agent_id=agent, users=users)


def test_a_key_finds_its_grant_and_an_unknown_one_none() -> None:
    """authenticate returns the grant whose hash matches, and None for any other key."""
    ring = KeyRing([grant("k1"), grant("k2", agent="orion", users=("*",))])
    found = ring.authenticate("k2")
    assert found is not None and found.agent_id == "orion"
    assert ring.authenticate("k3") is None
    assert ring.authenticate("") is None


def test_a_grant_acts_only_for_its_agent_and_listed_users() -> None:
    """A grant may act for its users of its agent; '*' means every user of that agent only."""
    listed = grant("k", users=("maya", "sam"))
    assert listed.may_act_for("atlas", "maya") and listed.may_act_for("atlas", "sam")
    assert not listed.may_act_for("atlas", "lee")
    assert not listed.may_act_for("orion", "maya")
    every = grant("k", users=("*",))
    assert every.may_act_for("atlas", "anyone")
    assert not every.may_act_for("orion", "anyone")


def test_keys_load_from_a_file_then_the_environment(tmp_path: Path) -> None:
    """The file named wins over PREFRONTAL_API_KEYS_FILE, which wins over PREFRONTAL_API_KEYS."""
    entry = key_entry("secret", name="web", agent_id="atlas", users=["maya"])
    assert "secret" not in entry
    path = tmp_path / "keys.json"
    path.write_text(f'{{"keys": [{entry}]}}', encoding="utf-8")
    other = tmp_path / "other.json"
    other.write_text('{"keys": []}', encoding="utf-8")
    assert len(KeyRing.load(path, environ={KEYS_FILE_ENV: str(other)})) == 1
    assert len(KeyRing.load(None, environ={KEYS_FILE_ENV: str(path)})) == 1
    assert len(KeyRing.load(None, environ={KEYS_ENV: f'{{"keys": [{entry}]}}'})) == 1
    assert len(KeyRing.load(None, environ={})) == 0


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ("not json", "PREFRONTAL_API_KEYS is not a keys document"),
        ('{"keys": [{"name": "x", "sha256": "abc", "agent_id": "a", "users": ["u"]}]}', "sha256"),
        ('{"keys": [{"name": "x", "key": "plain", "agent_id": "a", "users": ["u"]}]}', "key"),
    ],
)
def test_a_bad_keys_document_says_what_is_wrong(document: str, message: str) -> None:
    """A malformed document, a bad hash or a plain-text key is a configuration error naming it."""
    with pytest.raises(ConfigurationError, match=message):
        KeyRing.load(None, environ={KEYS_ENV: document})


def test_a_missing_keys_file_is_a_configuration_error(tmp_path: Path) -> None:
    """A keys file that cannot be read is named in the error."""
    with pytest.raises(ConfigurationError, match="cannot read the keys file"):
        KeyRing.load(tmp_path / "nope.json", environ={})


def test_the_same_key_twice_is_refused() -> None:
    """Two entries with one hash are a configuration error."""
    with pytest.raises(ConfigurationError, match="same key twice"):
        KeyRing([grant("k"), grant("k", users=("sam",))])


def test_new_keys_are_long_random_and_distinct() -> None:
    """new_key gives 256-bit keys with the pf_ prefix, never the same twice."""
    keys = {new_key() for _ in range(100)}
    assert len(keys) == 100
    assert all(k.startswith("pf_") and len(k) >= 43 for k in keys)
