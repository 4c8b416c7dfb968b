"""Overflow policies: who leaves a full buffer first, and the reason each eviction gives."""

from __future__ import annotations

from datetime import timedelta
from math import log1p
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefrontal.buffer import (
    BufferConfig,
    BufferItem,
    EvictionReason,
    Focus,
    ItemSource,
    OverflowPolicy,
    WorkingMemoryBuffer,
)
from prefrontal.buffer.decay import decayed
from prefrontal.buffer.policies import (
    EvictionContext,
    Need,
    composite,
    eviction_order,
    select_victims,
)
from prefrontal.buffer.themes import carries

from .conftest import T0, at, item, make_buffer

pytestmark = pytest.mark.anyio


async def _full(policy: OverflowPolicy, n: int = 3, **config: Any) -> WorkingMemoryBuffer:
    buffer = make_buffer(policy, max_items=n, **config)
    for i in range(n):
        await buffer.add(item(f"item {i}", item_id=f"i{i}", priority=0.5), now=at(i))
    return buffer


async def test_fifo_evicts_the_first_admitted() -> None:
    """FIFO: the earliest admitted item goes first, whatever was accessed since."""
    buffer = await _full(OverflowPolicy.FIFO)
    buffer.access("i0", now=at(10))
    result = await buffer.add(item("newcomer"), now=at(11))
    assert [e.item_id for e in result.evicted] == ["i0"]
    assert result.evicted[0].reason is EvictionReason.POLICY
    assert result.evicted[0].detail.startswith("fifo")


async def test_lru_evicts_the_least_recently_used() -> None:
    """LRU: an item accessed lately survives; the longest unused goes."""
    buffer = await _full(OverflowPolicy.LRU)
    buffer.access("i0", now=at(10))
    result = await buffer.add(item("newcomer"), now=at(11))
    assert [e.item_id for e in result.evicted] == ["i1"]


async def test_priority_evicts_the_lowest_priority() -> None:
    """PRIORITY: the lowest priority goes first."""
    buffer = make_buffer(OverflowPolicy.PRIORITY, max_items=2)
    await buffer.add(item("important", item_id="hi", priority=0.9), now=at(0))
    await buffer.add(item("trivial", item_id="lo", priority=0.1), now=at(0))
    result = await buffer.add(item("newcomer", priority=0.5), now=at(1))
    assert [e.item_id for e in result.evicted] == ["lo"]
    assert result.evicted[0].keep_score is not None


async def test_priority_boosts_items_tagged_with_the_focus() -> None:
    """PRIORITY: an item carrying a focus tag gets the attention boost and survives."""
    buffer = make_buffer(OverflowPolicy.PRIORITY, max_items=2)
    await buffer.add(item("game tip", item_id="game", priority=0.5, tags=("gaming",)), now=at(0))
    await buffer.add(item("work task", item_id="work", priority=0.6, tags=("work",)), now=at(0))
    focus = Focus(tags=("gaming",))
    result = await buffer.add(item("newcomer", priority=0.5), focus=focus, now=at(1))
    assert [e.item_id for e in result.evicted] == ["work"]


async def test_composite_protects_theme_carriers() -> None:
    """COMPOSITE: an item carrying the session's dominant theme outlasts an equal one."""
    buffer = make_buffer(OverflowPolicy.COMPOSITE, max_items=3)
    await buffer.add(item("trip budget", item_id="a", tags=("vacation",)), now=at(0))
    await buffer.add(item("unrelated", item_id="b"), now=at(0))
    await buffer.add(item("hotel list", item_id="c", tags=("vacation",)), now=at(0))
    assert buffer.refresh_themes()[0] == "vacation"
    result = await buffer.add(item("newcomer"), now=at(1))
    assert [e.item_id for e in result.evicted] == ["b"]


