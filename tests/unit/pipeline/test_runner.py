"""The runner: concurrency, deadlines, cancellation, failing and flaky stores."""

from __future__ import annotations

import math
import time
from typing import Any

import anyio
import pytest

from prefrontal import PhaseStatus, Section, Stores, TransientStoreError, TurnStatus
from prefrontal.demo import seed
from prefrontal.errors import StoreError
from prefrontal.testing import DelayedStore, FailingStore
from tests.conftest import demo_request, orchestrator
from tests.pace import allowance_ms, collector_paused, healthy_turn_ms

pytestmark = pytest.mark.anyio

SPEC_LATENCIES = {
    "consciousness": 0.10,
    "frontal_cortex": 0.10,
    "conversation": 0.10,
    "episodic": 0.15,
    "semantic": 0.15,
    "scratch_page": 0.05,
}


def delayed(stores: Stores, seconds: dict[str, float]) -> Stores:
    return stores.replace(
        **{kind: DelayedStore(getattr(stores, kind), s) for kind, s in seconds.items()}
    )


def window(result: Any, name: str) -> tuple[float, float]:
    record = result.trace.phase(name)
    return record.started_ms, record.started_ms + record.duration_ms


async def test_phases_two_three_four_and_seven_load_concurrently(demo_stores: Stores) -> None:
    """With slow stores, phases 2, 3, 4 and 7 run at the same time: each starts before any ends."""
    result = await orchestrator(delayed(demo_stores, SPEC_LATENCIES)).start_turn(demo_request())
    windows = [
        window(result, n)
        for n in ("consciousness", "frontal_cortex", "conversation", "scratch_page")
    ]
    assert max(start for start, _ in windows) < min(end for _, end in windows)


async def test_episodic_and_semantic_start_after_goals_and_conversation(
    demo_stores: Stores,
) -> None:
    """Phases 5 and 6 wait for 3 and 4, then overlap each other."""
    result = await orchestrator(delayed(demo_stores, SPEC_LATENCIES)).start_turn(demo_request())
    needs_end = max(window(result, "frontal_cortex")[1], window(result, "conversation")[1])
    episodic, semantic = window(result, "episodic"), window(result, "semantic")
    assert episodic[0] >= needs_end and semantic[0] >= needs_end
    assert max(episodic[0], semantic[0]) < min(episodic[1], semantic[1])


async def test_sequential_mode_runs_one_phase_at_a_time(demo_stores: Stores) -> None:
    """``concurrency="sequential"`` runs the same phases one after another, in tuple order."""
    stores = delayed(demo_stores, dict.fromkeys(SPEC_LATENCIES, 0.01))
    result = await orchestrator(stores, concurrency="sequential").start_turn(demo_request())
    ends = 0.0
    for record in result.trace.phases:
        assert record.started_ms >= ends - 0.001
        ends = record.started_ms + record.duration_ms


async def test_sequential_and_graph_give_the_same_bundle() -> None:
    """Output order is fixed whatever finishes first: both modes build the same bundle."""
    bundles = []
    for mode in ("graph", "sequential"):
        stores = Stores.in_memory()
        await seed(stores)
        slow = delayed(stores, {"consciousness": 0.03, "conversation": 0.01})
        bundles.append(await orchestrator(slow, concurrency=mode).start_turn(demo_request()))
    graph, sequential = bundles
    assert graph.bundle.text == sequential.bundle.text
    assert graph.bundle.checksum == sequential.bundle.checksum


async def test_a_store_that_never_answers_is_cut_at_the_deadline(demo_stores: Stores) -> None:
    """A hung store: the turn returns within the deadline plus 50 ms (and a loaded machine's
    pace, :mod:`tests.pace`), its phase timed out, the rest present."""
    stores = demo_stores.replace(episodic=DelayedStore(demo_stores.episodic, math.inf))
    before = await healthy_turn_ms()
    turns = orchestrator(stores, deadline_ms=1_000)
    with collector_paused():
        started = time.monotonic()
        result = await turns.start_turn(demo_request())
        elapsed_ms = (time.monotonic() - started) * 1_000
    bound_ms = 1_000 + allowance_ms(50, before, await healthy_turn_ms())
    assert elapsed_ms < bound_ms, (elapsed_ms, bound_ms)
    assert result.trace.phase("episodic").status is PhaseStatus.TIMEOUT
    assert result.trace.status is TurnStatus.DEGRADED
    assert not result.bundle.section(Section.EPISODIC)
    for section in (
        Section.CONSCIOUSNESS,
        Section.FRONTAL_CORTEX,
        Section.CONVERSATION,
        Section.SEMANTIC,
    ):
        assert result.bundle.section(section), section
    assert result.ready_for_router


async def test_phases_waiting_on_a_hung_dependency_are_reported(demo_stores: Stores) -> None:
    """When goals never load, phase 3 is cut in time for 5 and 6 to run, degraded, without them."""
    stores = demo_stores.replace(frontal_cortex=DelayedStore(demo_stores.frontal_cortex, math.inf))
    result = await orchestrator(stores, deadline_ms=400).start_turn(demo_request())
    assert result.trace.phase("frontal_cortex").status is PhaseStatus.TIMEOUT
    for name in ("episodic", "semantic"):
        assert result.trace.phase(name).status is PhaseStatus.DEGRADED
    for section in (Section.CONVERSATION, Section.EPISODIC, Section.SEMANTIC):
        assert result.bundle.section(section)
    assert not result.bundle.section(Section.FRONTAL_CORTEX)


