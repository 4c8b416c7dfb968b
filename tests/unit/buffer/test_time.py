"""Time in the buffer: priority decay with a floor, recency, and fade-out, on an injected clock."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefrontal.buffer import BufferConfig, BufferItem, EvictionReason, ItemSource, OverflowPolicy
from prefrontal.buffer.decay import decayed, effective_priority, faded_among, has_faded

from .conftest import T0, Clock, at, item, make_buffer

pytestmark = pytest.mark.anyio


def test_decay_composes_over_time() -> None:
    """Decaying five minutes twice equals decaying ten minutes once."""
    config = BufferConfig()
    twice = decayed(decayed(0.8, 5, config), 5, config)
    assert twice == pytest.approx(decayed(0.8, 10, config))


def test_decay_stops_at_the_floor() -> None:
    """Priority never decays below the floor (nor is raised to it)."""
    config = BufferConfig(priority_floor=0.05)
    assert decayed(0.9, 10_000, config) == 0.05
    assert decayed(0.01, 10_000, config) == 0.01


def test_decay_rate_is_per_minute() -> None:
    """After one minute, priority has shrunk by the configured rate."""
    assert decayed(1.0, 1, BufferConfig(decay_per_minute=0.02)) == pytest.approx(0.98)


async def test_access_restores_an_items_priority() -> None:
    """An item's priority decays while idle and is whole again once touched."""
    buffer = make_buffer()
    await buffer.add(item("note", item_id="n", priority=0.8), now=at(0))
    held = buffer.get("n")
    assert held is not None
    assert effective_priority(held, at(600), buffer.config) < 0.8
    touched = buffer.access("n", now=at(100))
    assert touched is not None
    assert effective_priority(touched, at(100), buffer.config) == 0.8


async def test_pinned_items_do_not_decay_or_fade() -> None:
    """Pinned items keep their priority and survive fade-out."""
    buffer = make_buffer(fade_seconds=60)
    await buffer.add(item("rule", item_id="r", priority=0.7, pinned=True), now=at(0))
    held = buffer.get("r")
    assert held is not None
    assert effective_priority(held, at(3_600), buffer.config) == 0.7
    assert await buffer.expire(now=at(3_600)) == ()


async def test_untouched_items_fade_after_the_configured_time() -> None:
    """Items idle for fade_seconds are removed with reason faded; touched ones stay."""
    clock = Clock()
    buffer = make_buffer(OverflowPolicy.LRU, clock=clock, fade_seconds=300)
    await buffer.add(item("stale", item_id="s"))
    await buffer.add(item("busy", item_id="b"))
    clock.advance(200)
    buffer.access("b")
    clock.advance(100)
    gone = await buffer.expire()
    assert [(e.item_id, e.reason) for e in gone] == [("s", EvictionReason.FADED)]
    assert "b" in buffer


@pytest.mark.parametrize("policy", [OverflowPolicy.LRU, OverflowPolicy.SUMMARIZE])
async def test_fading_again_at_the_same_instant_sees_what_changed_since(
    policy: OverflowPolicy,
) -> None:
    """A second fade at the same instant finds nothing, unless the items or settings moved:
    an item unpinned at that instant, or a shorter fade time, lets it fade then."""
    buffer = make_buffer(policy, fade_seconds=300)
    await buffer.add(item("kept long ago", item_id="k", pinned=True), now=at(0))
    await buffer.add(item("an old fragment", item_id="o"), now=at(500))
    assert await buffer.fade(now=at(600)) == ()
    assert await buffer.fade(now=at(600)) == ()
    buffer.pin("k", pinned=False, now=at(600))
    assert [e.item_id for e in await buffer.fade(now=at(600))] == ["k"]
    await buffer.reconfigure(buffer.config.model_copy(update={"fade_seconds": 60}), now=at(600))
    assert [e.item_id for e in await buffer.fade(now=at(600))] == ["o"]


async def test_accessing_a_faded_item_removes_it() -> None:
    """A faded item cannot be revived by access: it is removed and None returned."""
    buffer = make_buffer(fade_seconds=60)
    await buffer.add(item("old", item_id="o"), now=at(0))
    assert buffer.access("o", now=at(61)) is None
    assert "o" not in buffer


async def test_the_clock_is_injectable() -> None:
    """Without an explicit time, operations read the injected clock."""
    clock = Clock(at(42))
    buffer = make_buffer(clock=clock)
    result = await buffer.add(item("x"))
    assert result.item is not None
    assert result.item.added_at == at(42)


async def test_naive_times_are_read_as_utc() -> None:
    """A naive ``now`` means UTC, so it mixes safely with the aware times held."""
    buffer = make_buffer(fade_seconds=60)
    await buffer.add(item("x", item_id="x"), now=at(0))
    assert buffer.access("x", now=at(30).replace(tzinfo=None)) is not None
    assert (await buffer.expire(now=at(100).replace(tzinfo=None)))[0].item_id == "x"


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 900), st.booleans()), max_size=12),
    st.integers(0, 1_200),
    st.sampled_from((60.0, 300.0, 299.5)),
)
def test_the_faded_are_those_each_items_test_finds(
    rows: list[tuple[int, bool]], now: int, fade: float
) -> None:
    """Comparing each distinct last access once finds what :func:`has_faded` finds item by
    item, in order (pinned items never fade; a clock gone backwards fades nothing)."""
    items = [
        BufferItem(
            item_id=f"i{n}",
            content="the payment review",
            source=ItemSource.SYSTEM,
            tokens=1,
            priority=0.5,
            salience=0.1,
            added_at=T0,
            last_accessed_at=at(touched),
            pinned=pinned,
            seq=n,
        )
        for n, (touched, pinned) in enumerate(rows)
    ]
    config = BufferConfig(fade_seconds=fade)
    found = faded_among(items, at(now), config)
    assert found == [i for i in items if has_faded(i, at(now), config)]
