"""PostgreSQL's lexical top-k: the hits of scoring every match, from a fraction of the holders.

A corpus with a few very common words and many rare ones, of two agents
and two users each with private items, expired and superseded items among
them: every query's hits, scores and order equal the in-memory store's
(which scores every match), at several limits, while the search reads
fewer rows than the query's terms have holders. The per-term bounds the
pruning reads stay bounds through replacements and deletions, migrate from
schema 4, and the holders are found through the GIN index.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import anyio
import pytest

from prefrontal.retrieval.impacts import token
from prefrontal.retrieval.ranking import query_terms
from prefrontal.stores import MemoryItem, MemoryQuery, Tenant, postgres
from prefrontal.stores.memory import InMemoryMemoryStore
from prefrontal.stores.postgres import PostgresDatabase, PostgresMemoryStore, lexical_search, topk
from prefrontal.stores.postgres import migrations as pg_migrations
from prefrontal.stores.postgres.memory_sql import Statements
from prefrontal.stores.postgres.term_keys import key
from prefrontal.stores.postgres.topk import TopK
from prefrontal.testing.conformance.base import at
from tests.conftest import FIXED_NOW
from tests.stores.postgres_schema import schema_connection, to_schema_5

pytestmark = pytest.mark.anyio

ALICE = Tenant(agent_id="agent-1", user_id="alice")
BOB = Tenant(agent_id="agent-1", user_id="bob")
OTHER = Tenant(agent_id="agent-2", user_id="alice")
COMMON = ["meeting", "project", "update", "team"]
RARE = [f"{word}{n}" for n in range(40) for word in ("budget", "review", "launch")]


def corpus(count: int, seed: int) -> list[MemoryItem]:
    """``count`` items per tenant: common words in most, rare ones in few, lengths 1 to 40."""
    rng = random.Random(seed)
    items = []
    for tenant in (ALICE, BOB, OTHER):
        for n in range(count):
            words = rng.choices(COMMON, k=rng.randint(0, 30)) + rng.choices(
                RARE, k=rng.randint(1, 4)
            )
            items.append(
                MemoryItem(
                    item_id=f"{tenant.user_id}-{n}",
                    agent_id=tenant.agent_id,
                    user_id=tenant.user_id,
                    scope="shared" if n % 5 == 0 else "private",
                    content=" ".join(words),
                    created_at=at(n % 50),
                    valid_until=at(0) - timedelta(days=1) if n % 17 == 0 else None,
                )
            )
    newer = [
        item.model_copy(update={"item_id": f"{item.item_id}-v2", "supersedes": item.item_id})
        for item in items[3::23]
    ]
    return items + newer


def queries(count: int, seed: int) -> list[str]:
    """Queries mixing common and rare words, one to five of them."""
    rng = random.Random(seed)
    return [" ".join(rng.choices(COMMON + RARE[:30], k=rng.randint(1, 5))) for _ in range(count)]


@pytest.fixture(autouse=True)
def pruned_top_k(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every lexical search of this module runs the pruned top-k, never the one-statement
    search of few holders (:mod:`prefrontal.stores.postgres.lexical_search`)."""
    monkeypatch.setattr(lexical_search, "MOST_HOLDERS", -1)


@pytest.fixture
async def database(postgres_dsn: str, postgres_schema: str) -> AsyncIterator[PostgresDatabase]:
    database = PostgresDatabase(postgres_dsn, schema=postgres_schema, max_size=2)
    yield database
    await database.aclose()


async def test_the_top_k_equals_scoring_every_match(database: PostgresDatabase) -> None:
    """For every tenant, query and limit, hits, scores and order equal the in-memory store's."""
    items = corpus(300, seed=1)
    memory, store = InMemoryMemoryStore(), PostgresMemoryStore(database)
    await memory.put_many(items)
    await store.put_many(items)
    compared = 0
    for tenant in (ALICE, BOB, OTHER):
        for text in queries(25, seed=2):
            for limit in (1, 3, 10, 40):
                query = MemoryQuery(text=text, limit=limit, now=FIXED_NOW)
                expected = await memory.search(tenant, query)
                got = await store.search(tenant, query)
                assert [(h.item.item_id, h.item.user_id, h.score) for h in got] == [
                    (h.item.item_id, h.item.user_id, h.score) for h in expected
                ], (tenant, text, limit)
                assert [h.signals for h in got] == [h.signals for h in expected]
                compared += len(expected)
    assert compared > 1_000


