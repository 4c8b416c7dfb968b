"""The request, the turn context and the result of a turn.

These models sit below the orchestrator and the phases, which both use them.
The configuration is :mod:`prefrontal.config` (``OrchestratorConfig`` is
re-exported here for the code that imported it from this module).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import ConfigDict, Field

from prefrontal.buffer.themes import SessionLink
from prefrontal.bundle.models import ContextBundle
from prefrontal.config import MAX_TOKEN_BUDGET, MIN_TOKEN_BUDGET, OrchestratorConfig
from prefrontal.ids import NUMBER_ONLY, non_blank
from prefrontal.model_reads import FastReads
from prefrontal.stores.records import Label, Labels, NonEmptyId
from prefrontal.traces.models import TurnTrace

__all__ = [
    "MAX_INPUT_CHARS",
    "OrchestratorConfig",
    "TokenBudget",
    "TurnContext",
    "TurnRequest",
    "TurnResult",
    "UserInput",
    "WorkingMemoryItemView",
    "WorkingMemoryView",
]

MAX_INPUT_CHARS = 100_000
"""About 25,000 tokens: longer input leaves no room for context in any budget."""


class _Frozen(FastReads):
    model_config = ConfigDict(frozen=True, extra="forbid")


UserInput = Annotated[str, non_blank(MAX_INPUT_CHARS)]
"""The user's message: 1 to 100,000 characters, not only whitespace."""

TokenBudget = Annotated[int, Field(ge=MIN_TOKEN_BUDGET, le=MAX_TOKEN_BUDGET), NUMBER_ONLY]
"""A turn's token budget: an integer (never a string or a boolean) from 64 to 1,000,000."""


class TurnRequest(_Frozen):
    """What the agent's request handler asks for: one turn for one user message."""

    agent_id: NonEmptyId
    user_id: NonEmptyId
    session_id: NonEmptyId
    user_input: UserInput
    parent_turn_id: NonEmptyId | None = None
    token_budget: TokenBudget | None = None
    """Overrides the configured total for this turn."""
    mode: Label | None = None
    """Overrides the agent's current mode for this turn."""
    focus: Labels = ()
    """Tags the caller says the turn is about (attention focus)."""


class TurnContext(_Frozen):
    """Phase 1's output: who the turn is for, when it started, what it may spend."""

    turn_id: str
    agent_id: str
    user_id: str
    session_id: str
    parent_turn_id: str | None
    started_at: datetime
    total_budget: int
    deadline_ms: float


class WorkingMemoryItemView(_Frozen):
    """One item of the session's buffer after the turn."""

    item_id: str
    section: str
    tokens: int
    source: str
    pinned: bool = False
    lifetime: str = "turn"
    """``turn`` for this turn's fragments, ``session`` for what the agent put there itself."""


class WorkingMemoryView(_Frozen):
    """The session's working-memory buffer after the turn."""

    items: tuple[WorkingMemoryItemView, ...] = ()
    total_tokens: int = 0
    max_items: int = 64
    max_tokens: int = 4_000
    themes: tuple[str, ...] = ()
    """The session's dominant themes."""
    coherence: float = 1.0
    refused: int = 0
    """Fragments of this turn the buffer refused (the trace of phase 10 says why)."""
    evicted: int = 0
    """Items that left the buffer this turn (faded, replaced or evicted)."""
    searches_saved: int = 0
    """Memory searches the recall gate has saved in this session so far."""
    searches_run: int = 0
    links: tuple[SessionLink, ...] = ()
    """On a session's first turn: the user's recent sessions that share themes or entities."""


class TurnResult(_Frozen):
    """What ``start_turn`` returns: the context, the trace, the buffer, and readiness."""

    context: TurnContext
    bundle: ContextBundle
    trace: TurnTrace
    working_memory: WorkingMemoryView
    warnings: tuple[str, ...]
    ready_for_router: bool
