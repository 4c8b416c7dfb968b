"""``dump``: a stored model's JSON, the text ``model_dump_json`` gives, or a refusal."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from prefrontal.errors import ItemRejectedError
from prefrontal.stores import MemoryItem
from prefrontal.stores.durable import dump
from prefrontal.stores.long_term import MemoryKind
from prefrontal.stores.tenancy import Scope

EXCLUDED = {"superseded_by", "recall_count", "last_recalled_at", "embedding"}
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
TEXT = st.text(min_size=1, max_size=40)
WHEN = st.none() | st.integers(0, 10**9).map(lambda s: T0 + timedelta(seconds=s, microseconds=7))

ITEMS = st.builds(
    MemoryItem,
    item_id=st.text("abc-é0", min_size=1, max_size=8),
    agent_id=st.just("agent"),
    user_id=st.sampled_from(["alice", "çarol"]),
    scope=st.sampled_from(list(Scope)),
    kind=st.sampled_from(list(MemoryKind)),
    content=TEXT,
    importance=st.floats(0.0, 1.0),
    created_at=st.just(T0),
    occurred_at=WHEN,
    valid_until=WHEN,
    recall_count=st.integers(0, 5),
    last_recalled_at=WHEN,
    thread_id=st.none() | st.just("session-1"),
    position=st.none() | st.integers(-3, 10**6),
    tags=st.lists(st.text("xyz ", min_size=1, max_size=5), max_size=3).map(tuple),
    metadata=st.dictionaries(st.sampled_from(["speaker", "date", "n"]), TEXT, max_size=3),
    embedding=st.none() | st.lists(st.floats(-1, 1), min_size=1, max_size=4).map(tuple),
)


@given(ITEMS)
def test_the_text_is_model_dump_jsons(item: MemoryItem) -> None:
    """Every field, with and without the fields a row keeps as columns."""
    assert dump(item, store="episodic") == item.model_dump_json()
    assert dump(item, store="episodic", exclude=EXCLUDED) == item.model_dump_json(exclude=EXCLUDED)


def test_text_that_is_not_utf8_is_refused() -> None:
    """A lone surrogate (set past validation, which refuses it) cannot be stored: the item is
    rejected, naming its model."""
    valid = MemoryItem(item_id="m1", agent_id="a", user_id="u", content="fine")
    item = valid.model_copy(update={"content": "bad \ud800 text"})
    with pytest.raises(ItemRejectedError, match="cannot store MemoryItem"):
        dump(item, store="episodic", exclude=EXCLUDED)
