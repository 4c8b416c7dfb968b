"""SQLite's set-wise ``put_many``: the same database as one ``put`` after another.

A batch mixing new items of two agents and three users, items that replace
stored ones or ones earlier in the batch, items that supersede others,
vectors and terms held once, twice and three times or more, is written by
``put_many`` into one file and item by item into another: every row of the
items, their change stamps, the per-agent and per-term statistics, both
FTS5 indexes (each entry with its position) and search results are the
same. Erasing a user after a bulk load leaves none of their rows nor words;
a batch that fails leaves nothing written and the insert triggers in place.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from prefrontal.retrieval.embedder import HashingEmbedder
from prefrontal.stores.long_term import MemoryQuery
from prefrontal.stores.sqlite import open_stores
from prefrontal.stores.sqlite.bulk import AT_LEAST, BulkWriter
from prefrontal.stores.sqlite.driver import sqlite3
from prefrontal.stores.sqlite.memory import SqliteMemoryStore
from prefrontal.stores.sqlite.migrations import insert_triggers, migrate
from tests.stores.bulk_batch import (
    NOW,
    TENANTS,
    batch,
    item,
    one_run,
    searched,
    stored,
    written,
)

pytestmark = pytest.mark.anyio


def dump(path: Path, name: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row that describes ``name``'s items, indexes and statistics, in a fixed order."""
    with sqlite3.connect(path) as connection:
        for index in ("fts", "impacts"):
            connection.execute(
                f"CREATE VIRTUAL TABLE temp.{index} USING fts5vocab(main, {name}_{index}, instance)"
            )
        queries = {
            "items": f"SELECT * FROM {name}_items ORDER BY rowid",
            "terms": f"SELECT * FROM {name}_terms ORDER BY agent_id, owner, term",
            "agents": f"SELECT * FROM {name}_agent_stats ORDER BY agent_id",
            "owners": f"SELECT * FROM {name}_owner_stats ORDER BY agent_id, owner",
            "stats": f"SELECT * FROM {name}_stats",
            "gone": f"SELECT * FROM {name}_gone ORDER BY changed",
            "fts": "SELECT * FROM temp.fts ORDER BY term, doc, col, offset",
            "impacts": "SELECT * FROM temp.impacts ORDER BY term, doc, col, offset",
        }
        return {key: connection.execute(sql).fetchall() for key, sql in queries.items()}


async def search_all(path: Path, name: str) -> list[list[tuple[str, str, float]]]:
    stores = open_stores(path)
    found = await searched(stores.episodic if name == "episodic" else stores.semantic)
    await stores.aclose()
    return found


@pytest.mark.parametrize("name", ["episodic", "semantic"])
async def test_put_many_leaves_what_puts_one_by_one_leave(tmp_path: Path, name: str) -> None:
    """Rows, stamps, statistics, FTS5 entries and search results are the same."""
    rng = random.Random(40)
    before, items = stored(rng), batch(rng)
    for path, bulk in ((tmp_path / "bulk.db", True), (tmp_path / "single.db", False)):
        stores = open_stores(path)
        store = stores.episodic if name == "episodic" else stores.semantic
        await written(store, before, items, bulk=bulk)
        await stores.aclose()
    bulk_rows, single_rows = dump(tmp_path / "bulk.db", name), dump(tmp_path / "single.db", name)
    assert len(bulk_rows["items"]) == len({(i.agent_id, i.item_id, i.user_id) for i in items}) + 9
    assert any(row[3] == 3 for row in bulk_rows["terms"])  # a term held three times
    for key, rows in single_rows.items():
        assert bulk_rows[key] == rows, key
    assert await search_all(tmp_path / "bulk.db", name) == await search_all(
        tmp_path / "single.db", name
    )


def test_the_writer_knows_every_insert_trigger(tmp_path: Path) -> None:
    """On a new file the bulk path runs: the insert triggers are the ones it does the work of."""
    with sqlite3.connect(tmp_path / "new.db") as connection:
        migrate(connection)
        for name in ("episodic", "semantic"):
            found = BulkWriter(name).ready(connection)
            assert found is not None and dict(found) == insert_triggers(name)


async def test_new_items_are_written_set_wise(tmp_path: Path) -> None:
    """A run of new items is one insert statement, with the triggers dropped around it."""
    path = tmp_path / "traced.db"
    stores = open_stores(path)
    await stores.episodic.put_many(stored(random.Random(1)))
    await stores.aclose()
    traced: list[str] = []
    with sqlite3.connect(path, isolation_level=None) as connection:
        connection.set_trace_callback(traced.append)
        store = open_stores(path).episodic
        assert isinstance(store, SqliteMemoryStore)
        connection.execute("BEGIN IMMEDIATE")
        store.put_in(connection, batch(random.Random(2))[: 2 * AT_LEAST])
        connection.execute("COMMIT")
    inserts = [s for s in traced if s.lstrip().startswith("INSERT INTO episodic_items")]
    assert len(inserts) == 2 * AT_LEAST  # executemany traces each row of one statement
    assert all("ON CONFLICT" not in s for s in inserts)
    assert sum(s.startswith("DROP TRIGGER") for s in traced) == len(insert_triggers("episodic"))
    with sqlite3.connect(path) as connection:
        assert BulkWriter("episodic").ready(connection) is not None


