"""Overflow policies: the order in which items leave a full buffer.

A policy is a function from one item to its *keep score* at a moment: the
lower the score, the sooner the item goes. Ties go to the lower base
priority, then the staler, then the earlier inserted item (lower ``seq``),
so every order is total and deterministic. Pinned
items and the items a caller protects are never candidates.

- FIFO: keep score = insertion number;
- LRU: keep score = last access time;
- PRIORITY: decayed priority, plus ``attention_boost x intensity`` when the
  item carries a focus tag;
- COMPOSITE (and SUMMARIZE, which folds instead of dropping): decayed
  priority x recency weight x access frequency, x ``(1 + theme_protection)``
  when the item carries a dominant theme of the session.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from math import log1p

from prefrontal.buffer.config import BufferConfig, OverflowPolicy
from prefrontal.buffer.decay import effective_priority, epoch
from prefrontal.buffer.models import BufferItem
from prefrontal.buffer.themes import carries
from prefrontal.enums import FastStrEnum
from prefrontal.stores.records import Timestamp


class EvictionReason(FastStrEnum):
    """Why an item left the buffer."""

    POLICY = "policy"
    """Made room for another item under the overflow policy."""
    SUMMARIZED = "summarized"
    """Made room, and its content was folded into a summary item."""
    FADED = "faded"
    """Not touched for the fade-out time."""
    REPLACED = "replaced"
    """A fragment of an earlier turn that this turn's context no longer holds."""
    REMOVED = "removed"
    """Removed on request."""
    CLEARED = "cleared"
    """The buffer was cleared."""
    RECONFIGURED = "reconfigured"
    """Dropped to fit smaller bounds."""
    CONSOLIDATED = "consolidated"
    """Promoted into episodic memory by consolidation."""


@dataclass(frozen=True, slots=True)
class Eviction:
    """One item that left the buffer, and why (a plain value, like the buffer's other reports)."""

    item: BufferItem
    reason: EvictionReason
    detail: str
    policy: OverflowPolicy | None = None
    keep_score: float | None = None
    promoted_to: str | None = None
    """The long-term id the item was written under before it left (a note the buffer
    alone held: :mod:`prefrontal.buffer.promotion`); ``None`` for an item not promoted."""

    @property
    def item_id(self) -> str:
        """The evicted item's id."""
        return self.item.item_id


@dataclass(frozen=True, slots=True)
class EvictionContext:
    """What a keep score may look at besides the item."""

    now: Timestamp
    config: BufferConfig
    focus_labels: frozenset[str] = frozenset()
    focus_intensity: float = 1.0
    themes: frozenset[str] = frozenset()


KeepScores = Callable[[Sequence[BufferItem], EvictionContext], list[float]]
"""A policy: the keep score of each item, in order (batched: eviction scores every item)."""


def fifo(items: Sequence[BufferItem], ctx: EvictionContext) -> list[float]:
    """The insertion number: the first admitted goes first."""
    return [float(item.seq) for item in items]


def lru(items: Sequence[BufferItem], ctx: EvictionContext) -> list[float]:
    """The last access time: the least recently used goes first."""
    return [epoch(item.last_accessed_at) for item in items]


def priority(items: Sequence[BufferItem], ctx: EvictionContext) -> list[float]:
    """Decayed priority, plus ``attention_boost x intensity`` for items carrying a focus tag."""
    boost = ctx.config.attention_boost * ctx.focus_intensity
    focus = ctx.focus_labels
    return [
        effective_priority(item, ctx.now, ctx.config)
        + (boost if focus and not focus.isdisjoint(item.labels) else 0.0)
        for item in items
    ]


def composite(items: Sequence[BufferItem], ctx: EvictionContext) -> list[float]:
    """Importance x recency x access frequency, x (1 + protection) for theme carriers.

    Importance is the decayed priority, recency ``1 / (1 + idle / fade_seconds)``,
    access frequency ``1 + ln(1 + access count)``. What an item's last access alone
    decides (its idle time, the decay factor and the recency divisor) is worked out once
    per distinct time (a turn touches all its fragments at one instant), each score with
    the very operations :func:`~.decay.decayed` and the formula above make, in their order.
    """
    config, themes, now = ctx.config, ctx.themes, epoch(ctx.now)
    protection = 1.0 + config.theme_protection
    base, fade, floor = 1.0 - config.decay_per_minute, config.fade_seconds, config.priority_floor
    timings: dict[datetime, tuple[float, float]] = {}
    scores = []
    for item in items:
        last = item.last_accessed_at
        timing = timings.get(last)
        if timing is None:
            idle = max(now - epoch(last), 0.0)
            timing = timings[last] = (base ** (idle / 60.0), 1.0 + idle / fade)
        decay, spread = timing
        priority = item.priority
        # pinned items do not decay; the others as decayed(priority, idle / 60.0, config)
        importance = priority if item.pinned else max(priority * decay, min(floor, priority))
        score = importance / spread * (1.0 + log1p(item.access_count))
        scores.append(score * protection if themes and carries(item, themes) else score)
    return scores