async def test_composite_favours_frequently_accessed_items() -> None:
    """COMPOSITE: of two equal items, the one accessed more often stays."""
    buffer = make_buffer(OverflowPolicy.COMPOSITE, max_items=2)
    await buffer.add(item("first", item_id="a"), now=at(0))
    await buffer.add(item("second", item_id="b"), now=at(0))
    for _ in range(3):
        buffer.access("a", now=at(0))
    result = await buffer.add(item("newcomer"), now=at(0))
    assert [e.item_id for e in result.evicted] == ["b"]


@pytest.mark.parametrize("policy", list(OverflowPolicy))
async def test_pinned_items_are_never_evicted(policy: OverflowPolicy) -> None:
    """Under every policy a pinned item survives however stale and unimportant it is."""
    buffer = make_buffer(policy, max_items=3)
    await buffer.add(item("keep me", item_id="pin", priority=0.0, pinned=True), now=at(0))
    for i in range(10):
        await buffer.add(item(f"filler number {i}", priority=0.9), now=at(i))
    assert "pin" in buffer
    assert len(buffer) <= 3


@pytest.mark.parametrize("policy", list(OverflowPolicy))
async def test_bounds_hold_at_every_event(policy: OverflowPolicy) -> None:
    """Subscribers never observe the buffer over its item or token bound."""
    buffer = make_buffer(policy, max_items=4, max_tokens=40, summary_min_tokens=4)
    seen: list[tuple[int, int]] = []
    buffer.events.subscribe(lambda e: seen.append((buffer.total_tokens, len(buffer))))
    for i in range(20):
        await buffer.add(item(" ".join(["w"] * (1 + i % 9)) + f" {i}"), now=at(i))
    assert seen
    assert all(tokens <= 40 and count <= 4 for tokens, count in seen)


def _held(item_id: str, priority: float, idle: float, accesses: int, seq: int) -> BufferItem:
    when = T0 - timedelta(seconds=idle)
    return BufferItem(
        item_id=item_id,
        content=f"content of {item_id}",
        source=ItemSource.SYSTEM,
        tokens=3,
        priority=priority,
        salience=0.5,
        added_at=when,
        last_accessed_at=when,
        access_count=accesses,
        seq=seq,
    )


unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
idle = st.floats(min_value=0.0, max_value=3_000.0, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(
    policy=st.sampled_from([OverflowPolicy.PRIORITY, OverflowPolicy.COMPOSITE]),
    low=st.floats(min_value=0.0, max_value=0.99),
    gain=st.floats(min_value=0.01, max_value=1.0),
    stale=idle,
    fresher=st.floats(min_value=0.0, max_value=1.0),
    extra=st.integers(0, 5),
    seqs=st.tuples(st.integers(0, 100), st.integers(0, 100)).filter(lambda s: s[0] != s[1]),
    others=st.lists(st.tuples(unit, idle, st.integers(1, 6)), max_size=8),
)
def test_high_priority_recent_item_outlasts_stale_low_priority_one(
    policy: OverflowPolicy,
    low: float,
    gain: float,
    stale: float,
    fresher: float,
    extra: int,
    seqs: tuple[int, int],
    others: list[tuple[float, float, int]],
) -> None:
    """A higher-priority, more recently and more often used item is evicted after a staler one."""
    weak = _held("weak", low, stale, 1, seqs[0])
    strong = _held("strong", low + gain * (1 - low), stale * fresher, 1 + extra, seqs[1])
    crowd = [_held(f"o{n}", p, s, a, 200 + n) for n, (p, s, a) in enumerate(others)]
    ctx = EvictionContext(now=T0, config=BufferConfig(policy=policy))
    order = [i.item_id for i, _ in eviction_order([*crowd, strong, weak], ctx)]
    assert order.index("weak") < order.index("strong")


@pytest.mark.parametrize("policy", [OverflowPolicy.PRIORITY, OverflowPolicy.COMPOSITE])
async def test_full_buffer_drops_the_stale_low_priority_item_first(policy: OverflowPolicy) -> None:
    """In a full buffer, the stale low-priority item goes before the recent high-priority one."""
    buffer = make_buffer(policy, max_items=2)
    await buffer.add(item("stale trivia", item_id="stale", priority=0.2), now=at(0))
    await buffer.add(item("key fact", item_id="key", priority=0.8), now=at(0))
    buffer.access("key", now=at(120))
    result = await buffer.add(item("newcomer", priority=0.5), now=at(121))
    assert [e.item_id for e in result.evicted] == ["stale"]
    assert "key" in buffer


@settings(max_examples=60, deadline=None)
@given(
    policy=st.sampled_from(list(OverflowPolicy)),
    held=st.lists(
        st.tuples(unit, st.sampled_from([0.0, 60.0, 600.0]), st.integers(1, 3)),
        min_size=1,
        max_size=10,
    ),
    need_tokens=st.integers(0, 40),
    need_items=st.integers(0, 3),
)
def test_victims_are_the_greedy_prefix_of_the_eviction_order(
    policy: OverflowPolicy,
    held: list[tuple[float, float, int]],
    need_tokens: int,
    need_items: int,
) -> None:
    """select_victims takes exactly the first items of eviction_order that free the need."""
    items = [_held(f"i{n}", p, s, a, n) for n, (p, s, a) in enumerate(held)]
    config = BufferConfig(policy=policy, max_items=len(items), max_tokens=3 * len(items))
    ctx = EvictionContext(now=T0, config=config)
    need = Need(tokens=need_tokens, items=need_items)
    expected: list[str] = []
    free_tokens, free_items = 0, 0
    for victim, _ in eviction_order(items, ctx):
        if free_tokens >= need.tokens and free_items >= need.items:
            break
        expected.append(victim.item_id)
        free_tokens, free_items = free_tokens + victim.tokens, free_items + 1
    chosen = select_victims(items, need, ctx)
    if free_tokens >= need.tokens and free_items >= need.items:
        assert chosen is not None
        assert [i.item_id for i, _ in chosen] == expected
    else:
        assert chosen is None


def _composite_one_by_one(items: list[BufferItem], ctx: EvictionContext) -> list[float]:
    """The composite keep score of each item by its formula, each worked out alone."""
    config, now = ctx.config, ctx.now.timestamp()
    scores = []
    for kept in items:
        idle = max(now - kept.last_accessed_at.timestamp(), 0.0)
        importance = kept.priority if kept.pinned else decayed(kept.priority, idle / 60.0, config)
        score = importance / (1.0 + idle / config.fade_seconds) * (1.0 + log1p(kept.access_count))
        protected = ctx.themes and carries(kept, ctx.themes)
        scores.append(score * (1.0 + config.theme_protection) if protected else score)
    return scores


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.floats(0, 1),
            st.integers(0, 3_600),
            st.integers(1, 40),
            st.booleans(),
            st.sampled_from(("trip to lisbon", "budget report", "the hotel")),
        ),
        max_size=12,
    ),
    st.integers(0, 7_200),
    st.sampled_from((frozenset(), frozenset({"lisbon"}), frozenset({"budget", "hotel"}))),
)
def test_composite_scores_are_each_items_formula(
    rows: list[tuple[float, int, int, bool, str]], now: int, themes: frozenset[str]
) -> None:
    """Working out each distinct access time once gives every score to the last bit."""
    items = [
        BufferItem(
            item_id=f"i{n}",
            content=content,
            source=ItemSource.SYSTEM,
            tokens=1,
            priority=priority,
            salience=0.1,
            added_at=T0,
            last_accessed_at=at(touched),
            access_count=count,
            pinned=pinned,
            seq=n,
        )
        for n, (priority, touched, count, pinned, content) in enumerate(rows)
    ]
    ctx = EvictionContext(now=at(now), config=BufferConfig(), themes=themes)
    assert composite(items, ctx) == _composite_one_by_one(items, ctx)