async def test_erase_after_a_bulk_load_leaves_nothing_of_the_user(tmp_path: Path) -> None:
    """No row and no word of the erased user: the delete triggers undo what the bulk path did."""
    path = tmp_path / "erase.db"
    stores = open_stores(path)
    rng = random.Random(3)
    alice, bob = TENANTS[0], TENANTS[1]
    items = [item(rng, n, alice if n % 2 else bob) for n in range(4 * AT_LEAST)]
    await stores.episodic.put_many(items)
    assert await stores.episodic.erase(alice) == 2 * AT_LEAST
    await stores.aclose()
    rows = dump(path, "episodic")
    assert {row[3] for row in rows["items"]} == {"bob"}
    assert "aliceonlyword" not in {row[1] for row in rows["terms"]}
    assert not [row for row in rows["fts"] if row[0] == "aliceonlyword"]
    assert not [row for row in rows["impacts"] if row[0].endswith("aliceonlyword")]
    assert {row[1] for row in rows["fts"]} == {row[0] for row in rows["items"]}
    assert {row[1] for row in rows["impacts"]} == {row[0] for row in rows["items"]}
    bob_only = [i for i in items if i.user_id == "bob"]
    assert rows["agents"] == [("atlas", len(bob_only), sum(r[16] for r in rows["items"]))]


async def test_a_failed_run_keeps_the_triggers_and_rolls_back(tmp_path: Path) -> None:
    """A statement of the set-wise run fails: the triggers are back, and the rollback undoes all."""
    path = tmp_path / "failed.db"
    with sqlite3.connect(path) as connection:
        migrate(connection)
    store = open_stores(path).episodic
    assert isinstance(store, SqliteMemoryStore)
    store._bulk._fts = "SELECT no_such_function(?)"
    items = one_run(4)
    with sqlite3.connect(path, isolation_level=None) as connection:
        connection.execute("BEGIN IMMEDIATE")
        with pytest.raises(sqlite3.OperationalError, match="no_such_function"):
            store.put_in(connection, items)
        assert BulkWriter("episodic").ready(connection) is not None
        connection.execute("ROLLBACK")
        assert connection.execute("SELECT count(*) FROM episodic_items").fetchone() == (0,)
    stores = open_stores(path)
    await stores.episodic.put_many(items)
    await stores.aclose()
    rows = dump(path, "episodic")
    assert len(rows["items"]) == len({row[1] for row in rows["fts"]}) == 2 * AT_LEAST


def test_a_row_stores_each_vector_as_the_float32_bytes_numpy_gives() -> None:
    """The bytes a row binds for a vector are ``to_blob``'s, float for float: rounding edges,
    subnormals, overflow to infinity, signed zeros and NaN."""
    import math
    import random

    import numpy as np

    from prefrontal.retrieval.vectors import float32_bytes, to_blob

    rng = random.Random(3)
    edges = [0.0, -0.0, 1e-45, 1.4e-45, 3.4028235e38, 3.5e38, -1e39, math.inf, -math.inf]
    edges += [1 + 2**-24, 1 + 3 * 2**-24, 2**-149, 2**-150, 1 / 3, math.nan]
    vectors = [edges, [rng.uniform(-1, 1) for _ in range(384)], [rng.gauss(0, 1e-30)] * 8]
    for vector in vectors:
        with np.errstate(over="ignore"):  # NumPy warns of the overflow it gives
            assert float32_bytes(vector) == to_blob(vector)


async def test_a_store_that_embeds_a_bulk_load_searches_as_after_puts(tmp_path: Path) -> None:
    """Items without vectors into stores with a hashing embedder: ``put_many`` embeds the batch
    at once, ``put`` one text at a time; the rows (vectors included) are the same, and so are
    the lexical and the hybrid hits of every tenant."""
    embedder = HashingEmbedder(16)
    rng = random.Random(41)
    items = [
        item(rng, n, TENANTS[n % 3]).model_copy(update={"embedding": None})
        for n in range(3 * AT_LEAST)
    ]
    for path, bulk in ((tmp_path / "bulk.db", True), (tmp_path / "single.db", False)):
        stores = open_stores(path, embedder=embedder)
        await written(stores.episodic, [], items, bulk=bulk)
        await stores.aclose()
    bulk_rows, single_rows = (
        dump(tmp_path / "bulk.db", "episodic"),
        dump(tmp_path / "single.db", "episodic"),
    )
    assert all(len(row[17]) == 4 * 16 for row in bulk_rows["items"])  # each embedding
    assert bulk_rows == single_rows

    async def hits(path: Path, with_embedder: bool) -> list[list[tuple[str, str, float]]]:
        stores = open_stores(path, embedder=embedder if with_embedder else None)
        found = []
        for tenant in TENANTS:
            for text in ("invoice payment", "launch review urgent", "alice onlyword", "plan"):
                query = MemoryQuery(text=text, limit=10, now=NOW)
                got = await stores.episodic.search(tenant, query)
                found.append([(h.item.item_id, h.item.user_id, round(h.score, 9)) for h in got])
        await stores.aclose()
        return found

    for hybrid in (False, True):
        assert await hits(tmp_path / "bulk.db", hybrid) == await hits(
            tmp_path / "single.db", hybrid
        )
        assert any(await hits(tmp_path / "bulk.db", hybrid))
