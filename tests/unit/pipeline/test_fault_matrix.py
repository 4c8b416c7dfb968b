"""The fault matrix: every store kind, by every way a store can fail, and the caller cancelling.

Each cell runs one turn on the demo data with one store faulted. Whatever
the fault, the turn returns within its deadline plus 50 ms, and every
section whose store is healthy is in the context. A caller who cancels gets
the cancellation at once. On a loaded machine the bounds also allow the
pace of a healthy turn timed around the checked one (:mod:`tests.pace`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from prefrontal import Orchestrator, Stores
from prefrontal.bundle.models import Section
from prefrontal.demo import seed
from prefrontal.errors import StoreError, TransientStoreError
from prefrontal.stores import sqlite
from prefrontal.stores.set import STORE_KINDS
from prefrontal.stores.sqlite.driver import sqlite3
from prefrontal.testing import DelayedStore, FailingStore
from tests.conftest import demo_request, fixed_clock, orchestrator
from tests.pace import allowance_ms, collector_paused, healthy_turn_ms

pytestmark = pytest.mark.anyio
DEADLINE_MS = 400
SLACK_MS = 50
SECTION_OF = {
    "consciousness": Section.CONSCIOUSNESS,
    "frontal_cortex": Section.FRONTAL_CORTEX,
    "conversation": Section.CONVERSATION,
    "episodic": Section.EPISODIC,
    "semantic": Section.SEMANTIC,
    "scratch_page": Section.SCRATCH_PAGE,
}
"""The section each loading store feeds (the buffer, trace and session-items stores feed none)."""


class GarbageStore:
    """A broken backend: every method answers with a value of the wrong shape."""

    def __init__(self, store: Any) -> None:
        self._store = store

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._store, name)
        if not callable(attribute):
            return attribute

        async def garbage(*args: Any, **kwargs: Any) -> Any:
            return [object(), "not a record", 42]

        return garbage


FAULTS: dict[str, Callable[[Any], Any]] = {
    "raises": lambda store: FailingStore(store, StoreError("disk gone", store="test")),
    "raises transiently": lambda store: FailingStore(
        store, TransientStoreError("busy", store="test")
    ),
    "hangs": lambda store: DelayedStore(store, math.inf),
    "returns garbage": GarbageStore,
}


async def timed_turn(stores: Stores) -> tuple[Any, float, float]:
    """The turn's result, its wall time and the most it may take: the deadline plus 50 ms and
    the pace of healthy turns timed just before and after it (ms)."""
    before = await healthy_turn_ms()
    turns = orchestrator(stores, deadline_ms=DEADLINE_MS)
    with collector_paused():
        started = anyio.current_time()
        result = await turns.start_turn(demo_request())
        elapsed_ms = (anyio.current_time() - started) * 1_000
    return result, elapsed_ms, DEADLINE_MS + allowance_ms(SLACK_MS, before, await healthy_turn_ms())


def assert_healthy_sections_present(result: Any, faulted: str) -> None:
    for kind, section in SECTION_OF.items():
        if kind != faulted:
            assert result.bundle.section(section), f"{section} missing with {faulted} faulted"


@pytest.mark.parametrize("fault", sorted(FAULTS))
@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_a_faulted_store_costs_only_its_own_section(
    demo_stores: Stores, kind: str, fault: str
) -> None:
    """Within the deadline plus 50 ms, with every healthy section in the context."""
    faulted = demo_stores.replace(**{kind: FAULTS[fault](getattr(demo_stores, kind))})
    result, elapsed_ms, bound_ms = await timed_turn(faulted)
    assert elapsed_ms < bound_ms, (elapsed_ms, bound_ms)
    assert_healthy_sections_present(result, kind)


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_a_sqlite_lock_held_by_another_connection(tmp_path: Path, kind: str) -> None:
    """That store on a SQLite file another connection holds the write lock of: the same promise."""
    durable = sqlite.open_stores(tmp_path / "held.db")
    await seed(durable)
    warm = Orchestrator(durable, clock=fixed_clock)
    await warm.start_turn(demo_request())
    stores = Stores.in_memory()
    await seed(stores)
    stores = stores.replace(**{kind: getattr(durable, kind)})
    holder = sqlite3.connect(tmp_path / "held.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        result, elapsed_ms, bound_ms = await timed_turn(stores)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
        await durable.aclose()
    assert elapsed_ms < bound_ms, (elapsed_ms, bound_ms)
    assert_healthy_sections_present(result, kind)


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_a_caller_cancelling_gets_the_cancellation_at_once(
    demo_stores: Stores, kind: str
) -> None:
    """With that store hung, a caller's cancel scope ends the turn within 50 ms of its moment."""
    hung = demo_stores.replace(**{kind: DelayedStore(getattr(demo_stores, kind), math.inf)})
    turns = orchestrator(hung, deadline_ms=5_000)
    before = await healthy_turn_ms()
    with collector_paused():
        started = anyio.current_time()
        with anyio.move_on_after(0.1) as scope:
            await turns.start_turn(demo_request())
        elapsed_ms = (anyio.current_time() - started) * 1_000
    bound_ms = 100 + allowance_ms(SLACK_MS, before, await healthy_turn_ms())
    if kind in ("working_memory", "traces", "session_items"):
        assert scope.cancelled_caught or elapsed_ms < bound_ms
    else:
        assert scope.cancelled_caught
    assert elapsed_ms < bound_ms, (elapsed_ms, bound_ms)
