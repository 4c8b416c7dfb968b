"""Values the buffer holds and takes: items, their provenance, the turn's focus.

Every model here is frozen. The buffer replaces an item with an updated copy;
it never mutates one, so a report or an event that holds an item keeps seeing
what it saw.
"""

from __future__ import annotations

import hashlib
from datetime import datetime

from pydantic import ConfigDict, Field

from prefrontal.enums import FastStrEnum
from prefrontal.forgetting import remembered
from prefrontal.model_reads import FastReads
from prefrontal.stores.records import MetadataValue, Timestamp

SUMMARY_PHASE = "buffer.summarize"
"""The provenance phase that marks a summary item the buffer made by folding."""
MAX_ITEM_ID = 256
"""The longest item id, in characters."""


class BufferModel(FastReads):
    """Frozen, strict base of the buffer's value models."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class ItemSource(FastStrEnum):
    """Where an item came from."""

    USER_INPUT = "user_input"
    MEMORY_RETRIEVAL = "memory_retrieval"
    SYSTEM = "system"
    REFLECTION = "reflection"
    EXTERNAL = "external"
    """A tool result or any other outside system."""


class Lifetime(FastStrEnum):
    """How long an item is meant to stay."""

    TURN = "turn"
    """A fragment of this turn's context: the next turn's fragments replace it."""
    SESSION = "session"
    """Put there by the agent (tool results, reflections, notes): stays under the eviction rules."""


class ItemProvenance(BufferModel):
    """Where an item's content was loaded from (mirrors a context fragment's provenance)."""

    store: str | None = None
    item_ids: tuple[str, ...] = ()
    phase: str | None = None
    section: str | None = None
    score: float | None = None
    turn_id: str | None = None
    extra: dict[str, MetadataValue] = Field(default_factory=dict)


class SalienceFactors(BufferModel):
    """The signals an admission score is made of, each in ``[0, 1]``."""

    relevance: float = Field(default=0.0, ge=0.0, le=1.0)
    urgency: float = Field(default=0.0, ge=0.0, le=1.0)
    recency: float = Field(default=0.0, ge=0.0, le=1.0)
    attention: float = Field(default=0.0, ge=0.0, le=1.0)
    task_relevance: float = Field(default=0.0, ge=0.0, le=1.0)
    coherence: float = Field(default=0.0, ge=0.0, le=1.0)


class Focus(BufferModel):
    """What the turn is about: the input, the attention focus tags, the current task.

    ``intensity`` scales the attention factor and the PRIORITY policy's boost.
    """

    input_text: str = ""
    tags: tuple[str, ...] = ()
    task: str = ""
    intensity: float = Field(default=1.0, ge=0.0, le=1.0)


class NewItem(BufferModel):
    """An item offered to the buffer.

    ``item_id`` defaults to a hash of source and content, so the same content
    offered twice is the same item. ``tokens`` defaults to the buffer's
    counter; ``relevance`` overrides the lexical relevance to the focus.
    """

    content: str = Field(min_length=1)
    source: ItemSource = ItemSource.SYSTEM
    item_id: str | None = Field(default=None, min_length=1, max_length=MAX_ITEM_ID)
    tokens: int | None = Field(default=None, ge=0)
    priority: float = Field(default=0.5, ge=0.0, le=1.0)
    urgency: float = Field(default=0.0, ge=0.0, le=1.0)
    relevance: float | None = Field(default=None, ge=0.0, le=1.0)
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    tags: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()
    occurred_at: Timestamp | None = None
    pinned: bool = False
    lifetime: Lifetime = Lifetime.SESSION
    provenance: ItemProvenance = Field(default_factory=ItemProvenance)

    def resolved_id(self) -> str:
        """``item_id``, or a stable id derived from source and content."""
        if self.item_id is not None:
            return self.item_id
        return content_id(self.source, self.content)

    def made(self) -> NewItem:
        """This item: an offer already made (see :class:`~prefrontal.buffer.offers.Offer`)."""
        return self


def content_id(source: ItemSource, content: str) -> str:
    """A stable item id for ``content`` from ``source``."""
    digest = hashlib.blake2b(f"{source}\x1f{content}".encode(), digest_size=10).hexdigest()
    return f"wm_{digest}"


class BufferItem(BufferModel):
    """One item held by the buffer.

    ``priority`` is the base priority; the priority that counts at a moment
    is :func:`prefrontal.buffer.decay.effective_priority` of it. ``seq`` is
    the buffer's insertion counter, the last tie-breaker of every ordering.
    """

    item_id: str = Field(min_length=1, max_length=MAX_ITEM_ID)
    content: str = Field(min_length=1)
    source: ItemSource
    tokens: int = Field(ge=0)
    priority: float = Field(ge=0.0, le=1.0)
    salience: float = Field(ge=0.0)
    factors: SalienceFactors = Field(default_factory=SalienceFactors)
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    tags: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()
    added_at: Timestamp
    last_accessed_at: Timestamp
    access_count: int = Field(default=1, ge=0)
    pinned: bool = False
    lifetime: Lifetime = Lifetime.SESSION
    summary_of: tuple[str, ...] = ()
    """For a summary item, the ids of the items folded into it."""
    provenance: ItemProvenance = Field(default_factory=ItemProvenance)
    seq: int = Field(default=0, ge=0)
    consolidating_into: str | None = Field(default=None, min_length=1, max_length=MAX_ITEM_ID)
    """The episodic item this one is being promoted into (set by consolidation until
    the item leaves the buffer; see :mod:`prefrontal.formation`)."""

    def touched(self, now: datetime) -> BufferItem:
        """This item accessed once more at ``now``."""
        return self.model_copy(
            update={"last_accessed_at": now, "access_count": self.access_count + 1}
        )

    @property
    def is_summary(self) -> bool:
        """True for the summary item the buffer made by folding others into it (SUMMARIZE)."""
        return self.provenance.phase == SUMMARY_PHASE and bool(self.summary_of)

    @property
    def labels(self) -> frozenset[str]:
        """Tags and entities, lower-cased: what focus and themes are matched against."""
        if not self.tags and not self.entities:  # (a turn's fragments carry none)
            return NO_LABELS
        return folded_labels(self.tags, self.entities)


NO_LABELS: frozenset[str] = frozenset()


@remembered(maxsize=8_192)
def folded_labels(tags: tuple[str, ...], entities: tuple[str, ...]) -> frozenset[str]:
    """Tags and entities, lower-cased, as one set (cached: eviction asks for it often)."""
    return frozenset(label.casefold() for label in (*tags, *entities))
