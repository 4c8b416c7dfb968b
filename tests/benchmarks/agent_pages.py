"""Render time of the viewer's agent page and memory page over 100,000 memories.

    python -m tests.benchmarks.agent_pages                       # SQLite and PostgreSQL
    python -m tests.benchmarks.agent_pages --backend sqlite --memories 100000 --rounds 21

The stores hold the demo agent (profile, goals, scratch page) and
``--memories`` memories of 501 users: ``user-0`` holds half of them, 500
others share the rest; one in fifty is shared; a third are episodic. Each
is written through the store's ``put_many`` (so the full-text index and the
statistics are real); ``user-0``'s memory ``m-history`` has three versions.
PostgreSQL is the test server of :mod:`tests.postgres_server`, started here.

The viewer without keys (:func:`~prefrontal.serving.ui.local.local_app`, what
``prefrontal ui`` serves) is driven in process through httpx's ASGI
transport: each figure is the whole answer, request to body read (routing,
the stores' reads, the template), without a socket. For each page:
``--rounds`` timed answers after one warm-up; prints JSON with the median
and p95 in milliseconds. It measures and never fails on a figure.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import anyio
import httpx

from prefrontal.demo import DEMO_AGENT, seed
from prefrontal.memory.api import MemoryAPI
from prefrontal.memory.listing import encode_cursor
from prefrontal.serving.ui.local import local_app
from prefrontal.stores import Stores, Tenant, postgres, sqlite
from prefrontal.stores.long_term import MemoryItem, MemoryKind
from prefrontal.stores.tenancy import Scope

START = datetime(2026, 1, 1, tzinfo=UTC)
BATCH = 2_000
WORDS = [
    "launch",
    "budget",
    "review",
    "payments",
    "vendor",
    "office",
    "travel",
    "design",
    "hiring",
    "customer",
]


def _item(n: int, count: int) -> tuple[str, MemoryItem]:
    user = "user-0" if n % 2 == 0 else f"user-{1 + n % 500}"
    store = "episodic" if n % 3 == 0 else "semantic"
    words = " ".join(WORDS[(n + k) % len(WORDS)] for k in range(6))
    item = MemoryItem(
        item_id=f"m-{n:07d}",
        agent_id=DEMO_AGENT,
        user_id=user,
        scope=Scope.SHARED if n % 50 == 0 else Scope.PRIVATE,
        kind=MemoryKind.EVENT if store == "episodic" else MemoryKind.FACT,
        content=f"Memory {n} of {count}: {words}",
        created_at=START + timedelta(seconds=n),
    )
    return store, item


async def fill(stores: Stores, count: int) -> float:
    """Seed the demo agent and write ``count`` memories; the seconds the memories took."""
    await seed(stores)
    began = time.perf_counter()
    for first in range(0, count, BATCH):
        rows = [_item(n, count) for n in range(first, min(count, first + BATCH))]
        for name in ("episodic", "semantic"):
            items = [item for store, item in rows if store == name]
            await getattr(stores, name).put_many(items)
    took = time.perf_counter() - began
    memory = MemoryAPI(stores, clock=lambda: START)
    tenant = Tenant(agent_id=DEMO_AGENT, user_id="user-0")
    await memory.remember(tenant, "first words", item_id="m-history", author="web")
    for n, author in ((2, "hr"), (3, "ops")):
        await memory.update(tenant, "m-history", content=f"words, version {n}", author=author)
    return took


def _pages(count: int) -> dict[str, str]:
    agent = f"/ui/agents/{DEMO_AGENT}"
    deep = encode_cursor((f"m-{count // 2:07d}", "user-0"), "semantic")
    return {
        "agent page, no user": agent,
        "agent page: user-0, newest 50": f"{agent}?user=user-0",
        "agent page: user-0, page at the middle": f"{agent}?"
        + urlencode({"user": "user-0", "cursor": deep}),
        "agent page: user-0, kind=event": f"{agent}?"
        + urlencode({"user": "user-0", "kind": "event"}),
        "agent page: user-0, scope=shared": f"{agent}?"
        + urlencode({"user": "user-0", "scope": "shared"}),
        "agent page: user-7 (100 of their own)": f"{agent}?user=user-7",
        "memory page with history": f"{agent}/memories/m-history?user=user-0",
    }


async def _time(
    open_stores: Callable[[], AbstractAsyncContextManager[Stores]], count: int, rounds: int
) -> dict[str, dict[str, float]]:
    app = local_app(open_stores)
    figures: dict[str, dict[str, float]] = {}
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://viewer") as client:
            for name, path in _pages(count).items():
                await client.get(path)
                times = []
                for _ in range(rounds):
                    began = time.perf_counter()
                    answer = await client.get(path)
                    times.append((time.perf_counter() - began) * 1000)
                    assert answer.status_code == 200, (path, answer.status_code)
                times.sort()
                p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
                figures[name] = {
                    "median_ms": round(statistics.median(times), 2),
                    "p95_ms": round(p95, 2),
                }
    return figures


async def run_sqlite(count: int, rounds: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "memories.db"
        stores = sqlite.open_stores(path)
        try:
            took = await fill(stores, count)
        finally:
            await stores.aclose()

        @asynccontextmanager
        async def opened() -> AsyncIterator[Stores]:
            held = sqlite.open_stores(path)
            try:
                yield held
            finally:
                await held.aclose()

        pages = await _time(opened, count, rounds)
        return {"build_s": round(took, 1), "db_mb": round(path.stat().st_size / 1e6), **pages}


async def run_postgres(dsn: str, count: int, rounds: int) -> dict[str, Any]:
    stores = postgres.open_stores(dsn, schema="bench")
    try:
        took = await fill(stores, count)
    finally:
        await stores.aclose()

    @asynccontextmanager
    async def opened() -> AsyncIterator[Stores]:
        held = postgres.open_stores(dsn, schema="bench")
        try:
            yield held
        finally:
            await held.aclose()

    return {"build_s": round(took, 1), **await _time(opened, count, rounds)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--backend", choices=("sqlite", "postgres", "both"), default="both")
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=21)
    args = parser.parse_args(argv)
    report: dict[str, Any] = {"memories": args.memories, "rounds": args.rounds}
    if args.backend in ("sqlite", "both"):
        report["sqlite"] = anyio.run(run_sqlite, args.memories, args.rounds)
    if args.backend in ("postgres", "both"):
        from tests.postgres_server import running_server

        with running_server() as server:
            dsn = server.create_database("bench")
            report["postgres"] = anyio.run(run_postgres, dsn, args.memories, args.rounds)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
