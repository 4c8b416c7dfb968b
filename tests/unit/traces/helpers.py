"""Shared set-up for the trace tests: a seeded demo turn, run synchronously, and small traces."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from datetime import UTC, datetime, timedelta
from typing import TypeVar

import anyio

from prefrontal import Orchestrator, OrchestratorConfig, Stores, TurnRequest, TurnResult
from prefrontal.demo import DEMO_AGENT, DEMO_SESSION, DEMO_USER, SAMPLE_INPUT, seed
from prefrontal.traces.models import TurnStatus, TurnTrace
from prefrontal.traces.observe import Observer
from tests.conftest import fixed_clock

T = TypeVar("T")
T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


def small_trace(turn_id: str, minute: int, **changes: object) -> TurnTrace:
    """An ok trace of atlas, maya and session ``s1`` started ``minute`` minutes after ``T0``."""
    fields: dict[str, object] = {
        "turn_id": turn_id,
        "agent_id": "atlas",
        "user_id": "maya",
        "session_id": "s1",
        "started_at": T0 + timedelta(minutes=minute),
        "duration_ms": 12.0,
        "deadline_ms": 1_000.0,
        "status": TurnStatus.OK,
        "total_budget": 4_000,
        "total_tokens": 900,
        "checksum": "c",
        "ready_for_router": True,
        "phases": (),
    }
    return TurnTrace.model_validate(fields | changes)


def run(fn: Callable[[], Awaitable[T]]) -> T:
    """Run ``fn`` on a fresh event loop and return its result."""
    return anyio.run(fn)


def request(**changes: object) -> TurnRequest:
    """The demo agent's sample request, with ``changes``."""
    fields: dict[str, object] = {
        "agent_id": DEMO_AGENT,
        "user_id": DEMO_USER,
        "session_id": DEMO_SESSION,
        "user_input": SAMPLE_INPUT,
    }
    return TurnRequest.model_validate(fields | changes)


async def demo_turn(
    observers: Iterable[Observer] = (),
    stores: Stores | None = None,
    config: OrchestratorConfig | None = None,
    **changes: object,
) -> TurnResult:
    """One turn of the demo agent: on ``stores`` as given, or on seeded in-memory stores."""
    if stores is None:
        stores = Stores.in_memory()
        await seed(stores)
    orchestrator = Orchestrator(stores, config, clock=fixed_clock, observers=observers)
    return await orchestrator.start_turn(request(**changes))
