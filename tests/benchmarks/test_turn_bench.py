"""Turn pipeline benchmarks: overhead, concurrency gain, many turns at once.

Run with ``make bench`` (skipped by ``make test``). Figures are reported, not
asserted: a noisy machine must not fail the suite. Speeds are compared as
ratios measured in the same run.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager

import anyio
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal

from prefrontal import Orchestrator, OrchestratorConfig, Stores, TurnRequest
from prefrontal.demo import DEMO_AGENT, DEMO_SESSION, DEMO_USER, SAMPLE_INPUT, seed
from prefrontal.testing import DelayedStore
from tests.conftest import fixed_clock

READS = ("get_profile", "query", "recent", "get_summary", "search", "around", "active")
"""The loading calls of phases 2-7: the specification's latencies are theirs."""
SPEC_LATENCIES = {
    "consciousness": 0.100,
    "frontal_cortex": 0.100,
    "conversation": 0.100,
    "episodic": 0.150,
    "semantic": 0.150,
    "scratch_page": 0.050,
}


@pytest.fixture(scope="module")
def portal() -> Iterator[BlockingPortal]:
    with start_blocking_portal(backend="asyncio") as portal:
        yield portal


def request(session: str = DEMO_SESSION) -> TurnRequest:
    return TurnRequest(
        agent_id=DEMO_AGENT, user_id=DEMO_USER, session_id=session, user_input=SAMPLE_INPUT
    )


async def seeded() -> Stores:
    stores = Stores.in_memory()
    await seed(stores)
    return stores


def slowed(stores: Stores) -> Stores:
    return stores.replace(
        **{k: DelayedStore(getattr(stores, k), s, methods=READS) for k, s in SPEC_LATENCIES.items()}
    )


async def _noop() -> None:
    return None


def test_portal_call_cost(benchmark, portal: BlockingPortal) -> None:  # type: ignore[no-untyped-def]
    """The cost of one blocking-portal call, to subtract from the per-turn figure below."""
    benchmark(portal.call, _noop)


def test_framework_overhead_per_turn(benchmark, portal: BlockingPortal) -> None:  # type: ignore[no-untyped-def]
    """One whole turn on the demo data with instant in-memory stores (subtract the portal's cost)."""
    stores = portal.call(seeded)
    orchestrator = Orchestrator(stores, clock=fixed_clock)
    for _ in range(20):
        portal.call(orchestrator.start_turn, request())
    result = benchmark(portal.call, orchestrator.start_turn, request())
    assert result.ready_for_router


def test_concurrent_against_sequential_wall_time(benchmark, portal: BlockingPortal) -> None:  # type: ignore[no-untyped-def]
    """With the specification's store latencies, the graph's wall time over the sequential run's."""
    stores = slowed(portal.call(seeded))
    graph = Orchestrator(stores, clock=fixed_clock)
    sequential = Orchestrator(
        stores, OrchestratorConfig(concurrency="sequential", deadline_ms=5_000), clock=fixed_clock
    )

    def both() -> tuple[float, float]:
        started = time.perf_counter()
        portal.call(graph.start_turn, request())
        middle = time.perf_counter()
        portal.call(sequential.start_turn, request())
        return middle - started, time.perf_counter() - middle

    pairs = benchmark.pedantic(both, rounds=5, iterations=1)
    graph_s, sequential_s = both()
    ratio = graph_s / sequential_s
    benchmark.extra_info.update(
        graph_ms=graph_s * 1e3, sequential_ms=sequential_s * 1e3, ratio=ratio
    )
    print(
        f"\ngraph {graph_s * 1e3:.1f} ms, sequential {sequential_s * 1e3:.1f} ms, ratio {ratio:.3f}"
    )
    assert pairs is not None


GC_THRESHOLD_RAISED = (50_000, 20, 20)
"""A gen-0 threshold that collects about seventy times less often than CPython's default (700)."""


@contextmanager
def gc_threshold(threshold: tuple[int, int, int] | None) -> Iterator[None]:
    """Run with ``threshold`` as the collector's (``None``: as it is), restored afterwards."""
    before = gc.get_threshold()
    if threshold is not None:
        gc.set_threshold(*threshold)
    try:
        yield
    finally:
        gc.set_threshold(*before)


def thousand_turns(portal: BlockingPortal, orchestrator: Orchestrator) -> tuple[list[float], float]:
    """1,000 turns started at once, each in a session of its own: latencies and wall time."""

    async def many() -> tuple[list[float], float]:
        latencies: list[float] = []

        async def one(n: int) -> None:
            started = time.perf_counter()
            await orchestrator.start_turn(request(session=f"bench-{n}"))
            latencies.append(time.perf_counter() - started)

        started = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for n in range(1_000):
                tg.start_soon(one, n)
        return latencies, time.perf_counter() - started

    return portal.call(many)


def test_one_thousand_concurrent_turns(benchmark, portal: BlockingPortal) -> None:  # type: ignore[no-untyped-def]
    """1,000 turns at once in one process, stores at the specification's latencies: p50, p99, turns/s.

    Run twice in fresh stores: with the collector as the interpreter set it,
    and with :data:`GC_THRESHOLD_RAISED`; the ratio of the two rates is what
    tuning the collector buys (``docs/production.md``).
    """

    def run(threshold: tuple[int, int, int] | None) -> tuple[list[float], float]:
        stores = slowed(portal.call(seeded))
        orchestrator = Orchestrator(
            stores,
            OrchestratorConfig(deadline_ms=30_000, admission={"max_turns_in_flight": None}),
            clock=fixed_clock,
        )
        gc.collect()
        with gc_threshold(threshold):
            return thousand_turns(portal, orchestrator)

    latencies, wall = benchmark.pedantic(lambda: run(None), rounds=1, iterations=1)
    tuned_latencies, tuned_wall = run(GC_THRESHOLD_RAISED)
    for key, lat, seconds in (
        ("default", latencies, wall),
        ("raised", tuned_latencies, tuned_wall),
    ):
        cuts = statistics.quantiles(lat, n=100)
        benchmark.extra_info.update(
            {
                f"{key}_p50_ms": cuts[49] * 1e3,
                f"{key}_p99_ms": cuts[98] * 1e3,
                f"{key}_turns_per_s": 1_000 / seconds,
            }
        )
        print(
            f"\n1000 turns, {key} gc: p50 {cuts[49] * 1e3:.0f} ms, p99 {cuts[98] * 1e3:.0f} ms, "
            f"{1_000 / seconds:.0f} turns/s"
        )
    print(f"raised over default, turns/s: {wall / tuned_wall:.2f}")
    assert len(latencies) == len(tuned_latencies) == 1_000
