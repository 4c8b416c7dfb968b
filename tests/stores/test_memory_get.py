"""The in-memory store gives each id's item as the tenancy rules choose, one owner or several."""

from __future__ import annotations

import itertools

import pytest

from prefrontal.stores import MemoryItem, Tenant
from prefrontal.stores.long_term import MemoryKind
from prefrontal.stores.memory.memory import InMemoryMemoryStore
from prefrontal.stores.tenancy import Scope, preferred
from tests.conftest import FIXED_NOW

pytestmark = pytest.mark.anyio
AGENTS = ("agent-1", "agent-2")
USERS = ("alice", "bob", "carol")


def item(item_id: str, agent: str, user: str, scope: Scope) -> MemoryItem:
    return MemoryItem(
        item_id=item_id,
        agent_id=agent,
        user_id=user,
        scope=scope,
        kind=MemoryKind.EVENT,
        content=f"{item_id} of {user}",
        created_at=FIXED_NOW,
    )


def owned_items() -> list[MemoryItem]:
    """Ids with one owner (private or shared) and ids several users hold, in two agents."""
    items = []
    for agent, user, scope in itertools.product(AGENTS, USERS, Scope):
        items.append(item(f"only-{user}-{scope.value}", agent, user, scope))
        items.append(item(f"common-{scope.value}", agent, user, scope))
    for agent in AGENTS:
        items.append(item("pair", agent, "alice", Scope.PRIVATE))
        items.append(item("pair", agent, "bob", Scope.SHARED))
    return items


@pytest.mark.parametrize(("agent", "user"), list(itertools.product(AGENTS, USERS)))
async def test_each_id_gives_the_item_the_tenancy_rules_prefer(agent: str, user: str) -> None:
    """Whatever the number of owners, ``get`` answers as ``preferred`` over the id's items."""
    items = owned_items()
    store = InMemoryMemoryStore()
    await store.put_many(items)
    tenant = Tenant(agent_id=agent, user_id=user)
    ids = sorted({i.item_id for i in items} | {"unknown"})
    expected = [
        found
        for item_id in ids
        if (found := preferred((i for i in items if i.item_id == item_id), tenant)) is not None
    ]
    got = await store.get(tenant, ids)
    assert got == expected
    assert any(i.user_id != user for i in got)  # shared items of others are given
    assert all(i.agent_id == agent for i in got)
