"""PostgreSQL store benchmarks at 1,000 and 10,000 episodic items, on the test server.

Run with ``make bench`` or
``pytest tests/benchmarks/test_postgres_bench.py --benchmark-only``. Each
schema is built once per module with bulk ``put_many`` from the
deterministic synthetic corpus (:mod:`prefrontal.testing.synthetic`), owned
by the demo agent and user, and analysed (``ANALYZE``) as autovacuum would
after a bulk load. The server is the throwaway one the tests start
(``fsync`` off): figures for the query path, not for durable writes.
Figures are reported, not asserted.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import asyncpg
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal

from prefrontal.demo import DEMO_AGENT, DEMO_USER, seed
from prefrontal.stores import Stores, Tenant, postgres
from prefrontal.testing.synthetic import memories
from tests.benchmarks.backend_bench import bench_search, bench_whole_turn

SIZES = (1_000, 10_000)
TENANT = Tenant(agent_id=DEMO_AGENT, user_id=DEMO_USER)


@pytest.fixture(scope="module")
def portal() -> Iterator[BlockingPortal]:
    with start_blocking_portal(backend="asyncio") as portal:
        yield portal


@pytest.fixture(scope="module")
def databases(portal: BlockingPortal, postgres_dsn: str) -> Iterator[dict[int, Stores]]:
    """One schema per size, filled in bulk and analysed, with the demo agent seeded."""
    built = {size: portal.call(_build, postgres_dsn, size) for size in SIZES}
    yield built
    for stores in built.values():
        portal.call(stores.aclose)


async def _build(dsn: str, size: int) -> Stores:
    schema = f"bench_{size}"
    stores = postgres.open_stores(dsn, schema=schema)
    items = memories(size, tenant=TENANT)
    while batch := list(itertools.islice(items, 5_000)):
        await stores.episodic.put_many(batch)
    await seed(stores)
    connection = await asyncpg.connect(dsn, server_settings={"search_path": schema})
    try:
        await connection.execute("ANALYZE")
    finally:
        await connection.close()
    return stores


@pytest.mark.parametrize("size", SIZES)
def test_search_top10(
    benchmark: Any, portal: BlockingPortal, databases: dict[int, Stores], size: int
) -> None:
    """Lexical top-10 search for a user's question (200 different ones, round robin)."""
    print(f"\nsearch at {size}: ", end="")
    bench_search(benchmark, portal, databases[size].episodic, TENANT, rounds=200)


def test_whole_turn_on_10k(benchmark, portal: BlockingPortal, databases: dict[int, Stores]) -> None:  # type: ignore[no-untyped-def]
    """One whole turn (all eleven phases, trace written) on the 10,000-item PostgreSQL stores."""
    bench_whole_turn(benchmark, portal, databases[10_000])
