"""How a buffer is bounded, admits, evicts and forgets.

Every setting is checked when the config is built: a config that cannot work
(weights that do not add up to one, a floor above the priorities it floors)
is refused there, never discovered in the middle of a turn.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import ConfigDict, Field, model_validator

from prefrontal.buffer.models import BufferModel

RETIRED_SETTINGS = frozenset({"keep_until_promoted"})
"""Settings older versions saved with a buffer: read and ignored."""


class OverflowPolicy(StrEnum):
    """Which items make room when the buffer is full."""

    FIFO = "fifo"
    """The first admitted goes first."""
    LRU = "lru"
    """The least recently used goes first."""
    PRIORITY = "priority"
    """The lowest (decayed) priority goes first; items tagged with the focus are boosted."""
    COMPOSITE = "composite"
    """Lowest importance x recency x access frequency first; theme carriers protected."""
    SUMMARIZE = "summarize"
    """Like COMPOSITE, but the evicted items are folded into one summary item."""


class SalienceWeights(BufferModel):
    """Weights of the four salience factors; they add up to one."""

    relevance: float = Field(default=0.4, ge=0.0, le=1.0)
    urgency: float = Field(default=0.2, ge=0.0, le=1.0)
    recency: float = Field(default=0.2, ge=0.0, le=1.0)
    attention: float = Field(default=0.2, ge=0.0, le=1.0)

    @model_validator(mode="after")
    def _sum_to_one(self) -> SalienceWeights:
        total = self.relevance + self.urgency + self.recency + self.attention
        if abs(total - 1.0) > 1e-9:
            raise ValueError(f"salience weights must add up to 1, not {total:g}")
        return self


class BufferConfig(BufferModel):
    """The settings of one working-memory buffer (the defaults follow the specification).

    Every number is finite: NaN and the infinities are refused like any other
    value out of range.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    max_items: int = Field(default=64, ge=1, le=10_000)
    max_tokens: int = Field(default=4_000, ge=1)
    policy: OverflowPolicy = OverflowPolicy.COMPOSITE

    weights: SalienceWeights = Field(default_factory=SalienceWeights)
    task_modulation: float = Field(default=0.3, ge=0.0)
    """Admission score = salience x (1 + task_modulation x task relevance + ...)."""
    coherence_modulation: float = Field(default=0.2, ge=0.0)
    """... + coherence_modulation x overlap with the session's dominant themes)."""
    base_threshold: float = Field(default=0.2, ge=0.0)
    pressure: float = Field(default=0.5, ge=0.0)
    """Threshold = base_threshold x (1 + pressure x utilisation)."""
    keep_priority: float = Field(default=0.8, ge=0.0, le=1.0)
    """An item of the agent's own (session lifetime, not a turn's fragment) offered at
    this priority or above is admitted whatever its score (reason ``high_priority``):
    a note without a focus has a score of about ``base_threshold``."""
    recency_half_life_hours: float = Field(default=24.0, gt=0.0)
    """An item that happened this long ago gets recency 0.5 (1.0 when its time is unknown)."""

    decay_per_minute: float = Field(default=0.02, ge=0.0, lt=1.0)
    """Priority shrinks by this fraction per minute since last access."""
    priority_floor: float = Field(default=0.01, ge=0.0, le=1.0)
    fade_seconds: float = Field(default=300.0, gt=0.0)
    """An unpinned item not touched for this long fades out of the buffer (a note only the
    buffer holds is promoted to long-term memory first: :mod:`prefrontal.buffer.promotion`)."""

    attention_boost: float = Field(default=0.3, ge=0.0)
    """PRIORITY: added to the priority of items tagged with the focus (x focus intensity)."""
    theme_protection: float = Field(default=0.5, ge=0.0)
    """COMPOSITE: keep score x (1 + theme_protection) for items carrying a dominant theme."""
    dominant_themes: int = Field(default=5, ge=1, le=50)

    summary_min_tokens: int = Field(default=16, ge=1)
    """SUMMARIZE: fold only when the summary can have at least this many tokens (else drop)."""
    summary_max_tokens: int | None = Field(default=None, ge=1)
    """SUMMARIZE: the rolling summary's size limit (``None``: a quarter of ``max_tokens``)."""

    @model_validator(mode="before")
    @classmethod
    def _without_retired_settings(cls, data: object) -> object:
        """Read states saved with settings that no longer exist (``keep_until_promoted``:
        notes are now promoted before they leave, whatever the settings)."""
        if isinstance(data, dict) and any(k in data for k in RETIRED_SETTINGS):
            return {k: v for k, v in data.items() if k not in RETIRED_SETTINGS}
        return data

    @property
    def summary_cap(self) -> int:
        """The most tokens the summary may hold: never below ``summary_min_tokens``."""
        cap = self.summary_max_tokens or self.max_tokens // 4
        return max(cap, self.summary_min_tokens)
