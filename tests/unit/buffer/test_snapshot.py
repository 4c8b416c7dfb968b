"""Snapshots: the whole state as data, restored exactly, refused when invalid."""

from __future__ import annotations

import pytest

from prefrontal.buffer import BufferSnapshot, OverflowPolicy, WorkingMemoryBuffer
from prefrontal.errors import WorkingMemoryError

from .conftest import at, item, make_buffer, words

pytestmark = pytest.mark.anyio


async def _busy() -> WorkingMemoryBuffer:
    buffer = make_buffer(OverflowPolicy.SUMMARIZE, max_items=3, summary_min_tokens=2)
    for n in range(6):
        await buffer.add(item(f"Entry {n}. Detail.", tags=("t",), entities=("E",)), now=at(n))
    buffer.access(buffer.items[0].item_id, now=at(7))
    buffer.refresh_themes()
    return buffer


async def test_snapshot_then_restore_is_the_identity() -> None:
    """Restoring a snapshot gives a buffer whose snapshot is equal to it."""
    buffer = await _busy()
    snapshot = buffer.snapshot()
    restored = WorkingMemoryBuffer.restore(snapshot, count_tokens=words)
    assert restored.snapshot() == snapshot


async def test_snapshot_round_trips_through_json() -> None:
    """The JSON form (what the store keeps) validates back to an equal snapshot."""
    snapshot = (await _busy()).snapshot()
    again = BufferSnapshot.model_validate_json(snapshot.model_dump_json())
    assert again == snapshot
    assert BufferSnapshot.model_validate(snapshot.model_dump(mode="json")) == snapshot


async def test_restored_buffer_behaves_like_the_original() -> None:
    """The same operation on the original and the restored buffer gives the same state."""
    original = await _busy()
    restored = WorkingMemoryBuffer.restore(original.snapshot(), count_tokens=words)
    for buffer in (original, restored):
        await buffer.add(item("one more entry"), now=at(20))
    assert restored.snapshot() == original.snapshot()


async def test_invalid_snapshots_are_refused() -> None:
    """A snapshot over its bounds or with duplicate ids cannot be restored."""
    snapshot = (await _busy()).snapshot()
    over = snapshot.model_copy(
        update={"config": snapshot.config.model_copy(update={"max_items": 1})}
    )
    with pytest.raises(WorkingMemoryError, match="more items than max_items"):
        WorkingMemoryBuffer.restore(over)
    twice = snapshot.model_copy(update={"items": (snapshot.items[0], snapshot.items[0])})
    with pytest.raises(WorkingMemoryError, match="duplicate item ids"):
        WorkingMemoryBuffer.restore(twice)


async def test_reconfigure_evicts_what_no_longer_fits() -> None:
    """Shrinking the bounds evicts under the new policy, with reason reconfigured."""
    buffer = await _busy()
    smaller = buffer.config.model_copy(update={"max_items": 1})
    gone = await buffer.reconfigure(smaller, now=at(30))
    assert len(buffer) == 1
    assert len(gone) == 2
    assert all(e.reason.value == "reconfigured" for e in gone)


async def test_reconfigure_refuses_when_pinned_items_do_not_fit() -> None:
    """Pinned items are never evicted, so bounds below them are refused."""
    buffer = make_buffer()
    await buffer.add(item("a", pinned=True), now=at(0))
    await buffer.add(item("b", pinned=True), now=at(0))
    with pytest.raises(WorkingMemoryError, match="pinned items do not fit"):
        await buffer.reconfigure(buffer.config.model_copy(update={"max_items": 1}))
    assert len(buffer) == 2


async def test_the_stored_state_decodes_to_the_same_snapshot() -> None:
    """What a session saves decodes to the snapshot it came from (and a plain tree still reads)."""
    from prefrontal.buffer.state_document import decode, encode

    snapshot = (await _busy()).snapshot()
    assert decode(encode(snapshot)) == snapshot
    assert decode(snapshot.model_dump(mode="json")) == snapshot
