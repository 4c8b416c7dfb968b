"""The recall gate: search memory again, or reuse what the buffer already holds?

While a conversation stays on one topic, a full hybrid search every turn
finds what the buffer already holds. The gate runs a cheap, read-only probe
(a few top hits for the new input) and compares the hits with the memory
items the buffer holds: when at least ``min_overlap`` of the probe's hits are
held, the topic continues and the buffer is reused; otherwise it searches.

The decision is pure; the probe itself is :func:`prefrontal.buffer.session.probe`.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from pydantic import Field

from prefrontal.buffer.models import BufferModel
from prefrontal.traces.models import RecallMode

DEFAULT_MIN_OVERLAP = 0.6
DEFAULT_PROBE_LIMIT = 3


class RecallDecision(BufferModel):
    """The gate's decision for one store, with what it was based on."""

    mode: RecallMode
    reason: str
    overlap: float = Field(ge=0.0, le=1.0)
    probe_ids: tuple[str, ...] = ()
    held_ids: tuple[str, ...] = ()
    """The memory items the buffer holds for this store (what a reuse returns)."""

    @property
    def reuse(self) -> bool:
        """True when the phase should reuse the buffer instead of searching."""
        return self.mode is RecallMode.REUSE


def decide_recall(
    probe_ids: Sequence[str],
    held_ids: Collection[str],
    *,
    min_overlap: float = DEFAULT_MIN_OVERLAP,
    own_ids: Collection[str] = (),
) -> RecallDecision:
    """Reuse when the share of probe hits the buffer holds reaches ``min_overlap``.

    ``own_ids`` are the session's own exchanges the buffer holds (messages
    ``end_turn`` also wrote to episodic memory, under the same ids): a probe
    hit among them is held too, though a reuse returns ``held_ids`` only. With
    no memory held, or a probe that found nothing, there is no evidence that
    the topic continues: the phase searches.
    """
    held = tuple(sorted(set(held_ids)))
    probe = tuple(dict.fromkeys(probe_ids))
    if not held:
        return RecallDecision(
            mode=RecallMode.SEARCH, reason="buffer_empty", overlap=0.0, probe_ids=probe
        )
    if not probe:
        return RecallDecision(
            mode=RecallMode.SEARCH, reason="probe_found_nothing", overlap=0.0, held_ids=held
        )
    held_set = {*held, *own_ids}
    share = sum(1 for item_id in probe if item_id in held_set) / len(probe)
    continues = share >= min_overlap
    return RecallDecision(
        mode=RecallMode.REUSE if continues else RecallMode.SEARCH,
        reason="topic_continues" if continues else "topic_changed",
        overlap=share,
        probe_ids=probe,
        held_ids=held,
    )


class RecallCounters(BufferModel):
    """How often a session searched and how many searches the gate saved."""

    searches: int = Field(default=0, ge=0)
    saved: int = Field(default=0, ge=0)

    def count(self, decision: RecallDecision) -> RecallCounters:
        """These counters with ``decision`` counted."""
        if decision.reuse:
            return self.model_copy(update={"saved": self.saved + 1})
        return self.model_copy(update={"searches": self.searches + 1})
