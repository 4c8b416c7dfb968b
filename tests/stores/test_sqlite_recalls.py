"""The SQLite memory stores count recalls beside the items: the same items read back as counting
in the items' rows gives, and a recall leaves the items' rows (their pages) as they were."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefrontal.stores import MemoryItem, MemoryQuery, Stores, Tenant, sqlite
from prefrontal.stores.sqlite.driver import sqlite3
from prefrontal.stores.sqlite.memory import SqliteMemoryStore
from prefrontal.stores.sqlite.migrations import LATEST, schema_version
from tests.conftest import FIXED_NOW

pytestmark = pytest.mark.anyio
ALICE = Tenant(agent_id="agent-1", user_id="alice")
BOB = Tenant(agent_id="agent-1", user_id="bob")


def item(item_id: str, content: str, *, owner: Tenant = ALICE, **fields: object) -> MemoryItem:
    """``owner``'s episodic item ``item_id`` saying ``content``."""
    return MemoryItem.model_validate(
        {
            "item_id": item_id,
            "agent_id": owner.agent_id,
            "user_id": owner.user_id,
            "content": content,
            "created_at": FIXED_NOW,
            **fields,
        }
    )


@pytest.fixture
async def stores(tmp_path: Path) -> AsyncIterator[Stores]:
    """SQLite stores in a fresh file."""
    opened = sqlite.open_stores(tmp_path / "recalls.db")
    await opened.open()
    yield opened
    await opened.aclose()


def counted(stored: MemoryItem, recalls: list[int]) -> MemoryItem:
    """``stored`` after a recall at each minute of ``recalls``, counted in its own fields."""
    if not recalls:
        return stored
    return stored.model_copy(
        update={
            "recall_count": stored.recall_count + len(recalls),
            "last_recalled_at": FIXED_NOW + timedelta(minutes=recalls[-1]),
        }
    )


@settings(max_examples=25, deadline=None)
@given(
    steps=st.lists(
        st.tuples(st.sampled_from(["recall", "put", "delete"]), st.sets(st.integers(0, 3))),
        max_size=8,
    )
)
async def test_recalls_read_back_as_counted_in_the_items(
    tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[str, set[int]]]
) -> None:
    """Any run of recalls, puts (a put sets the counters it carries) and deletes: every item
    reads back (get, around, listed, search) as its fields counted one recall at a time."""
    path = tmp_path_factory.mktemp("recalls") / "r.db"
    stores = sqlite.open_stores(path)
    store = stores.episodic
    assert isinstance(store, SqliteMemoryStore)
    expected: dict[str, MemoryItem] = {}
    recalls: dict[str, list[int]] = {}
    try:
        for minute, (step, numbers) in enumerate(steps, start=1):
            ids = [f"m{n}" for n in sorted(numbers)]
            if step == "put":
                fresh = [
                    item(
                        i,
                        f"note {i} about ferries",
                        thread_id="t",
                        position=int(i[1:]),
                        recall_count=minute,  # a put sets the counters it carries
                        last_recalled_at=FIXED_NOW,
                    )
                    for i in ids
                ]
                await store.put_many(fresh)
                for one in fresh:
                    expected[one.item_id], recalls[one.item_id] = one, []
            elif step == "recall":
                await store.record_recall(ALICE, ids, FIXED_NOW + timedelta(minutes=minute))
                for i in ids:
                    if i in expected:
                        recalls[i].append(minute)
            else:
                await store.delete(ALICE, ids)
                for i in ids:
                    expected.pop(i, None)
            want = {i: counted(expected[i], recalls[i]) for i in expected}
            got = await store.get(ALICE, sorted(want))
            assert {one.item_id: one for one in got} == want
            listed = await store.listed(ALICE, limit=10)
            assert {one.item_id: one for one in listed} == want
            if want:
                hits = await store.search(ALICE, MemoryQuery(text="ferries", now=FIXED_NOW))
                assert {hit.item.item_id: hit.item for hit in hits} == want
                near = await store.around(ALICE, [min(want)], radius=3, now=FIXED_NOW)
                assert {one.item_id: one for one in near} == {
                    i: one for i, one in want.items() if i != min(want)
                }
    finally:
        await stores.aclose()


async def test_a_recall_leaves_the_items_rows_as_they_were(stores: Stores, tmp_path: Path) -> None:
    """Recording recalls writes the recalls table only: the items' rows keep their bytes."""
    await stores.episodic.put_many([item(f"m{n}", f"note {n}") for n in range(40)])
    path = tmp_path / "recalls.db"
    before = _rows(path, "episodic_items")
    await stores.episodic.record_recall(ALICE, [f"m{n}" for n in range(0, 40, 2)], FIXED_NOW)
    assert _rows(path, "episodic_items") == before
    assert len(_rows(path, "episodic_recalls")) == 20


async def test_a_recall_counts_only_the_item_the_tenant_is_given(stores: Stores) -> None:
    """Bob's recall of an id Alice holds privately counts nothing of hers."""
    await stores.episodic.put(item("m1", "Alice's note"))
    await stores.episodic.record_recall(BOB, ["m1"], FIXED_NOW)
    (mine,) = await stores.episodic.get(ALICE, ["m1"])
    assert mine.recall_count == 0
    assert mine.last_recalled_at is None


async def test_erase_and_forget_drop_the_recalls(stores: Stores, tmp_path: Path) -> None:
    """An erased user's items take their recall rows with them."""
    await stores.semantic.put_many([item(f"s{n}", f"fact {n}") for n in range(3)])
    await stores.semantic.record_recall(ALICE, ["s0", "s1", "s2"], FIXED_NOW)
    await stores.semantic.erase(ALICE)
    assert _rows(tmp_path / "recalls.db", "semantic_recalls") == []


async def test_a_file_of_schema_16_keeps_its_counts(tmp_path: Path) -> None:
    """A file whose items counted their recalls in their rows reads the same after migration 17,
    and counts further recalls from there."""
    path = tmp_path / "old.db"
    stores = sqlite.open_stores(path)
    await stores.episodic.put(item("m1", "an old note", recall_count=4, last_recalled_at=FIXED_NOW))
    await stores.aclose()
    connection = sqlite3.connect(path, isolation_level=None)
    for name in ("episodic", "semantic"):
        connection.execute(f"DROP TABLE {name}_recalls")  # its triggers go with it
    connection.execute("PRAGMA user_version = 16")
    connection.close()

    reopened = sqlite.open_stores(path)
    (kept,) = await reopened.episodic.get(ALICE, ["m1"])
    await reopened.episodic.record_recall(ALICE, ["m1"], FIXED_NOW + timedelta(hours=1))
    (recalled,) = await reopened.episodic.get(ALICE, ["m1"])
    await reopened.aclose()
    assert schema_version(sqlite3.connect(path)) == LATEST
    assert (kept.recall_count, kept.last_recalled_at) == (4, FIXED_NOW)
    assert (recalled.recall_count, recalled.last_recalled_at) == (5, FIXED_NOW + timedelta(hours=1))


def _rows(path: Path, table: str) -> list[tuple[object, ...]]:
    connection = sqlite3.connect(path)
    try:
        return connection.execute(f"SELECT * FROM {table} ORDER BY rowid").fetchall()
    finally:
        connection.close()
