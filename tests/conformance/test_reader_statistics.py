"""BM25 statistics are the reader's: another user's private items never move a user's scores.

A search by a user counts, for BM25's collection statistics, only the items
that user may read: its own and the agent's shared ones
(:class:`~prefrontal.retrieval.ranking.Corpus`). Were other users' private
items counted, a user could tell from its own scores whether, and how often,
someone else wrote a word. These tests have another user of the same agent
store 1, 10 and 1,000 private notes naming the query's words and check that
the first user's hits and scores do not move by a single bit, on every
backend, and that they equal those of a store holding the visible items only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from prefrontal.stores import MemoryItem, MemoryQuery, Stores, Tenant, postgres, sqlite
from prefrontal.stores.long_term import MemoryStore
from prefrontal.stores.postgres import migrations as pg_migrations
from prefrontal.stores.sqlite.driver import sqlite3
from prefrontal.stores.tenancy import Scope
from prefrontal.testing.conformance.base import at
from tests.conftest import FIXED_NOW
from tests.stores.postgres_schema import schema_connection
from tests.stores.postgres_schema import to_schema_11 as to_postgres_schema_11
from tests.stores.sqlite_schema import to_schema_11

pytestmark = pytest.mark.anyio

EVE = Tenant(agent_id="assistant", user_id="eve")
"""The user whose scores must not move."""
MALLORY = Tenant(agent_id="assistant", user_id="mallory")
"""Another user of the same agent, writing private notes with the query's words."""
SAM = Tenant(agent_id="assistant", user_id="sam")
"""A third user, who wrote one of the agent's shared notes."""
QUERIES = ["zorblax quintar", "zorblax", "meeting about zorblax", "quintar budget"]


def visible_items() -> list[MemoryItem]:
    """Eve's own notes and the agent's shared ones (one shared note written by sam)."""
    notes = [
        (EVE, "private", "meeting about zorblax"),
        (EVE, "private", "zorblax quintar budget review on monday"),
        (EVE, "private", "groceries: milk, bread and eggs"),
        (EVE, "shared", "the team calendar lists the zorblax launch"),
        (SAM, "shared", "quintar office hours are on friday"),
        *((EVE, "private", f"walked the dog in the park, day {n}") for n in range(6)),
    ]
    return [
        MemoryItem(
            item_id=f"v{n}",
            agent_id=tenant.agent_id,
            user_id=tenant.user_id,
            scope=scope,
            content=content,
            created_at=at(n),
        )
        for n, (tenant, scope, content) in enumerate(notes)
    ]


def private_notes(start: int, stop: int) -> list[MemoryItem]:
    """Mallory's private notes ``start`` to ``stop``, each naming the query's words."""
    return [
        MemoryItem(
            item_id=f"m{n}",
            agent_id=MALLORY.agent_id,
            user_id=MALLORY.user_id,
            content=f"zorblax note {n}: zorblax quintar" + " filler" * (n % 7),
            created_at=at(n),
        )
        for n in range(start, stop)
    ]


async def searches(store: MemoryStore, tenant: Tenant) -> list[list[tuple[str, str, float]]]:
    """Each query's hits for ``tenant``: owner, id and exact score, best first (top 2 and all)."""
    found = []
    for text in QUERIES:
        for limit in (2, 50):
            hits = await store.search(tenant, MemoryQuery(text=text, limit=limit, now=FIXED_NOW))
            found.append([(hit.item.user_id, hit.item.item_id, hit.score) for hit in hits])
    return found


async def test_other_users_private_notes_never_move_a_users_scores(stores: Stores) -> None:
    """Eve's hits and scores are bit for bit the same after mallory stores 1, 10, 1,000 notes."""
    store = stores.episodic
    await store.put_many(visible_items())
    before = await searches(store, EVE)
    assert before[0][0][1] == "v1"
    stored = 0
    for total in (1, 10, 1_000):
        await store.put_many(private_notes(stored, total))
        stored = total
        assert await searches(store, EVE) == before, f"moved after {total} private notes"
    mallory = await searches(store, MALLORY)
    assert mallory[0][0][0] == "mallory"


async def test_a_users_scores_equal_those_of_its_visible_items_alone(stores: Stores) -> None:
    """Beside another user's private notes, a user scores as a store of what it may read."""
    await stores.episodic.put_many([*visible_items(), *private_notes(0, 200)])
    alone = Stores.in_memory().episodic
    await alone.put_many(visible_items())
    assert await searches(stores.episodic, EVE) == await searches(alone, EVE)


