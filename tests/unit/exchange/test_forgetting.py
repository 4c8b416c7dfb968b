"""The rolling summary's contract when messages are forgotten: untouched, rebuilt or dropped."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from prefrontal.exchange.forgetting import SummaryRebuild, forget_messages
from prefrontal.exchange.summary import ExtractiveSummarizer, fold
from prefrontal.stores import ConversationTurn, Role, Tenant
from prefrontal.stores.memory import InMemoryConversationStore

pytestmark = pytest.mark.anyio
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
TENANT = Tenant(agent_id="atlas", user_id="maya")
REBUILD = SummaryRebuild(window=2, batch=10, max_tokens=200)


def words(text: str) -> int:
    return len(text.split())


async def conversation(count: int) -> InMemoryConversationStore:
    """``count`` messages ``m0``... (``said m0.`` and so on), then a fold with a window of 2."""
    store = InMemoryConversationStore()
    for n in range(count):
        await store.append(
            ConversationTurn(
                item_id=f"m{n}",
                agent_id=TENANT.agent_id,
                user_id=TENANT.user_id,
                session_id="s1",
                role=Role.USER,
                content=f"said m{n}.",
                created_at=T0 + timedelta(seconds=n),
            )
        )
    await fold(
        store,
        TENANT,
        window=2,
        batch=10,
        max_tokens=200,
        summarizer=ExtractiveSummarizer(),
        count_tokens=words,
        now=T0,
    )
    return store


async def forget(store: InMemoryConversationStore, *ids: str) -> str:
    done = await forget_messages(
        store, TENANT, ids, rebuild=REBUILD, count_tokens=words, now=T0 + timedelta(hours=1)
    )
    return done.summary


async def test_a_message_the_summary_never_folded_leaves_it_untouched() -> None:
    store = await conversation(5)
    before = await store.get_summary(TENANT)
    assert before is not None and before.through == "m2"
    assert await forget(store, "m4") == "untouched"
    assert await store.get_summary(TENANT) == before


async def test_a_folded_message_rebuilds_the_summary_without_it() -> None:
    store = await conversation(5)
    assert await forget(store, "m1") == "rebuilt"
    summary = await store.get_summary(TENANT)
    assert summary is not None
    assert summary.text.splitlines() == ["user: said m0.", "user: said m2."]
    assert summary.through == "m2"


async def test_forgetting_the_newest_folded_message_moves_through_back() -> None:
    store = await conversation(5)
    assert await forget(store, "m2") == "rebuilt"
    summary = await store.get_summary(TENANT)
    assert summary is not None and summary.through == "m1"
    assert "m2" not in summary.text


async def test_with_nothing_folded_left_the_summary_is_dropped() -> None:
    store = await conversation(4)
    assert await forget(store, "m0", "m1") == "dropped"
    assert await store.get_summary(TENANT) is None


async def test_nothing_removed_touches_nothing() -> None:
    store = await conversation(4)
    before = await store.get_summary(TENANT)
    assert await forget(store, "unknown") == "none"
    assert await store.get_summary(TENANT) == before
