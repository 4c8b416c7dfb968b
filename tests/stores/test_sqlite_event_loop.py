"""SQLite store calls run in worker threads: the event loop keeps ticking through them.

A ticker sleeping 1 ms at a time records the longest gap between its ticks
while heavy calls run, one after another. A call run on the event loop
leaves a gap of its whole time (a few hundred milliseconds for the 20 MB save
and the 8,000-item write on a quiet machine); a call in a worker thread
leaves gaps of thread hand-offs. The bound scales with the machine's pace
(:mod:`tests.pace`): a slack plus twice a healthy turn timed just before and
after, or half the heaviest call's own time in the same run when that is
more (a machine loaded while the calls run slows them and every tick alike).
A call moved onto the loop fails the test: the gap it leaves is its whole
time, more than half of it, and several times the pace's allowance (the
calls are made heavy enough for that: on a quiet machine the save and the
write take about 200 ms each, the allowance about 70 ms)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import pytest
from anyio import TASK_STATUS_IGNORED
from anyio.abc import TaskStatus

from prefrontal.stores import MemoryQuery, SessionKey, SessionState, Tenant, sqlite
from prefrontal.testing.synthetic import memories
from tests.conftest import FIXED_NOW
from tests.pace import allowance_ms, collector_paused, healthy_turn_ms

pytestmark = pytest.mark.anyio
ALICE = Tenant(agent_id="agent-1", user_id="alice")
SLACK_MS = 50
"""The gap allowed on a quiet machine beyond twice a healthy turn: thread hand-offs."""


async def ticking_through(
    calls: dict[str, Callable[[], Awaitable[object]]],
) -> tuple[float, dict[str, float]]:
    """Run ``calls`` one after another beside a 1 ms ticker: the longest time the loop went
    without a tick, and how long each call took (ms).

    The gap up to the end of each call counts too: a call that never lets the ticker run
    is one gap, even when nothing yields to the ticker before the calls end.
    """
    longest_gap, last_tick = 0.0, 0.0
    took: dict[str, float] = {}

    def tick() -> None:
        nonlocal longest_gap, last_tick
        now = time.perf_counter()
        longest_gap, last_tick = max(longest_gap, now - last_tick), now

    async def ticker(*, task_status: TaskStatus[None] = TASK_STATUS_IGNORED) -> None:
        nonlocal last_tick
        last_tick = time.perf_counter()
        task_status.started()  # ticking before the first call begins
        while True:
            await anyio.sleep(0.001)
            tick()

    async with anyio.create_task_group() as group:
        await group.start(ticker)
        for name, call in calls.items():
            started = time.perf_counter()
            await call()
            ended = time.perf_counter()
            took[name] = (ended - started) * 1_000
            longest_gap = max(longest_gap, ended - last_tick)
        group.cancel_scope.cancel()
    return longest_gap * 1_000, took


async def test_heavy_calls_leave_the_event_loop_free(tmp_path: Path) -> None:
    """A 20 MB buffer save and load, an 8,000-item bulk write and a 200k-character search
    never stall the loop for longer than the machine's pace allows."""
    stores = sqlite.open_stores(tmp_path / "loop.db")
    items = list(memories(8_000, tenant=ALICE))
    key = SessionKey(agent_id="agent-1", user_id="alice", session_id="s")
    state = SessionState(key=key, state={"blob": "x" * 20_000_000})
    query = MemoryQuery(text="budget review " * 14_000, now=FIXED_NOW)
    calls: dict[str, Callable[[], Awaitable[object]]] = {
        "save": lambda: stores.working_memory.save(state),
        "load": lambda: stores.working_memory.load(key),  # held, but too large for the loop
        "put_many": lambda: stores.episodic.put_many(items),
        "search": lambda: stores.episodic.search(ALICE, query),
    }
    before = await healthy_turn_ms()
    with collector_paused():
        longest_gap_ms, took_ms = await ticking_through(calls)
    paced_ms = allowance_ms(SLACK_MS, before, await healthy_turn_ms())
    await stores.aclose()
    bound_ms = max(paced_ms, max(took_ms.values()) / 2)
    assert longest_gap_ms < bound_ms, (longest_gap_ms, paced_ms, took_ms)
