"""``end_turn`` on a SQLite store of 100,000 episodic items (no extractor).

Run with ``make bench`` or
``pytest tests/benchmarks/test_end_turn_bench.py --benchmark-only -p no:randomly -s``.
The file is built once per module (bulk ``put_many`` of the synthetic
corpus, the demo agent seeded). Each round ends a turn started in the
round's untimed set-up, one session, each turn the previous one's child, so
the rolling summary folds on every call once the window is full: the
steady state of an agent loop. ``synchronous=FULL`` (an fsync per commit),
the default. Timed through the portal (``test_turn_bench.py::test_portal_call_cost``
measures its cost) and, in ``extra_info`` and printed, inside the event
loop as an application sees it. Figures are reported, not asserted.
"""

from __future__ import annotations

import itertools
import statistics
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal

from prefrontal import Orchestrator, OrchestratorConfig, TurnRequest, TurnResult
from prefrontal.demo import DEMO_AGENT, DEMO_USER, seed
from prefrontal.stores import Stores, Tenant, sqlite
from prefrontal.testing.synthetic import memories
from tests.endturn_support import Ticking

pytestmark = pytest.mark.timeout(3_600)  # building 100,000 items takes minutes on a busy machine
SIZE = 100_000
TENANT = Tenant(agent_id=DEMO_AGENT, user_id=DEMO_USER)
ROUNDS = 100


@pytest.fixture(scope="module")
def portal() -> Iterator[BlockingPortal]:
    with start_blocking_portal(backend="asyncio") as portal:
        yield portal


@pytest.fixture(scope="module")
def stores(portal: BlockingPortal, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stores]:
    """One SQLite file of 100,000 episodic items with the demo agent seeded."""
    built = portal.call(_build, tmp_path_factory.mktemp("end-turn-bench") / "bench.db")
    yield built
    portal.call(built.aclose)


async def _build(path: Path) -> Stores:
    stores = sqlite.open_stores(path)
    items = memories(SIZE, tenant=TENANT)
    while batch := list(itertools.islice(items, 5_000)):
        await stores.episodic.put_many(batch)
    await seed(stores)
    return stores


class Loop:
    """An agent loop in one session: each turn the child of the last."""

    def __init__(self, stores: Stores, session: str) -> None:
        config = OrchestratorConfig(deadline_ms=30_000)
        self.orchestrator = Orchestrator(stores, config, clock=Ticking())
        self.session, self.parent = session, None
        self.numbers = itertools.count(1)
        self.steps: dict[str, list[float]] = {}
        """Each end-turn step's durations (seconds), as the traces record them."""

    def request(self) -> TurnRequest:
        number = next(self.numbers)
        return TurnRequest(
            agent_id=DEMO_AGENT,
            user_id=DEMO_USER,
            session_id=self.session,
            user_input=f"Question {number}: is the payment review for the launch on track?",
            parent_turn_id=self.parent,
        )

    def reply(self, result: TurnResult) -> str:
        self.parent = result.context.turn_id  # type: ignore[assignment]
        return f"Answer to {result.context.turn_id}: Lena signs it off on Friday. Nothing else."

    async def timed_ends(self, rounds: int) -> list[float]:
        """``rounds`` turns; the end of each timed in the event loop, its steps kept."""
        times = []
        for _ in range(rounds):
            result = await self.orchestrator.start_turn(self.request())
            reply = self.reply(result)
            started = time.perf_counter()
            ended = await self.orchestrator.end_turn(result, reply)
            times.append(time.perf_counter() - started)
            for step in ended.trace.steps:
                self.steps.setdefault(step.name, []).append(step.duration_ms / 1_000)
        return times

    async def timed_starts(self, rounds: int) -> list[float]:
        """``rounds`` turns, each ended; the start of each timed in the event loop."""
        times = []
        for _ in range(rounds):
            started = time.perf_counter()
            result = await self.orchestrator.start_turn(self.request())
            times.append(time.perf_counter() - started)
            await self.orchestrator.end_turn(result, self.reply(result))
        return times


def _report(benchmark: Any, name: str, times: list[float]) -> None:
    cuts = statistics.quantiles(times, n=100)
    key = "in_loop" if not name.startswith(" ") else name.split()[-1]
    benchmark.extra_info.update({f"{key}_p50_ms": cuts[49] * 1e3, f"{key}_p95_ms": cuts[94] * 1e3})
    print(
        f"\n{name} at {SIZE}: in the loop p50 {cuts[49] * 1e3:.2f} ms, p95 {cuts[94] * 1e3:.2f} ms"
    )


def test_end_turn_on_100k(benchmark: Any, portal: BlockingPortal, stores: Stores) -> None:
    """One end_turn (exchange, summary fold, buffer, consolidation) on the 100,000-item store."""
    loop = Loop(stores, "bench-end")
    portal.call(loop.timed_ends, 20)  # warm-up: the window fills, folds begin
    loop.steps.clear()
    in_loop = portal.call(loop.timed_ends, ROUNDS)

    def setup() -> tuple[tuple[TurnResult, str], dict[str, Any]]:
        result = portal.call(loop.orchestrator.start_turn, loop.request())
        return (result, loop.reply(result)), {}

    def end(result: TurnResult, reply: str) -> bool:
        return portal.call(loop.orchestrator.end_turn, result, reply).written

    benchmark.pedantic(end, setup=setup, rounds=ROUNDS, iterations=1)
    _report(benchmark, "end_turn", in_loop)
    for name, times in loop.steps.items():
        _report(benchmark, f"  step {name}", times)


def test_start_turn_in_an_ended_loop_on_100k(
    benchmark: Any, portal: BlockingPortal, stores: Stores
) -> None:
    """One start_turn in a session whose earlier turns were ended (history, summary, buffer)."""
    loop = Loop(stores, "bench-start")
    portal.call(loop.timed_starts, 20)
    in_loop = portal.call(loop.timed_starts, 50)

    started: list[TurnResult] = []

    def end_the_last() -> tuple[tuple[()], dict[str, Any]]:
        if started:
            result = started.pop()
            portal.call(loop.orchestrator.end_turn, result, loop.reply(result))
        return (), {}

    def start() -> bool:
        started.append(portal.call(loop.orchestrator.start_turn, loop.request()))
        return started[-1].ready_for_router

    benchmark.pedantic(start, setup=end_the_last, rounds=30, iterations=1)
    _report(benchmark, "start_turn (ended loop)", in_loop)
