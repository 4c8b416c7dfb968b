"""Forget and erase of one small user beside a large one on SQLite, and another user's writes.

    python -m tests.benchmarks.forget_load --items 50000

Fills one SQLite file with ``--items`` synthetic episodic items of one user
of the agent and 25 of a small user, then times 50 idle writes of a third
user, 3 forgets of the small user's items alone, then 20 more while that
user writes one item after another, then the erase of the small user. Where
the full-text indexes delete in place (:mod:`prefrontal.stores.sqlite.driver`)
a forget touches a few pages; otherwise each forget and the erase optimise
them whole, holding the writer. Prints JSON: forget seconds alone (median)
and during the writes (median, max), erase seconds, and the writer's
latency in milliseconds (p50, p99, max) idle and during the forgets, with
the idle forget over an idle write (medians) and p99 during over p99 idle.
Figures are reported, never asserted.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio

from prefrontal.memory import MemoryAPI
from prefrontal.stores import MemoryItem, Tenant, sqlite
from prefrontal.testing.synthetic import memories

AGENT = "atlas"
CROWD = Tenant(agent_id=AGENT, user_id="crowd")
SMALL = Tenant(agent_id=AGENT, user_id="leaving")
WRITER = Tenant(agent_id=AGENT, user_id="stays")
START = datetime(2026, 1, 1, tzinfo=UTC)
FORGETS = 20
ALONE = 3


async def _fill(path: Path, items: int) -> None:
    stores = sqlite.open_stores(path)
    generated = memories(items, tenant=CROWD, start=START)
    while batch := list(itertools.islice(generated, 5_000)):
        await stores.episodic.put_many(batch)
    await stores.episodic.put_many(list(memories(25, tenant=SMALL, start=START, prefix="s")))
    await stores.aclose()


def _ms(latencies: list[float]) -> dict[str, float]:
    ordered = sorted(latencies)
    return {
        "count": len(ordered),
        "p50_ms": round(statistics.median(ordered), 2),
        "p99_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))], 2),
        "max_ms": round(ordered[-1], 2),
    }


async def _run(path: Path) -> dict[str, Any]:
    stores = sqlite.open_stores(path)
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
        began = time.perf_counter()
        await stores.episodic.put(item)
        return (time.perf_counter() - began) * 1_000

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
    report = await api.erase(AGENT, SMALL.user_id)
    erase_s = time.perf_counter() - began
    await stores.aclose()
    idle_ms, during_ms = _ms(idle), _ms(during)
    return {
        "forget_alone_s": round(statistics.median(alone), 4),
        "forget_alone_over_write": round(statistics.median(alone) * 1_000 / idle_ms["p50_ms"], 1),
        "forget_s": {
            "median": round(statistics.median(forgets), 3),
            "max": round(max(forgets), 3),
        },
        "erase_s": round(erase_s, 3),
        "erased_items": report.removed["episodic"],
        "write_idle": idle_ms,
        "write_during_forgets": during_ms,
        "p99_during_over_idle": round(during_ms["p99_ms"] / idle_ms["p99_ms"], 1),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.forget_load")
    parser.add_argument("--items", type=int, default=50_000)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "stores.db"
        anyio.run(_fill, path, args.items)
        figures = {"items": args.items} | anyio.run(_run, path)
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
