"""Time in the buffer: priority decay, recency and fade-out.

Nothing here is stateful. An item's priority at a moment is computed from its
base priority and the time since it was last touched, so decaying in two steps
of five minutes is the same as one step of ten, and the clock alone decides.
"""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache

from prefrontal.buffer.config import BufferConfig
from prefrontal.buffer.models import BufferItem


@lru_cache(maxsize=2_048)
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


def has_faded(item: BufferItem, now: datetime, config: BufferConfig) -> bool:
    """True when an unpinned item has not been touched for ``fade_seconds`` or more."""
    return not item.pinned and idle_seconds(item, now) >= config.fade_seconds


def happened_recency(age_seconds: float | None, config: BufferConfig) -> float:
    """Recency of something that happened ``age_seconds`` ago: halves every half-life.

    Unknown age (``None``) counts as now: 1.0.
    """
    if age_seconds is None:
        return 1.0
    half_life = config.recency_half_life_hours * 3600.0
    return float(0.5 ** (max(age_seconds, 0.0) / half_life))
