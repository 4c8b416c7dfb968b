"""Erase of a large user on PostgreSQL, and the other users' writes while it runs.

    python -m tests.benchmarks.erase_load --items 50000 --writers 4

Starts a throwaway PostgreSQL server (``tests/postgres_server.py``), fills
one schema with ``--items`` synthetic episodic items of one user of the
agent (``put_many`` in batches of 5,000, then ``VACUUM ANALYZE``), then
erases that user while ``--writers`` other users of the same agent each put
one item after another into episodic memory. Prints JSON: the erase's
seconds and items removed, and the other users' write latency in
milliseconds (p50, p99, max, count) during the erase; figures are
reported, never asserted.
"""

from __future__ import annotations

import argparse
import itertools
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio

from prefrontal.memory import MemoryAPI
from prefrontal.stores import MemoryItem, Tenant, postgres
from prefrontal.testing.synthetic import memories
from tests.benchmarks.latency import report, summary

AGENT = "atlas"
ERASED = Tenant(agent_id=AGENT, user_id="leaving")
START = datetime(2026, 1, 1, tzinfo=UTC)
BATCH = 5_000


async def _fill(dsn: str, schema: str, items: int) -> None:
    import asyncpg

    stores = postgres.open_stores(dsn, schema=schema, max_size=4)
    generated = memories(items, tenant=ERASED, start=START)
    while batch := list(itertools.islice(generated, BATCH)):
        await stores.episodic.put_many(batch)
    await stores.aclose()
    connection = await asyncpg.connect(dsn, server_settings={"search_path": schema})
    await connection.execute("VACUUM ANALYZE")
    await connection.close()


async def _run(dsn: str, schema: str, writers: int) -> dict[str, Any]:
    stores = postgres.open_stores(dsn, schema=schema, max_size=writers + 2)
    api = MemoryAPI(stores, clock=lambda: START)
    latencies: list[float] = []
    erased = anyio.Event()
    outcome: dict[str, Any] = {}

    async def write(n: int) -> None:
        tenant = Tenant(agent_id=AGENT, user_id=f"stays{n}")
        for i in itertools.count():
            if erased.is_set():
                return
            item = MemoryItem(
                item_id=f"w{n}-{i}",
                agent_id=AGENT,
                user_id=tenant.user_id,
                content=f"note {i} of a user who stays, about the harbour",
                created_at=START + timedelta(seconds=i),
            )
            began = time.perf_counter()
            await stores.episodic.put(item)
            latencies.append((time.perf_counter() - began) * 1_000)

    async def erase() -> None:
        await anyio.sleep(0.2)
        began = time.perf_counter()
        report = await api.erase(AGENT, ERASED.user_id)
        outcome["erase_s"] = round(time.perf_counter() - began, 2)
        outcome["removed"] = report.removed["episodic"]
        erased.set()

    async with anyio.create_task_group() as group:
        for n in range(writers):
            group.start_soon(write, n)
        group.start_soon(erase)
    await stores.aclose()
    outcome["writes"] = summary(latencies, digits=1)
    return outcome


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.erase_load")
    parser.add_argument("--items", type=int, default=50_000)
    parser.add_argument("--writers", type=int, default=4)
    args = parser.parse_args(argv)
    from tests.postgres_server import running_server

    with running_server() as server:
        dsn = server.create_database("erase")
        anyio.run(_fill, dsn, "public", args.items)
        figures = anyio.run(_run, dsn, "public", args.writers)
    report({"items": args.items, "writers": args.writers} | figures)


if __name__ == "__main__":
    main()
