"""A working-memory store that hangs, or fails, costs the turn its buffer, never its context."""

from __future__ import annotations

import math

import anyio
import pytest

from prefrontal import PhaseStatus, Stores
from prefrontal.bundle.models import Section
from prefrontal.errors import StoreError
from prefrontal.testing import DelayedStore, FailingStore
from tests.conftest import demo_request, orchestrator

pytestmark = pytest.mark.anyio
EVERY_OTHER_SECTION = (
    Section.CONSCIOUSNESS,
    Section.FRONTAL_CORTEX,
    Section.CONVERSATION,
    Section.EPISODIC,
    Section.SEMANTIC,
    Section.SCRATCH_PAGE,
)


async def test_a_hung_working_memory_store_leaves_every_other_section(demo_stores: Stores) -> None:
    """Phase 1 stops waiting for the hung store; the turn ends well within its deadline, full."""
    hung = demo_stores.replace(working_memory=DelayedStore(demo_stores.working_memory, math.inf))
    turns = orchestrator(hung, deadline_ms=1_000)
    started = anyio.current_time()
    result = await turns.start_turn(demo_request())
    elapsed_ms = (anyio.current_time() - started) * 1_000
    assert elapsed_ms < 1_000 + 50
    assert result.trace.phase("turn_context").status is PhaseStatus.TIMEOUT
    for section in EVERY_OTHER_SECTION:
        assert result.bundle.section(section), section
    assert result.ready_for_router


async def test_a_failing_working_memory_store_leaves_every_other_section(
    demo_stores: Stores,
) -> None:
    """A working-memory store that raises fails phase 1 only; every other section arrives."""
    broken = FailingStore(demo_stores.working_memory, StoreError("gone", store="working_memory"))
    result = await orchestrator(demo_stores.replace(working_memory=broken)).start_turn(
        demo_request()
    )
    assert result.trace.phase("turn_context").status is PhaseStatus.FAILED
    for section in EVERY_OTHER_SECTION:
        assert result.bundle.section(section), section
