"""A session state read as the parts this process last saved or read of it is not decoded again.

The PostgreSQL working-memory store holds each session's last stored parts
with their state (:mod:`prefrontal.stores.postgres.session_states`): a load
after a save takes the state saved (the same object), equal to its stored
parts decoded; parts written by another writer (another process, an erase and
a new save) are decoded, never mistaken for the held ones; forgetting empties
the map.
"""

from __future__ import annotations

import pytest

from prefrontal.forgetting import forget_everything
from prefrontal.stores import Stores
from prefrontal.stores.postgres.database import Connection
from prefrontal.stores.postgres.session_states import SESSION_STATES
from prefrontal.stores.postgres.working_memory import PostgresWorkingMemoryStore
from prefrontal.stores.tenancy import Tenant
from prefrontal.stores.working_memory import SessionKey, SessionState, joined
from tests.conftest import FIXED_NOW

pytestmark = pytest.mark.anyio
KEY = SessionKey(agent_id="agent-1", user_id="alice", session_id="held")
DOCUMENT = '{"items": [{"text": "Lena signs — off · café"}]}'.encode()
"""A buffer document, as a buffer writes it: UTF-8 bytes."""


def _store(stores: Stores) -> PostgresWorkingMemoryStore:
    store = stores.working_memory
    assert isinstance(store, PostgresWorkingMemoryStore)
    return store


async def _parts(store: PostgresWorkingMemoryStore) -> tuple[bytes, bytes | None]:
    """The session's stored parts, as the store reads them."""

    async def read(connection: Connection) -> tuple[bytes, bytes | None]:
        row = await connection.fetchrow(
            "SELECT convert_to(body, 'UTF8'), convert_to(buffer, 'UTF8') FROM wm_sessions"
            " WHERE session_id = $1",
            KEY.session_id,
        )
        return row[0], row[1]

    return await store.database.read(read, store="test")


async def test_a_load_after_a_save_takes_the_state_saved(postgres_stores: Stores) -> None:
    """The state loaded is the one saved, held, and equal to its stored parts decoded; with
    every cache emptied, the load decodes an equal state."""
    store = _store(postgres_stores)
    first = await store.save(
        SessionState(key=KEY, state={"buffer": DOCUMENT}, updated_at=FIXED_NOW)
    )
    loaded = await store.load(KEY)
    assert loaded is first
    assert loaded == joined(*await _parts(store))
    forget_everything()
    assert len(SESSION_STATES) == 0
    again = await store.load(KEY)
    assert again == first and again is not first
    assert await store.load(KEY) is again  # held from the read


async def test_parts_written_elsewhere_are_decoded(postgres_stores: Stores) -> None:
    """A state another writer saved (here: erased and saved again at the same version, from
    outside the store) is read as what the database holds, never as the state held."""
    store = _store(postgres_stores)
    saved = await store.save(
        SessionState(key=KEY, state={"buffer": DOCUMENT}, updated_at=FIXED_NOW)
    )
    assert await store.load(KEY) is saved

    async def rewrite(connection: Connection) -> None:
        await connection.execute(
            "UPDATE wm_sessions SET buffer = $1 WHERE session_id = $2",
            '{"items": []}',
            KEY.session_id,
        )

    await store.database.write(rewrite, store="test")
    found = await store.load(KEY)
    assert found is not None and found.version == saved.version
    assert found.state["buffer"] == b'{"items": []}'
    await store.erase(Tenant(agent_id=KEY.agent_id, user_id=KEY.user_id))
    assert await store.load(KEY) is None
