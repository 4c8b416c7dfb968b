"""Files and schemas made before ids were unique per agent and user migrate forward intact.

A SQLite file at schema version 2 and a PostgreSQL schema at version 1 are
filled through the previous layout's own statements, then opened by the
current stores: the data is all there, search finds it with the same
scores, and from then on two users may write the same id.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from prefrontal.stores import (
    ConversationTurn,
    FrontalItem,
    FrontalKind,
    FrontalQuery,
    MemoryItem,
    MemoryQuery,
    Observation,
    Role,
    Stores,
    Tenant,
    postgres,
    sqlite,
)
from prefrontal.stores.postgres import conversation as pg_conversation
from prefrontal.stores.postgres import frontal_cortex as pg_frontal
from prefrontal.stores.postgres import memory as pg_memory
from prefrontal.stores.postgres import memory_sql as pg_memory_sql
from prefrontal.stores.postgres import migrations as pg_migrations
from prefrontal.stores.postgres import scratch_page as pg_scratch
from prefrontal.stores.sqlite import conversation as sqlite_conversation
from prefrontal.stores.sqlite import memory as sqlite_memory
from prefrontal.stores.sqlite import memory_sql as sqlite_memory_sql
from prefrontal.stores.sqlite import migrations as sqlite_migrations
from prefrontal.stores.sqlite import scratch_page as sqlite_scratch
from prefrontal.stores.sqlite.database import to_us
from prefrontal.stores.sqlite.driver import sqlite3
from prefrontal.testing.conformance.base import at
from tests.postgres_schemas import schema_at, schema_version

pytestmark = pytest.mark.anyio
ALICE = Tenant(agent_id="agent-1", user_id="alice")
BOB = Tenant(agent_id="agent-1", user_id="bob")

MEMORIES = [
    MemoryItem(
        item_id=f"note-{n}",
        agent_id="agent-1",
        user_id="alice",
        content=f"note {n}: the ferry to the island leaves at {n} o'clock",
        created_at=at(n),
    )
    for n in range(1, 6)
]
GOAL = FrontalItem(
    item_id="g1",
    agent_id="agent-1",
    user_id="alice",
    kind=FrontalKind.GOAL,
    title="book the ferry",
    created_at=at(0),
    updated_at=at(0),
)
TURN = ConversationTurn(
    item_id="m1",
    agent_id="agent-1",
    user_id="alice",
    session_id="s1",
    role=Role.USER,
    content="when does the ferry leave?",
    created_at=at(0),
)
ENTRY = Observation(
    item_id="n1", agent_id="agent-1", user_id="alice", content="ferry may be full", created_at=at(0)
)


def _before_conflict(statement: str) -> str:
    """The plain ``INSERT`` of an upsert: what the previous layout accepts too."""
    return statement.split("ON CONFLICT")[0]


def _fill_sqlite_v2(path: Path) -> None:
    connection = sqlite3.connect(path, isolation_level=None)
    assert sqlite_migrations.migrate(connection, sqlite_migrations.MIGRATIONS[:2]) == 2
    for name in ("episodic", "semantic"):
        insert = _before_conflict(sqlite_memory_sql.Statements(name).upsert)
        for item in MEMORIES:
            connection.execute(insert, sqlite_memory._row(item, name))
    connection.execute(
        "INSERT INTO frontal_items (agent_id, item_id, user_id, scope, kind, status, updated_at,"
        " body) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            GOAL.agent_id,
            GOAL.item_id,
            GOAL.user_id,
            GOAL.scope.value,
            GOAL.kind.value,
            GOAL.status.value,
            to_us(GOAL.updated_at),
            GOAL.model_dump_json(),
        ),
    )
    connection.execute(
        _before_conflict(sqlite_conversation._APPEND),
        (
            TURN.agent_id,
            TURN.item_id,
            TURN.user_id,
            TURN.scope.value,
            TURN.session_id,
            to_us(TURN.created_at),
            TURN.model_dump_json(),
        ),
    )
    connection.execute(
        "INSERT INTO scratch_entries (agent_id, item_id, user_id, scope, resolved, priority,"
        " created_at, expires_at, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        sqlite_scratch._row(ENTRY),
    )
    connection.close()


async def _search(stores: Stores, tenant: Tenant, text: str) -> list[tuple[str, float]]:
    hits = await stores.episodic.search(tenant, MemoryQuery(text=text, now=at(60)))
    return [(hit.item.item_id, hit.score) for hit in hits]


async def _check_migrated(stores: Stores, expected: list[tuple[str, float]]) -> None:
    """The old data is all there and searchable; bob's writes of the same ids replace nothing."""
    assert await _search(stores, ALICE, "ferry island") == expected
    ids = [item.item_id for item in MEMORIES]
    assert await stores.semantic.get(ALICE, ids) == MEMORIES
    assert await stores.frontal_cortex.query(ALICE, FrontalQuery()) == [GOAL]
    assert await stores.conversation.recent(ALICE, limit=5) == [TURN]
    assert await stores.scratch_page.active(ALICE, now=at(60), limit=5) == [ENTRY]

    owned_by_bob: dict[str, Any] = {"user_id": "bob"}
    await stores.episodic.put(MEMORIES[0].model_copy(update=owned_by_bob | {"content": "bob"}))
    await stores.frontal_cortex.put(GOAL.model_copy(update=owned_by_bob | {"title": "bob's"}))
    await stores.conversation.append(TURN.model_copy(update=owned_by_bob | {"content": "bob"}))
    await stores.scratch_page.put(ENTRY.model_copy(update=owned_by_bob | {"content": "bob"}))
    assert await stores.episodic.get(ALICE, ["note-1"]) == MEMORIES[:1]
    assert await stores.frontal_cortex.query(ALICE, FrontalQuery()) == [GOAL]
    assert await stores.conversation.recent(ALICE, limit=5) == [TURN]
    assert await stores.scratch_page.active(ALICE, now=at(60), limit=5) == [ENTRY]
    assert [i.title for i in await stores.frontal_cortex.query(BOB, FrontalQuery())] == ["bob's"]


