"""The context query of phases 5 and 6: asked for a share of the input's candidates."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest

from prefrontal import Orchestrator, OrchestratorConfig, TurnRequest
from prefrontal.config import RecallConfig
from prefrontal.errors import ConfigurationError
from prefrontal.retrieval.settings import RecallSettings
from prefrontal.stores.frontal_cortex import FrontalItem, FrontalKind
from prefrontal.stores.long_term import MemoryQuery, ScoredMemory
from prefrontal.stores.memory.memory import InMemoryMemoryStore
from prefrontal.stores.set import Stores
from prefrontal.stores.tenancy import Tenant

pytestmark = pytest.mark.anyio

WHEN = datetime(2024, 3, 1, 12, tzinfo=UTC)
INPUT = "How is the kayak trip going?"
GOAL = "Plan the river weekend"


class Recording(InMemoryMemoryStore):
    """An in-memory store that notes the text and limit of every search."""

    def __init__(self) -> None:
        super().__init__("episodic")
        self.asked: dict[str, int] = {}

    async def search(self, tenant: Tenant, query: MemoryQuery) -> list[ScoredMemory]:
        self.asked[query.text] = query.limit
        return await super().search(tenant, query)


async def limits_asked(share: float | None) -> tuple[dict[str, int], int]:
    """What a turn with one goal asked the episodic store for, and its input's limit."""
    episodic = Recording()
    stores = Stores.in_memory().replace(episodic=episodic)
    goal = FrontalItem(
        item_id="g1",
        agent_id="agent",
        user_id="user",
        kind=FrontalKind.GOAL,
        title=GOAL,
        updated_at=WHEN,
    )
    await stores.frontal_cortex.put(goal)
    scoring = RecallSettings() if share is None else RecallSettings(context_share=share)
    config = OrchestratorConfig(recall=RecallConfig(scoring=scoring))
    orchestrator = Orchestrator(stores, config, clock=lambda: WHEN)
    request = TurnRequest(agent_id="agent", user_id="user", session_id="s", user_input=INPUT)
    await orchestrator.start_turn(request)
    await stores.aclose()
    return episodic.asked, episodic.asked[INPUT]


async def test_the_context_query_asks_for_its_share_of_the_inputs_candidates() -> None:
    """At the default share (0.3) the goal's query asks for 3 in 10, rounded up."""
    asked, limit = await limits_asked(None)
    (context,) = (text for text in asked if GOAL in text)
    assert limit >= 100
    assert asked[context] == math.ceil(limit * 0.3)
    assert asked[context] < limit


async def test_a_share_of_one_asks_as_many_and_zero_skips_the_context_query() -> None:
    everything, limit = await limits_asked(1.0)
    assert sorted(everything.values()) == [limit, limit]
    nothing, _ = await limits_asked(0.0)
    assert list(nothing) == [INPUT]


@pytest.mark.parametrize("share", [-0.1, 1.5])
def test_a_share_outside_zero_to_one_is_refused(share: float) -> None:
    with pytest.raises(ConfigurationError, match="context_share"):
        RecallSettings(context_share=share)
