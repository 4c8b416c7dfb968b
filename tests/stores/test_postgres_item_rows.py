"""A PostgreSQL memory row read as an item: the body validated, the columns beside it set unchecked.

:func:`prefrontal.stores.postgres.memory._item` validates the stored body and
sets the four fields kept as columns (``superseded_by``, ``recall_count``,
``last_recalled_at``, ``embedding``) with :func:`prefrontal.trusted.evolve`.
The property: for any item, the row the store writes and reads back decodes
to the item ``model_copy`` made from the same row, field for field, in its
dump and in its equality; a body that is not valid is still refused. No
server: the rows are built as the store's statements return them.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from prefrontal.retrieval.vectors import from_blob, to_blob
from prefrontal.stores.durable import dump
from prefrontal.stores.long_term import MemoryItem, MemoryKind
from prefrontal.stores.postgres.memory import _DERIVED, _item
from prefrontal.stores.tenancy import Scope
from tests.conftest import FIXED_NOW

_IDS = st.text(alphabet="abcdefghij-0123456789", min_size=1, max_size=12)
_MOMENTS = st.none() | st.integers(0, 10**6).map(lambda s: FIXED_NOW + timedelta(seconds=s))


@st.composite
def _items(draw: st.DrawFn) -> MemoryItem:
    return MemoryItem(
        item_id=draw(_IDS),
        agent_id="atlas",
        user_id=draw(st.sampled_from(["maya", "noah"])),
        scope=draw(st.sampled_from(list(Scope))),
        kind=draw(st.sampled_from(list(MemoryKind))),
        content=draw(st.text(min_size=1, max_size=80)),
        importance=draw(st.floats(0, 1)),
        created_at=FIXED_NOW,
        occurred_at=draw(_MOMENTS),
        valid_until=draw(_MOMENTS),
        superseded_by=draw(st.none() | _IDS),
        recall_count=draw(st.integers(0, 50)),
        last_recalled_at=draw(_MOMENTS),
        thread_id=draw(st.none() | _IDS),
        position=draw(st.none() | st.integers(0, 500)),
        tags=tuple(draw(st.lists(st.sampled_from(["launch", "billing", "ops"]), max_size=3))),
        metadata=draw(st.dictionaries(st.sampled_from(["source", "n", "ok"]), st.integers(0, 9))),
        embedding=draw(st.none() | st.lists(st.floats(-1, 1, width=32), min_size=3, max_size=3)),
    )


def _row(item: MemoryItem) -> tuple[Any, ...]:
    """What a read returns for ``item``: its id, body and the columns kept beside it."""
    blob = None if item.embedding is None else to_blob(item.embedding)
    body = dump(item, store="episodic", exclude=set(_DERIVED))
    return (
        item.item_id,
        body,
        item.superseded_by,
        item.recall_count,
        item.last_recalled_at,
        blob,
    )


def _straightforward(row: tuple[Any, ...]) -> MemoryItem:
    """The item as validated then copied with ``model_copy``."""
    _, body, superseded_by, recall_count, last_recalled_at, embedding = row
    return MemoryItem.model_validate_json(body).model_copy(
        update={
            "superseded_by": superseded_by,
            "recall_count": recall_count,
            "last_recalled_at": last_recalled_at,
            "embedding": None if embedding is None else from_blob(bytes(embedding)),
        }
    )


@settings(max_examples=200, deadline=None)
@given(_items())
def test_a_row_reads_as_the_straightforward_copy(item: MemoryItem) -> None:
    row = _row(item)
    read, expected = _item(row), _straightforward(row)
    assert read == expected
    assert read.model_dump_json() == expected.model_dump_json()
    assert read.model_fields_set == set(MemoryItem.model_fields)
    assert read.model_copy(update={"embedding": None}) == item.model_copy(
        update={"embedding": None}
    )


def test_a_body_that_is_not_valid_is_refused() -> None:
    item = MemoryItem(item_id="ep-1", agent_id="atlas", user_id="maya", content="Lena signs.")
    row = list(_row(item))
    row[1] = row[1].replace('"importance":0.5', '"importance":7')
    with pytest.raises(ValidationError):
        _item(tuple(row))
