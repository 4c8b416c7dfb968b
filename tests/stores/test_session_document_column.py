"""A session's buffer document in a column of its own (SQLite schema 20, PostgreSQL 23).

A state is stored as its JSON without the buffer document and the document
apart, never escaped inside the JSON. A database at the schema before keeps
each state whole in ``body``: after the upgrade such a row loads as it was
saved, is found by ``sessions(containing=...)`` (the marks the forget paths
search for: :func:`prefrontal.memory.buffers.marks`), and its next save
stores the document apart; the state read back equals the one saved, words
beyond Latin-1 and beyond the basic plane included.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from prefrontal.memory.buffers import marks
from prefrontal.stores import Stores, postgres, sqlite
from prefrontal.stores.postgres import migrations as pg_migrations
from prefrontal.stores.sqlite import migrations as sqlite_migrations
from prefrontal.stores.sqlite.database import to_us
from prefrontal.stores.sqlite.driver import sqlite3
from prefrontal.stores.working_memory import SessionKey, SessionState, joined, stored_parts
from tests.conftest import FIXED_NOW
from tests.postgres_schemas import schema_at, schema_version

pytestmark = pytest.mark.anyio
KEY = SessionKey(agent_id="agent-1", user_id="maya", session_id="s-\u2014")
WORDS = "Lena \u2014 \u201csigns\u201d caf\u00e9 \U0001f6b2 \\ \u2135"
ITEM = "item-\u00e9\U0001f600"
DOCUMENT = json.dumps({"items": [{"item_id": ITEM, "text": WORDS}]}, ensure_ascii=False)
OLD = SessionState(
    key=KEY, version=3, state={"buffer": DOCUMENT}, started_at=FIXED_NOW, updated_at=FIXED_NOW
)
"""A state as a database before the change kept it: whole, the document escaped in it."""


_TEXT = st.text(st.characters(codec="utf-8"), max_size=40)


@given(
    document=st.none() | _TEXT | _TEXT.map(str.encode) | st.integers(),
    others=st.dictionaries(st.sampled_from(["note", "items", "\u00e9"]), _TEXT, max_size=3),
)
def test_a_state_stored_in_parts_reads_back_equal(document: object, others: dict[str, str]) -> None:
    """Whatever a state holds (a document as bytes or a string or none, one with a NUL or a
    character beyond the basic plane, a document that is neither, other keys beside it), its
    parts read back as an equal state, the document apart, and read back as its UTF-8
    bytes, only when it is bytes or a string without a NUL (kept in the JSON otherwise, as
    a string)."""
    words: dict[str, object] = dict(others)
    if document is not None:
        words["buffer"] = document
    state = OLD.model_copy(update={"state": words})
    body, apart = stored_parts(state, store="test")
    utf8 = document.encode() if isinstance(document, str) else document
    kept_apart = isinstance(utf8, bytes) and b"\x00" not in utf8
    if document is not None:
        words = {**words, "buffer": utf8 if kept_apart else _as_json_reads(document)}
    read = state.model_copy(update={"state": words})
    assert joined(body, apart) == read
    assert joined(body.decode(), None if apart is None else apart.decode()) == read
    assert (apart is not None) == kept_apart
    if kept_apart:
        assert apart == utf8 and "buffer" not in json.loads(body)["state"]


def _as_json_reads(document: object) -> object:
    """``document`` as the state's JSON gives it back: bytes as their text."""
    return document.decode() if isinstance(document, bytes) else document


async def _check(stores: Stores) -> None:
    """The old row loads as saved and is found by a mark of its document; saved again (its
    document as UTF-8 bytes, as a buffer writes it), it is stored apart, read back equal
    (load, recent sessions) and still found."""
    store = stores.working_memory
    tenant = KEY.tenant
    assert await store.load(KEY) == OLD
    assert await store.sessions(KEY.agent_id, containing=marks([ITEM])) == [KEY]
    assert await store.sessions(KEY.agent_id, containing=marks(["item-other"])) == []
    words = {"buffer": DOCUMENT.replace("Lena", "Maya").encode(), "note": WORDS}  # as a buffer
    later = FIXED_NOW + timedelta(seconds=1)
    saved = await store.save(OLD.model_copy(update={"state": words, "updated_at": later}))
    assert saved.version == 4
    assert await store.load(KEY) == saved
    assert await store.recent_sessions(tenant, since=FIXED_NOW, limit=3) == [saved]
    assert await store.sessions(KEY.agent_id, containing=marks([ITEM])) == [KEY]
    assert await store.sessions(KEY.agent_id, user_id="maya", containing=["Maya \u2014"]) == [KEY]
    assert await store.erase(tenant) == 1
    assert await store.load(KEY) is None


async def test_a_sqlite_file_at_19_upgrades_and_reads_its_sessions(tmp_path: Path) -> None:
    path = tmp_path / "v19.db"
    connection = sqlite3.connect(path, isolation_level=None)
    assert sqlite_migrations.migrate(connection, sqlite_migrations.MIGRATIONS[:19]) == 19
    connection.execute(
        "INSERT INTO wm_sessions (agent_id, user_id, session_id, version, updated_at, body)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (KEY.agent_id, KEY.user_id, KEY.session_id, 3, to_us(FIXED_NOW), OLD.model_dump_json()),
    )
    connection.close()
    stores = sqlite.open_stores(path)
    try:
        await stores.open()
        await _check(stores)
    finally:
        await stores.aclose()
    connection = sqlite3.connect(path)
    assert sqlite_migrations.schema_version(connection) == sqlite_migrations.LATEST
    connection.close()


async def test_a_postgres_schema_at_22_upgrades_and_reads_its_sessions(
    postgres_dsn: str, postgres_schema: str
) -> None:
    async with schema_at(postgres_dsn, postgres_schema, 22) as connection:
        await connection.execute(
            "INSERT INTO wm_sessions (agent_id, user_id, session_id, version, updated_at, body)"
            " VALUES ($1, $2, $3, $4, $5, $6)",
            KEY.agent_id,
            KEY.user_id,
            KEY.session_id,
            3,
            FIXED_NOW,
            OLD.model_dump_json(),
        )
    stores = postgres.open_stores(postgres_dsn, schema=postgres_schema, max_size=2)
    try:
        await stores.open()
        await _check(stores)
    finally:
        await stores.aclose()
    assert await schema_version(postgres_dsn, postgres_schema) == pg_migrations.LATEST >= 23
