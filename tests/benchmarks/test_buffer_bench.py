"""Working-memory buffer benchmarks: add, access and evict on a full 64-item buffer; phase 10.

Run with ``make bench`` or
``pytest tests/benchmarks/test_buffer_bench.py --benchmark-only``. Figures are
reported, not asserted. The buffer's async operations never suspend with the
default (extractive) summarizer, so they are driven here without an event
loop (:func:`drive`); phase 10 runs through a blocking portal, whose own cost
is measured beside it.
"""

from __future__ import annotations

import itertools
from collections.abc import Coroutine, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal

from prefrontal import Orchestrator, Stores
from prefrontal.buffer import (
    BufferConfig,
    Focus,
    NewItem,
    OverflowPolicy,
    WorkingMemoryBuffer,
)
from prefrontal.buffer.policies import EvictionContext, Need, select_victims
from prefrontal.demo import DEMO_AGENT, DEMO_SESSION, DEMO_USER, SAMPLE_INPUT, seed
from prefrontal.orchestrator.runner import run_phases
from prefrontal.phases import PHASES, working_memory_init
from prefrontal.phases.session import load_session
from prefrontal.phases.state import TurnState
from prefrontal.stores.memory import InMemoryWorkingMemoryStore
from prefrontal.turn import TurnRequest

T = TypeVar("T")
T0 = datetime(2026, 11, 22, 10, 0, tzinfo=UTC)
FOCUS = Focus(input_text="launch payment provider review", tags=("launch",))
TEXT = (
    "Note {n}: the payment provider review for the December launch is tracked by the "
    "release team; escalate if it slips past Friday."
)


def drive(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine that never suspends to its result, without an event loop."""
    try:
        coroutine.send(None)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]
    coroutine.close()
    raise RuntimeError("the coroutine suspended: it needs an event loop")


def words(text: str) -> int:
    return len(text.split())


def full_buffer(policy: OverflowPolicy) -> WorkingMemoryBuffer:
    """64 items of about 28 tokens each, touched at different times, a few tagged."""
    config = BufferConfig(policy=policy, base_threshold=0.0)
    buffer = WorkingMemoryBuffer(config, count_tokens=words)
    for n in range(64):
        item = NewItem(
            content=TEXT.format(n=n),
            tokens=words(TEXT),
            priority=(n % 10) / 10,
            tags=("launch",) if n % 4 == 0 else (),
            entities=("Acme Pay",),
        )
        drive(buffer.add(item, focus=FOCUS, now=T0 + timedelta(seconds=n)))
    buffer.refresh_themes()
    assert len(buffer) == 64
    return buffer


@pytest.mark.parametrize("policy", list(OverflowPolicy))
def test_add_to_a_full_buffer(benchmark, policy: OverflowPolicy) -> None:  # type: ignore[no-untyped-def]
    """Admit one new item into a full 64-item buffer: score, evict one, insert."""
    buffer = full_buffer(policy)
    counter = itertools.count(100)
    now = T0 + timedelta(seconds=120)

    def add() -> None:
        n = next(counter)
        item = NewItem(content=TEXT.format(n=n), tokens=28, priority=0.5)
        drive(buffer.add(item, focus=FOCUS, now=now))

    benchmark(add)
    assert len(buffer) <= 64


def test_access_in_a_full_buffer(benchmark) -> None:  # type: ignore[no-untyped-def]
    """Touch one item of a full 64-item buffer (last access, access count)."""
    buffer = full_buffer(OverflowPolicy.COMPOSITE)
    ids = itertools.cycle([i.item_id for i in buffer.items])
    now = T0 + timedelta(seconds=120)
    benchmark(lambda: buffer.access(next(ids), now=now))


@pytest.mark.parametrize(
    "policy", [OverflowPolicy.LRU, OverflowPolicy.PRIORITY, OverflowPolicy.COMPOSITE]
)
def test_evict_from_a_full_buffer(benchmark, policy: OverflowPolicy) -> None:  # type: ignore[no-untyped-def]
    """Choose the victim of a full 64-item buffer under the policy and remove it."""
    snapshot = full_buffer(policy).snapshot()
    now = T0 + timedelta(seconds=120)

    def setup() -> tuple[tuple[WorkingMemoryBuffer], dict[str, Any]]:
        return (WorkingMemoryBuffer.restore(snapshot, count_tokens=words),), {}

    def evict(buffer: WorkingMemoryBuffer) -> None:
        ctx = EvictionContext(now=now, config=buffer.config, themes=frozenset(buffer.themes))
        victims = select_victims(tuple(buffer.items), Need(tokens=0, items=1), ctx)
        assert victims
        for victim, _ in victims:
            buffer.remove(victim.item_id, now=now)

    benchmark.pedantic(evict, setup=setup, rounds=2_000, iterations=1)


@pytest.fixture(scope="module")
def portal() -> Iterator[BlockingPortal]:
    with start_blocking_portal(backend="asyncio") as portal:
        yield portal


async def _noop() -> None:
    return None


def test_portal_call_cost(benchmark, portal: BlockingPortal) -> None:  # type: ignore[no-untyped-def]
    """One blocking-portal call, to subtract from the phase 10 figures."""
    benchmark(portal.call, _noop)


async def _turn_before_phase_10() -> TurnState:
    stores = Stores.in_memory()
    await seed(stores)
    request = TurnRequest(
        agent_id=DEMO_AGENT, user_id=DEMO_USER, session_id=DEMO_SESSION, user_input=SAMPLE_INPUT
    )
    turn = Orchestrator(stores, clock=lambda: T0)._new_turn(request)
    await run_phases(PHASES[:9], turn, sequential=True)
    return turn


def test_phase_10_new_session(benchmark, portal: BlockingPortal) -> None:  # type: ignore[no-untyped-def]
    """Phase 10 on the demo turn's bundle into a new session: admit every fragment, save."""
    turn = portal.call(_turn_before_phase_10)

    def setup() -> tuple[tuple[()], dict[str, Any]]:
        turn.stores = turn.stores.replace(working_memory=InMemoryWorkingMemoryStore())
        turn.buffer = portal.call(load_session, turn, "bench")
        return (), {}

    benchmark.pedantic(
        lambda: portal.call(working_memory_init.run, turn), setup=setup, rounds=200, iterations=1
    )
    assert turn.working_memory is not None
    benchmark.extra_info.update(fragments=len(turn.bundle.fragments) if turn.bundle else 0)


def test_phase_10_continuing_session(benchmark, portal: BlockingPortal) -> None:  # type: ignore[no-untyped-def]
    """Phase 10 on the demo turn's bundle into the session it already refreshed: refresh, save."""
    turn = portal.call(_turn_before_phase_10)
    portal.call(working_memory_init.run, turn)

    def setup() -> tuple[tuple[()], dict[str, Any]]:
        turn.buffer = portal.call(load_session, turn, "bench")
        return (), {}

    benchmark.pedantic(
        lambda: portal.call(working_memory_init.run, turn), setup=setup, rounds=200, iterations=1
    )
