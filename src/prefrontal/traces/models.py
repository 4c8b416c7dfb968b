"""The turn trace: what every phase of a turn did, how long it took, what it dropped.

A trace is data first. Logs, spans, metrics and the terminal view are all
renderings of a :class:`TurnTrace`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import ConfigDict, Field

from prefrontal.enums import FastStrEnum
from prefrontal.model_reads import FastReads


class PhaseStatus(FastStrEnum):
    """How a phase ended."""

    OK = "ok"
    DEGRADED = "degraded"
    """Finished, but with less than it should have (a dependency failed, a retry was needed)."""
    FAILED = "failed"
    TIMEOUT = "timeout"
    CANCELLED = "cancelled"
    SKIPPED = "skipped"


class TurnStatus(FastStrEnum):
    """How the turn as a whole ended."""

    OK = "ok"
    DEGRADED = "degraded"
    """Some phase failed or timed out; the context is partial."""


class TraceModel(FastReads):
    """Frozen, strict base for trace records."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class ErrorRecord(TraceModel):
    """An error a phase met, as data."""

    type: str
    message: str
    store: str | None = None
    attempts: int = 1


class DroppedRecord(TraceModel):
    """Something loaded that did not make it into the context, and why."""

    section: str
    item_ids: tuple[str, ...]
    tokens: int
    reason: str
    text: str = ""
    """The fragment's text as it would have been rendered (empty in traces older than it)."""


class SentMessage(TraceModel):
    """One chat message of the context as :meth:`ContextBundle.to_messages` produced it."""

    role: str
    content: str


class RecallMode(FastStrEnum):
    """What a memory phase did this turn: searched its store, or reused the buffer's hits."""

    SEARCH = "search"
    REUSE = "reuse"


class SectionUsage(TraceModel):
    """A section's share of the budget: as allocated and as used."""

    section: str
    requested: int
    allocated: int
    used: int


class PhaseRecord(TraceModel):
    """One phase of one turn."""

    name: str
    index: int
    status: PhaseStatus
    started_ms: float
    """Offset from the start of the turn."""
    duration_ms: float
    budget_ms: float
    items_loaded: int = 0
    tokens_loaded: int = 0
    items_dropped: int = 0
    tokens_dropped: int = 0
    attempts: int = 1
    warnings: tuple[str, ...] = ()
    errors: tuple[ErrorRecord, ...] = ()
    detail: dict[str, Any] = Field(default_factory=dict)

    @property
    def over_budget(self) -> bool:
        """True when the phase took longer than its time budget."""
        return self.duration_ms > self.budget_ms


class TurnEnding(TraceModel):
    """What ``end_turn`` recorded for a turn, and how each of its steps went.

    Written into the turn's trace in the same transaction as the exchange
    (so a trace with an ending is the mark that the turn ended), then
    completed with the steps that follow; an extraction running in the
    background adds its own step when it ends.
    """

    ended_at: datetime
    duration_ms: float = 0.0
    reply: str
    outcome: str | None = None
    tool_calls: tuple[str, ...] = ()
    """The names of the tools called during the turn."""
    message_ids: tuple[str, ...] = ()
    memory_ids: tuple[str, ...] = ()
    steps: tuple[PhaseRecord, ...] = ()
    warnings: tuple[str, ...] = ()
    errors: tuple[ErrorRecord, ...] = ()

    def step(self, name: str) -> PhaseRecord:
        """The record of the named step (``KeyError`` if there is none)."""
        for record in self.steps:
            if record.name == name:
                return record
        raise KeyError(name)


class TurnTrace(TraceModel):
    """The sealed record of one turn."""

    turn_id: str
    parent_turn_id: str | None = None
    agent_id: str
    user_id: str
    session_id: str
    started_at: datetime
    duration_ms: float
    deadline_ms: float
    status: TurnStatus
    total_budget: int
    total_tokens: int
    checksum: str
    ready_for_router: bool
    phases: tuple[PhaseRecord, ...]
    sections: tuple[SectionUsage, ...] = ()
    dropped: tuple[DroppedRecord, ...] = ()
    warnings: tuple[str, ...] = ()
    errors: tuple[ErrorRecord, ...] = ()
    version: str = ""
    user_input: str | None = None
    """The user's message, so that ``end_turn`` can record it from a bare turn id."""
    sent: tuple[SentMessage, ...] = ()
    """The context as sent: the bundle's chat messages with the user's message last.
    It lives in the trace (the trace store's row of the turn) and goes with it:
    erasing the user, pruning traces, or forgetting one of this turn's messages."""
    forgotten: tuple[str, ...] = ()
    """Ids of this turn's messages forgotten since: their text is gone from the trace
    (``user_input`` is ``None`` for the user's, the ending's ``reply`` empty for the reply).
    The field stands before ``ending``, which a trace's JSON ends with (an open
    trace's with :data:`~prefrontal.stores.traces.OPEN_SUFFIX`)."""
    ending: TurnEnding | None = None
    """What ``end_turn`` recorded; ``None`` until the turn has ended."""

    def phase(self, name: str) -> PhaseRecord:
        """The record of the named phase (``KeyError`` if there is none)."""
        for record in self.phases:
            if record.name == name:
                return record
        raise KeyError(name)
