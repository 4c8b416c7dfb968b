"""The in-memory store holds each embedding once, in its index's arrays, and gives it back whole.

An item read back (``get``, search hits, ``items_by_key``, ``around``)
equals the item written, embedding and all, through replacement,
supersession and recall; the dictionary of items holds no embedding; a
deleted or erased item's vector is left in none of the index's arrays; a
load embeds in batches and stores nothing when one fails.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import numpy as np
import pytest

from prefrontal.retrieval.embedder import HashingEmbedder
from prefrontal.stores import MemoryItem, MemoryQuery, Tenant
from prefrontal.stores.long_term import MemoryKind
from prefrontal.stores.memory import memory
from prefrontal.stores.memory.memory import InMemoryMemoryStore, _doc_id, _key
from prefrontal.stores.memory.segment import VectorColumn
from prefrontal.stores.memory_search import searchable_text
from prefrontal.stores.tenancy import Scope
from tests.conftest import FIXED_NOW

pytestmark = pytest.mark.anyio
ALICE = Tenant(agent_id="agent", user_id="alice")
BOB = Tenant(agent_id="agent", user_id="bob")


def vectors(rng: random.Random) -> list[tuple[float, ...] | None]:
    """Floats of every magnitude (a float32 copy would not give them back), a negative
    zero, an all-zero vector, an empty one, another size, and none."""
    dense = tuple(rng.gauss(0.0, 1.0) * 10.0 ** rng.randint(-20, 20) for _ in range(8))
    return [
        dense,
        (0.1, -0.0, 1e-320, 2.0**-1074, -7.0, 0.30000000000000004, 1.0, 3.0),
        (0.0,) * 8,
        (),
        (1.0, 2.0, 3.0),
        None,
    ]


def written(rng: random.Random, users: tuple[str, ...] = ("alice", "bob")) -> list[MemoryItem]:
    """Each of :func:`vectors` for alice (private) and, rotated by ``k`` components, for the
    ``k``-th other user (shared)."""
    items = []
    for number, vector in enumerate(vectors(rng)):
        for k, user in enumerate(users):
            mine = user == "alice"
            items.append(
                MemoryItem(
                    item_id=f"m{number}",
                    agent_id="agent",
                    user_id=user,
                    scope=Scope.PRIVATE if mine else Scope.SHARED,
                    kind=MemoryKind.EVENT,
                    content=f"launch budget note {number}",
                    created_at=FIXED_NOW,
                    thread_id="t",
                    position=number,
                    embedding=None if vector is None else vector[k:] + vector[:k],
                )
            )
    return items


def columns(store: InMemoryMemoryStore) -> Iterator[VectorColumn]:
    for index in store._indexes.values():
        for segment in index.segments.values():
            yield from segment.vectors.values()


def readable(store: InMemoryMemoryStore, vector: tuple[float, ...]) -> bool:
    """Whether any array of the store's index still holds ``vector``'s unit vector (or its
    rounding), or any of its floats that the unit vector does not give back."""
    raw = np.asarray(vector, dtype=np.float64)
    unit = raw / (np.linalg.norm(raw) or 1.0)
    for column in columns(store):
        if column.matrix.shape[1] != len(vector):
            continue
        screens: list[np.ndarray | None] = [column.matrix, column.columns.T, column.half]
        screens.append(column.single)
        for rows in (screen for screen in screens if screen is not None):
            if np.all(rows == unit.astype(rows.dtype), axis=1).any():
                return True
        for at, floats in column.fixes.values():
            if np.array_equal(floats, raw[at]):
                return True
    return False


async def test_items_read_back_equal_the_items_written() -> None:
    items = written(random.Random(7))
    store = InMemoryMemoryStore()
    await store.put_many(items)
    mine = [i for i in items if i.user_id == "alice"]
    ids = [i.item_id for i in mine]
    assert await store.get(ALICE, ids) == mine
    by_key = await store.items_by_key(ALICE, [_doc_id(_key(i)) for i in items])
    assert list(by_key.values()) == items
    near = await store.around(ALICE, ["m0"], radius=10, now=FIXED_NOW)
    assert sorted(near, key=_key) == sorted((i for i in items if i.item_id != "m0"), key=_key)
    query = MemoryQuery(text="launch budget", limit=20, now=FIXED_NOW, embedding=(1.0,) * 8)
    hits = await store.search(ALICE, query)
    assert sorted((h.item for h in hits), key=_key) == sorted(items, key=_key)
    for hit in hits:
        assert hit.item.embedding is None or all(type(x) is float for x in hit.item.embedding)
    assert all(not i.embedding for i in store._items.values())
    assert any(column.fixes for column in columns(store))  # some floats did not come back


async def test_a_replaced_item_gives_its_new_vector_and_the_old_one_is_gone() -> None:
    rng = random.Random(8)
    first, second = (tuple(rng.gauss(0.0, 1.0) for _ in range(8)) for _ in range(2))
    (item,) = [i for i in written(rng) if i.item_id == "m0" and i.user_id == "alice"]
    store = InMemoryMemoryStore()
    await store.put(item.model_copy(update={"embedding": first}))
    replaced = item.model_copy(update={"embedding": second, "content": "other words"})
    await store.put(replaced)
    assert await store.get(ALICE, ["m0"]) == [replaced]
    assert readable(store, second)
    assert not readable(store, first)
    without = item.model_copy(update={"embedding": None})
    await store.put(without)
    assert await store.get(ALICE, ["m0"]) == [without]
    assert not readable(store, second)


async def test_superseded_and_recalled_items_keep_their_vectors() -> None:
    items = [i for i in written(random.Random(9)) if i.user_id == "alice"]
    store = InMemoryMemoryStore()
    await store.put_many(items)
    newer = items[1].model_copy(update={"item_id": "m9", "supersedes": "m0"})
    await store.put(newer)
    await store.record_recall(ALICE, ["m0", "m1"], FIXED_NOW)
    old, recalled, again = await store.get(ALICE, ["m0", "m1", "m9"])
    assert old.superseded_by == "m9" and old.embedding == items[0].embedding
    assert recalled.recall_count == 1 and recalled.embedding == items[1].embedding
    assert again == newer
    assert all(not i.embedding for i in store._items.values())


def held_rows(store: InMemoryMemoryStore) -> int:
    """How many rows of vectors hold anything but zeros, in any array of the index."""
    count = 0
    for column in columns(store):
        screen = column.half if column.half is not None else column.single
        assert screen is not None
        held = int(np.count_nonzero(column.matrix.any(axis=1)))
        assert int(np.count_nonzero(column.scale)) == int(np.count_nonzero(column.has))
        assert set(column.fixes) <= set(np.flatnonzero(column.has).tolist())
        for rows in (screen, column.columns.T, column.support.T):
            assert int(np.count_nonzero(rows.any(axis=1))) == held
        count += held
    return count


async def test_deleted_and_erased_vectors_are_left_in_no_array() -> None:
    """Alice's private segment and the shared one outlive the deletion and the erasure:
    what was removed is zeros in every array of both, what was not still reads."""
    items = written(random.Random(10), ("alice", "bob", "carol"))
    store = InMemoryMemoryStore()
    await store.put_many(items)
    embedded = [i for i in items if i.embedding and any(i.embedding)]
    assert all(readable(store, i.embedding or ()) for i in embedded)
    assert held_rows(store) == len(embedded) == 9
    assert await store.delete(ALICE, ["m0"]) == 1
    assert await store.erase(BOB) == 6
    removed = [
        i for i in embedded if i.user_id == "bob" or (i.user_id, i.item_id) == ("alice", "m0")
    ]
    kept = [i for i in embedded if i not in removed]
    assert not any(readable(store, i.embedding or ()) for i in removed)
    assert all(readable(store, i.embedding or ()) for i in kept)
    assert held_rows(store) == len(kept) == 5
    assert await store.get(ALICE, ["m0", "m1"]) == [
        next(i for i in items if (i.user_id, i.item_id) == ("carol", "m0")),
        next(i for i in items if (i.user_id, i.item_id) == ("alice", "m1")),
    ]


class FailingOnSecondBatch:
    """The hashing embedder's vectors, until its second call, which fails."""

    def __init__(self) -> None:
        self.inner = HashingEmbedder(8)
        self.name, self.dimensions = self.inner.name, self.inner.dimensions
        self.batches: list[int] = []

    async def embed(self, texts: list[str]) -> list[tuple[float, ...]]:
        self.batches.append(len(texts))
        if len(self.batches) == 2:
            raise RuntimeError("embedder down")
        return await self.inner.embed(texts)


async def test_a_load_embeds_in_batches_and_stores_nothing_when_one_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(memory, "BATCH", 4)
    items = [i.model_copy(update={"embedding": None}) for i in written(random.Random(11))]
    embedder = FailingOnSecondBatch()
    store = InMemoryMemoryStore(embedder=embedder)
    with pytest.raises(RuntimeError):
        await store.put_many(items)
    assert embedder.batches == [4, 4]
    assert await store.get(ALICE, [i.item_id for i in items]) == []
    embedder.batches = [0, 0]
    await store.put_many(items)
    assert embedder.batches == [0, 0, 4, 4, 4]
    expected = await HashingEmbedder(8).embed([searchable_text(i) for i in items])
    got = await store.items_by_key(ALICE, [_doc_id(_key(i)) for i in items])
    assert [i.embedding for i in got.values()] == expected