KEEP_SCORES: dict[OverflowPolicy, KeepScores] = {
    OverflowPolicy.FIFO: fifo,
    OverflowPolicy.LRU: lru,
    OverflowPolicy.PRIORITY: priority,
    OverflowPolicy.COMPOSITE: composite,
    OverflowPolicy.SUMMARIZE: composite,
}


@dataclass(frozen=True, slots=True)
class Need:
    """Room to be made: tokens and item slots (neither negative)."""

    tokens: int
    items: int

    def __post_init__(self) -> None:
        if self.tokens < 0 or self.items < 0:
            raise ValueError(f"a need is never negative: {self.tokens} tokens, {self.items} items")


def eviction_order(
    items: Iterable[BufferItem], ctx: EvictionContext, protected: Collection[str] = ()
) -> list[tuple[BufferItem, float]]:
    """Every candidate with its keep score, the first to go first."""
    candidates, scores = _scored(items, ctx, protected)
    return [(item, score) for _, _, item, score in sorted(_keyed(candidates, scores))]


def _scored(
    items: Iterable[BufferItem], ctx: EvictionContext, protected: Collection[str]
) -> tuple[list[BufferItem], list[float]]:
    """The candidates (neither pinned nor protected) and their keep scores."""
    candidates = [i for i in items if not i.pinned and i.item_id not in protected]
    return candidates, KEEP_SCORES[ctx.config.policy](candidates, ctx)


def _keyed(
    candidates: list[BufferItem], scores: list[float]
) -> list[tuple[tuple[float, float, datetime, int], int, BufferItem, float]]:
    """Candidates keyed for ordering: lowest keep score first; ties go to the lower
    priority, then the staler, then the earlier inserted."""
    return [
        ((score, item.priority, item.last_accessed_at, item.seq), n, item, score)
        for n, (item, score) in enumerate(zip(candidates, scores, strict=True))
    ]


def select_victims(
    items: Collection[BufferItem],
    need: Need,
    ctx: EvictionContext,
    protected: Collection[str] = (),
    *,
    held_tokens: int | None = None,
) -> list[tuple[BufferItem, float]] | None:
    """The fewest first-to-go items whose removal frees ``need``; ``None`` if impossible.

    ``need`` is what must be free *after* the removal, counted against the
    buffer's bounds and the items currently held (``held_tokens`` is their
    total when the caller knows it). Candidates are taken in
    :func:`eviction_order`: when one item with the uniquely lowest score is
    enough, it is found without ordering the rest; otherwise lazily, from a heap.
    """
    tokens = held_tokens if held_tokens is not None else sum(i.tokens for i in items)
    free = (ctx.config.max_tokens - tokens, ctx.config.max_items - len(items))
    if free[0] >= need.tokens and free[1] >= need.items:
        return []
    candidates, scores = _scored(items, ctx, protected)
    lowest = min(scores, default=0.0)
    if candidates and scores.count(lowest) == 1:
        first = candidates[scores.index(lowest)]
        if free[0] + first.tokens >= need.tokens and free[1] + 1 >= need.items:
            return [(first, lowest)]
    return _take(_keyed(candidates, scores), need, free)


def _take(
    heap: list[tuple[tuple[float, float, datetime, int], int, BufferItem, float]],
    need: Need,
    free: tuple[int, int],
) -> list[tuple[BufferItem, float]] | None:
    """Pop the first-to-go until ``need`` is free; ``None`` when the candidates run out."""
    heapq.heapify(heap)
    free_tokens, free_items = free
    chosen: list[tuple[BufferItem, float]] = []
    while heap and (free_tokens < need.tokens or free_items < need.items):
        _, _, item, score = heapq.heappop(heap)
        chosen.append((item, score))
        free_tokens += item.tokens
        free_items += 1
    if free_tokens >= need.tokens and free_items >= need.items:
        return chosen
    return None


def describe(item: BufferItem, score: float, policy: OverflowPolicy) -> str:
    """A one-line reason for evicting ``item`` under ``policy``."""
    if policy is OverflowPolicy.FIFO:
        return f"fifo: earliest admitted (#{item.seq})"
    if policy is OverflowPolicy.LRU:
        return f"lru: least recently used (last at {item.last_accessed_at.isoformat()})"
    return f"{policy.value}: lowest keep score {score:.4f}"
