"""What a store raises is the store's failure: its TimeoutError or a stray CancelledError never
passes for the phase running out of time or the turn being cancelled."""

from __future__ import annotations

import asyncio
import math

import anyio
import pytest

from prefrontal import PhaseStatus, Stores
from prefrontal.bundle.models import Section
from prefrontal.testing import DelayedStore, FailingStore
from tests.conftest import demo_request, orchestrator

pytestmark = pytest.mark.anyio


async def test_a_stores_own_timeout_fails_its_phase_not_as_a_timeout(demo_stores: Stores) -> None:
    """A driver's TimeoutError is a (transient) store error: the phase fails, the rest arrive."""
    slow_driver = FailingStore(demo_stores.episodic, TimeoutError("driver gave up"))
    result = await orchestrator(demo_stores.replace(episodic=slow_driver)).start_turn(
        demo_request()
    )
    record = result.trace.phase("episodic")
    assert record.status is PhaseStatus.FAILED
    assert "the store timed out: driver gave up" in record.errors[0].message
    assert result.bundle.section(Section.CONSCIOUSNESS)


async def test_a_stray_cancellation_from_a_store_does_not_cancel_the_turn(
    demo_stores: Stores,
) -> None:
    """A store that raises CancelledError unasked fails its phase; the turn completes."""
    confused = FailingStore(demo_stores.semantic, asyncio.CancelledError())
    result = await orchestrator(demo_stores.replace(semantic=confused)).start_turn(demo_request())
    record = result.trace.phase("semantic")
    assert record.status is PhaseStatus.FAILED
    assert "cancellation nobody asked for" in record.errors[0].message
    assert result.trace.phase("finalize").status is not PhaseStatus.CANCELLED
    assert result.bundle.section(Section.EPISODIC)


async def test_a_real_deadline_is_still_a_timeout(demo_stores: Stores) -> None:
    """A store that never answers is cut by the deadline and recorded as a timeout, as before."""
    hung = DelayedStore(demo_stores.scratch_page, math.inf)
    result = await orchestrator(demo_stores.replace(scratch_page=hung), deadline_ms=300).start_turn(
        demo_request()
    )
    assert result.trace.phase("scratch_page").status is PhaseStatus.TIMEOUT


async def test_a_caller_cancelling_the_turn_still_cancels_it(demo_stores: Stores) -> None:
    """Cancelling ``start_turn`` from outside propagates through a store call, never swallowed."""
    hung = DelayedStore(demo_stores.episodic, math.inf)
    with anyio.move_on_after(0.05) as scope:
        await orchestrator(demo_stores.replace(episodic=hung), deadline_ms=5_000).start_turn(
            demo_request()
        )
    assert scope.cancelled_caught
