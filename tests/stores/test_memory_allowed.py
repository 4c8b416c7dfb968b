"""The in-memory index allows a search exactly the items the full pass over the store holds."""

from __future__ import annotations

import itertools
from datetime import timedelta

import pytest

from prefrontal.stores import MemoryItem, MemoryQuery, Tenant
from prefrontal.stores.long_term import MemoryKind
from prefrontal.stores.memory.memory import InMemoryMemoryStore
from prefrontal.stores.tenancy import Scope, visible_to
from tests.conftest import FIXED_NOW

pytestmark = pytest.mark.anyio
AGENTS = ("agent-1", "agent-2")
USERS = ("alice", "bob")
KINDS = (MemoryKind.EVENT, MemoryKind.FACT)


async def mixed_store() -> InMemoryMemoryStore:
    """Items of two agents and two users, private and shared, live, expired and superseded."""
    store = InMemoryMemoryStore()
    items = []
    shapes = itertools.product(AGENTS, USERS, Scope, KINDS, ("live", "expired", "superseded"))
    for n, (agent, user, scope, kind, state) in enumerate(shapes):
        items.append(
            MemoryItem(
                item_id=f"m{n % 9}",  # ids repeat across users and agents
                agent_id=agent,
                user_id=user,
                scope=scope,
                kind=kind,
                content=f"the payment review, note {n}",
                created_at=FIXED_NOW,
                valid_until=FIXED_NOW - timedelta(days=1) if state == "expired" else None,
                superseded_by="newer" if state == "superseded" else None,
            )
        )
    await store.put_many(items)
    return store


@pytest.mark.parametrize("kinds", [None, (MemoryKind.FACT,)])
@pytest.mark.parametrize(("agent", "user"), list(itertools.product(AGENTS, USERS)))
async def test_the_candidates_are_exactly_what_the_full_pass_holds(
    agent: str, user: str, kinds: tuple[MemoryKind, ...] | None
) -> None:
    store = await mixed_store()
    tenant = Tenant(agent_id=agent, user_id=user)
    query = MemoryQuery(text="payment", kinds=kinds, now=FIXED_NOW)
    live = store._live(tenant, query)
    assert live  # the tenant sees something, and not everything
    assert len(live) < len(store._keys)
    found = await store.lexical_matches(tenant, query, ["payment"])
    assert {c.key for c in found.candidates} == set(live)
    readable = [i for i in store._items.values() if visible_to(i, tenant)]
    assert found.corpus.docs == len(readable)  # every item it may read, live or not
    hits = await store.search(tenant, query.model_copy(update={"limit": 100}))
    assert {(h.item.agent_id, h.item.user_id, h.item.item_id) for h in hits} == {
        (i.agent_id, i.user_id, i.item_id) for i in live.values()
    }
