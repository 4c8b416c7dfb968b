"""The episodic keeper on every backend: a note the buffer lets go is an episodic item first."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from prefrontal.buffer import BufferConfig, ItemSource, NewItem, OverflowPolicy
from prefrontal.formation import consolidate, open_session, originals, promoted_id
from prefrontal.stores import MemoryKind, MemoryQuery, SessionKey, Stores

pytestmark = pytest.mark.anyio

T0 = datetime(2026, 11, 22, 10, 0, tzinfo=UTC)
KEY = SessionKey(agent_id="agent", user_id="ada", session_id="s-1")


def words(text: str) -> int:
    """One token per word."""
    return len(text.split())


def note(n: int) -> NewItem:
    """The agent's note ``n``, tagged and naming an entity."""
    return NewItem(
        content=f"Shipment {n} waits at dock {n} for the customs stamp.",
        item_id=f"n{n}",
        source=ItemSource.REFLECTION,
        priority=0.9,
        tags=("shipping",),
        entities=("Dock",),
    )


async def test_an_evicted_note_is_stored_searchable_with_its_provenance(stores: Stores) -> None:
    """FIFO, two slots, three notes: the first is written to the episodic store (kind
    ``summary``, its whole content, its tags, naming the buffer item and the session), found
    by a search, then evicted naming that item; the session's save keeps the other two."""
    config = BufferConfig(max_items=2, policy=OverflowPolicy.FIFO)
    session = await open_session(stores, KEY, config=config, count_tokens=words)
    for n in range(3):
        result = await session.add(note(n), now=T0 + timedelta(seconds=n))
    [gone] = result.evicted
    target = promoted_id(KEY, ("n0",))
    assert (gone.item_id, gone.promoted_to) == ("n0", target)
    await session.save(T0 + timedelta(seconds=3))
    [stored] = await stores.episodic.get(KEY.tenant, [target])
    assert stored.kind is MemoryKind.SUMMARY
    assert stored.content == note(0).content
    assert originals(stored) == ("n0",)
    assert (stored.metadata["session_id"], stored.metadata["source"]) == ("s-1", "reflection")
    assert "shipping" in stored.tags and "Dock" in stored.entities
    query = MemoryQuery(text="shipment 0 customs stamp", limit=3, now=T0 + timedelta(days=1))
    hits = await stores.episodic.search(KEY.tenant, query)
    assert target in [h.item.item_id for h in hits]
    again = await open_session(stores, KEY, count_tokens=words)
    assert [i.item_id for i in again.items] == ["n1", "n2"]


async def test_a_note_promoted_twice_is_one_episodic_item(stores: Stores) -> None:
    """The same note let go twice (a replayed turn) is written under the same id: one item;
    another tenant sees none of it."""
    config = BufferConfig(max_items=1, policy=OverflowPolicy.FIFO)
    for _ in range(2):
        session = await open_session(stores, KEY, config=config, count_tokens=words)
        await session.add(note(0), now=T0)
        await session.add(note(1), now=T0 + timedelta(seconds=1))
    target = promoted_id(KEY, ("n0",))
    query = MemoryQuery(text="shipment 0 customs stamp", limit=10, now=T0 + timedelta(days=1))
    hits = [h.item.item_id for h in await stores.episodic.search(KEY.tenant, query)]
    assert hits.count(target) == 1
    other = SessionKey(agent_id="agent", user_id="bob", session_id="s-1")
    assert await stores.episodic.get(other.tenant, [target]) == []


async def test_a_note_faded_and_a_consolidated_one_are_both_found(stores: Stores) -> None:
    """One note fades (promoted on its own), another is consolidated by ``end_turn``'s
    consolidation: both are episodic items, and the buffer is empty."""
    session = await open_session(stores, KEY, count_tokens=words)
    await session.add(note(0), now=T0)
    await session.add(note(1), now=T0 + timedelta(seconds=200))
    faded = await session.expire(T0 + timedelta(seconds=400))
    assert [(e.item_id, e.promoted_to) for e in faded] == [("n0", promoted_id(KEY, ("n0",)))]
    await session.save(T0 + timedelta(seconds=400))
    report = await consolidate(stores, KEY, now=T0 + timedelta(seconds=400), count_tokens=words)
    assert report.released == ("n1",) and report.kept == 0
    ids = [promoted_id(KEY, ("n0",)), *report.promoted_ids]
    found = await stores.episodic.get(KEY.tenant, ids)
    assert sorted(originals(i) for i in found) == [("n0",), ("n1",)]
