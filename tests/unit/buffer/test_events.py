"""Events: every change is delivered to subscribers, after it is complete."""

from __future__ import annotations

import pytest

from prefrontal.buffer import BufferEvent, EventKind, OverflowPolicy

from .conftest import at, item, make_buffer

pytestmark = pytest.mark.anyio


async def test_changes_publish_their_events_in_order() -> None:
    """added, evicted, updated and cleared are published with the item and reason."""
    buffer = make_buffer(OverflowPolicy.FIFO, max_items=1)
    events: list[BufferEvent] = []
    buffer.events.subscribe(events.append)
    await buffer.add(item("one", item_id="a"), now=at(0))
    await buffer.add(item("two", item_id="b"), now=at(1))
    buffer.pin("b", now=at(2))
    buffer.clear(now=at(3))
    assert [(e.kind, e.item_id, e.reason) for e in events] == [
        (EventKind.ADDED, "a", "admitted"),
        (EventKind.EVICTED, "a", "policy"),
        (EventKind.ADDED, "b", "admitted"),
        (EventKind.UPDATED, "b", "pinned"),
        (EventKind.CLEARED, None, "cleared"),
    ]
    assert events[-1].details == {"items_cleared": 1}
    assert events[1].total_items == 1  # published once the whole add is complete


async def test_unsubscribe_stops_delivery() -> None:
    """The function subscribe returns stops further delivery."""
    buffer = make_buffer()
    events: list[BufferEvent] = []
    stop = buffer.events.subscribe(events.append)
    await buffer.add(item("one"), now=at(0))
    stop()
    await buffer.add(item("two"), now=at(0))
    assert len(events) == 1


async def test_a_failing_subscriber_does_not_break_the_buffer() -> None:
    """A subscriber that raises is skipped; others still hear the event."""
    buffer = make_buffer()
    heard: list[BufferEvent] = []

    def broken(event: BufferEvent) -> None:
        raise RuntimeError("listener bug")

    buffer.events.subscribe(broken)
    buffer.events.subscribe(heard.append)
    result = await buffer.add(item("one"), now=at(0))
    assert result.item is not None
    assert len(heard) == 1


async def test_an_eviction_event_carries_its_victim_and_the_policy() -> None:
    """The victim's id, tokens and content, and the policy as a value, not the newcomer's size."""
    buffer = make_buffer(OverflowPolicy.FIFO, max_items=1)
    events: list[BufferEvent] = []
    buffer.events.subscribe(events.append)
    await buffer.add(item("the first note has six words", item_id="a"), now=at(0))
    await buffer.add(item("short", item_id="b"), now=at(1))
    [evicted] = [e for e in events if e.kind is EventKind.EVICTED]
    assert evicted.victim is not None
    assert (evicted.victim.item_id, evicted.victim.tokens) == ("a", 6)
    assert evicted.victim.content == "the first note has six words"
    assert evicted.policy is OverflowPolicy.FIFO
    assert evicted.details["tokens"] == 6
