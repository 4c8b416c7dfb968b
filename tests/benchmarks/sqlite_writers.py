"""Concurrent writers on one SQLite file: writes per second, for comparing checkouts.

Run ``python -m tests.benchmarks.sqlite_writers --writers 32 --each 20``, and
the same with ``PYTHONPATH=<other checkout>/src`` to compare two ways of
writing in one sitting (ratios, not absolute times, are what survive a busy
machine).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import anyio

from prefrontal.stores import MemoryItem, sqlite

_CREATED = datetime(2026, 1, 1, tzinfo=UTC)


def _item(item_id: str) -> MemoryItem:
    return MemoryItem(
        item_id=item_id,
        agent_id="agent",
        user_id="user",
        content=f"note {item_id} about the ferry",
        created_at=_CREATED,
    )


async def measure(writers: int, each: int, directory: Path) -> float:
    """Writes per second of ``writers`` tasks each putting ``each`` items, after one warm-up."""
    stores = sqlite.open_stores(directory / "writers.db")
    try:
        await stores.episodic.put(_item("warm-up"))

        async def writer(k: int) -> None:
            for n in range(each):
                await stores.episodic.put(_item(f"{k}-{n}"))

        start = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for k in range(writers):
                tg.start_soon(writer, k)
        return writers * each / (time.perf_counter() - start)
    finally:
        await stores.aclose()


def main() -> None:
    """Print writes per second for the given number of concurrent writers."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--writers", type=int, default=32)
    parser.add_argument("--each", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        rate = anyio.run(measure, args.writers, args.each, Path(directory))
    print(f"{args.writers} writers x {args.each} puts: {rate:.0f} writes/s")


if __name__ == "__main__":
    main()
