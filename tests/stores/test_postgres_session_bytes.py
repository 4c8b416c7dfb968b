"""A session's state crosses the socket as UTF-8 bytes and is stored as the text it always was.

The PostgreSQL working-memory store sends a state's JSON as the serializer's
bytes and reads it back as bytes (the server converting to and from the
``text`` column): the column holds exactly ``model_dump_json``'s text,
characters beyond Latin-1 included, and every read of it (a load, the
turn's prefetch, the exchange's prior read, the recent sessions) gives the
state saved.
"""

from __future__ import annotations

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


async def test_a_state_beyond_latin_1_is_stored_as_its_json_text(
    postgres_stores: Stores,
) -> None:
    store = postgres_stores.working_memory
    assert isinstance(store, PostgresWorkingMemoryStore)
    first = await store.save(SessionState(key=KEY, state={"text": TEXT}, updated_at=FIXED_NOW))
    saved = await store.save(first.model_copy(update={"state": {"text": TEXT * 2}}))

    async def body(connection: Connection) -> str:
        found: str = await connection.fetchval(
            "SELECT body FROM wm_sessions WHERE session_id = $1", KEY.session_id
        )
        return found

    assert await store.database.read(body, store="test") == saved.model_dump_json()
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


async def test_the_exchange_reads_the_state_it_shares_the_database_with(
    postgres_stores: Stores,
) -> None:
    store = postgres_stores.working_memory
    saved = await store.save(SessionState(key=KEY, state={"text": TEXT}, updated_at=FIXED_NOW))
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
