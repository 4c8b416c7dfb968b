"""The PostgreSQL database layer: pool, schema, migrations, error mapping, lifecycle."""

from __future__ import annotations

import random
import string

import anyio
import asyncpg
import pytest
from pydantic import ValidationError

from prefrontal.errors import (
    ConfigurationError,
    ConflictError,
    StoreError,
    TransientStoreError,
)
from prefrontal.stores import (
    MemoryItem,
    MemoryQuery,
    SessionKey,
    SessionState,
    Stores,
    Tenant,
    postgres,
)
from prefrontal.stores.durable import Migration
from prefrontal.stores.postgres import PostgresDatabase, PostgresMemoryStore
from prefrontal.stores.postgres.migrations import LATEST, migrate, schema_version
from tests import postgres_server
from tests.conftest import FIXED_NOW

pytestmark = pytest.mark.anyio
ALICE = Tenant(agent_id="agent-1", user_id="alice")
KEY = SessionKey(agent_id="agent-1", user_id="alice", session_id="s1")


@pytest.fixture
def stores(postgres_stores: Stores) -> Stores:
    return postgres_stores


def item(item_id: str, content: str, **fields: object) -> MemoryItem:
    return MemoryItem(
        **({"created_at": FIXED_NOW} | fields),
        item_id=item_id,
        agent_id="agent-1",
        user_id="alice",
        content=content,
    )


async def hit_ids(stores: Stores, text: str) -> list[str]:
    return [
        hit.item.item_id
        for hit in await stores.episodic.search(ALICE, MemoryQuery(text=text, now=FIXED_NOW))
    ]


async def test_first_use_creates_the_schema_at_the_latest_version(
    postgres_dsn: str, postgres_schema: str, stores: Stores
) -> None:
    """The schema appears on first use, fully migrated, and holds every table."""
    connection = await asyncpg.connect(postgres_dsn)
    try:
        exists = "SELECT count(*) FROM pg_namespace WHERE nspname = $1"
        assert await connection.fetchval(exists, postgres_schema) == 0
        await stores.episodic.put(item("a", "hello"))
        assert await connection.fetchval(exists, postgres_schema) == 1
        await connection.execute(f"SET search_path = {postgres_schema}")
        assert await schema_version(connection) == LATEST
        tables = await connection.fetch(
            "SELECT tablename FROM pg_tables WHERE schemaname = $1", postgres_schema
        )
        assert {"episodic_items", "semantic_items", "wm_sessions", "traces"} <= {
            row[0] for row in tables
        }
    finally:
        await connection.close()


async def test_what_one_process_stored_the_next_one_reads(
    postgres_dsn: str, postgres_schema: str
) -> None:
    """Closing one pool and opening another on the same schema keeps every store's data."""
    first = postgres.open_stores(postgres_dsn, schema=postgres_schema)
    await first.episodic.put(item("a", "the red bicycle"))
    await first.aclose()
    second = postgres.open_stores(postgres_dsn, schema=postgres_schema)
    try:
        assert await hit_ids(second, "bicycle") == ["a"]
    finally:
        await second.aclose()


async def test_schemas_are_independent(postgres_dsn: str, postgres_schema: str) -> None:
    """Two schemas in one database never see each other's items, even one named like a keyword."""
    one = postgres.open_stores(postgres_dsn, schema=f"{postgres_schema}_one")
    two = postgres.open_stores(postgres_dsn, schema="select")
    try:
        await one.episodic.put(item("a", "the red bicycle"))
        assert await hit_ids(one, "bicycle") == ["a"]
        assert await hit_ids(two, "bicycle") == []
    finally:
        await one.aclose()
        await two.aclose()


async def test_many_processes_starting_at_once_migrate_once(
    postgres_dsn: str, postgres_schema: str
) -> None:
    """Eight pools opening one new schema at the same moment all work; it is migrated once."""
    all_stores = [postgres.open_stores(postgres_dsn, schema=postgres_schema) for _ in range(8)]
    try:
        async with anyio.create_task_group() as group:
            for n, stores in enumerate(all_stores):
                group.start_soon(stores.episodic.put, item(f"i{n}", f"note {n} about kiwis"))
        assert len(await hit_ids(all_stores[0], "kiwis")) == 8
    finally:
        for stores in all_stores:
            await stores.aclose()
    connection = await asyncpg.connect(postgres_dsn)
    try:
        ledger = await connection.fetch(
            f"SELECT version FROM {postgres_schema}.schema_migrations ORDER BY version"
        )
        assert [row[0] for row in ledger] == list(range(1, LATEST + 1))
    finally:
        await connection.close()


