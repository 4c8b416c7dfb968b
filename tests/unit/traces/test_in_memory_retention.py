"""The in-memory trace store holds a bounded number of traces: the oldest go first."""

from __future__ import annotations

import pytest

from prefrontal.stores.memory import InMemoryTraceStore
from prefrontal.stores.traces import TraceQuery
from prefrontal.testing.conformance.base import at
from prefrontal.testing.conformance.sessions import trace

pytestmark = pytest.mark.anyio


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
