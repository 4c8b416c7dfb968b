"""SQLite store calls run in worker threads: the event loop keeps ticking through them."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest

from prefrontal.stores import MemoryQuery, SessionKey, SessionState, Tenant, sqlite
from prefrontal.testing.synthetic import memories
from tests.conftest import FIXED_NOW

pytestmark = pytest.mark.anyio
ALICE = Tenant(agent_id="agent-1", user_id="alice")


async def test_heavy_calls_leave_the_event_loop_free(tmp_path: Path) -> None:
    """A 10 MB buffer save, a 3,000-item bulk write and a 200k-character search never stall the loop."""
    stores = sqlite.open_stores(tmp_path / "loop.db")
    items = list(memories(3_000, tenant=ALICE))
    key = SessionKey(agent_id="agent-1", user_id="alice", session_id="s")
    longest_gap = 0.0

    async def ticker() -> None:
        nonlocal longest_gap
        last = time.perf_counter()
        while True:
            await anyio.sleep(0.001)
            now = time.perf_counter()
            longest_gap, last = max(longest_gap, now - last), now

    started = time.perf_counter()
    async with anyio.create_task_group() as group:
        group.start_soon(ticker)
        await stores.working_memory.save(SessionState(key=key, state={"blob": "x" * 10_000_000}))
        await stores.episodic.put_many(items)
        await stores.episodic.search(
            ALICE, MemoryQuery(text="budget review " * 14_000, now=FIXED_NOW)
        )
        group.cancel_scope.cancel()
    total = time.perf_counter() - started
    await stores.aclose()
    assert longest_gap < max(0.25, total / 4), (longest_gap, total)