async def _reference_scores() -> list[tuple[str, float]]:
    """The scores a fresh in-memory store gives the same memories."""
    reference = Stores.in_memory()
    await reference.episodic.put_many(MEMORIES)
    return await _search(reference, ALICE, "ferry island")


async def test_a_sqlite_file_at_version_2_migrates_with_its_data(tmp_path: Path) -> None:
    """A version 2 file keeps every record through migration 3 and searches as before."""
    path = tmp_path / "v2.db"
    _fill_sqlite_v2(path)
    stores = sqlite.open_stores(path)
    try:
        await _check_migrated(stores, await _reference_scores())
    finally:
        await stores.aclose()
    connection = sqlite3.connect(path)
    assert sqlite_migrations.schema_version(connection) == sqlite_migrations.LATEST
    assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    connection.execute("INSERT INTO episodic_fts (episodic_fts) VALUES ('integrity-check')")
    connection.close()


async def _fill_postgres_v1(dsn: str, schema: str) -> None:
    async with schema_at(dsn, schema, 1) as connection:
        for name in ("episodic", "semantic"):
            insert = _before_conflict(pg_memory_sql.Statements(name).upsert)
            insert = insert.replace(", impacts)", ")").replace(", $19)", ")")
            for item in MEMORIES:
                await connection.execute(insert, *pg_memory._row(item, name)[:18])
        await connection.execute(
            _before_conflict(pg_frontal._PUT),
            GOAL.agent_id,
            GOAL.item_id,
            GOAL.user_id,
            GOAL.scope.value,
            GOAL.kind.value,
            GOAL.status.value,
            GOAL.updated_at,
            GOAL.model_dump_json(),
        )
        await connection.execute(
            _before_conflict(pg_conversation._APPEND),
            TURN.agent_id,
            TURN.item_id,
            TURN.user_id,
            TURN.scope.value,
            TURN.session_id,
            TURN.created_at,
            TURN.model_dump_json(),
        )
        await connection.execute(
            _before_conflict(pg_scratch._PUT),
            ENTRY.agent_id,
            ENTRY.item_id,
            ENTRY.user_id,
            ENTRY.scope.value,
            ENTRY.resolved,
            ENTRY.priority,
            ENTRY.created_at,
            ENTRY.expires_at,
            ENTRY.model_dump_json(),
        )


async def test_a_postgres_schema_at_version_1_migrates_with_its_data(
    postgres_dsn: str, postgres_schema: str
) -> None:
    """A version 1 schema keeps every record through migration 2 and searches as before."""
    await _fill_postgres_v1(postgres_dsn, postgres_schema)
    stores = postgres.open_stores(postgres_dsn, schema=postgres_schema, max_size=2)
    try:
        await _check_migrated(stores, await _reference_scores())
    finally:
        await stores.aclose()
    assert await schema_version(postgres_dsn, postgres_schema) == pg_migrations.LATEST
