"""BM25 statistics are each agent's own: another agent's items never move a search's scores.

Every backend scores a search by agent A with A's item count, A's total
length and the number of A's items holding each term
(:class:`~prefrontal.retrieval.ranking.Corpus`). These tests fill one agent
with items that share the other's query terms and check that the other's
hits and scores do not move, on each backend, and that the durable
backends' kept counts equal a recount per agent and survive migration.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from prefrontal.stores import MemoryItem, MemoryQuery, Stores, Tenant, postgres, sqlite
from prefrontal.stores.long_term import MemoryStore
from prefrontal.stores.postgres import migrations as pg_migrations
from prefrontal.stores.sqlite import migrations as sqlite_migrations
from prefrontal.stores.sqlite.driver import sqlite3
from prefrontal.testing.conformance.base import at
from tests.conftest import FIXED_NOW
from tests.stores.postgres_schema import schema_connection, to_schema_3
from tests.stores.sqlite_schema import to_schema_5

pytestmark = pytest.mark.anyio

QUIET = Tenant(agent_id="quiet-agent", user_id="maya")
"""The agent whose searches must not move."""
BUSY = Tenant(agent_id="busy-agent", user_id="maya")
"""Another agent, with many items holding the same terms, and a user of the same name."""
QUERIES = ["payment review", "dentist appointment friday", "payment", "passport renewal office"]
WORDS = ["payment", "review", "dentist", "appointment", "friday", "passport", "office", "notes"]


def quiet_items() -> list[MemoryItem]:
    """Eight items of the quiet agent, two of them private to another of its users."""
    contents = [
        "The payment review is due next week.",
        "Booked the dentist appointment for Friday morning.",
        "Passport renewal needs a photo and the old passport.",
        "Payment sent to the landlord on the first.",
        "Review the quarterly notes before the meeting.",
        "The dentist moved the appointment to Monday.",
        "Office closed on Friday for the holiday.",
        "Renewal office opens at nine.",
    ]
    return [
        MemoryItem(
            item_id=f"q{n}",
            agent_id=QUIET.agent_id,
            user_id="sam" if n in (3, 6) else QUIET.user_id,
            scope="shared" if n == 5 else "private",
            content=content,
            created_at=at(n),
        )
        for n, content in enumerate(contents)
    ]


def busy_items(count: int, seed: int) -> list[MemoryItem]:
    """``count`` items of the busy agent, of varied lengths, holding the quiet agent's terms."""
    rng = random.Random(seed)
    return [
        MemoryItem(
            item_id=f"q{n}" if n < 8 else f"b{n}",
            agent_id=BUSY.agent_id,
            user_id=BUSY.user_id,
            content=" ".join(rng.choices(WORDS, k=rng.randint(1, 30))),
            created_at=at(n),
        )
        for n in range(count)
    ]


async def searches(store: MemoryStore, tenant: Tenant) -> list[list[tuple[str, float]]]:
    """Each query's hits for ``tenant``: ids and exact scores, best first (top 3 and all)."""
    found = []
    for text in QUERIES:
        for limit in (3, 50):
            query = MemoryQuery(text=text, limit=limit, now=FIXED_NOW)
            hits = await store.search(tenant, query)
            found.append([(hit.item.item_id, hit.score) for hit in hits])
    return found


async def test_another_agents_items_never_move_a_search(stores: Stores) -> None:
    """The quiet agent's hits and scores are the same before and after the busy agent fills up."""
    store = stores.episodic
    await store.put_many(quiet_items())
    before = await searches(store, QUIET)
    await store.put_many(busy_items(400, seed=1))
    during = await searches(store, QUIET)
    await store.delete(BUSY, [f"b{n}" for n in range(8, 200)])
    await store.put_many(busy_items(60, seed=2))
    after = await searches(store, QUIET)
    assert any(hits for hits in before)
    assert during == before
    assert after == before


async def test_a_search_scores_as_if_the_agent_were_alone(stores: Stores) -> None:
    """Beside a busy agent, each agent's scores equal those of a store holding it alone."""
    await stores.episodic.put_many([*busy_items(300, seed=4), *quiet_items()])
    alone_quiet, alone_busy = Stores.in_memory().episodic, Stores.in_memory().episodic
    await alone_quiet.put_many(quiet_items())
    await alone_busy.put_many(busy_items(300, seed=4))
    assert await searches(stores.episodic, QUIET) == await searches(alone_quiet, QUIET)
    assert await searches(stores.episodic, BUSY) == await searches(alone_busy, BUSY)


async def _random_writes(store: MemoryStore, seed: int) -> None:
    """Puts, replacements, supersessions and deletions by two agents, in a random order."""
    rng = random.Random(seed)
    for _ in range(12):
        tenant = rng.choice([QUIET, BUSY])
        batch = [
            MemoryItem(
                item_id=f"r{rng.randrange(60)}",
                agent_id=tenant.agent_id,
                user_id=tenant.user_id,
                content=" ".join(rng.choices(WORDS, k=rng.randint(1, 12))),
                created_at=at(0),
            )
            for _ in range(rng.randint(1, 15))
        ]
        await store.put_many(batch)
        await store.delete(tenant, [f"r{rng.randrange(60)}" for _ in range(rng.randint(0, 5))])
    await store.erase(Tenant(agent_id=BUSY.agent_id, user_id="nobody"))


