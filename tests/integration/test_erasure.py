"""Erasing a user on every backend: nothing of theirs is left, nobody else loses anything.

Alice and Bob, two users of one agent, each have records in every store
kind: goals, conversation turns and a summary, episodic and semantic
memories (some shared), a scratch entry, a working-memory session and turn
traces (from real turns). ``erase`` of Alice must leave no store returning
anything of hers, and every record of Bob's as it was.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from prefrontal import Orchestrator, Stores, TurnRequest
from prefrontal.stores import (
    ConversationSummary,
    ConversationTurn,
    FrontalItem,
    FrontalKind,
    FrontalQuery,
    MemoryQuery,
    Observation,
    Role,
    Scope,
    SessionKey,
    Tenant,
    TraceQuery,
)

pytestmark = pytest.mark.anyio
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
ALICE = Tenant(agent_id="atlas", user_id="alice")
BOB = Tenant(agent_id="atlas", user_id="bob")
WORD = "everything"
"""A word in every memory, so one search lists them all."""


def owned(tenant: Tenant) -> dict[str, Any]:
    return {"agent_id": tenant.agent_id, "user_id": tenant.user_id, "created_at": T0}


async def fill(orchestrator: Orchestrator, tenant: Tenant) -> None:
    """Records of ``tenant`` in every store kind, some with the ids the other user uses too."""
    stores, name = orchestrator.stores, tenant.user_id
    memory = orchestrator.memory
    await memory.remember(tenant, f"{name} likes tea, {WORD}", item_id="m1")
    await memory.remember(
        tenant, f"{name} shares the wiki, {WORD}", item_id="m2", scope=Scope.SHARED
    )
    await memory.remember(tenant, f"{name} flew to Oslo, {WORD}", item_id="m1", store="episodic")
    for n, scope in ((1, Scope.PRIVATE), (2, Scope.SHARED)):
        await stores.frontal_cortex.put(
            FrontalItem(
                item_id=f"g{n}",
                kind=FrontalKind.GOAL,
                title=f"{name} goal {n}",
                scope=scope,
                updated_at=T0,
                **owned(tenant),
            )
        )
    for n in (1, 2):
        await stores.conversation.append(
            ConversationTurn(
                item_id=f"c{n}",
                session_id="s1",
                role=Role.USER,
                content=f"{name} said {n}",
                **owned(tenant),
            )
        )
    await stores.conversation.put_summary(
        ConversationSummary(
            agent_id=tenant.agent_id, user_id=tenant.user_id, text=f"{name} so far", updated_at=T0
        )
    )
    await stores.scratch_page.put(
        Observation(item_id="n1", content=f"{name} note", **owned(tenant))
    )
    for text in ("Is tea on the list?", "And the wiki?"):
        await orchestrator.start_turn(
            TurnRequest(agent_id="atlas", user_id=name, session_id="s1", user_input=text)
        )


async def everything(stores: Stores, tenant: Tenant) -> dict[str, Any]:
    """Every record each store returns to ``tenant``, by store kind."""
    now = T0 + timedelta(hours=1)
    key = SessionKey(agent_id=tenant.agent_id, user_id=tenant.user_id, session_id="s1")
    traces = await stores.traces.list(TraceQuery(agent_id=tenant.agent_id, user_id=tenant.user_id))
    search = MemoryQuery(text=WORD, limit=100, now=now)
    return {
        "episodic": [h.item for h in await stores.episodic.search(tenant, search)],
        "semantic": [h.item for h in await stores.semantic.search(tenant, search)],
        "memory_ids": await stores.semantic.get(tenant, ["m1", "m2"])
        + await stores.episodic.get(tenant, ["m1", "m2"]),
        "frontal_cortex": await stores.frontal_cortex.query(tenant, FrontalQuery()),
        "conversation": await stores.conversation.recent(tenant, limit=100),
        "summary": await stores.conversation.get_summary(tenant),
        "scratch_page": await stores.scratch_page.active(tenant, now=now, limit=100),
        "sessions": await stores.working_memory.recent_sessions(
            tenant, since=T0 - timedelta(days=1), limit=100
        ),
        "session": await stores.working_memory.load(key),
        "traces": traces,
        "trace": [await stores.traces.get(tenant, t.turn_id) for t in traces],
    }


def own(records: dict[str, Any], tenant: Tenant) -> dict[str, Any]:
    """Only the records ``tenant`` owns (leaving out what other users shared)."""

    def mine(record: Any) -> bool:
        owner = getattr(record, "user_id", None) or record.key.user_id
        return bool(owner == tenant.user_id)

    return {
        kind: [r for r in value if mine(r)] if isinstance(value, list) else value
        for kind, value in records.items()
    }


async def test_erase_leaves_nothing_of_the_user_and_everything_of_the_others(
    stores: Stores,
) -> None:
    """After erase, no store returns anything of Alice's; Bob's records are all as they were."""
    orchestrator = Orchestrator(stores, clock=lambda: T0 + timedelta(minutes=1))
    await fill(orchestrator, ALICE)
    await fill(orchestrator, BOB)
    bob_before = own(await everything(stores, BOB), BOB)
    assert all(bob_before.values())

    report = await orchestrator.memory.erase("atlas", "alice")

    assert report.removed == {
        "frontal_cortex": 2,
        "conversation": 3,
        "episodic": 1,
        "semantic": 2,
        "scratch_page": 1,
        "working_memory": 1,
        "session_items": 0,
        "traces": 2,
    }
    assert report.total == 12
    alice_after = await everything(stores, ALICE)
    left = {kind: value for kind, value in own(alice_after, ALICE).items() if value}
    assert left == {}
    assert await everything(stores, BOB) == bob_before
    again = await orchestrator.memory.erase("atlas", "alice")
    assert again.total == 0
