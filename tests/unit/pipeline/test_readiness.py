"""``ready_for_router`` is honest: false without the identity, the rules, or any context at all."""

from __future__ import annotations

import pytest

from prefrontal import Stores
from prefrontal.bundle.models import ContextBundle, Fragment, Provenance, Section
from prefrontal.bundle.readiness import NO_PROFILE, not_ready
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
    assert (
        "finalize: not ready for the router: the agent's identity is not in the context: "
        f"{NO_PROFILE}"
    ) in result.warnings
    assert result.trace.warnings == result.warnings
    assert "prefrontal agent apply" not in result.bundle.text


async def test_a_failing_consciousness_store_is_not_ready(demo_stores: Stores) -> None:
    """The other sections arrive, but without the identity the turn is not ready."""
    broken = FailingStore(demo_stores.consciousness, StoreError("gone", store="consciousness"))
    result = await orchestrator(demo_stores.replace(consciousness=broken)).start_turn(
        demo_request()
    )
    assert result.bundle.total_tokens > 0
    assert not result.ready_for_router
    (why,) = [w for w in result.trace.warnings if "not ready" in w]
    assert "the consciousness store failed (gone)" in why
    assert "consciousness store" not in result.bundle.text


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


async def test_rules_longer_than_the_budget_deliver_no_data_and_are_not_ready(
    demo_stores: Stores,
) -> None:
    """Rules the configured budget cannot hold are never cut: no data is delivered, the turn is
    not ready, and the trace names the floor."""
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
    kept = {i for f in result.bundle.fragments for i in f.provenance.item_ids}
    assert kept == {"atlas#identity"}
    assert "never do the forbidden thing" not in result.bundle.text
    assert result.bundle.total_tokens <= 4_000
    assert not result.ready_for_router
    (why,) = [w for w in result.warnings if "no data was delivered" in w]
    assert "owner's pinned section needs" in why and "a total budget of at least" in why


def test_a_bundle_without_the_rules_an_agent_has_is_not_ready() -> None:
    """``not_ready`` names missing rules when the agent has some, and nothing when it has none."""
    identity_only = ContextBundle(
        turn_id="t",
        text="You are Atlas.",
        total_tokens=4,
        budget=4_000,
        fragments=(
            Fragment(
                section=Section.CONSCIOUSNESS,
                text="You are Atlas.",
                tokens=4,
                provenance=Provenance(
                    store="consciousness", item_ids=("atlas#identity",), phase="consciousness"
                ),
            ),
        ),
        source_breakdown={},
        checksum="",
        tokenizer="cl100k_base",
        version="0",
        created_at=FIXED_NOW,
    )
    assert not_ready(identity_only, has_rules=True, stores_failed=False) == [
        "the agent's rules are not in the context"
    ]
    assert not_ready(identity_only, has_rules=False, stores_failed=False) == []