def _sqlite_counts(path: Path) -> tuple[Any, ...]:
    connection = sqlite3.connect(path)
    try:
        kept = connection.execute(
            "SELECT agent_id, docs, tokens FROM episodic_agent_stats WHERE docs > 0"
            " ORDER BY agent_id"
        ).fetchall()
        counted = connection.execute(
            "SELECT agent_id, count(*), sum(length) FROM episodic_items"
            " GROUP BY agent_id ORDER BY agent_id"
        ).fetchall()
        terms_kept = connection.execute(
            "SELECT agent_id, term, df FROM episodic_terms WHERE df > 0 ORDER BY agent_id, term"
        ).fetchall()
        terms_counted = connection.execute(
            """SELECT agent_id, term, count(*) FROM (
                   SELECT DISTINCT i.rowid, i.agent_id, j.value AS term
                   FROM episodic_items AS i,
                        json_each('["' || replace(i.terms, ' ', '","') || '"]') AS j)
               GROUP BY agent_id, term ORDER BY agent_id, term"""
        ).fetchall()
        return kept, counted, terms_kept, terms_counted
    finally:
        connection.close()


async def test_sqlite_keeps_each_agents_counts_exact(tmp_path: Path) -> None:
    """After random writes by two agents, SQLite's kept statistics equal a recount per agent."""
    stores = sqlite.open_stores(tmp_path / "counts.db")
    try:
        await _random_writes(stores.episodic, seed=11)
    finally:
        await stores.aclose()
    kept, counted, terms_kept, terms_counted = _sqlite_counts(tmp_path / "counts.db")
    assert {agent for agent, *_ in kept} == {QUIET.agent_id, BUSY.agent_id}
    assert kept == counted
    assert terms_kept == terms_counted


async def test_postgres_keeps_each_agents_counts_exact(postgres_stores: Stores) -> None:
    """After random writes by two agents, PostgreSQL's kept statistics equal a recount per agent."""
    await _random_writes(postgres_stores.episodic, seed=11)
    store = postgres_stores.episodic
    assert isinstance(store, postgres.PostgresMemoryStore)

    async def recount(connection: Any) -> tuple[set[tuple[Any, ...]], ...]:
        queries = (
            "SELECT agent_id, docs, tokens FROM episodic_agent_stats WHERE docs > 0",
            "SELECT agent_id, count(*), sum(length) FROM episodic_items GROUP BY agent_id",
            "SELECT agent_id, term, df FROM episodic_terms WHERE df > 0",
            "SELECT agent_id, t, count(*) FROM episodic_items, unnest(terms) AS t"
            " GROUP BY agent_id, t",
        )
        return tuple([{tuple(row) for row in await connection.fetch(q)} for q in queries])

    kept, counted, terms_kept, terms_counted = await store.database.read(recount, store="test")
    assert {row[0] for row in kept} == {QUIET.agent_id, BUSY.agent_id}
    assert kept == counted
    assert terms_kept == terms_counted


async def test_a_sqlite_file_at_version_5_migrates_to_statistics_per_agent(
    tmp_path: Path,
) -> None:
    """A schema-5 file with global statistics opens with per-agent ones, counted as a new file's."""
    fresh_path, old_path = tmp_path / "fresh.db", tmp_path / "old.db"
    for path in (fresh_path, old_path):
        stores = sqlite.open_stores(path)
        await stores.episodic.put_many([*busy_items(200, seed=5), *quiet_items()])
        await stores.aclose()
    connection = sqlite3.connect(old_path, isolation_level=None)
    to_schema_5(connection)
    connection.execute("PRAGMA user_version = 5")
    assert connection.execute("SELECT docs FROM episodic_stats").fetchone() == (208,)
    connection.close()

    migrated = sqlite.open_stores(old_path)
    try:
        got = await searches(migrated.episodic, QUIET)
    finally:
        await migrated.aclose()
    alone = Stores.in_memory().episodic
    await alone.put_many(quiet_items())
    assert got == await searches(alone, QUIET)
    assert _sqlite_counts(old_path) == _sqlite_counts(fresh_path)
    connection = sqlite3.connect(old_path)
    assert sqlite_migrations.schema_version(connection) == sqlite_migrations.LATEST
    connection.close()


async def test_a_postgres_schema_at_version_3_migrates_to_statistics_per_agent(
    postgres_dsn: str, postgres_schema: str
) -> None:
    """A schema-3 database with global statistics migrates to per-agent ones and scores alone."""
    old = postgres.open_stores(postgres_dsn, schema=postgres_schema, max_size=2)
    await old.episodic.put_many([*busy_items(200, seed=5), *quiet_items()])
    await old.aclose()
    async with schema_connection(postgres_dsn, postgres_schema) as connection:
        await to_schema_3(connection)
        await connection.execute("DELETE FROM schema_migrations WHERE version > 3")
        assert await connection.fetchval("SELECT docs FROM episodic_stats") == 208
    migrated = postgres.open_stores(postgres_dsn, schema=postgres_schema, max_size=2)
    try:
        got = await searches(migrated.episodic, QUIET)
        busy = await searches(migrated.episodic, BUSY)
    finally:
        await migrated.aclose()
    alone_quiet, alone_busy = Stores.in_memory().episodic, Stores.in_memory().episodic
    await alone_quiet.put_many(quiet_items())
    await alone_busy.put_many(busy_items(200, seed=5))
    assert got == await searches(alone_quiet, QUIET)
    assert busy == await searches(alone_busy, BUSY)
    async with schema_connection(postgres_dsn, postgres_schema) as connection:
        assert await pg_migrations.schema_version(connection) == pg_migrations.LATEST
        stats = await connection.fetch("SELECT agent_id, docs FROM episodic_agent_stats")
        assert dict(stats) == {QUIET.agent_id: 8, BUSY.agent_id: 200}
