"""Phase 1 starts the store reads of phases 2, 3 and 4 before it loads the session's buffer."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from prefrontal import Stores
from prefrontal.errors import StoreError
from prefrontal.phases.ahead import Ahead, start_ahead, taken
from prefrontal.testing import FailingStore
from prefrontal.traces.models import PhaseStatus
from tests.conftest import demo_request, orchestrator

pytestmark = pytest.mark.anyio


class Told:
    """Forwards every call to ``store``; sets ``event`` when ``method`` is called."""

    def __init__(self, store: Any, method: str, event: anyio.Event) -> None:
        self.wrapped, self.method, self.event = store, method, event

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.wrapped, name)
        if name != self.method:
            return method

        async def telling(*args: Any, **kwargs: Any) -> Any:
            self.event.set()
            return await method(*args, **kwargs)

        return telling


class LoadWaits:
    """A working-memory store whose ``load`` answers only once every event in ``events`` is set."""

    def __init__(self, store: Any, events: list[anyio.Event]) -> None:
        self.wrapped, self.events = store, events

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)

    async def load(self, *args: Any, **kwargs: Any) -> Any:
        for event in self.events:
            await event.wait()
        return await self.wrapped.load(*args, **kwargs)


async def test_the_loaders_read_while_the_buffer_loads(demo_stores: Stores) -> None:
    """A buffer load that answers only once phases 2, 3 and 4 have read their stores still ends."""
    profile, goals, recent = anyio.Event(), anyio.Event(), anyio.Event()
    stores = demo_stores.replace(
        consciousness=Told(demo_stores.consciousness, "get_profile", profile),
        frontal_cortex=Told(demo_stores.frontal_cortex, "query", goals),
        conversation=Told(demo_stores.conversation, "recent", recent),
        working_memory=LoadWaits(demo_stores.working_memory, [profile, goals, recent]),
    )
    result = await orchestrator(stores, deadline_ms=2_000).start_turn(demo_request())
    assert result.trace.phase("turn_context").status is PhaseStatus.OK
    for name in ("consciousness", "frontal_cortex", "conversation"):
        assert result.trace.phase(name).status is PhaseStatus.OK
        assert result.trace.phase(name).items_loaded > 0


async def test_sequential_turns_read_in_each_phase(demo_stores: Stores) -> None:
    """In sequential mode nothing is started ahead: the buffer loads first, and the loaders after."""
    goals = anyio.Event()
    stores = demo_stores.replace(
        frontal_cortex=Told(demo_stores.frontal_cortex, "query", goals),
        working_memory=LoadWaits(demo_stores.working_memory, [goals]),
    )
    turns = orchestrator(stores, deadline_ms=1_000, concurrency="sequential")
    result = await turns.start_turn(demo_request())
    assert result.trace.phase("turn_context").status is PhaseStatus.TIMEOUT
    assert result.trace.phase("frontal_cortex").items_loaded > 0


async def test_a_failed_read_ahead_fails_its_phase(demo_stores: Stores) -> None:
    """A goals store that raises fails phase 3 with that error, as if the phase had read itself."""
    failing = FailingStore(demo_stores.frontal_cortex, StoreError("goals unavailable"))
    result = await orchestrator(demo_stores.replace(frontal_cortex=failing)).start_turn(
        demo_request()
    )
    record = result.trace.phase("frontal_cortex")
    assert record.status is PhaseStatus.FAILED
    assert any("goals unavailable" in error.message for error in record.errors)
    assert result.trace.phase("consciousness").status is PhaseStatus.OK


async def test_a_phase_cancelled_while_it_waits_cancels_its_read() -> None:
    """Cancelling the phase waiting on a read started ahead cancels the read too."""
    cancelled = anyio.Event()

    async def hangs() -> int:
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()
        return 0  # pragma: no cover

    async with anyio.create_task_group() as group:
        ahead = start_ahead(group.start_soon, hangs, seconds=60)
        assert ahead is not None
        with anyio.move_on_after(0.01):
            await taken(ahead, hangs)
        with anyio.fail_after(5):
            await cancelled.wait()


async def test_a_read_cut_off_by_its_limit_is_made_by_the_phase() -> None:
    """A read ahead that ran out of its own time leaves the phase to read itself."""

    async def slow() -> str:
        await anyio.sleep(10)
        return "ahead"  # pragma: no cover

    async def itself() -> str:
        return "itself"

    ahead: Ahead[str] = Ahead()
    await ahead.run(slow, seconds=0.01)
    assert await taken(ahead, itself) == "itself"
    assert await taken(None, itself) == "itself"
