"""The SQLite memory store validates each stored body once while its rows are read again and again."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from datetime import timedelta
from pathlib import Path

import pytest

from prefrontal.forgetting import forget_everything
from prefrontal.stores import MemoryItem, MemoryQuery, Tenant, sqlite
from prefrontal.stores.sqlite import memory as sqlite_memory
from tests.conftest import FIXED_NOW

pytestmark = pytest.mark.anyio
ALICE = Tenant(agent_id="agent-1", user_id="alice")


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[sqlite_memory.SqliteMemoryStore]:
    """The episodic store of SQLite stores in a fresh file."""
    stores = sqlite.open_stores(tmp_path / "decoded.db")
    await stores.open()
    yield stores.episodic  # type: ignore[misc]
    await stores.aclose()


@pytest.fixture
def validations(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The bodies validated from now on (the cache emptied first)."""
    forget_everything()
    seen: list[str] = []
    validate: Callable[[str], MemoryItem] = sqlite_memory._decoded._compute

    def counted(body: str) -> MemoryItem:
        seen.append(body)
        return validate(body)

    monkeypatch.setattr(sqlite_memory._decoded, "_compute", counted)
    return seen


def item(item_id: str, content: str) -> MemoryItem:
    """Alice's episodic item ``item_id`` saying ``content``."""
    return MemoryItem(
        item_id=item_id,
        agent_id=ALICE.agent_id,
        user_id=ALICE.user_id,
        content=content,
        created_at=FIXED_NOW,
        metadata={"source": "test"},
    )


async def test_a_body_read_again_is_not_validated_again(
    store: sqlite_memory.SqliteMemoryStore, validations: list[str]
) -> None:
    """Reads and searches of the same row validate its body once and still carry its recalls."""
    stored = item("m1", "The ferry to Lisbon leaves at nine.")
    await store.put(stored)
    first = await store.get(ALICE, ["m1"])
    await store.record_recall(ALICE, ["m1"], FIXED_NOW + timedelta(minutes=1))
    hits = await store.search(ALICE, MemoryQuery(text="ferry Lisbon", now=FIXED_NOW))
    again = await store.get(ALICE, ["m1"])
    assert first == [stored]
    assert [hit.item.item_id for hit in hits] == ["m1"]
    assert again[0].recall_count == 1
    assert again[0].model_copy(update={"recall_count": 0, "last_recalled_at": None}) == stored
    assert len(validations) == 1


async def test_an_erase_forgets_the_decoded_bodies(
    store: sqlite_memory.SqliteMemoryStore, validations: list[str]
) -> None:
    """After every cache is emptied (as an erase does), a body read again is validated again."""
    await store.put(item("m1", "The ferry to Lisbon leaves at nine."))
    await store.get(ALICE, ["m1"])
    forget_everything()
    await store.get(ALICE, ["m1"])
    assert len(validations) == 2


async def test_a_changed_row_is_read_as_it_is_now(
    store: sqlite_memory.SqliteMemoryStore, validations: list[str]
) -> None:
    """An item put again with other content is read with the new content, never the old."""
    await store.put(item("m1", "The ferry to Lisbon leaves at nine."))
    await store.get(ALICE, ["m1"])
    await store.put(item("m1", "The ferry to Lisbon leaves at ten."))
    found = await store.get(ALICE, ["m1"])
    assert found[0].content == "The ferry to Lisbon leaves at ten."
    assert len(validations) == 2


async def test_a_row_never_recalled_is_its_decoded_body_and_a_recalled_one_its_own(
    store: sqlite_memory.SqliteMemoryStore, validations: list[str]
) -> None:
    """Reads of a row never recalled share its one decoded item (no copy); once recalled, each
    read carries the row's recall columns."""
    await store.put(item("m1", "The ferry to Lisbon leaves at nine."))
    first, second = (await store.get(ALICE, ["m1"]))[0], (await store.get(ALICE, ["m1"]))[0]
    assert first is second
    later = FIXED_NOW + timedelta(hours=1)
    await store.record_recall(ALICE, ["m1"], later)
    recalled = (await store.get(ALICE, ["m1"]))[0]
    assert (recalled.recall_count, recalled.last_recalled_at) == (1, later)
    assert (first.recall_count, first.last_recalled_at) == (0, None)
    assert recalled.content == first.content and len(validations) == 1
