"""The PostgreSQL memory store validates each stored body once while its rows are read again.

A body read again (by a get, a search, a neighbour read) is the item decoded
the first time, with the row's columns (recalls, supersession, vector) set
on a copy; a changed body is validated anew; an erase (every cache emptied)
forgets the decoded bodies.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta

import pytest

from prefrontal.forgetting import forget_everything
from prefrontal.stores import MemoryQuery
from prefrontal.stores.postgres import PostgresDatabase, PostgresMemoryStore
from prefrontal.stores.postgres import memory as postgres_memory
from tests.conftest import FIXED_NOW
from tests.stores.decoded_bodies import ALICE, counted_validations, item

pytestmark = pytest.mark.anyio


@pytest.fixture
async def store(postgres_dsn: str, postgres_schema: str) -> AsyncIterator[PostgresMemoryStore]:
    """An episodic store in a fresh schema."""
    database = PostgresDatabase(postgres_dsn, schema=postgres_schema, max_size=1)
    yield PostgresMemoryStore(database)
    await database.aclose()


@pytest.fixture
def validations(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The bodies validated from now on (the cache emptied first)."""
    return counted_validations(monkeypatch)


async def test_a_body_read_again_is_not_validated_again(
    store: PostgresMemoryStore, validations: list[str]
) -> None:
    """Reads and searches of the same row validate its body once and still carry its recalls."""
    stored = item("m1", "The ferry to Lisbon leaves at nine.")
    await store.put(stored)
    first = await store.get(ALICE, ["m1"])
    later = FIXED_NOW + timedelta(minutes=1)
    await store.record_recall(ALICE, ["m1"], later)
    hits = await store.search(ALICE, MemoryQuery(text="ferry Lisbon", now=FIXED_NOW))
    again = await store.get(ALICE, ["m1"])
    assert first == [stored]
    assert [hit.item.item_id for hit in hits] == ["m1"]
    assert (hits[0].item.recall_count, hits[0].item.last_recalled_at) == (1, later)
    assert (again[0].recall_count, again[0].last_recalled_at) == (1, later)
    assert again[0].model_copy(update={"recall_count": 0, "last_recalled_at": None}) == stored
    assert (first[0].recall_count, first[0].last_recalled_at) == (0, None)
    assert len(validations) == 1


async def test_an_erase_forgets_the_decoded_bodies(
    store: PostgresMemoryStore, validations: list[str]
) -> None:
    """After every cache is emptied (as an erase does), a body read again is validated again."""
    await store.put(item("m1", "The ferry to Lisbon leaves at nine."))
    await store.get(ALICE, ["m1"])
    forget_everything()
    await store.get(ALICE, ["m1"])
    assert len(validations) == 2


async def test_a_changed_row_is_read_as_it_is_now(
    store: PostgresMemoryStore, validations: list[str]
) -> None:
    """An item put again with other content is read with the new content, never the old."""
    await store.put(item("m1", "The ferry to Lisbon leaves at nine."))
    await store.get(ALICE, ["m1"])
    await store.put(item("m1", "The ferry to Lisbon leaves at ten."))
    found = await store.get(ALICE, ["m1"])
    hits = await store.search(ALICE, MemoryQuery(text="ferry Lisbon", now=FIXED_NOW))
    assert found[0].content == "The ferry to Lisbon leaves at ten."
    assert hits[0].item == found[0]
    assert len(validations) == 2


async def test_an_erased_tenants_body_is_not_held(
    store: PostgresMemoryStore, validations: list[str]
) -> None:
    """Erasing a tenant through the store's public erase leaves no decoded body of theirs once
    the caches are emptied, as :mod:`prefrontal.forgetting` does on an erase."""
    await store.put(item("m1", "The ferry to Lisbon leaves at nine."))
    await store.get(ALICE, ["m1"])
    assert len(postgres_memory._decoded) == 1
    await store.erase(ALICE)
    forget_everything()
    assert len(postgres_memory._decoded) == 0
    assert await store.get(ALICE, ["m1"]) == []