async def test_forgetting_private_notes_leaves_a_users_scores(stores: Stores) -> None:
    """Mallory deleting and erasing her private notes leaves eve's scores where they were."""
    store = stores.episodic
    await store.put_many(visible_items())
    before = await searches(store, EVE)
    await store.put_many(private_notes(0, 120))
    await store.delete(MALLORY, [f"m{n}" for n in range(0, 120, 3)])
    assert await searches(store, EVE) == before
    await store.erase(MALLORY)
    assert await searches(store, EVE) == before


async def test_a_note_made_private_leaves_the_other_users_statistics(stores: Stores) -> None:
    """A shared note put again as private stops counting in another user's statistics."""
    store = stores.episodic
    await store.put_many(visible_items()[:4])
    before = await searches(store, EVE)
    shared = visible_items()[4]
    await store.put_many([shared])
    assert await searches(store, EVE) != before
    await store.put_many([shared.model_copy(update={"scope": Scope.PRIVATE})])
    assert await searches(store, SAM) != await searches(store, EVE)
    assert await searches(store, EVE) == before


STATISTICS = (
    "SELECT * FROM episodic_owner_stats ORDER BY agent_id, owner",
    "SELECT * FROM episodic_terms ORDER BY agent_id, owner, term",
)
"""The statistics a search reads, in a fixed order."""


def sqlite_statistics(path: Path) -> list[list[tuple[Any, ...]]]:
    connection = sqlite3.connect(path)
    try:
        return [connection.execute(query).fetchall() for query in STATISTICS]
    finally:
        connection.close()


async def test_a_sqlite_file_at_schema_11_counts_its_statistics_per_owner(tmp_path: Path) -> None:
    """Migration 12 counts a schema-11 file's statistics per owner as a new file's triggers
    count them, and searches count only what their user may read."""
    fresh_path, old_path = tmp_path / "fresh.db", tmp_path / "old.db"
    for path in (fresh_path, old_path):
        stores = sqlite.open_stores(path)
        await stores.episodic.put_many([*visible_items(), *private_notes(0, 150)])
        await stores.aclose()
    connection = sqlite3.connect(old_path, isolation_level=None)
    to_schema_11(connection)
    connection.execute("PRAGMA user_version = 11")
    connection.close()
    migrated = sqlite.open_stores(old_path)
    try:
        got = await searches(migrated.episodic, EVE)
    finally:
        await migrated.aclose()
    alone = Stores.in_memory().episodic
    await alone.put_many(visible_items())
    assert got == await searches(alone, EVE)
    counted = sqlite_statistics(old_path)
    assert counted == sqlite_statistics(fresh_path)
    assert {row[1] for row in counted[0]} == {"", "eve", "mallory"}


async def test_a_postgres_schema_at_version_11_counts_its_statistics_per_owner(
    postgres_dsn: str, postgres_schema: str
) -> None:
    """Migration 12 counts a schema-11 database's statistics per owner as the trigger and the
    bulk writer count them, and searches count only what their user may read."""
    old = postgres.open_stores(postgres_dsn, schema=postgres_schema, max_size=2)
    await old.episodic.put_many([*visible_items(), *private_notes(0, 150)])
    await old.aclose()
    async with schema_connection(postgres_dsn, postgres_schema) as connection:
        fresh = [[tuple(row) for row in await connection.fetch(q)] for q in STATISTICS]
        await to_postgres_schema_11(connection)
        await connection.execute("DELETE FROM schema_migrations WHERE version > 11")
    migrated = postgres.open_stores(postgres_dsn, schema=postgres_schema, max_size=2)
    try:
        got = await searches(migrated.episodic, EVE)
    finally:
        await migrated.aclose()
    alone = Stores.in_memory().episodic
    await alone.put_many(visible_items())
    assert got == await searches(alone, EVE)
    async with schema_connection(postgres_dsn, postgres_schema) as connection:
        assert await pg_migrations.schema_version(connection) == pg_migrations.LATEST
        again = [[tuple(row) for row in await connection.fetch(q)] for q in STATISTICS]
    assert again == fresh
    assert {row[1] for row in again[0]} == {"", "eve", "mallory"}
