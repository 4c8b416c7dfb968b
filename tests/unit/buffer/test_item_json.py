"""An item's JSON spliced from its earlier version's is the item's own JSON, byte for byte."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefrontal.buffer import OverflowPolicy
from prefrontal.buffer.item_json import ORDER, SPLICED, respliced
from prefrontal.buffer.models import BufferItem, ItemProvenance, ItemSource, Lifetime
from prefrontal.buffer.state_document import STATE_FIELD, decode, encode
from prefrontal.buffer.trusted import evolve

from .conftest import at, item, make_buffer

pytestmark = pytest.mark.anyio

_JSON = BufferItem.__pydantic_serializer__
T0 = datetime(2026, 11, 22, 10, 0, tzinfo=UTC)
TRAPS = (',"priority":', ',"seq":', ',"provenance":', ',"pinned":', '"}', "\\", "é")
"""Text that looks like the keys the splice looks for (in contents, tags and extras)."""

texts = st.text(min_size=1, max_size=20) | st.sampled_from(TRAPS)
unit = st.floats(min_value=0.0, max_value=1.0) | st.sampled_from((0.0, -0.0, 1.0, 1e-7, 0.1))
times = st.integers(min_value=0, max_value=10**7).map(lambda s: T0 + timedelta(seconds=s)) | (
    st.sampled_from((T0, T0.astimezone(timezone(timedelta(hours=2)))))
)
extras = st.dictionaries(
    st.sampled_from(("seq", "priority", "consolidating_into", "k")),
    st.integers() | texts | st.booleans(),
    max_size=3,
)
provenances = st.builds(
    ItemProvenance,
    store=st.none() | texts,
    item_ids=st.lists(texts, max_size=3).map(tuple),
    score=st.none() | unit,
    turn_id=st.none() | texts,
    extra=extras,
)
items = st.builds(
    BufferItem,
    item_id=st.sampled_from(("semantic:m1", "wm_1", 'a,"seq":1')),
    content=texts,
    source=st.sampled_from(ItemSource),
    tokens=st.integers(min_value=0, max_value=500),
    priority=unit,
    salience=unit,
    confidence=unit,
    tags=st.lists(texts, max_size=2).map(tuple),
    entities=st.lists(texts, max_size=2).map(tuple),
    added_at=times,
    last_accessed_at=times,
    access_count=st.integers(min_value=0, max_value=10**6),
    pinned=st.booleans(),
    lifetime=st.sampled_from(Lifetime),
    summary_of=st.lists(texts, max_size=2).map(tuple),
    provenance=provenances,
    seq=st.integers(min_value=0, max_value=10**6),
    consolidating_into=st.none() | texts,
)
spliced_changes = st.fixed_dictionaries(
    {},
    optional={
        "priority": unit,
        "last_accessed_at": times,
        "access_count": st.integers(min_value=0, max_value=10**6),
        "provenance": provenances,
    },
)
other_changes = st.fixed_dictionaries(
    {},
    optional={
        "content": texts,
        "tokens": st.integers(min_value=0, max_value=500),
        "confidence": unit,
        "tags": st.lists(texts, max_size=2).map(tuple),
        "added_at": times,
        "seq": st.integers(min_value=0, max_value=10**6),
        "consolidating_into": st.none() | texts,
    },
)


def test_the_splice_knows_the_item_models_fields_in_order() -> None:
    """A field added, moved or renamed in the model must be seen here (splicing checks it)."""
    assert tuple(BufferItem.model_fields) == ORDER
    assert set(SPLICED) <= set(ORDER)


@settings(max_examples=150, deadline=None)
@given(old=items, spliced=spliced_changes, others=other_changes)
def test_a_spliced_item_is_its_own_json_or_nothing(
    old: BufferItem, spliced: dict[str, object], others: dict[str, object]
) -> None:
    """Whatever changed: the splice gives the item's JSON, or declines; it never declines a
    change of the spliced fields alone."""
    new = evolve(old, {**spliced, **others})
    text = respliced(new, old, _JSON.to_json(old))
    if text is not None:
        assert text == _JSON.to_json(new)
    if not others:
        assert text == _JSON.to_json(new)


def test_equal_values_of_other_kinds_are_not_taken_as_written_alike() -> None:
    """An equal time in another zone, or an equal model that is another object, is written
    whole rather than spliced (and an equal float of the other sign too)."""
    old = BufferItem(
        item_id="x", content="c", source=ItemSource.SYSTEM, tokens=1, priority=0.5, salience=0.0,
        added_at=T0, last_accessed_at=T0,
    )  # fmt: skip
    zoned = evolve(old, {"added_at": T0.astimezone(timezone(timedelta(hours=1)))})
    assert respliced(zoned, old, _JSON.to_json(old)) is None
    signed = evolve(old, {"salience": -0.0})
    assert respliced(signed, old, _JSON.to_json(old)) is None
    copied = evolve(old, {"factors": old.factors.model_copy()})
    assert respliced(copied, old, _JSON.to_json(old)) is None


async def test_a_document_written_from_the_last_one_is_the_snapshots_json() -> None:
    """After a turn's refresh of held items, the document written from the one loaded is
    ``model_dump_json()`` of the new snapshot (and decodes to it)."""
    buffer = make_buffer(OverflowPolicy.LRU, max_items=6)
    offers = [item(f"Entry {n}: the launch review.", item_id=f"e{n}") for n in range(5)]
    for n, offered in enumerate(offers):
        await buffer.add(offered, now=at(n))
    first = buffer.snapshot()
    loaded = decode(encode(first))
    again = [item(f"Entry {n}: the launch review.", item_id=f"e{n}", priority=0.7) for n in (1, 3)]
    for offered in again:
        assert buffer.renew(offered, now=at(30), turn_id="t2") is not None
    second = buffer.snapshot()
    text = encode(second, loaded)[STATE_FIELD]
    assert text == second.model_dump_json()
    assert decode({STATE_FIELD: text}) == second
