"""The in-memory store's searches do no work twice: a probe's BM25 serves the search after it,
items held without a vector leave as held, and every change of the index is seen."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from prefrontal.stores import MemoryItem, MemoryQuery, ScoredMemory, Tenant
from prefrontal.stores.memory.agent_index import AgentIndex
from prefrontal.stores.memory.memory import InMemoryMemoryStore
from prefrontal.stores.memory.segment import Segment
from prefrontal.stores.tenancy import Scope
from tests.conftest import FIXED_NOW

pytestmark = pytest.mark.anyio
ALICE = Tenant(agent_id="agent", user_id="alice")


def note(number: int, words: str, scope: Scope = Scope.PRIVATE, **fields: Any) -> MemoryItem:
    return MemoryItem(
        item_id=f"note-{number:03d}",
        agent_id="agent",
        user_id="alice",
        scope=scope,
        content=f"{words} {number}",
        created_at=FIXED_NOW,
        **fields,
    )


def counted_bm25(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A list that grows by one each time a segment scores BM25."""
    calls: list[int] = []
    original = Segment.bm25

    def bm25(self: Segment, *args: Any) -> Any:
        calls.append(1)
        return original(self, *args)

    monkeypatch.setattr(Segment, "bm25", bm25)
    return calls


async def filled(count: int = 40) -> InMemoryMemoryStore:
    store = InMemoryMemoryStore()
    await store.put_many(
        [note(n, "payment review" if n % 2 else "travel plans") for n in range(count)]
        + [note(100 + n, "payment review shared", Scope.SHARED) for n in range(5)]
    )
    return store


async def test_a_probe_then_a_search_of_the_same_words_score_bm25_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A search for more hits of the query just probed ranks the BM25 already scored: its hits
    begin with the probe's."""
    store = await filled()
    calls = counted_bm25(monkeypatch)
    probe = await store.search(ALICE, MemoryQuery(text="payment review", limit=3, now=FIXED_NOW))
    full = await store.search(ALICE, MemoryQuery(text="payment review", limit=30, now=FIXED_NOW))
    assert len(calls) == 2  # the two segments read (alice's and the shared one), once
    assert [h.item.item_id for h in full[:3]] == [h.item.item_id for h in probe]
    assert [h.score for h in full[:3]] == [h.score for h in probe]
    assert len(full) == 25


async def test_other_words_a_later_time_or_a_change_score_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What a search remembers serves only the same words at the same time over an unchanged
    index: a write is found by the next search."""
    store = await filled()
    calls = counted_bm25(monkeypatch)
    query = MemoryQuery(text="payment review", limit=50, now=FIXED_NOW)
    await store.search(ALICE, query)
    await store.search(ALICE, MemoryQuery(text="travel plans", limit=50, now=FIXED_NOW))
    later = FIXED_NOW + timedelta(seconds=1)
    await store.search(ALICE, MemoryQuery(text="travel plans", limit=50, now=later))
    assert len(calls) == 6
    await store.put(note(500, "payment review late"))
    hits = await store.search(ALICE, query)
    assert "note-500" in {h.item.item_id for h in hits}
    await store.delete(ALICE, ["note-500"])
    assert "note-500" not in {h.item.item_id for h in await store.search(ALICE, query)}
    await store.put(note(501, "fresh", supersedes="note-001"))
    assert "note-001" not in {h.item.item_id for h in await store.search(ALICE, query)}
    assert len(calls) == 12


async def test_items_without_a_vector_leave_without_a_look_into_the_index(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Search hits, ``get`` and ``around`` give an item held without an embedding as held,
    with no read of the index's vectors; an embedded one still gets its floats back."""
    store = await filled(6)
    await store.put(note(7, "payment review embedded", embedding=(0.5, 0.25, 0.125)))

    def refused(self: AgentIndex, doc: str) -> None:
        raise AssertionError(f"vector read for {doc}")

    monkeypatch.setattr(AgentIndex, "vector", refused)
    got = await store.get(ALICE, ["note-001", "note-002"])
    again = await store.get(ALICE, ["note-001", "note-002"])
    assert [a is b for a, b in zip(got, again, strict=True)] == [True, True]
    hits = await store.search(ALICE, MemoryQuery(text="travel", limit=5, now=FIXED_NOW))
    assert hits and all(h.item.embedding is None for h in hits)
    monkeypatch.undo()
    (embedded,) = await store.get(ALICE, ["note-007"])
    assert embedded.embedding == (0.5, 0.25, 0.125)


async def test_a_recall_is_recorded_as_model_copy_would_record_it() -> None:
    """A recorded recall holds what ``model_copy`` with the two counters would: equal, the
    same fields set, its JSON alike, and the item handed out before it unchanged."""
    store = await filled(3)
    (before,) = await store.get(ALICE, ["note-001"])
    at = FIXED_NOW + timedelta(minutes=5)
    await store.record_recall(ALICE, ["note-001", "note-404"], at)
    (after,) = await store.get(ALICE, ["note-001"])
    expected = before.model_copy(update={"recall_count": 1, "last_recalled_at": at})
    assert after == expected
    assert after.model_fields_set == expected.model_fields_set
    assert after.model_dump_json() == expected.model_dump_json()
    assert (before.recall_count, before.last_recalled_at) == (0, None)


async def test_a_hit_is_the_validated_hit_of_its_item_score_and_signals() -> None:
    """Hits are made without validating again: each equals, and dumps as, the validated one,
    its score and signals floats, no two sharing a dictionary of signals."""
    store = await filled()
    hits = await store.search(ALICE, MemoryQuery(text="payment review", limit=20, now=FIXED_NOW))
    assert hits
    for hit in hits:
        checked = ScoredMemory(item=hit.item, score=hit.score, signals=hit.signals)
        assert hit == checked
        assert hit.model_dump_json() == checked.model_dump_json()
        assert type(hit.score) is float
        assert all(type(value) is float for value in hit.signals.values())
    assert len({id(hit.signals) for hit in hits}) == len(hits)
