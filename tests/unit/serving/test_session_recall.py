"""Session recall: the first recall of a topic searches, the next ones reuse the session's buffer."""

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


async def test_a_topic_is_searched_once_then_reused_until_it_changes() -> None:
    """Search on an empty buffer, reuse while the topic continues, search again on a new topic."""
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
    again = await recall("payment review launch date")
    other_session = await recall("payment review launch date", session="s-2")
    changed = await recall("Lisbon offsite venue deposit")
    assert first[:2] == ("search", "buffer_empty") and first[2]
    assert again[:2] == ("reuse", "topic_continues")
    assert set(again[2]) <= set(first[2]) and again[2]
    assert other_session[:2] == ("search", "buffer_empty")
    assert changed[:2] == ("search", "topic_changed")
    state = await stores.working_memory.recent_sessions(TENANT, since=FIXED_NOW, limit=10)
    assert {s.key.session_id for s in state} == {"s-1", "s-2"}