def reads_of(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The statements of the top-k's reads from now on, one per read, in order."""
    statements: list[str] = []
    original = TopK._score

    async def spy(self: TopK, statement: str, *args: Any, **options: Any) -> None:
        statements.append(statement)
        await original(self, statement, *args, **options)

    monkeypatch.setattr(TopK, "_score", spy)
    return statements


async def test_reads_by_impact_class_equal_scoring_every_match(
    database: PostgresDatabase, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every term read class by class from the first: the hits of scoring every match still."""
    monkeypatch.setattr(topk, "CLASSES_PAST", 0)
    statements = reads_of(monkeypatch)
    items = corpus(200, seed=4)
    memory, store = InMemoryMemoryStore(), PostgresMemoryStore(database)
    await memory.put_many(items)
    await store.put_many(items)
    for text in queries(40, seed=6):
        for limit in (1, 5, 25):
            query = MemoryQuery(text=text, limit=limit, now=FIXED_NOW)
            expected, got = await memory.search(ALICE, query), await store.search(ALICE, query)
            assert [(h.item.item_id, h.score) for h in got] == [
                (h.item.item_id, h.score) for h in expected
            ], (text, limit)
    by_class = Statements("episodic").class_holders
    assert statements.count(by_class) > 100, len(statements)


async def test_a_common_query_reads_fewer_rows_than_its_terms_have_holders(
    database: PostgresDatabase,
) -> None:
    """The top 10 of a query of common words is found reading a fraction of their holders."""
    store = PostgresMemoryStore(database)
    await store.put_many(corpus(600, seed=3))
    keys = [key(term) for term in query_terms("meeting project budget3")]
    params = (ALICE.agent_id, ALICE.user_id, FIXED_NOW, None)

    async def run(connection: Any) -> tuple[int, int, int]:
        search = TopK(Statements("episodic"), connection, params, keys)
        found = await search.scores(10)
        holders = await connection.fetchval(
            "SELECT count(*) FROM episodic_items WHERE agent_id = $1 AND terms && $2::text[]",
            ALICE.agent_id,
            keys,
        )
        return search.fetched, int(holders), len(found)

    fetched, holders, found = await database.read(run, store="test")
    assert found >= 10
    assert fetched < holders / 3, (fetched, holders)


@pytest.mark.parametrize(
    "text",
    [
        "meeting project",
        # more terms than the SQL scores (REACH_SLOTS): the rest add their bounds
        "meeting project update team " + " ".join(RARE[:12]),
    ],
)
async def test_holders_that_cannot_reach_are_left_out_in_sql_with_the_same_hits(
    database: PostgresDatabase, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    """Once k items are scored, SQL leaves out what cannot reach: fewer rows, the same top k."""
    monkeypatch.setattr(topk, "RARE_TOGETHER", 0)  # every term read on its own
    memory, store = InMemoryMemoryStore(), PostgresMemoryStore(database)
    items = corpus(600, seed=8)
    await memory.put_many(items)
    await store.put_many(items)
    keys = sorted({key(term) for term in query_terms(text)})
    params = (ALICE.agent_id, ALICE.user_id, FIXED_NOW, None)

    for limit in (3, 20):
        query = MemoryQuery(text=text, limit=limit, now=FIXED_NOW)
        expected = [(h.item.item_id, h.score) for h in await memory.search(ALICE, query)]
        got = [(h.item.item_id, h.score) for h in await store.search(ALICE, query)]
        assert got == expected, (text, limit)
    filtered = [await _fetched(database, params, keys, limit) for limit in (3, 20)]
    monkeypatch.setattr(TopK, "_reach", lambda self, terms: (None, None, None, None))
    unfiltered = [await _fetched(database, params, keys, limit) for limit in (3, 20)]
    assert sum(filtered) < sum(unfiltered), (filtered, unfiltered)


async def test_rare_terms_read_together_give_the_same_hits_in_fewer_round_trips(
    database: PostgresDatabase, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before k items are scored, the holders of the rarest terms come in one read."""
    store = PostgresMemoryStore(database)
    await store.put_many(corpus(300, seed=12))
    text = " ".join(RARE[:10]) + " meeting"
    query = MemoryQuery(text=text, limit=50, now=FIXED_NOW)
    reads = reads_of(monkeypatch)
    together = [(h.item.item_id, h.score) for h in await store.search(ALICE, query)]
    reads_together = len(reads)
    reads.clear()
    monkeypatch.setattr(topk, "RARE_TOGETHER", 0)
    apart = [(h.item.item_id, h.score) for h in await store.search(ALICE, query)]
    assert together == apart
    assert len(together) == 50
    assert reads_together < len(reads), (reads_together, len(reads))


async def _fetched(
    database: PostgresDatabase, params: tuple[Any, ...], keys: list[str], limit: int
) -> int:
    """How many rows the top ``limit`` of ``keys`` read."""

    async def run(connection: Any) -> int:
        search = TopK(Statements("episodic"), connection, params, keys)
        await search.scores(limit)
        return search.fetched

    fetched: int = await database.read(run, store="test")
    return fetched


async def test_the_bounds_stay_bounds_through_replacements_and_deletions(
    database: PostgresDatabase,
) -> None:
    """After items are replaced with other text and deleted, every kept bound still holds."""
    rng = random.Random(5)
    store = PostgresMemoryStore(database)
    for round_ in range(4):
        batch = corpus(80, seed=10 + round_)
        await store.put_many(rng.sample(batch, 150))
        await store.delete(ALICE, [f"alice-{n}" for n in rng.sample(range(80), 20)])

    async def violations(connection: Any) -> list[Any]:
        return list(
            await connection.fetch(
                """SELECT v.agent_id, v.term FROM episodic_terms AS v
                   JOIN (SELECT m.agent_id, u.t, count(*) AS df, max(u.c) AS max_tf,
                             CASE m.scope WHEN 'shared' THEN '' ELSE m.user_id END AS owner,
                             min(CASE u.c WHEN 1 THEN m.length END) AS once,
                             min(CASE u.c WHEN 2 THEN m.length END) AS twice,
                             min(CASE WHEN u.c >= 3 THEN m.length END) AS more
                         FROM episodic_items AS m, unnest(m.terms, m.counts) AS u(t, c)
                         GROUP BY m.agent_id, owner, u.t) AS r
                     ON r.agent_id = v.agent_id AND r.owner = v.owner AND r.t = v.term
                   WHERE v.df <> r.df OR v.max_tf < r.max_tf
                      OR v.min_length_1 > r.once OR (v.min_length_1 IS NULL AND r.once IS NOT NULL)
                      OR v.min_length_2 > r.twice OR (v.min_length_2 IS NULL AND r.twice IS NOT NULL)
                      OR v.min_length_3 > r.more OR (v.min_length_3 IS NULL AND r.more IS NOT NULL)"""
            )
        )

    assert await database.read(violations, store="test") == []


async def test_a_schema_at_version_4_gains_its_bounds(
    postgres_dsn: str, postgres_schema: str
) -> None:
    """Migration 5 counts the bounds of a schema-4 database from its items; search is exact."""
    items = corpus(100, seed=7)
    old = postgres.open_stores(postgres_dsn, schema=postgres_schema, max_size=2)
    await old.episodic.put_many(items)
    await old.aclose()
    async with schema_connection(postgres_dsn, postgres_schema) as connection:
        fresh = await connection.fetch(
            "SELECT * FROM episodic_terms ORDER BY agent_id, owner, term"
        )
        await to_schema_5(connection)
        for name in ("episodic", "semantic"):
            await connection.execute(pg_migrations._agent_index_function(name))
            await connection.execute(
                f"""ALTER TABLE {name}_terms DROP COLUMN max_tf, DROP COLUMN min_length_1,
                    DROP COLUMN min_length_2, DROP COLUMN min_length_3"""
            )
        await connection.execute("DELETE FROM schema_migrations WHERE version > 4")
    migrated = postgres.open_stores(postgres_dsn, schema=postgres_schema, max_size=2)
    memory = InMemoryMemoryStore()
    await memory.put_many(items)
    try:
        for text in queries(10, seed=8):
            query = MemoryQuery(text=text, limit=5, now=FIXED_NOW)
            got = await migrated.episodic.search(ALICE, query)
            expected = await memory.search(ALICE, query)
            assert [(h.item.item_id, h.score) for h in got] == [
                (h.item.item_id, h.score) for h in expected
            ]
    finally:
        await migrated.aclose()
    async with schema_connection(postgres_dsn, postgres_schema) as connection:
        assert await pg_migrations.schema_version(connection) == pg_migrations.LATEST
        again = await connection.fetch(
            "SELECT * FROM episodic_terms ORDER BY agent_id, owner, term"
        )
        assert [tuple(row) for row in again] == [tuple(row) for row in fresh]


async def test_a_schema_at_version_5_gains_the_impact_tokens_new_rows_are_written_with(
    postgres_dsn: str, postgres_schema: str
) -> None:
    """Migration 6 fills the tokens in SQL exactly as a write computes them in Python."""
    items = [
        *corpus(60, seed=12),
        MemoryItem(
            item_id="long",
            agent_id="agent-1",
            user_id="alice",
            content="word " * 39_000,
            created_at=at(0),
        ),
    ]
    stores = postgres.open_stores(postgres_dsn, schema=postgres_schema, max_size=2)
    await stores.episodic.put_many(items)
    await stores.aclose()
    query = "SELECT item_id, impacts, agent_id, user_id FROM episodic_items ORDER BY 3, 1, 4"
    async with schema_connection(postgres_dsn, postgres_schema) as connection:
        written = [tuple(row) for row in await connection.fetch(query)]
        await to_schema_5(connection)
        await connection.execute("DELETE FROM schema_migrations WHERE version > 5")
    migrated = postgres.open_stores(postgres_dsn, schema=postgres_schema, max_size=2)
    await migrated.episodic.search(ALICE, MemoryQuery(text="meeting", now=FIXED_NOW))
    await migrated.aclose()
    async with schema_connection(postgres_dsn, postgres_schema) as connection:
        assert [tuple(row) for row in await connection.fetch(query)] == written
    assert any(row[0] == "long" and row[1] for row in written)
    assert sum(len(row[1]) for row in written) > 500


async def plan_of(database: PostgresDatabase, statement: str, *params: Any) -> list[str]:
    """The plan of ``statement`` for ALICE's search now, after ``ANALYZE``, with ``params`` after."""

    async def explain(connection: Any) -> list[str]:
        await connection.execute("ANALYZE episodic_items")
        tenant = (ALICE.agent_id, ALICE.user_id, FIXED_NOW, None)
        rows = await connection.fetch(f"EXPLAIN {statement}", *tenant, *params)
        return [row[0] for row in rows]

    return await database.write(explain, store="test")


@pytest.fixture(scope="module")
def planned(postgres_dsn: str) -> str:
    """A schema holding ``corpus(3_000, seed=9)``, every 600th item also holding "zeppelin":
    filled once for the module's plan checks, which only read it."""
    items = corpus(3_000, seed=9)
    for n in range(0, 3_000, 600):
        items[n] = items[n].model_copy(update={"content": f"{items[n].content} zeppelin"})

    async def fill() -> None:
        database = PostgresDatabase(postgres_dsn, schema="planned", max_size=2)
        try:
            await PostgresMemoryStore(database).put_many(items)
        finally:
            await database.aclose()

    anyio.run(fill)
    return "planned"


@contextlib.asynccontextmanager
async def reading(postgres_dsn: str, schema: str) -> AsyncIterator[PostgresDatabase]:
    database = PostgresDatabase(postgres_dsn, schema=schema, max_size=2)
    try:
        yield database
    finally:
        await database.aclose()


async def test_the_holders_are_found_through_the_term_index(
    postgres_dsn: str, planned: str
) -> None:
    """The top-k's read of a rare term's holders among 9,000 items uses the GIN index, no scan.

    The index of visible keys (each term behind who may see the item)."""
    keys = [key(term) for term in query_terms("zeppelin meeting")]
    reach = (keys, [2.2] * len(keys), 10.0, 1.0)  # the terms scored in SQL, a need of 1.0
    async with reading(postgres_dsn, planned) as database:
        plan = await plan_of(
            database, Statements("episodic").holders, keys, key("zeppelin"), [], None, [], *reach
        )
    assert not any("Seq Scan" in line for line in plan), "\n".join(plan)
    assert any("episodic_by_visible" in line for line in plan), "\n".join(plan)


async def test_a_common_terms_best_classes_are_found_through_the_impact_index(
    postgres_dsn: str, planned: str
) -> None:
    """The read of the few short holders of a term most of 9,000 items hold uses the GIN index."""
    meeting = key("meeting")
    tokens = [token(meeting, 3, n) for n in (1, 2, 3)]
    reach = ([meeting], [2.2], 10.0, 1.0)  # the term scored in SQL, a need of 1.0
    async with reading(postgres_dsn, planned) as database:
        plan = await plan_of(
            database, Statements("episodic").class_holders, [meeting], tokens, [], None, *reach
        )
    assert not any("Seq Scan" in line for line in plan), "\n".join(plan)
    assert any("episodic_by_visible" in line for line in plan), "\n".join(plan)
