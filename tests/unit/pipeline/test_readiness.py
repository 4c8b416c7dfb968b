"""``ready_for_router`` is honest: false without the identity, the rules, or any context at all."""

from __future__ import annotations

import pytest

from prefrontal import Stores
from prefrontal.errors import StoreError
from prefrontal.stores.consciousness import AgentProfile, Governance
from prefrontal.stores.tenancy import Tenant
from prefrontal.testing import FailingStore
from tests.conftest import FIXED_NOW, demo_request, orchestrator

pytestmark = pytest.mark.anyio
LOADERS = (
    "consciousness",
    "frontal_cortex",
    "conversation",
    "episodic",
    "semantic",
    "scratch_page",
)


async def test_a_demo_turn_is_ready(demo_stores: Stores) -> None:
    """With identity and rules in the context, the turn is ready and says nothing about it."""
    result = await orchestrator(demo_stores).start_turn(demo_request())
    assert result.ready_for_router
    assert not [w for w in result.warnings if "not ready" in w]


async def test_an_agent_without_a_profile_is_not_ready() -> None:
    """No profile, no identity: the turn returns, not ready, and the warning says why."""
    result = await orchestrator(Stores.in_memory()).start_turn(demo_request())
    assert not result.ready_for_router
    assert "finalize: not ready for the router: the agent's identity is not in the context" in (
        result.warnings
    )


async def test_a_failing_consciousness_store_is_not_ready(demo_stores: Stores) -> None:
    """The other sections arrive, but without the identity the turn is not ready."""
    broken = FailingStore(demo_stores.consciousness, StoreError("gone", store="consciousness"))
    result = await orchestrator(demo_stores.replace(consciousness=broken)).start_turn(
        demo_request()
    )
    assert result.bundle.total_tokens > 0
    assert not result.ready_for_router


async def test_an_empty_context_because_stores_failed_is_not_ready(demo_stores: Stores) -> None:
    """Every loading store failing leaves an empty context, and the warning names the cause."""
    broken = {
        kind: FailingStore(getattr(demo_stores, kind), StoreError("down", store=kind))
        for kind in LOADERS
    }
    result = await orchestrator(demo_stores.replace(**broken)).start_turn(demo_request())
    assert result.bundle.total_tokens == 0
    assert not result.ready_for_router
    assert any("empty because stores failed" in w for w in result.warnings)


async def test_rules_that_do_not_reach_the_context_make_the_turn_not_ready(
    demo_stores: Stores,
) -> None:
    """An agent whose rules are loaded but left out of the context is not ready for the router."""
    tenant = Tenant(agent_id="atlas", user_id="maya")
    profile = await demo_stores.consciousness.get_profile(tenant)
    assert profile is not None
    rules = tuple(f"Rule {n}: " + "never do the forbidden thing " * 60 for n in range(40))
    await demo_stores.consciousness.put_profile(
        AgentProfile.model_validate(
            profile.model_dump()
            | {"governance": Governance(safety_policies=rules), "updated_at": FIXED_NOW}
        )
    )
    result = await orchestrator(demo_stores).start_turn(demo_request())
    held = {i for f in result.bundle.fragments for i in f.provenance.item_ids}
    assert "atlas#governance" not in held
    assert not result.ready_for_router
    assert any("the agent's rules are not in the context" in w for w in result.warnings)
