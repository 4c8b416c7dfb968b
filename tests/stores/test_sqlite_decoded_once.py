"""The SQLite memory store validates each stored body once while its rows are read again and again."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import numpy
import pytest
from hypothesis import given
from hypothesis import strategies as st

from prefrontal.forgetting import forget_everything
from prefrontal.retrieval.vectors import float32_bytes, from_blob
from prefrontal.stores import MemoryItem, MemoryQuery, ScoredMemory, sqlite
from prefrontal.stores.sqlite import memory as sqlite_memory
from prefrontal.stores.sqlite.database import to_us_or_none
from tests.conftest import FIXED_NOW
from tests.stores.decoded_bodies import ALICE, counted_validations, item

pytestmark = pytest.mark.anyio


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
    return counted_validations(monkeypatch)


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


@given(
    superseded_by=st.none() | st.just("m2"),
    recall_count=st.integers(min_value=0, max_value=5),
    recalled_after_s=st.none() | st.integers(min_value=0, max_value=10**8),
    embedding=st.none() | st.lists(st.floats(-1, 1, width=32), min_size=1, max_size=4),
    tags=st.lists(st.sampled_from(["ferry", "lisbon", "trip"]), max_size=2, unique=True),
)
def test_a_row_with_columns_is_the_model_copy_of_its_body(
    superseded_by: str | None,
    recall_count: int,
    recalled_after_s: int | None,
    embedding: list[float] | None,
    tags: list[str],
) -> None:
    """A row whose columns hold what its body lacks reads as ``model_copy(update=...)`` of
    the decoded body would: equal, the same fields set, nothing extra or private."""
    stored = item("m1", "The ferry to Lisbon leaves at nine.")
    stored = stored.model_copy(update={"tags": tuple(tags)}) if tags else stored
    body = stored.model_dump_json(exclude=set(sqlite_memory._DERIVED))
    recalled_at = (
        None if recalled_after_s is None else FIXED_NOW + timedelta(seconds=recalled_after_s)
    )
    blob = None if embedding is None else float32_bytes(embedding)
    row = (body, superseded_by, recall_count, to_us_or_none(recalled_at), blob)
    read = sqlite_memory._with_columns(row)
    expected = MemoryItem.model_validate_json(body).model_copy(
        update={
            "superseded_by": superseded_by,
            "recall_count": recall_count,
            "last_recalled_at": recalled_at,
            "embedding": None if blob is None else from_blob(blob),
        }
    )
    assert read == expected
    assert read.model_dump() == expected.model_dump()
    assert read.__pydantic_fields_set__ == expected.__pydantic_fields_set__
    assert (read.__pydantic_extra__, read.__pydantic_private__) == (None, None)
    assert read.model_dump_json(exclude_unset=True) == expected.model_dump_json(exclude_unset=True)


@given(
    score=st.floats(0, 10) | st.integers(0, 10) | st.floats(0, 10).map(numpy.float64),
    signals=st.dictionaries(
        st.sampled_from(["bm25", "vector"]),
        st.floats(0, 1) | st.integers(0, 1) | st.floats(0, 1, width=32).map(numpy.float32),
    ),
    recall_count=st.integers(min_value=0, max_value=3),
)
def test_a_hit_is_the_validated_hit(
    score: float, signals: dict[str, float], recall_count: int
) -> None:
    """A hit made without validating again equals, field for field and as JSON, the hit
    ``ScoredMemory`` validates from the same row, score and signals."""
    stored = item("m1", "The ferry to Lisbon leaves at nine.")
    body = stored.model_dump_json(exclude=set(sqlite_memory._DERIVED))
    row = (body, None, recall_count, None, None)
    made = sqlite_memory._scored(row, score, signals)
    validated = ScoredMemory(item=sqlite_memory._item(row), score=score, signals=signals)
    assert made == validated
    assert made.model_dump_json() == validated.model_dump_json()
    assert made.__pydantic_fields_set__ == validated.__pydantic_fields_set__ | {"signals"}
    assert type(made.score) is float
    assert all(type(value) is float for value in made.signals.values())
