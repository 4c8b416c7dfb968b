"""The in-memory trace store holds a bounded number of traces: the oldest go first."""

from __future__ import annotations

import gc

import pytest

from prefrontal import Stores
from prefrontal.stores.memory import InMemoryTraceStore
from prefrontal.stores.tenancy import Tenant
from prefrontal.stores.traces import TraceQuery
from prefrontal.testing.conformance.base import at
from prefrontal.testing.conformance.sessions import trace
from prefrontal.traces.models import TurnTrace
from tests.conftest import demo_request, orchestrator

pytestmark = pytest.mark.anyio
TENANT = Tenant(agent_id=demo_request().agent_id, user_id=demo_request().user_id)


async def test_past_its_bound_the_store_lets_the_oldest_trace_go() -> None:
    """With ``keep=3``, a fourth trace pushes out the one that started first."""
    store = InMemoryTraceStore(keep=3)
    for minute in (3, 0, 2, 1):
        await store.put(trace(f"t{minute}", started_at=at(minute)))
    assert [t.turn_id for t in await store.list(TraceQuery())] == ["t3", "t2", "t1"]


async def test_without_a_bound_every_trace_is_kept() -> None:
    """``keep=None`` keeps every trace (for tests that want them all)."""
    store = InMemoryTraceStore(keep=None)
    for minute in range(20):
        await store.put(trace(f"t{minute}", started_at=at(minute)))
    assert len(await store.list(TraceQuery(limit=100))) == 20


def test_a_bound_below_one_is_refused() -> None:
    """``keep=0`` would drop every trace as it is written: refused at construction."""
    with pytest.raises(ValueError, match="keep must be at least 1"):
        InMemoryTraceStore(keep=0)


async def test_a_trace_written_again_is_judged_by_its_new_start() -> None:
    """A trace replaced with a later start is not evicted for the start it had before."""
    store = InMemoryTraceStore(keep=2)
    await store.put(trace("a", started_at=at(0)))
    await store.put(trace("b", started_at=at(1)))
    await store.put(trace("a", started_at=at(5)))
    await store.put(trace("c", started_at=at(3)))
    assert [t.turn_id for t in await store.list(TraceQuery())] == ["a", "c"]


async def test_the_bound_holds_after_pruning_and_over_many_writes() -> None:
    """Over a thousand writes after a prune, the store keeps exactly the newest ``keep``."""
    store = InMemoryTraceStore(keep=10)
    for minute in range(5):
        await store.put(trace(f"early{minute}", started_at=at(minute)))
    await store.prune(keep=2)
    for n in range(1_000):
        await store.put(trace(f"t{n:04}", started_at=at(10 + n)))
    kept = [t.turn_id for t in await store.list(TraceQuery(limit=100))]
    assert kept == [f"t{n:04}" for n in range(999, 989, -1)]


async def test_kept_traces_leave_the_collector_little_to_walk(demo_stores: Stores) -> None:
    """A thousand real turn traces kept add a few objects each for the garbage collector.

    Held as models, each trace is dozens of objects (a record per phase, a
    usage per section, their details), and every full collection walks them.
    """
    turn = await orchestrator(demo_stores).start_turn(demo_request())
    row = turn.trace.model_dump()
    store = InMemoryTraceStore(keep=None)
    gc.collect()
    before = len(gc.get_objects())
    for n in range(1_000):
        await store.put(TurnTrace.model_validate({**row, "turn_id": f"t{n:04}"}))
    gc.collect()
    assert len(gc.get_objects()) - before < 3 * 1_000
    assert await store.get(TENANT, "t0007") == turn.trace.model_copy(update={"turn_id": "t0007"})