async def test_migrations_apply_in_order_once(postgres_dsn: str, postgres_schema: str) -> None:
    """Forward migrations run once each, in order, and record the version."""
    steps = (
        Migration(1, "t", ("CREATE TABLE t (x integer)",)),
        Migration(2, "u", ("CREATE TABLE u (y integer)",)),
    )
    connection = await asyncpg.connect(
        postgres_dsn, server_settings={"search_path": postgres_schema}
    )
    try:
        assert await migrate(connection, postgres_schema, steps[:1]) == 1
        assert await migrate(connection, postgres_schema, steps) == 2
        assert await migrate(connection, postgres_schema, steps) == 2
        assert await connection.fetchval("SELECT count(*) FROM u") == 0
    finally:
        await connection.close()


async def test_a_schema_newer_than_the_code_is_refused(
    postgres_dsn: str, postgres_schema: str
) -> None:
    """A schema at a version this code does not know raises StoreError saying to upgrade."""
    connection = await asyncpg.connect(
        postgres_dsn, server_settings={"search_path": postgres_schema}
    )
    try:
        future = (
            Migration(1, "t", ("CREATE TABLE t (x integer)",)),
            Migration(LATEST + 5, "f", ()),
        )
        await migrate(connection, postgres_schema, future)
    finally:
        await connection.close()
    database = PostgresDatabase(postgres_dsn, schema=postgres_schema)
    with pytest.raises(StoreError, match="upgrade prefrontal"):
        await PostgresMemoryStore(database).get(ALICE, ["a"])
    await database.aclose()


async def test_two_processes_saving_one_version_conflict(
    postgres_dsn: str, postgres_schema: str
) -> None:
    """Two postgres.open_stores (two pools, as two processes) saving one version: one wins, one conflicts."""
    first = postgres.open_stores(postgres_dsn, schema=postgres_schema)
    second = postgres.open_stores(postgres_dsn, schema=postgres_schema)
    try:
        base = await first.working_memory.save(SessionState(key=KEY, state={"n": 0}))
        loaded = await second.working_memory.load(KEY)
        assert loaded == base
        outcomes: list[str] = []

        async def attempt(stores: Stores, n: int) -> None:
            try:
                await stores.working_memory.save(base.model_copy(update={"state": {"n": n}}))
                outcomes.append(f"saved {n}")
            except ConflictError:
                outcomes.append("conflict")

        async with anyio.create_task_group() as group:
            for n in range(6):
                group.start_soon(attempt, first if n % 2 else second, n)
        assert outcomes.count("conflict") == 5
        (winner,) = [o for o in outcomes if o.startswith("saved")]
        final = await first.working_memory.load(KEY)
        assert final is not None
        assert final.version == 2
        assert winner == f"saved {final.state['n']}"
        with pytest.raises(ConflictError, match="version 2"):
            await second.working_memory.save(base)
    finally:
        await first.aclose()
        await second.aclose()


async def test_two_processes_creating_one_session_conflict(
    postgres_dsn: str, postgres_schema: str
) -> None:
    """Two pools saving a never-saved session at once: exactly one creates it."""
    first = postgres.open_stores(postgres_dsn, schema=postgres_schema)
    second = postgres.open_stores(postgres_dsn, schema=postgres_schema)
    outcomes: list[str] = []

    async def attempt(stores: Stores) -> None:
        try:
            await stores.working_memory.save(SessionState(key=KEY))
            outcomes.append("saved")
        except ConflictError:
            outcomes.append("conflict")

    try:
        async with anyio.create_task_group() as group:
            for stores in (first, second, first, second):
                group.start_soon(attempt, stores)
        assert sorted(outcomes) == ["conflict"] * 3 + ["saved"]
    finally:
        await first.aclose()
        await second.aclose()


async def test_sql_in_user_text_is_only_data(stores: Stores) -> None:
    """Text that would be SQL if interpolated is stored, searched and looked up as plain data."""
    evil = "x'); DROP TABLE episodic_items; --"
    await stores.episodic.put(item(evil, f"robert {evil} tables"))
    assert await hit_ids(stores, "robert'; DELETE FROM episodic_items; --") == [evil]
    assert [i.item_id for i in await stores.episodic.get(ALICE, [evil])] == [evil]
    evil_tenant = Tenant(agent_id="agent-1' OR '1'='1", user_id="alice' OR true --")
    assert await stores.episodic.get(evil_tenant, [evil]) == []
    assert (
        await stores.episodic.search(evil_tenant, MemoryQuery(text="robert", now=FIXED_NOW)) == []
    )


async def test_nul_characters(stores: Stores) -> None:
    """NUL in content round-trips; an id holding NUL is refused when built and unknown on get."""
    await stores.episodic.put(item("a", "before\x00after words"))
    (got,) = await stores.episodic.get(ALICE, ["a"])
    assert got.content == "before\x00after words"
    with pytest.raises(ValidationError, match="pattern"):
        item("b\x00", "fine")
    assert await stores.episodic.get(ALICE, ["b\x00"]) == []
    assert await hit_ids(stores, "after") == ["a"]


