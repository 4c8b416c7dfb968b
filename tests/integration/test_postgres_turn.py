"""A whole turn on PostgreSQL: the same context as in memory, and sessions shared across pools."""

from __future__ import annotations

import pytest

from prefrontal import Stores
from prefrontal.demo import DEMO_AGENT, DEMO_SESSION, DEMO_USER, seed
from prefrontal.phases import PHASE_NAMES
from prefrontal.stores import SessionKey, Tenant, postgres
from prefrontal.traces.models import TurnStatus
from tests.conftest import demo_request, orchestrator

pytestmark = pytest.mark.anyio
TENANT = Tenant(agent_id=DEMO_AGENT, user_id=DEMO_USER)
KEY = SessionKey(agent_id=DEMO_AGENT, user_id=DEMO_USER, session_id=DEMO_SESSION)
# A pool's first turn opens connections and looks up types; on a loaded machine that outlasts
# the phases' default budgets, and a cut phase changes the bundle. These tests are about what a
# turn finds, not its speed.
ROOMY = dict.fromkeys(PHASE_NAMES, 5_000)


async def test_a_turn_on_postgres_builds_the_in_memory_bundle(
    postgres_dsn: str, postgres_schema: str
) -> None:
    """The demo agent seeded in both backends: the turn's bundle is the same, text and checksum."""
    memory = Stores.in_memory()
    await seed(memory)
    shared = postgres.open_stores(postgres_dsn, schema=postgres_schema)
    try:
        await seed(shared)
        expected = await orchestrator(
            memory, deadline_ms=10_000, phase_budgets_ms=ROOMY
        ).start_turn(demo_request())
        got = await orchestrator(shared, deadline_ms=10_000, phase_budgets_ms=ROOMY).start_turn(
            demo_request()
        )
        assert got.trace.status is TurnStatus.OK, got.warnings
        assert got.bundle.text == expected.bundle.text
        assert got.bundle.checksum == expected.bundle.checksum
        assert await shared.traces.get(TENANT, got.trace.turn_id) is not None
    finally:
        await shared.aclose()


async def test_a_second_process_continues_the_session(
    postgres_dsn: str, postgres_schema: str
) -> None:
    """A turn run through another pool finds the working memory the first one saved."""
    first = postgres.open_stores(postgres_dsn, schema=postgres_schema)
    second = postgres.open_stores(postgres_dsn, schema=postgres_schema)
    try:
        await seed(first)
        one = await orchestrator(first, deadline_ms=10_000, phase_budgets_ms=ROOMY).start_turn(
            demo_request()
        )
        two = await orchestrator(second, deadline_ms=10_000, phase_budgets_ms=ROOMY).start_turn(
            demo_request(parent_turn_id=one.trace.turn_id)
        )
        assert two.trace.status is TurnStatus.OK, two.warnings
        state = await second.working_memory.load(KEY)
        assert state is not None
        assert state.version == 2
    finally:
        await first.aclose()
        await second.aclose()
