"""Copies in other users' working memory, on every backend: erased or forgotten, they go.

Alice shares a memory; Bob's turns in two sessions retrieve it into their
buffers. Erasing Alice, or Alice forgetting it, must take it out of every
session of Bob's, and leave his own notes where they were.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from prefrontal import Orchestrator, Stores, TurnRequest
from prefrontal.buffer import ItemSource, NewItem, SessionBuffer
from prefrontal.stores import Scope, SessionKey, Tenant
from tests.endturn_support import AGENT, BACKENDS, build, open_stores

pytestmark = pytest.mark.anyio

ALICE = Tenant(agent_id=AGENT, user_id="alice")
BOB = Tenant(agent_id=AGENT, user_id="bob")
SHARED = "The team wiki password is K-WIKI-3030."
SESSIONS = ("morning", "evening")


@pytest.fixture(params=BACKENDS)
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Stores]:
    yield from open_stores(request.param, request, tmp_path)


def key(session_id: str) -> SessionKey:
    return SessionKey(agent_id=AGENT, user_id="bob", session_id=session_id)


async def bobs_buffers(stores: Stores) -> list[str]:
    """The text of every item each of Bob's sessions holds, one text per session."""
    texts = []
    for session_id in SESSIONS:
        session = await SessionBuffer.load(stores.working_memory, key(session_id))
        texts.append("\n".join(item.content for item in session.items))
    return texts


async def shared_in_bobs_sessions(orchestrator: Orchestrator) -> str:
    """Alice's shared memory, retrieved into both of Bob's sessions (beside a note of his)."""
    item = await orchestrator.memory.remember(ALICE, SHARED, scope=Scope.SHARED)
    for session_id in SESSIONS:
        await orchestrator.start_turn(
            TurnRequest(
                agent_id=AGENT,
                user_id="bob",
                session_id=session_id,
                user_input="What is the team wiki password?",
            )
        )
        session = await SessionBuffer.load(orchestrator.stores.working_memory, key(session_id))
        note = NewItem(
            content="Bob's own note: buy milk.", source=ItemSource.REFLECTION, priority=0.9
        )
        await session.add(note)
        await session.save()
    assert all("K-WIKI-3030" in text for text in await bobs_buffers(orchestrator.stores))
    return item.item_id


async def test_erasing_a_user_takes_their_shared_memories_out_of_other_users_buffers(
    stores: Stores,
) -> None:
    orchestrator = build(stores)
    await shared_in_bobs_sessions(orchestrator)
    report = await orchestrator.memory.erase(AGENT, "alice")
    assert report.copies_dropped == len(SESSIONS)
    texts = await bobs_buffers(stores)
    assert all("K-WIKI-3030" not in text for text in texts)
    assert all("buy milk" in text for text in texts)


async def test_forgetting_a_shared_memory_takes_it_out_of_other_users_buffers(
    stores: Stores,
) -> None:
    orchestrator = build(stores)
    item_id = await shared_in_bobs_sessions(orchestrator)
    assert await orchestrator.memory.forget(ALICE, item_id)
    texts = await bobs_buffers(stores)
    assert all("K-WIKI-3030" not in text for text in texts)
    assert all("buy milk" in text for text in texts)
