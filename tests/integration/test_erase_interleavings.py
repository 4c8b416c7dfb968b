"""Erase against a write held open across it: the interleavings forced, not hoped for.

Each test opens a transaction that writes ``alice``'s records (a new item,
or a recall counted on one she has) and keeps it open while ``erase`` runs
on another connection, the way another worker or service on the same
database would. The erase waits for it, and once it commits nothing of
``alice`` is left. A connection of this process is, to the database, what
another process's connection is.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import timedelta

import anyio
import pytest

from prefrontal import Stores
from prefrontal.errors import ErasedTenantError
from prefrontal.memory import ErasureReport, MemoryAPI
from prefrontal.stores import MemoryItem, MemoryQuery, Tenant, postgres, sqlite
from prefrontal.stores.postgres.database import Connection
from tests.conftest import FIXED_NOW, fixed_clock

pytestmark = pytest.mark.anyio
ALICE = Tenant(agent_id="atlas", user_id="alice")
WAITING = """SELECT count(*) FROM pg_locks AS l JOIN pg_stat_activity AS a USING (pid)
    WHERE NOT l.granted AND l.locktype = $1 AND a.query LIKE $2"""
"""How many backends wait for a lock of type ``$1`` running a statement like ``$2``."""


def item(n: int) -> MemoryItem:
    """Alice's ``n``-th episodic item."""
    return MemoryItem(
        item_id=f"m{n}",
        agent_id="atlas",
        user_id="alice",
        content=f"marker {n}",
        created_at=FIXED_NOW,
    )


async def alice_items(stores: Stores) -> int:
    """How many episodic items of alice a search finds."""
    query = MemoryQuery(text="marker", limit=100, now=FIXED_NOW + timedelta(days=1))
    return len(await stores.episodic.search(ALICE, query))


async def erase_around(
    stores: Stores,
    hold: anyio.Event,
    release: anyio.Event,
    waiting: Callable[[], Awaitable[bool]],
) -> ErasureReport:
    """Erase alice once ``hold`` is set; set ``release`` once ``waiting()`` says the erase
    waits for the held transaction (it must not have returned before); the erase's report."""
    report: list[ErasureReport] = []

    async def erase() -> None:
        report.append(await MemoryAPI(stores, clock=fixed_clock).erase("atlas", "alice"))

    async with anyio.create_task_group() as group:
        with anyio.fail_after(30):
            await hold.wait()
        group.start_soon(erase)
        for _ in range(1_500):  # the database is polled: no event to wait on
            if await waiting():
                break
            await anyio.sleep(0.02)
        else:
            raise AssertionError("the erase never waited for the open transaction")
        assert report == []
        release.set()
    return report[0]


async def held_open(
    database: postgres.PostgresDatabase,
    statement: str | None,
    items: list[MemoryItem],
    store: postgres.PostgresMemoryStore,
    hold: anyio.Event,
    release: anyio.Event,
) -> None:
    """One transaction that writes ``items`` (or runs ``statement``), then stays open until
    ``release``; committed after."""

    async def run(connection: Connection) -> None:
        if statement is not None:
            await connection.execute(statement)
        await store.put_in(connection, items)
        hold.set()
        await release.wait()

    await database.write(run, store="episodic")


@pytest.fixture
async def pg(postgres_dsn: str, postgres_schema: str) -> Stores:
    """Every store on PostgreSQL in the test's own schema (closed by the test)."""
    return postgres.open_stores(postgres_dsn, schema=postgres_schema, max_size=6)


async def waiting_on(stores: Stores, locktype: str, statement: str) -> bool:
    """True when a backend of the database waits for a ``locktype`` lock in ``statement``."""

    async def run(connection: Connection) -> int:
        return int(await connection.fetchval(WAITING, locktype, f"%{statement}%"))

    database = stores.episodic.database  # type: ignore[attr-defined]
    return bool(await database.read(run, store="episodic"))


async def test_postgres_erase_waits_for_an_insert_in_flight_then_removes_it(pg: Stores) -> None:
    """On PostgreSQL an erase waits for a transaction inserting the user's item, then removes it."""
    store = pg.episodic
    assert isinstance(store, postgres.PostgresMemoryStore)
    hold, release = anyio.Event(), anyio.Event()
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(held_open, store.database, None, [item(1)], store, hold, release)
            report = await erase_around(
                pg, hold, release, lambda: waiting_on(pg, "advisory", "pg_advisory_xact_lock")
            )
        assert report.removed["episodic"] == 1
        assert await alice_items(pg) == 0
        with pytest.raises(ErasedTenantError):
            await store.put(item(2))
    finally:
        await pg.aclose()


async def test_postgres_erase_removes_an_item_whose_recall_is_counted_meanwhile(
    pg: Stores,
) -> None:
    """On PostgreSQL an item updated by another transaction while the erase deletes it is
    removed too (in its new version)."""
    store = pg.episodic
    assert isinstance(store, postgres.PostgresMemoryStore)
    await store.put_many([item(1), item(2)])
    count = (
        "UPDATE episodic_items SET recall_count = recall_count + 1"
        " WHERE agent_id = 'atlas' AND user_id = 'alice' AND item_id = 'm1'"
    )
    hold, release = anyio.Event(), anyio.Event()
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(held_open, store.database, count, [], store, hold, release)
            report = await erase_around(
                pg, hold, release, lambda: waiting_on(pg, "transactionid", "episodic_items")
            )
        assert report.removed["episodic"] == 2
        assert await alice_items(pg) == 0
    finally:
        await pg.aclose()


async def test_sqlite_erase_waits_for_a_write_in_flight_then_removes_it(tmp_path: object) -> None:
    """On SQLite an erase waits for another connection's open write of the user, then removes
    it; that connection's next write is refused (one writer at a time, checked inside it)."""
    path = anyio.Path(str(tmp_path)) / "stores.db"
    eraser, other = sqlite.open_stores(str(path)), sqlite.open_stores(str(path))
    await eraser.episodic.put(item(0))
    hold, release = anyio.Event(), anyio.Event()
    database = other.episodic.database  # type: ignore[attr-defined]

    async def write_and_hold() -> None:
        async with database.batch():
            await other.episodic.put(item(1))
            hold.set()
            await release.wait()

    async def erase_waits() -> bool:
        await anyio.sleep(0.5)  # SQLite names no waiter: the erase has had time to return
        return True

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(write_and_hold)
            report = await erase_around(eraser, hold, release, erase_waits)
        assert report.removed["episodic"] == 2
        assert await alice_items(eraser) == 0
        with pytest.raises(ErasedTenantError):
            await other.episodic.put(item(2))
        assert await alice_items(eraser) == 0
    finally:
        await other.aclose()
        await eraser.aclose()
