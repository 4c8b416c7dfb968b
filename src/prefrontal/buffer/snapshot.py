"""The buffer as data: snapshots, counters and the reports its operations return.

A :class:`BufferSnapshot` is everything a buffer is: restoring one gives a
buffer whose next snapshot is equal to it, and its JSON form (what the
working-memory store keeps) round-trips exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from pydantic import Field

from prefrontal.buffer.config import BufferConfig
from prefrontal.buffer.models import BufferItem, BufferModel
from prefrontal.buffer.policies import Eviction
from prefrontal.buffer.recall_gate import RecallCounters
from prefrontal.buffer.salience import AdmissionDecision
from prefrontal.buffer.themes import Coherence
from prefrontal.errors import WorkingMemoryError
from prefrontal.stores.records import Timestamp

SNAPSHOT_FORMAT = 1


class BufferCounters(BufferModel):
    """What a buffer has done over its life."""

    admitted: int = Field(default=0, ge=0)
    refreshed: int = Field(default=0, ge=0)
    refused: int = Field(default=0, ge=0)
    evicted: int = Field(default=0, ge=0)
    summarized: int = Field(default=0, ge=0)
    turns: int = Field(default=0, ge=0)


class BufferSnapshot(BufferModel):
    """The whole state of a buffer."""

    format: int = SNAPSHOT_FORMAT
    config: BufferConfig
    items: tuple[BufferItem, ...] = ()
    """In insertion order (ascending ``seq``)."""
    next_seq: int = Field(default=0, ge=0)
    themes: tuple[str, ...] = ()
    counters: BufferCounters = Field(default_factory=BufferCounters)
    recall: RecallCounters = Field(default_factory=RecallCounters)
    started_at: Timestamp | None = None
    last_activity: Timestamp | None = None

    def check(self) -> BufferSnapshot:
        """Raise :class:`WorkingMemoryError` unless this snapshot is a valid buffer state."""
        ids = [item.item_id for item in self.items]
        problems = [
            "duplicate item ids" if len(set(ids)) != len(ids) else "",
            "more items than max_items" if len(ids) > self.config.max_items else "",
            "more tokens than max_tokens"
            if sum(i.tokens for i in self.items) > self.config.max_tokens
            else "",
            "items out of order"
            if [i.seq for i in self.items] != sorted(i.seq for i in self.items)
            else "",
            "next_seq not above every item"
            if any(i.seq >= self.next_seq for i in self.items)
            else "",
            f"unknown snapshot format {self.format}" if self.format != SNAPSHOT_FORMAT else "",
        ]
        found = [p for p in problems if p]
        if found:
            raise WorkingMemoryError(f"invalid buffer snapshot: {', '.join(found)}")
        return self


class Outcome(StrEnum):
    """What became of an offered item."""

    ADMITTED = "admitted"
    REFRESHED = "refreshed"
    """Already held: touched and updated, not added twice."""
    REFUSED = "refused"


@dataclass(frozen=True, slots=True)
class AddResult:
    """The fate of one offered item: admitted, refreshed or refused, and why.

    Like the other reports of the buffer's operations (:class:`RefreshReport`,
    :class:`~prefrontal.buffer.AdmissionDecision`,
    :class:`~prefrontal.buffer.Eviction`), a plain value: built for every
    offer of every turn and never stored, so no validated model.
    """

    item_id: str
    outcome: Outcome
    reason: str
    tokens: int
    decision: AdmissionDecision | None = None
    """The admission decision (``None`` when refused before scoring or when refreshed)."""
    item: BufferItem | None = None
    evicted: tuple[Eviction, ...] = ()


_result_setters = tuple(AddResult.__dict__[name].__set__ for name in AddResult.__slots__)
_new = object.__new__


def add_result(
    item_id: str,
    outcome: Outcome,
    reason: str,
    tokens: int,
    decision: AdmissionDecision | None = None,
    item: BufferItem | None = None,
    evicted: tuple[Eviction, ...] = (),
) -> AddResult:
    """``AddResult(item_id, outcome, ...)``, made without the dataclass's ``__init__`` (a
    third of its time: the buffer makes one for every offer of every turn)."""
    s_id, s_outcome, s_reason, s_tokens, s_decision, s_item, s_evicted = _result_setters
    result: AddResult = _new(AddResult)
    s_id(result, item_id)
    s_outcome(result, outcome)
    s_reason(result, reason)
    s_tokens(result, tokens)
    s_decision(result, decision)
    s_item(result, item)
    s_evicted(result, evicted)
    return result


@dataclass(frozen=True, slots=True)
class RefreshReport:
    """What one turn's refresh did to the buffer."""

    total_tokens: int
    coherence: Coherence
    admitted: tuple[AddResult, ...] = ()
    refreshed: tuple[AddResult, ...] = ()
    refused: tuple[AddResult, ...] = ()
    evicted: tuple[Eviction, ...] = ()
    """Every item that left: faded, replaced by this turn, or evicted to make room."""
    items: tuple[BufferItem, ...] = ()
    """The buffer after the refresh, in insertion order."""
    themes: tuple[str, ...] = ()

    @property
    def total_items(self) -> int:
        """How many items the buffer holds after the refresh."""
        return len(self.items)
