"""Databases indexed by the English-only analyser are analysed anew when they migrate.

A SQLite file at schema version 3 and a PostgreSQL schema at version 2 hold
items whose stored terms are what the English-only analyser made of them
(``café`` stayed ``café``; a Chinese sentence was one term). Opened by the
current stores, they are found as freshly written ones are, with the same
scores, and their term statistics agree with a database filled anew.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import asyncpg
import pytest
import snowballstemmer

from prefrontal.retrieval.analysis import STOP_WORDS
from prefrontal.stores import MemoryItem, MemoryQuery, Stores, Tenant, postgres, sqlite
from prefrontal.stores.memory_search import searchable_text
from prefrontal.stores.postgres import migrations as pg_migrations
from prefrontal.stores.postgres.term_keys import key
from prefrontal.stores.sqlite import migrations as sqlite_migrations
from prefrontal.stores.sqlite.driver import sqlite3
from prefrontal.testing.conformance.base import at
from tests.conftest import FIXED_NOW
from tests.stores.postgres_schema import to_schema_3
from tests.stores.sqlite_schema import to_schema_4

pytestmark = pytest.mark.anyio
TENANT = Tenant(agent_id="agent-1", user_id="alice")
_PORTER = snowballstemmer.stemmer("porter")
CONTENTS = [
    "We met at the café near the station.",
    "我的护照下个月在北京到期。",
    "Favourite food: 🍕 with extra cheese.",
    "The quarterly payment review is due next week.",
]
ITEMS = [
    MemoryItem(
        item_id=f"m{n}",
        agent_id=TENANT.agent_id,
        user_id=TENANT.user_id,
        content=content,
        created_at=at(n),
    )
    for n, content in enumerate(CONTENTS)
]
QUERIES = ["cafe", "护照到期", "🍕", "payment review"]


def english_only_terms(item: MemoryItem) -> list[str]:
    """What the analyser made of an item before other languages were handled."""
    words = re.findall(r"[^\W_]+", searchable_text(item).lower())
    return [s for w in words if w not in STOP_WORDS and (s := _PORTER.stemWord(w))]


async def _results(stores: Stores) -> list[list[tuple[str, float]]]:
    out = []
    for text in QUERIES:
        hits = await stores.episodic.search(TENANT, MemoryQuery(text=text, limit=4, now=FIXED_NOW))
        out.append([(hit.item.item_id, hit.score) for hit in hits])
    return out


async def _fresh(stores: Stores) -> list[list[tuple[str, float]]]:
    await stores.episodic.put_many(ITEMS)
    return await _results(stores)


async def test_a_sqlite_file_at_version_3_is_analysed_anew(tmp_path: Path) -> None:
    """After migrating, every query finds its item first, scored as in a file filled anew."""
    expected = await _fresh(sqlite.open_stores(tmp_path / "fresh.db"))
    old = sqlite.open_stores(tmp_path / "old.db")
    await old.episodic.put_many(ITEMS)
    await old.aclose()
    connection = sqlite3.connect(tmp_path / "old.db", isolation_level=None)
    for item in ITEMS:
        analysed = english_only_terms(item)
        connection.execute(
            "UPDATE episodic_items SET terms = ?, length = ? WHERE item_id = ?",
            (" ".join(analysed), len(analysed), item.item_id),
        )
    to_schema_4(connection)
    connection.execute("PRAGMA user_version = 3")
    (stale,) = connection.execute(
        "SELECT terms FROM episodic_items WHERE item_id = 'm0'"
    ).fetchone()
    connection.close()
    assert "café" in stale.split()
    migrated = sqlite.open_stores(tmp_path / "old.db")
    try:
        assert await _results(migrated) == expected
    finally:
        await migrated.aclose()
    assert [hits[0][0] for hits in expected] == ["m0", "m1", "m2", "m3"]
    connection = sqlite3.connect(tmp_path / "old.db")
    assert sqlite_migrations.schema_version(connection) == sqlite_migrations.LATEST
    (terms,) = connection.execute(
        "SELECT terms FROM episodic_items WHERE item_id = 'm0'"
    ).fetchone()
    connection.close()
    assert "cafe" in terms.split()


async def test_a_postgres_schema_at_version_2_is_analysed_anew(
    postgres_dsn: str, postgres_schema: str
) -> None:
    """After migrating, every query finds its item first, scored as in a schema filled anew."""
    expected = await _fresh(Stores.in_memory())
    old = postgres.open_stores(postgres_dsn, schema=postgres_schema, max_size=2)
    await old.episodic.put_many(ITEMS)
    await old.aclose()
    connection = await asyncpg.connect(
        postgres_dsn, server_settings={"search_path": postgres_schema}
    )
    try:
        await to_schema_3(connection)
        for item in ITEMS:
            counts = sorted(Counter(key(t) for t in english_only_terms(item)).items())
            await connection.execute(
                "UPDATE episodic_items SET terms = $1, counts = $2, length = $3 WHERE item_id = $4",
                [t for t, _ in counts],
                [c for _, c in counts],
                sum(c for _, c in counts),
                item.item_id,
            )
        await connection.execute("DELETE FROM schema_migrations WHERE version > 2")
        stale = await connection.fetchval("SELECT terms FROM episodic_items WHERE item_id = 'm0'")
        assert "café" in stale
    finally:
        await connection.close()
    migrated = postgres.open_stores(postgres_dsn, schema=postgres_schema, max_size=2)
    try:
        assert await _results(migrated) == expected
    finally:
        await migrated.aclose()
    connection = await asyncpg.connect(
        postgres_dsn, server_settings={"search_path": postgres_schema}
    )
    try:
        assert await pg_migrations.schema_version(connection) == pg_migrations.LATEST
    finally:
        await connection.close()
