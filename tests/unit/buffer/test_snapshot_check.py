"""A snapshot's check finds the problems the check of each rule in turn finds."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefrontal.buffer import BufferConfig, BufferSnapshot, ItemSource, WorkingMemoryBuffer
from prefrontal.buffer.models import BufferItem
from prefrontal.buffer.snapshot import SNAPSHOT_FORMAT
from prefrontal.errors import WorkingMemoryError

from .conftest import at


def rule_by_rule(snapshot: BufferSnapshot) -> str | None:
    """The problems of ``snapshot``, each rule read over the items on its own (the check
    as first written); ``None`` when there is none."""
    ids = [item.item_id for item in snapshot.items]
    seqs = [i.seq for i in snapshot.items]
    problems = [
        "duplicate item ids" if len(set(ids)) != len(ids) else "",
        "more items than max_items" if len(ids) > snapshot.config.max_items else "",
        "more tokens than max_tokens"
        if sum(i.tokens for i in snapshot.items) > snapshot.config.max_tokens
        else "",
        "items out of order" if seqs != sorted(seqs) else "",
        "next_seq not above every item" if any(s >= snapshot.next_seq for s in seqs) else "",
        f"unknown snapshot format {snapshot.format}" if snapshot.format != SNAPSHOT_FORMAT else "",
    ]
    found = [p for p in problems if p]
    return f"invalid buffer snapshot: {', '.join(found)}" if found else None


def held(item_id: str, tokens: int, seq: int) -> BufferItem:
    return BufferItem(
        item_id=item_id,
        content=f"item {item_id}",
        source=ItemSource.SYSTEM,
        tokens=tokens,
        priority=0.5,
        salience=0.5,
        added_at=at(0),
        last_accessed_at=at(0),
        seq=seq,
    )


@given(
    items=st.lists(
        st.tuples(st.sampled_from("abcde"), st.integers(0, 12), st.integers(0, 9)), max_size=7
    ),
    next_seq=st.integers(0, 10),
    max_items=st.integers(1, 6),
    max_tokens=st.integers(1, 40),
    form=st.sampled_from([SNAPSHOT_FORMAT, SNAPSHOT_FORMAT + 1]),
)
@settings(max_examples=200, deadline=None)
def test_the_check_finds_what_each_rule_finds(
    items: list[tuple[str, int, int]], next_seq: int, max_items: int, max_tokens: int, form: int
) -> None:
    snapshot = BufferSnapshot(
        format=form,
        config=BufferConfig(max_items=max_items, max_tokens=max_tokens),
        items=tuple(held(*fields) for fields in items),
        next_seq=next_seq,
    )
    expected = rule_by_rule(snapshot)
    if expected is None:
        assert snapshot.check() is snapshot
    else:
        with pytest.raises(WorkingMemoryError) as raised:
            snapshot.check()
        assert str(raised.value) == expected


def test_a_snapshot_found_valid_is_not_checked_again_and_a_changed_copy_is() -> None:
    """A valid snapshot, checked once (or made by a buffer), is known valid; a copy with a
    broken rule is a new snapshot and is checked, whatever its original was."""
    snapshot = BufferSnapshot(
        config=BufferConfig(max_items=2), items=(held("a", 1, 0),), next_seq=1
    )
    assert snapshot.check() is snapshot
    assert snapshot.check() is snapshot  # (remembered: no rule read again)
    broken = snapshot.model_copy(update={"next_seq": 0})
    with pytest.raises(WorkingMemoryError, match="next_seq not above every item"):
        broken.check()
    with pytest.raises(WorkingMemoryError, match="next_seq not above every item"):
        broken.check()  # an invalid snapshot is never remembered as valid
    made = WorkingMemoryBuffer(BufferConfig(max_items=2)).snapshot()
    assert made.check() is made
    assert rule_by_rule(made) is None