async def test_a_failing_store_degrades_its_phase_not_the_turn(demo_stores: Stores) -> None:
    """A store that raises: its phase is failed with the error recorded, the other sections fill the budget."""
    healthy = await orchestrator(demo_stores).start_turn(demo_request(token_budget=800))
    broken = demo_stores.replace(
        semantic=FailingStore(demo_stores.semantic, StoreError("disk gone", store="semantic"))
    )
    result = await orchestrator(broken).start_turn(demo_request(token_budget=800))
    record = result.trace.phase("semantic")
    assert record.status is PhaseStatus.FAILED
    assert record.errors[0].type == "StoreError"
    assert record.errors[0].message == "disk gone"
    assert record.errors[0].store == "semantic"
    assert not result.bundle.section(Section.SEMANTIC)
    assert result.ready_for_router
    others = sum(v for k, v in result.bundle.source_breakdown.items() if k != "semantic")
    healthy_others = sum(v for k, v in healthy.bundle.source_breakdown.items() if k != "semantic")
    assert others > healthy_others, "the failed section's share went to the others"


async def test_transient_errors_are_retried(demo_stores: Stores) -> None:
    """A store that fails twice with a transient error and then answers: the phase succeeds, degraded, 3 attempts."""
    flaky = FailingStore(
        demo_stores.scratch_page, TransientStoreError("busy", store="scratch_page"), times=2
    )
    result = await orchestrator(demo_stores.replace(scratch_page=flaky)).start_turn(demo_request())
    record = result.trace.phase("scratch_page")
    assert record.status is PhaseStatus.DEGRADED
    assert record.attempts == 3
    assert result.bundle.section(Section.SCRATCH_PAGE)


async def test_non_transient_errors_are_not_retried(demo_stores: Stores) -> None:
    """A plain store error fails on the first attempt."""
    broken = FailingStore(demo_stores.scratch_page, StoreError("bad query", store="scratch_page"))
    result = await orchestrator(demo_stores.replace(scratch_page=broken)).start_turn(demo_request())
    assert broken.failures == 1
    assert result.trace.phase("scratch_page").attempts == 1
    assert result.trace.phase("scratch_page").status is PhaseStatus.FAILED


async def test_a_failing_search_fails_its_phase_with_the_store_error(demo_stores: Stores) -> None:
    """Phase 5 searches input and context concurrently; a failing store is reported as its own error."""
    broken = FailingStore(
        demo_stores.episodic, StoreError("index offline", store="episodic"), methods=("search",)
    )
    result = await orchestrator(demo_stores.replace(episodic=broken)).start_turn(demo_request())
    record = result.trace.phase("episodic")
    assert record.status is PhaseStatus.FAILED
    assert (record.errors[0].type, record.errors[0].message) == ("StoreError", "index offline")


async def test_a_failing_trace_store_still_returns_the_context(demo_stores: Stores) -> None:
    """A trace that cannot be written leaves the context whole and the turn ok; it is counted."""
    stores = demo_stores.replace(
        traces=FailingStore(demo_stores.traces, StoreError("read-only", store="traces"))
    )
    turns = orchestrator(stores)
    result = await turns.start_turn(demo_request())
    assert result.trace.phase("finalize").status is PhaseStatus.OK
    assert result.trace.status is TurnStatus.OK
    assert result.bundle.fragments
    assert result.ready_for_router
    assert (turns.write_stats.failed, turns.write_stats.written) == (1, 3)  # buffer, 2 recalls


class ProbeStore:
    """Wraps a store; records how each call ended."""

    def __init__(self, store: Any, seconds: float) -> None:
        self.inner = DelayedStore(store, seconds)
        self.finished = 0
        self.cancelled = 0

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.inner, name)

        async def probed(*args: Any, **kwargs: Any) -> Any:
            try:
                value = await method(*args, **kwargs)
            except anyio.get_cancelled_exc_class():
                self.cancelled += 1
                raise
            self.finished += 1
            return value

        return probed


async def test_cancelling_start_turn_cancels_every_phase(demo_stores: Stores) -> None:
    """A caller who cancels gets nothing left running: slow calls are cancelled, none finishes later."""
    probes = {kind: ProbeStore(getattr(demo_stores, kind), 0.2) for kind in SPEC_LATENCIES}
    orch = orchestrator(demo_stores.replace(**probes))
    with anyio.move_on_after(0.05):
        await orch.start_turn(demo_request())
    await anyio.sleep(0.3)
    # phases 2, 3 and 7 make one call each; phase 4 two (recent turns and summary)
    assert sum(p.cancelled for p in probes.values()) == 5
    assert sum(p.finished for p in probes.values()) == 0


async def test_a_phase_over_its_time_budget_is_a_warning(demo_stores: Stores) -> None:
    """A phase slower than its budget still succeeds, with a warning in the trace."""
    stores = delayed(demo_stores, {"scratch_page": 0.08})
    result = await orchestrator(stores).start_turn(demo_request())
    record = result.trace.phase("scratch_page")
    assert record.status is PhaseStatus.OK
    assert record.over_budget
    assert any("over its 50 ms budget" in w for w in record.warnings)
    assert any(w.startswith("scratch_page:") for w in result.warnings)
