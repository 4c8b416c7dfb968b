"""The writes behind a turn (trace, buffer, recall counts): after the context, never degrading it."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from prefrontal import OverloadedError, Stores, TurnResult
from prefrontal.buffer.state_document import decode
from prefrontal.demo import DEMO_AGENT, DEMO_SESSION, DEMO_USER, seed
from prefrontal.errors import StoreError, TransientStoreError
from prefrontal.phases import PHASE_NAMES
from prefrontal.stores.tenancy import Tenant
from prefrontal.stores.working_memory import SessionKey
from prefrontal.testing.doubles import FailingStore
from prefrontal.traces.models import PhaseStatus, TurnStatus
from tests.conftest import demo_request, orchestrator

pytestmark = pytest.mark.anyio

TENANT = Tenant(agent_id="atlas", user_id="maya")


class GatedStore:
    """Forwards every call to ``store``; the named methods wait until ``gate`` is set."""

    def __init__(self, store: Any, *methods: str) -> None:
        self.wrapped, self.methods = store, methods
        self.gate = anyio.Event()
        self.waiting = 0

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.wrapped, name)
        if name not in self.methods:
            return method

        async def gated(*args: Any, **kwargs: Any) -> Any:
            self.waiting += 1
            await self.gate.wait()
            return await method(*args, **kwargs)

        return gated


async def test_the_turn_returns_before_its_writes_and_is_not_degraded(demo_stores: Stores) -> None:
    """With the trace and buffer writes held, start_turn returns an ok turn; they land after."""
    traces = GatedStore(demo_stores.traces, "put")
    memory = GatedStore(demo_stores.working_memory, "save")
    stores = demo_stores.replace(traces=traces, working_memory=memory)
    async with orchestrator(stores) as turns:
        result = await turns.start_turn(demo_request())
        assert result.trace.status is TurnStatus.OK
        assert await demo_stores.traces.get(TENANT, result.context.turn_id) is None
        assert turns.write_stats.pending == 1
        traces.gate.set()
        memory.gate.set()
        await turns.wait_background()
        stored = await demo_stores.traces.get(TENANT, result.context.turn_id)
    assert stored is not None and stored.status is TurnStatus.OK
    assert (turns.write_stats.written, turns.write_stats.failed) == (4, 0)


async def test_end_turn_waits_for_the_trace_write_instead_of_answering_not_found(
    demo_stores: Stores,
) -> None:
    """end_turn by turn id while the trace write is pending waits for it, then ends the turn."""
    traces = GatedStore(demo_stores.traces, "put")
    async with orchestrator(demo_stores.replace(traces=traces)) as turns:
        result = await turns.start_turn(demo_request())
        ended = []
        async with anyio.create_task_group() as group:

            async def end() -> None:
                turn_id = result.context.turn_id
                ended.append(
                    await turns.end_turn(turn_id, "Yes.", agent_id="atlas", user_id="maya")
                )

            group.start_soon(end)
            await anyio.wait_all_tasks_blocked()
            assert not ended
            traces.gate.set()
    assert ended[0].written


async def test_the_next_turn_of_the_session_sees_the_previous_save(demo_stores: Stores) -> None:
    """A turn of the same session waits for the earlier turn's buffer save before it loads."""
    memory = GatedStore(demo_stores.working_memory, "save")
    async with orchestrator(demo_stores.replace(working_memory=memory), deadline_ms=5_000) as turns:
        await turns.start_turn(demo_request())
        second: list[TurnResult] = []
        async with anyio.create_task_group() as group:

            async def run() -> None:
                second.append(await turns.start_turn(demo_request()))

            group.start_soon(run)
            await anyio.wait_all_tasks_blocked()
            memory.gate.set()
    detail = second[0].trace.phase("turn_context").detail
    assert detail["new_session"] is False
    assert second[0].trace.phase("working_memory_init").detail["base_version"] == 1


async def test_leaving_the_orchestrator_drains_the_writes(demo_stores: Stores) -> None:
    """Writes still pending when the orchestrator is left are finished before it closes."""
    traces = GatedStore(demo_stores.traces, "put")
    turns = orchestrator(demo_stores.replace(traces=traces))
    async with anyio.create_task_group() as group:

        async def use() -> None:
            async with turns:
                await turns.start_turn(demo_request())

        group.start_soon(use)
        await anyio.wait_all_tasks_blocked()
        assert traces.waiting == 1
        traces.gate.set()
    assert await demo_stores.traces.get(TENANT, "turn-0001") is not None


async def test_a_failed_write_is_counted_and_never_marks_the_turn(demo_stores: Stores) -> None:
    """A buffer save that fails is logged and counted; the turn stays ok and its trace is stored."""
    broken = FailingStore(demo_stores.working_memory, StoreError("disk full"), methods=("save",))
    async with orchestrator(demo_stores.replace(working_memory=broken)) as turns:
        result = await turns.start_turn(demo_request())
        await turns.wait_background()
    assert result.trace.status is TurnStatus.OK
    assert result.trace.phase("working_memory_init").status is PhaseStatus.OK
    assert turns.write_stats.failed == 1
    assert await demo_stores.traces.get(TENANT, result.context.turn_id) is not None


async def test_a_turn_with_no_slot_in_time_is_refused(demo_stores: Stores) -> None:
    """With one turn in flight allowed and it held, the next is refused with OverloadedError."""
    held = GatedStore(demo_stores.consciousness, "get_profile")
    turns = orchestrator(
        demo_stores.replace(consciousness=held),
        deadline_ms=5_000,
        admission={"max_turns_in_flight": 1, "max_wait_ms": 20},
    )
    async with anyio.create_task_group() as group:
        group.start_soon(turns.start_turn, demo_request())
        await anyio.wait_all_tasks_blocked()
        with pytest.raises(OverloadedError) as refused:
            await turns.start_turn(demo_request(session_id="other"))
        held.gate.set()
    assert refused.value.retry_after_s >= 1
    assert turns.refused == 1


async def test_concurrent_turns_of_one_session_lose_no_update(stores: Stores) -> None:
    """Eight turns of one session at once: every save lands, merged, and every gate count stays."""
    await seed(stores)
    count = 8
    # Every decision must reach phase 10: on a loaded machine no phase may be cut
    # short (a cut phase carries no recall decision, which is not what this tests).
    roomy = dict.fromkeys(PHASE_NAMES, 5_000)
    async with orchestrator(stores, deadline_ms=10_000, phase_budgets_ms=roomy) as turns:
        async with anyio.create_task_group() as group:
            for n in range(count):
                group.start_soon(turns.start_turn, demo_request(user_input=f"Launch status {n}?"))
        await turns.wait_background()
        state = await stores.working_memory.load(
            SessionKey(agent_id=DEMO_AGENT, user_id=DEMO_USER, session_id=DEMO_SESSION)
        )
    assert turns.write_stats.failed == 0
    assert state is not None and state.version == count
    counters = decode(state.state).recall
    assert counters.searches + counters.saved == 2 * count


async def test_a_transient_write_failure_is_retried(demo_stores: Stores) -> None:
    """A trace write that fails transiently twice is retried and lands; nothing counts as failed."""
    flaky = FailingStore(
        demo_stores.traces, TransientStoreError("busy", store="traces"), times=2, methods=("put",)
    )
    async with orchestrator(demo_stores.replace(traces=flaky)) as turns:
        result = await turns.start_turn(demo_request())
        await turns.wait_background()
    assert flaky.failures == 2
    assert turns.write_stats.failed == 0
    assert await demo_stores.traces.get(TENANT, result.context.turn_id) is not None
