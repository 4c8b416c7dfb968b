"""Properties of consolidation's pure part: what is due, the groups, the ids (hypothesis)."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from prefrontal.buffer import BufferConfig, BufferItem, ItemProvenance, ItemSource, Lifetime
from prefrontal.formation import (
    is_due,
    is_long_term_copy,
    lifetime_of,
    new_groups,
    originals,
    pending_groups,
    promoted_id,
    promoted_item,
)
from prefrontal.stores import MemoryItem, SessionKey
from prefrontal.stores.records import MAX_LINE_CHARS

T0 = datetime(2026, 11, 22, 10, 0, tzinfo=UTC)
KEY = SessionKey(agent_id="a", user_id="u", session_id="s")
CONFIG = BufferConfig(fade_seconds=300)


provenances = st.builds(
    ItemProvenance,
    store=st.sampled_from([None, "episodic", "semantic", "conversation", "scratch_page"]),
    item_ids=st.lists(st.sampled_from(["m1", "m2"]), max_size=2).map(tuple),
)


def test_copies_of_long_term_items_are_recognised() -> None:
    """Retrieved items and items naming episodic or semantic items are copies; others are not."""
    base = {
        "item_id": "x",
        "content": "c",
        "tokens": 1,
        "priority": 0.5,
        "salience": 0.5,
        "added_at": T0,
        "last_accessed_at": T0,
    }
    tool = {"source": "external", "provenance": {"store": "episodic", "item_ids": ("t:1",)}}
    note = {"source": "external", "provenance": {"store": "scratch_page", "item_ids": ("o",)}}
    assert is_long_term_copy(BufferItem.model_validate(base | tool))
    assert is_long_term_copy(BufferItem.model_validate(base | {"source": "memory_retrieval"}))
    assert not is_long_term_copy(BufferItem.model_validate(base | note))
    assert not is_long_term_copy(BufferItem.model_validate(base | {"source": "user_input"}))


@st.composite
def buffer_items(draw: st.DrawFn, seq: int, id_length: int = 0) -> BufferItem:
    idle = draw(st.floats(0, 1_000))
    return BufferItem(
        item_id=f"i{seq}".ljust(id_length, "x"),
        content=f"Item {seq} says something. More.",
        source=draw(st.sampled_from(list(ItemSource))),
        tokens=6,
        priority=draw(st.floats(0, 1)),
        salience=0.5,
        added_at=T0 - timedelta(seconds=idle + draw(st.floats(0, 100))),
        last_accessed_at=T0 - timedelta(seconds=idle),
        pinned=draw(st.booleans()) and draw(st.booleans()),
        lifetime=draw(st.sampled_from(list(Lifetime))),
        consolidating_into=draw(st.sampled_from([None, None, "wmc_old1", "wmc_old2"])),
        provenance=draw(provenances),
        seq=seq,
    )


@st.composite
def buffers(draw: st.DrawFn) -> list[BufferItem]:
    size = draw(st.integers(0, 12))
    return [draw(buffer_items(n)) for n in range(size)]


@st.composite
def long_buffers(draw: st.DrawFn) -> list[BufferItem]:
    """Up to 80 items with ids of up to 256 characters: more than one promoted item can name."""
    size, length = draw(st.integers(0, 80)), draw(st.integers(1, 256))
    return [draw(buffer_items(n, length)) for n in range(size)]


@settings(max_examples=60, deadline=None)
@given(items=buffers())
def test_groups_partition_the_due_unmarked_items_by_source(items: list[BufferItem]) -> None:
    """Every due, unmarked item is in exactly one group, of its own source; nothing else is.

    Each group's ids fit one metadata value as JSON.
    """
    groups = new_groups(KEY, items, CONFIG, T0)
    grouped = [m.item_id for g in groups for m in g.members]
    due = [i.item_id for i in items if i.consolidating_into is None and is_due(i, CONFIG, T0)]
    assert sorted(grouped) == sorted(due)
    assert len(grouped) == len(set(grouped))
    assert all(len(json.dumps(list(g.member_ids))) <= MAX_LINE_CHARS for g in groups)
    assert all(m.source is g.source for g in groups for m in g.members)
    assert all(g.target == promoted_id(KEY, g.member_ids) for g in groups)


@settings(max_examples=40, deadline=None)
@given(items=long_buffers())
def test_long_ids_split_a_source_into_groups_that_fit(items: list[BufferItem]) -> None:
    """However many and long the ids, each group is storable and every due item is in one."""
    groups = new_groups(KEY, items, CONFIG, T0)
    grouped = [m.item_id for g in groups for m in g.members]
    due = [i.item_id for i in items if i.consolidating_into is None and is_due(i, CONFIG, T0)]
    assert sorted(grouped) == sorted(due) and len(set(grouped)) == len(grouped)
    for group in groups:
        item = promoted_item(KEY, group, "summary", T0)
        assert originals(item) == group.member_ids
        assert MemoryItem.model_validate_json(item.model_dump_json()) == item


def test_a_huge_buffer_summary_keeps_its_newest_folded_ids() -> None:
    """A summary that folded 500 items is promoted with the newest ids that fit, and the count."""
    folded = tuple(f"wm_{n:040d}" for n in range(500))
    summary = BufferItem(
        item_id="wm_summary_1",
        content="- lines",
        source=ItemSource.SYSTEM,
        tokens=2,
        priority=0.5,
        salience=0.5,
        added_at=T0 - timedelta(hours=1),
        last_accessed_at=T0 - timedelta(hours=1),
        summary_of=folded,
        provenance=ItemProvenance(phase="buffer.summarize"),
    )
    [group] = new_groups(KEY, [summary], CONFIG, T0)
    item = promoted_item(KEY, group, "summary", T0)
    kept = json.loads(str(item.metadata["folded_from"]))
    assert item.metadata["folded_count"] == 500
    assert kept == list(folded[-len(kept) :]) and len(kept) > 10
    assert len(str(item.metadata["folded_from"])) <= MAX_LINE_CHARS


@settings(max_examples=60, deadline=None)
@given(items=buffers())
def test_items_without_a_lifetime_are_never_due(items: list[BufferItem]) -> None:
    """Pinned items, turn fragments and copies of long-term items are never due, however old."""
    for item in items:
        kept = item.pinned or item.lifetime is Lifetime.TURN
        kept = kept or is_long_term_copy(item)
        assert (lifetime_of(item, CONFIG) is None) == kept
        assert not (kept and is_due(item, CONFIG, T0 + timedelta(days=365)))


@settings(max_examples=60, deadline=None)
@given(items=buffers(), seconds=st.floats(1, 10_000))
def test_due_means_untouched_for_half_the_lifetime(items: list[BufferItem], seconds: float) -> None:
    """An item with a lifetime is due exactly when idle for at least half of it."""
    span = timedelta(seconds=seconds)
    for item in items:
        if lifetime_of(item, CONFIG, span) is not None:
            idle = (T0 - item.last_accessed_at).total_seconds()
            assert is_due(item, CONFIG, T0, span) == (idle >= seconds / 2)


@settings(max_examples=60, deadline=None)
@given(items=buffers())
def test_marked_items_keep_their_group(items: list[BufferItem]) -> None:
    """Items an earlier run marked form its groups, whatever they are now, and no new group."""
    pending = pending_groups(items)
    marked = {i.item_id: i.consolidating_into for i in items if i.consolidating_into}
    assert {m.item_id: g.target for g in pending for m in g.members} == marked
    fresh = {m.item_id for g in new_groups(KEY, items, CONFIG, T0) for m in g.members}
    assert fresh.isdisjoint(marked)


@settings(max_examples=60, deadline=None)
@given(
    ids=st.lists(st.text(min_size=1, max_size=8), min_size=1, max_size=6, unique=True),
    other=st.lists(st.text(min_size=1, max_size=8), min_size=1, max_size=6, unique=True),
    shuffled=st.randoms(use_true_random=False),
)
def test_promoted_ids_depend_on_the_set_and_the_session_only(
    ids: list[str], other: list[str], shuffled: random.Random
) -> None:
    """The same ids in any order give the same id; another set or another session another."""
    reordered = list(ids)
    shuffled.shuffle(reordered)
    assert promoted_id(KEY, ids) == promoted_id(KEY, reordered)
    if set(other) != set(ids):
        assert promoted_id(KEY, ids) != promoted_id(KEY, other)
    elsewhere = KEY.model_copy(update={"user_id": "v"})
    assert promoted_id(KEY, ids) != promoted_id(elsewhere, ids)


@settings(max_examples=40, deadline=None)
@given(items=buffers())
def test_a_promoted_item_names_its_originals(items: list[BufferItem]) -> None:
    """A promoted item's metadata gives back exactly its group's ids, and its id."""
    for group in new_groups(KEY, items, CONFIG, T0):
        item = promoted_item(KEY, group, "summary text", T0)
        assert originals(item) == group.member_ids
        assert item.item_id == group.target
        assert item.importance == max(m.priority for m in group.members)
        assert (item.agent_id, item.user_id) == (KEY.agent_id, KEY.user_id)
