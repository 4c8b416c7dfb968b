"""Time in the buffer: priority decay, recency and fade-out.

Nothing here is stateful. An item's priority at a moment is computed from its
base priority and the time since it was last touched, so decaying in two steps
of five minutes is the same as one step of ten, and the clock alone decides.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from prefrontal.buffer.config import BufferConfig
from prefrontal.buffer.models import BufferItem, ItemSource, Lifetime
from prefrontal.forgetting import remembered

LONG_TERM_STORES = frozenset({"episodic", "semantic"})
"""Items whose provenance names these stores are copies of long-term memory."""


@remembered(maxsize=2_048, holds_text=False)
def epoch(moment: datetime) -> float:
    """POSIX seconds of an aware datetime (cached: eviction converts the same times often)."""
    return moment.timestamp()


def idle_seconds(item: BufferItem, now: datetime) -> float:
    """Seconds since ``item`` was last touched (0 if the clock went backwards)."""
    return max(epoch(now) - epoch(item.last_accessed_at), 0.0)


def decayed(priority: float, minutes: float, config: BufferConfig) -> float:
    """``priority x (1 - rate) ** minutes``, never below the floor (nor above ``priority``)."""
    value: float = priority * (1.0 - config.decay_per_minute) ** minutes
    return max(value, min(config.priority_floor, priority))


def effective_priority(item: BufferItem, now: datetime, config: BufferConfig) -> float:
    """The priority of ``item`` at ``now``; pinned items do not decay."""
    if item.pinned:
        return item.priority
    return decayed(item.priority, idle_seconds(item, now) / 60.0, config)


def is_long_term_copy(item: BufferItem) -> bool:
    """True when ``item`` stands for items long-term memory already holds."""
    if item.source is ItemSource.MEMORY_RETRIEVAL:
        return True
    return item.provenance.store in LONG_TERM_STORES and bool(item.provenance.item_ids)


def is_promotable(item: BufferItem) -> bool:
    """True when consolidation would promote ``item`` into episodic memory once it is due.

    That is an unpinned session item (a note, a tool result, a reflection, the
    rolling summary) that is not a copy of long-term memory: the only place
    its content lives is this buffer.
    """
    return not item.pinned and item.lifetime is Lifetime.SESSION and not is_long_term_copy(item)


def awaits_promotion(item: BufferItem) -> bool:
    """True when ``item`` must be written to long-term memory before it leaves the buffer.

    A promotable item (:func:`is_promotable`: only the buffer holds its
    content), and an item marked for a consolidation that has not finished
    (``consolidating_into``). See :mod:`prefrontal.buffer.promotion`.
    """
    return item.consolidating_into is not None or is_promotable(item)


def has_faded(item: BufferItem, now: datetime, config: BufferConfig) -> bool:
    """True when an unpinned item has not been touched for ``fade_seconds`` or more.

    Pinned items never fade. An item that awaits its promotion
    (:func:`awaits_promotion`) fades like any other: the buffer promotes it
    first (:mod:`prefrontal.buffer.promotion`).
    """
    if item.pinned:
        return False
    return idle_seconds(item, now) >= config.fade_seconds


def faded_among(
    items: Iterable[BufferItem], now: datetime, config: BufferConfig
) -> list[BufferItem]:
    """The items of ``items`` that have faded at ``now`` (:func:`has_faded` of each), in
    order: each distinct last access time compared once (a turn touches all its
    fragments at one instant)."""
    current, fade = epoch(now), config.fade_seconds
    verdicts: dict[datetime, bool] = {}
    faded = []
    for item in items:
        if item.pinned:
            continue
        last = item.last_accessed_at
        gone = verdicts.get(last)
        if gone is None:  # idle_seconds(item, now) >= fade_seconds
            gone = verdicts[last] = max(current - epoch(last), 0.0) >= fade
        if gone:
            faded.append(item)
    return faded


def happened_recency(age_seconds: float | None, config: BufferConfig) -> float:
    """Recency of something that happened ``age_seconds`` ago: halves every half-life.

    Unknown age (``None``) counts as now: 1.0.
    """
    if age_seconds is None:
        return 1.0
    half_life = config.recency_half_life_hours * 3600.0
    return float(0.5 ** (max(age_seconds, 0.0) / half_life))
