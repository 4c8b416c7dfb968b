"""Forget and erase of one small user beside a large one, and another user's writes meanwhile.

    python -m tests.benchmarks.forget_load --items 50000 --backend sqlite
    python -m tests.benchmarks.forget_load --items 200000 --backend postgres

Fills one SQLite file, or one schema of a throwaway PostgreSQL server
(``tests/postgres_server.py``; ``VACUUM ANALYZE`` after the fill), with
``--items`` synthetic episodic items of one user of the agent and 25 of a
small user. Then, on the same stores: 50 idle writes of a third user; 3
forgets of the small user's items alone (where SQLite's full-text indexes
delete in place, :mod:`prefrontal.stores.sqlite.driver`, a forget touches a
few pages; otherwise each forget and the erase optimise them whole); 20
forgets of the small user's items while that user writes one item after
another; the erase of the small user. Last, the cost of the erasure check
every insert makes (:mod:`prefrontal.stores.erasures`): idle writes with
the episodic table's erasure trigger and without it, in alternating blocks
of the same run. Prints JSON: forget seconds (median, max), erase seconds,
the writer's latency in milliseconds (p50, p99, max) idle and during the
forgets with p99 during over p99 idle, and the write p50 with and without
the check. Figures are reported, never asserted.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio

from prefrontal import Stores
from prefrontal.memory import MemoryAPI
from prefrontal.stores import MemoryItem, Tenant, postgres, sqlite
from prefrontal.testing.synthetic import memories
from tests.benchmarks.latency import ratio, report, summary, timed_ms

AGENT = "atlas"
CROWD = Tenant(agent_id=AGENT, user_id="crowd")
SMALL = Tenant(agent_id=AGENT, user_id="leaving")
WRITER = Tenant(agent_id=AGENT, user_id="stays")
START = datetime(2026, 1, 1, tzinfo=UTC)
FORGETS = 20
ALONE = 3
CHECK_BLOCKS, CHECK_BLOCK = 6, 30
"""Alternating blocks (with the erasure trigger, without) and writes per block."""
TRIGGER = "episodic_items_erased"

Opener = Callable[[], Stores]
Toggle = Callable[[bool], Awaitable[None]]
"""Turns the episodic table's erasure trigger on (``True``) or off."""


async def _fill(open_stores: Opener, items: int) -> None:
    stores = open_stores()
    generated = memories(items, tenant=CROWD, start=START)
    while batch := list(itertools.islice(generated, 5_000)):
        await stores.episodic.put_many(batch)
    await stores.episodic.put_many(list(memories(25, tenant=SMALL, start=START, prefix="s")))
    await stores.aclose()


async def _run(open_stores: Opener, toggle: Toggle) -> dict[str, Any]:
    stores = open_stores()
    api = MemoryAPI(stores, clock=lambda: START)
    counter = itertools.count()

    async def put() -> float:
        i = next(counter)
        item = MemoryItem(
            item_id=f"w{i}",
            agent_id=AGENT,
            user_id=WRITER.user_id,
            content=f"note {i} of a user who stays, about the harbour",
            created_at=START + timedelta(seconds=i),
        )
        return await timed_ms(lambda: stores.episodic.put(item))

    idle = [await put() for _ in range(50)]
    alone = []
    for i in range(FORGETS, FORGETS + ALONE):
        began = time.perf_counter()
        assert await api.forget(SMALL, f"s{i:07d}")
        alone.append(time.perf_counter() - began)
    during: list[float] = []
    forgets: list[float] = []
    done = anyio.Event()

    async def write() -> None:
        while not done.is_set():
            during.append(await put())

    async def forget() -> None:
        for i in range(FORGETS):
            began = time.perf_counter()
            assert await api.forget(SMALL, f"s{i:07d}")
            forgets.append(time.perf_counter() - began)
        done.set()

    async with anyio.create_task_group() as group:
        group.start_soon(write)
        group.start_soon(forget)
    began = time.perf_counter()
    erased = await api.erase(AGENT, SMALL.user_id)
    erase_s = time.perf_counter() - began
    checked: list[float] = []
    unchecked: list[float] = []
    for block in range(CHECK_BLOCKS):
        on = block % 2 == 0
        await toggle(on)
        (checked if on else unchecked).extend([await put() for _ in range(CHECK_BLOCK)])
    await toggle(True)
    await stores.aclose()
    idle_ms, during_ms = summary(idle), summary(during)
    with_check, without_check = summary(checked), summary(unchecked)
    return {
        "forget_alone_s": round(statistics.median(alone), 4),
        "forget_alone_over_write": round(statistics.median(alone) * 1_000 / idle_ms["p50_ms"], 1),
        "forget_s": {
            "median": round(statistics.median(forgets), 3),
            "max": round(max(forgets), 3),
        },
        "erase_s": round(erase_s, 3),
        "erased_items": erased.removed["episodic"],
        "write_idle": idle_ms,
        "write_during_forgets": during_ms,
        "p99_during_over_idle": ratio(during_ms, idle_ms),
        "write_p50_ms_erasure_check": {
            "with": with_check["p50_ms"],
            "without": without_check["p50_ms"],
            "ratio": ratio(with_check, without_check, "p50_ms"),
        },
    }


def _sqlite(items: int) -> dict[str, Any]:
    from prefrontal.stores.sqlite.migrations import erased_trigger

    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "stores.db"

        async def toggle(on: bool) -> None:
            import sqlite3

            connection = sqlite3.connect(path, isolation_level=None, timeout=30)
            connection.execute(f"DROP TRIGGER IF EXISTS {TRIGGER}")
            if on:
                connection.execute(erased_trigger("episodic_items"))
            connection.close()

        anyio.run(_fill, lambda: sqlite.open_stores(path), items)
        return dict(anyio.run(_run, lambda: sqlite.open_stores(path), toggle))


def _postgres(items: int) -> dict[str, Any]:
    import asyncpg

    from tests.postgres_server import running_server

    with running_server() as server:
        dsn = server.create_database("forget")

        async def toggle(on: bool) -> None:
            connection = await asyncpg.connect(dsn, server_settings={"search_path": "public"})
            state = "ENABLE" if on else "DISABLE"
            await connection.execute(f"ALTER TABLE episodic_items {state} TRIGGER {TRIGGER}")
            await connection.close()

        async def vacuumed() -> None:
            connection = await asyncpg.connect(dsn, server_settings={"search_path": "public"})
            await connection.execute("VACUUM ANALYZE")
            await connection.close()

        def opened() -> Stores:
            return postgres.open_stores(dsn, schema="public", max_size=4)

        anyio.run(_fill, opened, items)
        anyio.run(vacuumed)
        return dict(anyio.run(_run, opened, toggle))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.forget_load")
    parser.add_argument("--items", type=int, default=50_000)
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    args = parser.parse_args(argv)
    run = _sqlite if args.backend == "sqlite" else _postgres
    report({"backend": args.backend, "items": args.items} | run(args.items))


if __name__ == "__main__":
    main()
