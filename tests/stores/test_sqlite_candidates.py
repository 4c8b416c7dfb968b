"""SQLite search candidates are the tenant's own items and the agent's shared ones only.

Another user's items (or another agent's) holding the same words must not
cost a search: the SQL work of a search (SQLite virtual machine steps, which
grow with every row the full-text index hands over, joins and filters) stays
where it was, while the ranking stays the in-memory store's to the bit.
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from prefrontal.retrieval.ranking import query_terms
from prefrontal.stores import MemoryItem, MemoryQuery, Stores, Tenant
from prefrontal.stores.memory import InMemoryMemoryStore
from prefrontal.stores.sqlite import open_stores
from prefrontal.stores.sqlite import topk as ranking
from prefrontal.stores.sqlite.memory_sql import Statements
from prefrontal.stores.sqlite.migrations import LATEST
from prefrontal.stores.tenancy import Scope
from tests.stores.ranked_alike import assert_ranked_alike, random_queries
from tests.stores.sqlite_schema import to_schema_10

pytestmark = pytest.mark.anyio

NOW = datetime(2026, 3, 1, tzinfo=UTC)
WORDS = ("harbour", "ferry", "ticket", "lisbon", "invoice", "dentist", "piano", "garden")
BYSTANDER = Tenant(agent_id="atlas", user_id="bystander")
CROWD = Tenant(agent_id="atlas", user_id="crowd")
STRANGER = Tenant(agent_id="other-agent", user_id="bystander")


def items(tenant: Tenant, count: int, seed: int, *, prefix: str) -> Iterator[MemoryItem]:
    """``count`` items of ``tenant`` made of :data:`WORDS`, one in five shared."""
    rng = random.Random(seed)
    for n in range(count):
        yield MemoryItem(
            item_id=f"{prefix}{n}",
            agent_id=tenant.agent_id,
            user_id=tenant.user_id,
            scope=Scope.SHARED if n % 5 == 0 else Scope.PRIVATE,
            content=" ".join(rng.choices(WORDS, k=rng.randint(1, 6))),
            created_at=NOW - timedelta(minutes=count - n),
        )


def crowding(tenant: Tenant, count: int, *, prefix: str) -> Iterator[MemoryItem]:
    """``count`` tiny private items of ``tenant``, each holding every word."""
    for n in range(count):
        yield MemoryItem(
            item_id=f"{prefix}{n}",
            agent_id=tenant.agent_id,
            user_id=tenant.user_id,
            content=" ".join(WORDS),
            created_at=NOW - timedelta(seconds=n + 1),
        )


def search_steps(path: Path, texts: list[str]) -> int:
    """The virtual machine steps of the bystander's top-5 search of each of ``texts``."""
    connection = sqlite3.connect(path)
    steps = 0

    def count() -> int:
        nonlocal steps
        steps += 1
        return 0

    statements = Statements("episodic")
    params = {"agent": BYSTANDER.agent_id, "user": BYSTANDER.user_id, "now": 0, "kinds": None}
    connection.set_progress_handler(count, 1)
    for text in texts:
        ranking.scores(connection, statements, params, query_terms(text), 5)
    connection.close()
    return steps


async def both(stores: Stores, reference: InMemoryMemoryStore, batch: list[MemoryItem]) -> None:
    await stores.episodic.put_many(batch)
    await reference.put_many(batch)


async def test_other_users_items_add_no_candidates(tmp_path: Path) -> None:
    """3,000 items of another user and 1,000 of another agent, all of the words, cost ~nothing."""
    path = tmp_path / "m.db"
    stores, reference = open_stores(path), InMemoryMemoryStore()
    await both(stores, reference, list(items(BYSTANDER, 40, 1, prefix="b")))
    await both(stores, reference, list(items(CROWD, 10, 2, prefix="s")))
    texts = [" ".join(random.Random(n).sample(WORDS, 3)) for n in range(6)]
    alone = search_steps(path, texts)
    await both(stores, reference, list(crowding(CROWD, 3_000, prefix="c")))
    await both(stores, reference, list(crowding(STRANGER, 1_000, prefix="x")))
    crowded = search_steps(path, texts)
    queries = random_queries(random.Random(5), WORDS, (1, 3, 10, 60), 40, NOW)
    await assert_ranked_alike(reference, stores.episodic, BYSTANDER, queries)
    await stores.aclose()
    # Each of the 4,000 items would take dozens of steps if the index handed it over.
    assert crowded < alone * 2, (alone, crowded)


async def test_a_changed_scope_moves_the_item_in_the_index(tmp_path: Path) -> None:
    """Shared, the item is found by another user of the agent; private again, it is not."""
    stores = open_stores(tmp_path / "m.db")
    other = Tenant(agent_id=CROWD.agent_id, user_id="someone")
    item = next(crowding(CROWD, 1, prefix="c"))
    query = MemoryQuery(text="ferry ticket", now=NOW)
    found = []
    for scope in (Scope.PRIVATE, Scope.SHARED, Scope.PRIVATE):
        await stores.episodic.put(item.model_copy(update={"scope": scope}))
        hits = await stores.episodic.search(other, query)
        found.append([hit.item.item_id for hit in hits])
    mine = await stores.episodic.search(CROWD, query)
    await stores.aclose()
    assert found == [[], ["c0"], []]
    assert [hit.item.item_id for hit in mine] == ["c0"]


async def test_a_file_at_schema_10_gets_every_item_indexed_by_who_may_see_it(
    tmp_path: Path,
) -> None:
    """Migrated, the file ranks as the in-memory store does, for its owner and for others."""
    path = tmp_path / "old.db"
    stores, reference = open_stores(path), InMemoryMemoryStore()
    await both(stores, reference, list(items(BYSTANDER, 60, 3, prefix="b")))
    await both(stores, reference, list(items(CROWD, 60, 4, prefix="c")))
    await stores.aclose()
    connection = sqlite3.connect(path, isolation_level=None)
    to_schema_10(connection)
    connection.execute("PRAGMA user_version = 10")
    connection.close()
    stores = open_stores(path)
    queries = random_queries(random.Random(6), WORDS, (1, 5, 30), 30, NOW)
    for tenant in (BYSTANDER, CROWD):
        await assert_ranked_alike(reference, stores.episodic, tenant, queries)
    await stores.aclose()
    connection = sqlite3.connect(path)
    assert connection.execute("PRAGMA user_version").fetchone()[0] == LATEST
    connection.close()
