"""Session recall: an explicit search always searches, and its hits join the session's buffer."""

from __future__ import annotations

import pytest

from prefrontal import Orchestrator, Stores
from prefrontal.budgets.tokens import default_counter
from prefrontal.demo import DEMO_AGENT, DEMO_USER, seed
from prefrontal.serving.determinism import CountingIds, SteppedClock
from prefrontal.serving.recall import session_recall
from prefrontal.stores.tenancy import Tenant
from tests.conftest import FIXED_NOW

pytestmark = pytest.mark.anyio
TENANT = Tenant(agent_id=DEMO_AGENT, user_id=DEMO_USER)


async def test_an_explicit_search_always_searches() -> None:
    """The same query twice searches twice (the gate serves turns); a memory stored between
    the two is found by the second; the hits join the session's buffer."""
    stores = Stores.in_memory()
    await seed(stores)
    clock = SteppedClock(FIXED_NOW)
    orchestrator = Orchestrator(stores, clock=clock, ids=CountingIds())
    counter = default_counter()

    async def recall(query: str, session: str = "s-1") -> tuple[str, str, list[str]]:
        clock.advance()
        found = await session_recall(
            orchestrator, TENANT, session, query, top_k=5, clock=clock, counter=counter
        )
        return found.mode, found.reason, [m.item_id for m in found.memories]

    first = await recall("payment review launch date")
    stored = await orchestrator.memory.remember(
        TENANT, "The payment review launch date moved to Friday."
    )
    again = await recall("payment review launch date")
    assert first[:2] == again[:2] == ("search", "explicit") and first[2]
    assert stored.item_id in again[2]
    state = await stores.working_memory.recent_sessions(TENANT, since=FIXED_NOW, limit=10)
    [session] = [s for s in state if s.key.session_id == "s-1"]
    assert session.state  # the hits were activated and the buffer saved
