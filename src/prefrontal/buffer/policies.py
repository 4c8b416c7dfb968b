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

import math
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from pydantic import Field

from prefrontal.buffer.config import BufferConfig, OverflowPolicy
from prefrontal.buffer.decay import effective_priority, recency_weight
from prefrontal.buffer.models import BufferItem, BufferModel
from prefrontal.buffer.themes import carries
from prefrontal.stores.records import Timestamp


class EvictionReason(StrEnum):
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


class Eviction(BufferModel):
    """One item that left the buffer, and why."""

    item: BufferItem
    reason: EvictionReason
    detail: str
    policy: OverflowPolicy | None = None
    keep_score: float | None = None

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


KeepScore = Callable[[BufferItem, EvictionContext], float]


def fifo(item: BufferItem, ctx: EvictionContext) -> float:
    """The insertion number: the first admitted goes first."""
    return float(item.seq)


def lru(item: BufferItem, ctx: EvictionContext) -> float:
    """The last access time: the least recently used goes first."""
    return item.last_accessed_at.timestamp()


def priority(item: BufferItem, ctx: EvictionContext) -> float:
    """Decayed priority, boosted for items that carry a focus tag."""
    boosted = not ctx.focus_labels.isdisjoint(item.labels)
    boost = ctx.config.attention_boost * ctx.focus_intensity if boosted else 0.0
    return effective_priority(item, ctx.now, ctx.config) + boost


def composite(item: BufferItem, ctx: EvictionContext) -> float:
    """Importance x recency x access frequency, protected when carrying a dominant theme."""
    importance = effective_priority(item, ctx.now, ctx.config)
    frequency = 1.0 + math.log1p(item.access_count)
    score = importance * recency_weight(item, ctx.now, ctx.config) * frequency
    if carries(item, ctx.themes):
        score *= 1.0 + ctx.config.theme_protection
    return score


KEEP_SCORES: dict[OverflowPolicy, KeepScore] = {
    OverflowPolicy.FIFO: fifo,
    OverflowPolicy.LRU: lru,
    OverflowPolicy.PRIORITY: priority,
    OverflowPolicy.COMPOSITE: composite,
    OverflowPolicy.SUMMARIZE: composite,
}


class Need(BufferModel):
    """Room to be made: tokens and item slots."""

    tokens: int = Field(ge=0)
    items: int = Field(ge=0)


def eviction_order(
    items: Iterable[BufferItem], ctx: EvictionContext, protected: Collection[str] = ()
) -> list[tuple[BufferItem, float]]:
    """Every candidate with its keep score, the first to go first."""
    keep = KEEP_SCORES[ctx.config.policy]
    scored = [
        (item, keep(item, ctx))
        for item in items
        if not item.pinned and item.item_id not in protected
    ]
    scored.sort(key=lambda pair: _tie_break(pair[0], pair[1]))
    return scored


def _tie_break(item: BufferItem, score: float) -> tuple[float, float, datetime, int]:
    """Lowest keep score first; ties: lower priority, then staler, then older."""
    return (score, item.priority, item.last_accessed_at, item.seq)


def select_victims(
    items: Collection[BufferItem],
    need: Need,
    ctx: EvictionContext,
    protected: Collection[str] = (),
) -> list[tuple[BufferItem, float]] | None:
    """The fewest first-to-go items whose removal frees ``need``; ``None`` if impossible.

    ``need`` is what must be free *after* the removal, counted against the
    buffer's bounds and the items currently held.
    """
    free_tokens = ctx.config.max_tokens - sum(i.tokens for i in items)
    free_items = ctx.config.max_items - len(items)
    chosen: list[tuple[BufferItem, float]] = []
    for item, score in _candidates(items, ctx, protected, need, free_tokens, free_items):
        if free_tokens >= need.tokens and free_items >= need.items:
            break
        chosen.append((item, score))
        free_tokens += item.tokens
        free_items += 1
    if free_tokens >= need.tokens and free_items >= need.items:
        return chosen
    return None


def _candidates(
    items: Collection[BufferItem],
    ctx: EvictionContext,
    protected: Collection[str],
    need: Need,
    free_tokens: int,
    free_items: int,
) -> list[tuple[BufferItem, float]]:
    if free_tokens >= need.tokens and free_items >= need.items:
        return []
    return eviction_order(items, ctx, protected)


def describe(item: BufferItem, score: float, policy: OverflowPolicy) -> str:
    """A one-line reason for evicting ``item`` under ``policy``."""
    if policy is OverflowPolicy.FIFO:
        return f"fifo: earliest admitted (#{item.seq})"
    if policy is OverflowPolicy.LRU:
        return f"lru: least recently used (last at {item.last_accessed_at.isoformat()})"
    return f"{policy.value}: lowest keep score {score:.4f}"
