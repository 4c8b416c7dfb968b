"""SQLite store benchmarks at 1,000, 10,000 and 100,000 episodic items.

Run with ``make bench`` or
``pytest tests/benchmarks/test_sqlite_bench.py --benchmark-only``. Each
database is built once per module with bulk ``put_many`` from the
deterministic synthetic corpus (:mod:`prefrontal.testing.synthetic`), owned
by the demo agent and user so that a whole turn searches all of it.
Figures are reported, not asserted. Every call goes through one blocking
portal; ``test_turn_bench.py::test_portal_call_cost`` measures its cost.
"""

from __future__ import annotations

import itertools
import os
import statistics
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal

from prefrontal.demo import DEMO_AGENT, DEMO_USER, seed
from prefrontal.stores import MemoryItem, MemoryStore, Stores, Tenant, sqlite
from prefrontal.stores.sqlite.driver import sqlite3
from prefrontal.testing.synthetic import memories
from tests.benchmarks.backend_bench import bench_search, bench_whole_turn

SIZES = (1_000, 10_000, 100_000)
TENANT = Tenant(agent_id=DEMO_AGENT, user_id=DEMO_USER)
WARM_UP_WRITES = 1_500
"""Enough single writes to fill the WAL once, so adds are measured in steady state."""


@pytest.fixture(scope="module")
def portal() -> Iterator[BlockingPortal]:
    with start_blocking_portal(backend="asyncio") as portal:
        yield portal


@pytest.fixture(scope="module")
def databases(
    portal: BlockingPortal, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[int, Stores]]:
    """One SQLite file per size, filled in bulk, with the demo agent seeded."""
    root = tmp_path_factory.mktemp("sqlite-bench")
    built = {size: portal.call(_build, root / f"bench-{size}.db", size) for size in SIZES}
    yield built
    for stores in built.values():
        portal.call(stores.aclose)


async def _build(path: Path, size: int) -> Stores:
    stores = sqlite.open_stores(path)
    items = memories(size, tenant=TENANT)
    while batch := list(itertools.islice(items, 5_000)):
        await stores.episodic.put_many(batch)
    await seed(stores)
    return stores


def _file_bytes(path: Path) -> tuple[int, int]:
    """The file's size after a checkpoint, and how many episodic items it holds."""
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    (count,) = connection.execute("SELECT count(*) FROM episodic_items").fetchone()
    connection.close()
    size = sum(os.path.getsize(p) for p in (path, Path(f"{path}-wal")) if p.exists())
    return size, count


@pytest.mark.parametrize("size", SIZES)
def test_add(benchmark, portal: BlockingPortal, databases: dict[int, Stores], size: int) -> None:  # type: ignore[no-untyped-def]
    """One durable single-item put (synchronous=FULL, fsync on commit) into a store of ``size``.

    Timed through the portal (its cost included) and, in ``extra_info``,
    inside the event loop as an application sees it.
    """
    store = databases[size].episodic
    fresh = iter(list(memories(WARM_UP_WRITES + 1_000, tenant=TENANT, seed=size + 1, prefix="a")))
    for item in itertools.islice(fresh, WARM_UP_WRITES):
        portal.call(store.put, item)
    in_loop = portal.call(_timed_puts, store, list(itertools.islice(fresh, 500)))
    benchmark.pedantic(lambda: portal.call(store.put, next(fresh)), rounds=500, iterations=1)
    cuts = statistics.quantiles(in_loop, n=100)
    benchmark.extra_info.update(in_loop_p50_ms=cuts[49] * 1e3, in_loop_p95_ms=cuts[94] * 1e3)
    print(f"\nadd at {size}: in the loop p50 {cuts[49] * 1e3:.2f} ms, p95 {cuts[94] * 1e3:.2f} ms")


async def _timed_puts(store: MemoryStore, items: list[MemoryItem]) -> list[float]:
    times = []
    for item in items:
        started = time.perf_counter()
        await store.put(item)
        times.append(time.perf_counter() - started)
    return times


@pytest.mark.parametrize("size", SIZES)
def test_search_top10(
    benchmark: Any, portal: BlockingPortal, databases: dict[int, Stores], size: int
) -> None:
    """Lexical top-10 search for a user's question (200 different ones, round robin)."""
    print(f"\nsearch at {size}: ", end="")
    bench_search(benchmark, portal, databases[size].episodic, TENANT, rounds=600)


@pytest.mark.parametrize("size", SIZES)
def test_bytes_on_disk(benchmark: Any, databases: dict[int, Stores], size: int) -> None:
    """Bytes of the whole database file per 1,000 episodic items (after a WAL checkpoint)."""
    path = databases[size].episodic.database.path  # type: ignore[attr-defined]
    total, count = benchmark.pedantic(_file_bytes, args=(path,), rounds=1, iterations=1)
    per_thousand = total / count * 1_000
    benchmark.extra_info.update(bytes_total=total, bytes_per_1000_items=round(per_thousand))
    print(f"\n{size} items: {total / 1e6:.1f} MB on disk, {per_thousand / 1e3:.0f} kB per 1,000")


def test_whole_turn_on_100k(
    benchmark: Any, portal: BlockingPortal, databases: dict[int, Stores]
) -> None:
    """One whole turn (all eleven phases, trace written) on the 100,000-item SQLite store."""
    bench_whole_turn(benchmark, portal, databases[100_000])
