"""Tenancy is checked twice: what a store returns that the tenant may not see never reaches the turn."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from prefrontal import PhaseStatus, Stores
from prefrontal.demo.seed import profile
from prefrontal.stores import MemoryItem, MemoryQuery, ScoredMemory, Tenant
from prefrontal.stores.conversation import ConversationTurn, Role
from prefrontal.stores.tenancy import Scope, may_see, screen_for
from tests.conftest import FIXED_NOW, demo_request, orchestrator

pytestmark = pytest.mark.anyio
ATLAS_MAYA = Tenant(agent_id="atlas", user_id="maya")


def stranger_memory(agent: str, user: str, scope: Scope = Scope.PRIVATE) -> MemoryItem:
    return MemoryItem(
        item_id=f"leak-{agent}-{user}",
        agent_id=agent,
        user_id=user,
        scope=scope,
        content="Secret launch plan of another tenant",
        created_at=FIXED_NOW,
    )


class LeakyMemoryStore:
    """A broken backend: every search also returns other tenants' items."""

    def __init__(self, store: Any) -> None:
        self._store = store

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    async def search(self, tenant: Tenant, query: MemoryQuery) -> list[ScoredMemory]:
        hits: list[ScoredMemory] = await self._store.search(tenant, query)
        leaks = [stranger_memory("other-agent", "maya"), stranger_memory("atlas", "tom")]
        return [ScoredMemory(item=item, score=99.0) for item in leaks] + hits


async def test_items_of_other_tenants_are_dropped_and_reported(demo_stores: Stores) -> None:
    """Another agent's and another user's private items never reach the bundle; the phase says so."""
    leaky = demo_stores.replace(episodic=LeakyMemoryStore(demo_stores.episodic))
    result = await orchestrator(leaky).start_turn(demo_request())
    held = {i for f in result.bundle.fragments for i in f.provenance.item_ids}
    assert not {i for i in held if i.startswith("leak-")}
    assert "Secret launch plan" not in result.bundle.text
    record = result.trace.phase("episodic")
    assert record.status is PhaseStatus.DEGRADED
    assert any("may not see" in w for w in record.warnings)


def test_what_the_tenant_may_see() -> None:
    """Own and shared items, the agent's profile-like records and unowned values pass; others not."""
    assert may_see(stranger_memory("atlas", "maya"), ATLAS_MAYA)
    assert may_see(stranger_memory("atlas", "tom", Scope.SHARED), ATLAS_MAYA)
    assert not may_see(stranger_memory("atlas", "tom"), ATLAS_MAYA)
    assert not may_see(stranger_memory("other-agent", "maya", Scope.SHARED), ATLAS_MAYA)
    assert may_see(ScoredMemory(item=stranger_memory("atlas", "maya"), score=1.0), ATLAS_MAYA)
    assert not may_see(ScoredMemory(item=stranger_memory("atlas", "tom"), score=1.0), ATLAS_MAYA)
    assert may_see(None, ATLAS_MAYA)
    turn = ConversationTurn(
        item_id="c",
        agent_id="atlas",
        user_id="tom",
        session_id="s",
        role=Role.USER,
        content="hi",
        created_at=FIXED_NOW,
    )
    assert not may_see(turn, ATLAS_MAYA)


class OpenRecord(BaseModel):
    """A backend's record that keeps undeclared fields: its owner may be one of them."""

    model_config = ConfigDict(extra="allow")
    text: str


class DerivedOwner(BaseModel):
    """A record whose owner is computed, not a field."""

    key: str

    @property
    def agent_id(self) -> str:
        return self.key.split("/")[0]

    @property
    def user_id(self) -> str:
        return self.key.split("/")[1]


def test_owners_that_are_not_declared_fields_are_still_checked() -> None:
    """An owner held as an extra field or computed by a property is judged like a declared one."""
    assert not may_see(OpenRecord(text="x", agent_id="atlas", user_id="tom"), ATLAS_MAYA)
    assert may_see(OpenRecord(text="x", agent_id="atlas", user_id="maya"), ATLAS_MAYA)
    assert may_see(OpenRecord(text="x"), ATLAS_MAYA)
    assert not may_see(DerivedOwner(key="other-agent/maya"), ATLAS_MAYA)
    assert not may_see(DerivedOwner(key="atlas/tom"), ATLAS_MAYA)
    assert may_see(DerivedOwner(key="atlas/maya"), ATLAS_MAYA)


class TraceLike(BaseModel):
    """A record with an agent and a user but no scope, like a turn's trace."""

    agent_id: str
    user_id: str


def test_each_kind_of_record_is_screened_by_the_owner_fields_its_type_has() -> None:
    """A profile by its agent, a scopeless record as private, each the same way every time."""
    atlas, other = profile("atlas"), profile("other-agent")
    for _ in range(2):
        assert may_see(atlas, ATLAS_MAYA)
        assert not may_see(other, ATLAS_MAYA)
        assert may_see(TraceLike(agent_id="atlas", user_id="maya"), ATLAS_MAYA)
        assert not may_see(TraceLike(agent_id="atlas", user_id="tom"), ATLAS_MAYA)
        assert not may_see(TraceLike(agent_id="other-agent", user_id="maya"), ATLAS_MAYA)
        assert may_see(3, ATLAS_MAYA)
    assert screen_for(MemoryItem) is screen_for(MemoryItem)


class ItemHolder(BaseModel):
    """A closed model whose ``item`` may hold anything: a record, or a value naming no owner."""

    model_config = ConfigDict(extra="forbid")

    item: Any
    agent_id: str | None = None


def test_a_hit_is_judged_by_its_item_whatever_the_item_is() -> None:
    """A hit is screened by its item's owners; an item naming none leaves the holder judged."""
    cases = [
        (stranger_memory("atlas", "maya"), True),
        (stranger_memory("atlas", "tom"), False),
        (stranger_memory("atlas", "tom", Scope.SHARED), True),
        (stranger_memory("other-agent", "maya", Scope.SHARED), False),
    ]
    for _ in range(2):
        for item, visible in cases:
            assert may_see(ScoredMemory(item=item, score=1.0), ATLAS_MAYA) is visible
            assert may_see(ItemHolder(item=item), ATLAS_MAYA) is visible
        assert may_see(ItemHolder(item=profile("atlas")), ATLAS_MAYA)
        assert not may_see(ItemHolder(item=profile("other-agent")), ATLAS_MAYA)
        assert may_see(ItemHolder(item=3, agent_id="atlas"), ATLAS_MAYA)
        assert not may_see(ItemHolder(item=3, agent_id="other-agent"), ATLAS_MAYA)
