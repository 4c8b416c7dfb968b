"""SQLite search candidates are the tenant's own items and the agent's shared ones only.

Another user's items (or another agent's) holding the same words must not
cost a search: the SQL work of a search (SQLite virtual machine steps, which
grow with every row the full-text index hands over, joins and filters) stays
where it was, while the ranking stays the in-memory store's to the bit.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from prefrontal.retrieval.ranking import query_terms
from prefrontal.stores import MemoryItem, MemoryQuery, Stores, Tenant
from prefrontal.stores.memory import InMemoryMemoryStore
from prefrontal.stores.sqlite import open_stores
from prefrontal.stores.sqlite import topk as ranking
from prefrontal.stores.sqlite.driver import sqlite3
from prefrontal.stores.sqlite.memory_sql import Statements
from prefrontal.stores.sqlite.migrations import LATEST
from prefrontal.stores.tenancy import Scope
from prefrontal.testing.synthetic import FEW_WORDS as WORDS
from prefrontal.testing.synthetic import worded
from tests.stores.ranked_alike import assert_ranked_alike, random_queries
from tests.stores.sqlite_schema import to_schema_10

pytestmark = pytest.mark.anyio

NOW = datetime(2026, 3, 1, tzinfo=UTC)
START = NOW - timedelta(days=1)
CROWD_START, BACK = NOW - timedelta(seconds=1), timedelta(seconds=-1)
"""The crowd's items: a second apart, back from a second before :data:`NOW`."""
BYSTANDER = Tenant(agent_id="atlas", user_id="bystander")
CROWD = Tenant(agent_id="atlas", user_id="crowd")
STRANGER = Tenant(agent_id="other-agent", user_id="bystander")


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
    await both(
        stores, reference, list(worded(40, tenant=BYSTANDER, seed=1, prefix="b", start=START))
    )
    await both(stores, reference, list(worded(10, tenant=CROWD, seed=2, prefix="s", start=START)))
    texts = [" ".join(random.Random(n).sample(WORDS, 3)) for n in range(6)]
    alone = search_steps(path, texts)
    await both(
        stores,
        reference,
        list(worded(3_000, tenant=CROWD, prefix="c", start=CROWD_START, step=BACK)),
    )
    await both(
        stores,
        reference,
        list(worded(1_000, tenant=STRANGER, prefix="x", start=CROWD_START, step=BACK)),
    )
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
    item = next(worded(1, tenant=CROWD, prefix="c", start=CROWD_START, step=BACK))
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
    await both(
        stores, reference, list(worded(60, tenant=BYSTANDER, seed=3, prefix="b", start=START))
    )
    await both(stores, reference, list(worded(60, tenant=CROWD, seed=4, prefix="c", start=START)))
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
