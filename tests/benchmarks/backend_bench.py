"""What every durable backend's benchmark measures alike: top-10 search and a whole turn."""

from __future__ import annotations

import itertools
import statistics
import time
from typing import Any

from anyio.from_thread import BlockingPortal

from prefrontal import Orchestrator, TurnRequest
from prefrontal.demo import DEMO_AGENT, DEMO_SESSION, DEMO_USER, SAMPLE_INPUT
from prefrontal.stores import MemoryQuery, MemoryStore, Stores, Tenant
from prefrontal.testing.synthetic import questions
from tests.conftest import FIXED_NOW, fixed_clock


def bench_search(
    benchmark: Any, portal: BlockingPortal, store: MemoryStore, tenant: Tenant, rounds: int
) -> None:
    """Time ``rounds`` top-10 searches (200 questions, round robin) through the portal and in the loop.

    pytest-benchmark times the calls through ``portal``; the same number of
    searches timed inside the event loop, as an application sees them, go
    into ``extra_info`` and are printed.
    """
    asked = itertools.cycle([MemoryQuery(text=q, limit=10, now=FIXED_NOW) for q in questions(200)])
    for _ in range(50):
        portal.call(store.search, tenant, next(asked))
    hits = benchmark.pedantic(
        lambda: portal.call(store.search, tenant, next(asked)), rounds=rounds, iterations=1
    )
    assert hits
    in_loop = portal.call(_timed_searches, store, tenant, [next(asked) for _ in range(rounds)])
    cuts = statistics.quantiles(in_loop, n=100)
    benchmark.extra_info.update(in_loop_p50_ms=cuts[49] * 1e3, in_loop_p95_ms=cuts[94] * 1e3)
    print(f"in the loop p50 {cuts[49] * 1e3:.2f} ms, p95 {cuts[94] * 1e3:.2f} ms")


async def _timed_searches(
    store: MemoryStore, tenant: Tenant, queries: list[MemoryQuery]
) -> list[float]:
    times = []
    for query in queries:
        started = time.perf_counter()
        await store.search(tenant, query)
        times.append(time.perf_counter() - started)
    return times


def bench_whole_turn(benchmark: Any, portal: BlockingPortal, stores: Stores) -> None:
    """Time one whole turn (all eleven phases, trace written) on ``stores``, each in a new session."""
    orchestrator = Orchestrator(stores, clock=fixed_clock)
    sessions = (f"{DEMO_SESSION}-{n}" for n in itertools.count())

    def turn() -> bool:
        request = TurnRequest(
            agent_id=DEMO_AGENT,
            user_id=DEMO_USER,
            session_id=next(sessions),
            user_input=SAMPLE_INPUT,
        )
        return portal.call(orchestrator.start_turn, request).ready_for_router

    for _ in range(5):
        turn()
    assert benchmark.pedantic(turn, rounds=30, iterations=1)