async def test_a_cancelled_search_leaves_the_pool_usable(stores: Stores) -> None:
    """Cancelling searches mid-flight propagates the cancellation; the next search still works."""
    await stores.episodic.put_many([item(f"i{n}", f"note {n} about kiwis") for n in range(200)])
    cancelled = []
    for delay in (0, 0.0005, 0.001, 0.002, 0.005):
        with anyio.move_on_after(delay) as scope:
            await stores.episodic.search(ALICE, MemoryQuery(text="kiwis note", now=FIXED_NOW))
        cancelled.append(scope.cancelled_caught)
    assert cancelled[0]
    assert len(await hit_ids(stores, "kiwis")) == 20


async def test_closed_database_raises_store_error(postgres_dsn: str, postgres_schema: str) -> None:
    """After aclose, every call raises StoreError naming the store."""
    stores = postgres.open_stores(postgres_dsn, schema=postgres_schema)
    await stores.episodic.put(item("a", "x"))
    await stores.aclose()
    with pytest.raises(StoreError) as raised:
        await stores.episodic.get(ALICE, ["a"])
    assert raised.value.store == "episodic"


async def test_an_unreachable_server_is_a_store_error(tmp_path: object) -> None:
    """A DSN whose socket does not exist raises StoreError, not a foreign exception."""
    stores = postgres.open_stores(f"postgresql://postgres@/x?host={tmp_path}/none")
    with pytest.raises(StoreError) as raised:
        await stores.consciousness.get_profile(ALICE)
    assert raised.value.store == "consciousness"
    await stores.aclose()


@pytest.mark.parametrize("schema", ["", "Public", "a-b", "x; DROP SCHEMA y", "9lives", "a" * 64])
def test_schema_names_must_be_plain_identifiers(schema: str) -> None:
    """A schema name that would need quoting is refused at construction."""
    with pytest.raises(ConfigurationError, match="schema"):
        PostgresDatabase("postgresql:///x", schema=schema)


@pytest.mark.parametrize(("low", "high"), [(-1, 4), (0, 0), (5, 4)])
def test_pool_sizes_must_make_sense(low: int, high: int) -> None:
    """A negative, empty or inverted pool size is refused at construction."""
    with pytest.raises(ConfigurationError, match="pool"):
        PostgresDatabase("postgresql:///x", min_size=low, max_size=high)


def test_unknown_memory_table_is_refused() -> None:
    """Only the episodic and semantic tables exist."""
    with pytest.raises(ConfigurationError):
        PostgresMemoryStore(PostgresDatabase("postgresql:///x"), "procedural")


async def test_a_dropped_connection_is_transient_and_the_pool_recovers(
    postgres_dsn: str, postgres_schema: str
) -> None:
    """Connections killed by the server raise TransientStoreError at worst; later calls succeed."""
    stores = postgres.open_stores(postgres_dsn, schema=postgres_schema, min_size=2, max_size=2)
    try:
        await stores.episodic.put(item("a", "the red bicycle"))
        admin = await asyncpg.connect(postgres_dsn)
        try:
            killed = await admin.fetchval(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                " WHERE application_name = 'prefrontal' AND datname = current_database()"
            )
        finally:
            await admin.close()
        assert killed >= 1
        outcomes: list[list[str] | str] = []
        for _ in range(3):
            try:
                outcomes.append(await hit_ids(stores, "bicycle"))
            except TransientStoreError:
                outcomes.append("transient")
        assert outcomes[-1] == ["a"]
    finally:
        await stores.aclose()


def test_tests_skip_with_a_reason_without_binaries(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the server binaries, the fixture's skip reason names them."""
    monkeypatch.setattr(postgres_server, "binaries", lambda: None)
    reason = postgres_server.missing_reason()
    assert reason is not None
    assert "initdb" in reason


async def test_words_longer_than_an_index_entry_are_found_and_scored_as_in_memory(
    stores: Stores,
) -> None:
    """An incompressible 20,000-letter word is stored, found by itself, and scored as in memory."""
    rng = random.Random(3)
    word = "".join(rng.choice(string.ascii_lowercase) for _ in range(20_000))
    items = [item("long", f"{word} zebra"), item("short", "zebra crossing"), item("x", word)]
    memory = Stores.in_memory()
    await memory.episodic.put_many(items)
    await stores.episodic.put_many(items)
    for text in (word, "zebra", f"{word} crossing"):
        query = MemoryQuery(text=text, now=FIXED_NOW)
        expected = await memory.episodic.search(ALICE, query)
        got = await stores.episodic.search(ALICE, query)
        assert [(h.item.item_id, h.score) for h in got] == [
            (h.item.item_id, h.score) for h in expected
        ]
    assert {
        h.item.item_id
        for h in await stores.episodic.search(ALICE, MemoryQuery(text=word, now=FIXED_NOW))
    } == {
        "long",
        "x",
    }
