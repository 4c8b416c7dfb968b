"""A session's state crosses the socket as UTF-8 bytes and is stored as text.

The PostgreSQL working-memory store sends a state's JSON as the serializer's
bytes, its buffer document apart, and reads them back as bytes (the server
converting to and from the ``text`` columns): ``body`` holds exactly
``model_dump_json``'s text of the state without its document, ``buffer`` the
document as given, characters beyond Latin-1 included, and every read of
them (a load, the turn's prefetch, the exchange's prior read, the recent
sessions) gives the state saved.
"""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from prefrontal.stores import Stores
from prefrontal.stores.exchange import Lookup
from prefrontal.stores.postgres.database import Connection
from prefrontal.stores.postgres.exchange import PostgresExchangeWriter
from prefrontal.stores.postgres.working_memory import PostgresWorkingMemoryStore
from prefrontal.stores.tenancy import Tenant
from prefrontal.stores.working_memory import SessionKey, SessionState
from tests.conftest import FIXED_NOW

pytestmark = pytest.mark.anyio
KEY = SessionKey(agent_id="agent-1", user_id="alice", session_id="s")
TEXT = "Lena ⏎ signs — off · café 🚲 ℵ\x00"
DOCUMENT = json.dumps({"items": [{"text": TEXT}]}, ensure_ascii=False)
"""A buffer document: JSON, a NUL escaped in it."""


async def test_a_state_beyond_latin_1_is_stored_as_its_json_text(
    postgres_stores: Stores,
) -> None:
    store = postgres_stores.working_memory
    assert isinstance(store, PostgresWorkingMemoryStore)
    first = await store.save(SessionState(key=KEY, state={"text": TEXT}, updated_at=FIXED_NOW))
    assert await store.load(KEY) == first
    assert await _stored(store) == (first.model_dump_json(), None)
    words = {"buffer": DOCUMENT.encode(), "text": TEXT * 2}
    saved = await store.save(first.model_copy(update={"state": words}))
    assert await _stored(store) == (saved.model_dump_json(exclude={"state": {"buffer"}}), DOCUMENT)
    assert await store.load(KEY) == saved
    recent = await store.recent_sessions(
        Tenant(agent_id=KEY.agent_id, user_id=KEY.user_id),
        since=FIXED_NOW - timedelta(days=1),
        limit=5,
    )
    assert recent == [saved]
    await store.prefetch_turn(KEY, parent_turn_id=None, now=FIXED_NOW, seconds=60)
    assert await store.load(KEY) == saved  # the tenant's first turn: read, and remembered
    later = FIXED_NOW + timedelta(seconds=1)
    assert await store.prefetch_turn(KEY, parent_turn_id=None, now=later, seconds=60) == 1
    assert await store.load(KEY) == saved  # served from the prefetch


async def test_a_document_with_a_nul_stays_in_the_body(postgres_stores: Stores) -> None:
    """A text column holds no NUL: a document that has one is kept, escaped, in the JSON."""
    store = postgres_stores.working_memory
    assert isinstance(store, PostgresWorkingMemoryStore)
    state = SessionState(key=KEY, state={"buffer": TEXT}, updated_at=FIXED_NOW)
    saved = await store.save(state)
    assert await _stored(store) == (saved.model_dump_json(), None)
    assert await store.load(KEY) == saved


async def _stored(store: PostgresWorkingMemoryStore) -> tuple[str, str | None]:
    """The session's ``body`` and ``buffer`` columns."""

    async def read(connection: Connection) -> tuple[str, str | None]:
        row = await connection.fetchrow(
            "SELECT body, buffer FROM wm_sessions WHERE session_id = $1", KEY.session_id
        )
        return row[0], row[1]

    return await store.database.read(read, store="test")


async def test_the_exchange_reads_the_state_it_shares_the_database_with(
    postgres_stores: Stores,
) -> None:
    store = postgres_stores.working_memory
    state = SessionState(
        key=KEY, state={"text": TEXT, "buffer": DOCUMENT.encode()}, updated_at=FIXED_NOW
    )
    saved = await store.save(state)
    writer = PostgresExchangeWriter(
        postgres_stores.conversation,  # type: ignore[arg-type]
        postgres_stores.episodic,  # type: ignore[arg-type]
        postgres_stores.traces,  # type: ignore[arg-type]
        store,
    )
    assert writer.shared
    tenant = Tenant(agent_id=KEY.agent_id, user_id=KEY.user_id)
    lookup = Lookup(tenant=tenant, turn_id="t1", session=KEY, fold=False, window=4, batch=2)
    assert (await writer.prior(lookup)).session == saved
