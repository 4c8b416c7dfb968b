"""The request and response bodies of the HTTP API and the MCP tools.

One set of pydantic models for both servers, so that a field means the same
thing everywhere and the OpenAPI document and the tool schemas describe it
in the same words. Responses are views of the library's own models
(:class:`~prefrontal.turn.TurnResult`, :class:`~prefrontal.traces.models.TurnTrace`,
:class:`~prefrontal.stores.long_term.MemoryItem`) with the fields a remote
caller needs.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from prefrontal.exchange import ToolCall
from prefrontal.ids import NUMBER_ONLY, Id, non_blank
from prefrontal.stores.authors import is_reserved
from prefrontal.stores.long_term import AUTHOR_KEY, MemoryItem, MemoryKind
from prefrontal.stores.records import Label, Labels
from prefrontal.stores.tenancy import Scope
from prefrontal.traces.models import PhaseRecord, TurnTrace
from prefrontal.turn import MAX_INPUT_CHARS, TokenBudget, TurnResult, UserInput

MAX_REPLY_CHARS = 100_000
MAX_MEMORY_CHARS = 20_000
MAX_QUERY_CHARS = 10_000
MAX_TOP_K = 100

Reply = Annotated[str, non_blank(MAX_REPLY_CHARS)]
"""The assistant's reply: not only whitespace."""
MemoryText = Annotated[str, non_blank(MAX_MEMORY_CHARS)]
"""A memory's content: not only whitespace."""
Query = Annotated[str, non_blank(MAX_QUERY_CHARS)]
"""What to search for: not only whitespace."""
Importance = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False), NUMBER_ONLY]
"""0 (trivia) to 1 (vital): a number, never a string or a boolean."""
TopK = Annotated[int, Field(ge=1, le=MAX_TOP_K), NUMBER_ONLY]
"""How many memories at most: an integer, never a string or a boolean."""
ToolCallBody = ToolCall
"""A tool the assistant called during the turn: the library's own model."""

__all__ = ["MAX_INPUT_CHARS", "Id", "ToolCallBody", "UserInput"]


class Body(BaseModel):
    """A request body: unknown fields are refused, so a typo is an error, not a silent default."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Out(BaseModel):
    """A response body."""

    model_config = ConfigDict(frozen=True)


# ------------------------------------------------------------------- turns


class StartTurnBody(Body):
    """Start a turn: assemble the working memory for one user message."""

    user_id: Id = Field(description="The user the turn is for.")
    session_id: Id = Field(
        description="The conversation the message belongs to; the working-memory buffer is kept "
        "per session.",
    )
    user_input: UserInput = Field(description="The user's message, verbatim.")
    agent_id: Id | None = Field(
        default=None,
        description="The agent; optional, it is the API key's agent (any other is refused).",
    )
    parent_turn_id: Id | None = Field(
        default=None, description="The previous turn of the session, whose outcome is shown."
    )
    token_budget: TokenBudget | None = Field(
        default=None,
        description="Tokens the assembled context may use (default: the server's, 4,000).",
    )
    mode: Label | None = Field(default=None, description="Overrides the agent's current mode.")
    focus: Labels = Field(default=(), description="Tags the caller says the turn is about.")


class Fragment(Out):
    """One piece of the assembled context and where it came from."""

    section: str = Field(description="The section of the context it is in.")
    text: str = Field(description="Its text, as it appears in the context.")
    tokens: int = Field(description="Its tokens (cl100k).")
    store: str = Field(description="The store it came from.")
    item_ids: tuple[str, ...] = Field(description="The stored items it renders.")


class TurnOut(Out):
    """A started turn: the context to give the model, its size and how it went."""

    turn_id: str = Field(description="Pass it to end the turn and to read its trace.")
    agent_id: str = Field(description="The agent the turn ran for.")
    user_id: str = Field(description="The user the turn ran for.")
    session_id: str = Field(description="The session the turn belongs to.")
    text: str = Field(description="The assembled context: put it in the model's prompt.")
    total_tokens: int = Field(description="Tokens in `text` (cl100k).")
    budget: int = Field(description="The token budget the context was assembled within.")
    source_breakdown: dict[str, int] = Field(description="Tokens per section.")
    checksum: str = Field(description="A hash of `text`: equal contexts have equal checksums.")
    status: str = Field(description="`ok`, or `degraded` when a store failed or was slow.")
    ready_for_router: bool = Field(
        description="True when the context may go to the model: it holds the agent's identity "
        "and rules, within a budget at or above the agent's floor; `warnings` says why not."
    )
    warnings: tuple[str, ...] = Field(description="What went wrong or is missing, in words.")
    fragments: tuple[Fragment, ...] = Field(
        description="The pieces of `text`, each with its section, tokens and source items."
    )

    @classmethod
    def of(cls, result: TurnResult) -> TurnOut:
        """The view of ``result``."""
        bundle, context = result.bundle, result.context
        return cls(
            turn_id=context.turn_id,
            agent_id=context.agent_id,
            user_id=context.user_id,
            session_id=context.session_id,
            text=bundle.text,
            total_tokens=bundle.total_tokens,
            budget=bundle.budget,
            source_breakdown=dict(bundle.source_breakdown),
            checksum=bundle.checksum,
            status=result.trace.status.value,
            ready_for_router=result.ready_for_router,
            warnings=result.warnings,
            fragments=tuple(
                Fragment(
                    section=f.section.value,
                    text=f.text,
                    tokens=f.tokens,
                    store=f.provenance.store,
                    item_ids=tuple(f.provenance.item_ids),
                )
                for f in bundle.fragments
            ),
        )


class EndTurnBody(Body):
    """End a turn: record the assistant's reply (and tool calls) as the session's history."""

    user_id: Id = Field(description="The user the turn was for.")
    reply: Reply = Field(description="The assistant's reply, verbatim.")
    agent_id: Id | None = Field(default=None, description="Optional: the API key's agent.")
    tool_calls: tuple[ToolCallBody, ...] = Field(default=(), max_length=100)
    outcome: str | None = Field(
        default=None, max_length=2_000, description="How the turn ended, in a few words."
    )


class EndTurnOut(Out):
    """An ended turn."""

    turn_id: str
    written: bool = Field(description="False when the turn had already been ended (a retry).")
    message_ids: tuple[str, ...] = Field(description="The conversation messages written.")
    memory_ids: tuple[str, ...] = Field(description="The episodic memories written.")
    phases: tuple[PhaseOut, ...] = Field(description="The end-of-turn steps and how they went.")


# ------------------------------------------------------------------ traces


class PhaseOut(Out):
    """One phase of a turn: how it ended and how long it took."""

    name: str
    index: int
    status: str = Field(description="ok, degraded, failed, timeout, cancelled or skipped.")
    started_ms: float
    duration_ms: float
    budget_ms: float
    items_loaded: int
    tokens_loaded: int
    warnings: tuple[str, ...]
    errors: tuple[str, ...]

    @classmethod
    def of(cls, record: PhaseRecord) -> PhaseOut:
        """The view of ``record``."""
        return cls(
            name=record.name,
            index=record.index,
            status=record.status.value,
            started_ms=record.started_ms,
            duration_ms=record.duration_ms,
            budget_ms=record.budget_ms,
            items_loaded=record.items_loaded,
            tokens_loaded=record.tokens_loaded,
            warnings=record.warnings,
            errors=tuple(f"{e.type}: {e.message}" for e in record.errors),
        )


class TraceOut(Out):
    """A turn's trace: its phases, statuses and timings."""

    turn_id: str
    parent_turn_id: str | None
    session_id: str
    started_at: datetime
    status: str
    duration_ms: float
    deadline_ms: float
    total_budget: int
    total_tokens: int
    ready_for_router: bool
    phases: tuple[PhaseOut, ...]
    warnings: tuple[str, ...]
    ended: bool = Field(description="Whether the turn has been ended (its reply recorded).")
    end_steps: tuple[PhaseOut, ...] = Field(
        default=(), description="The steps of `end_turn`, once the turn has ended."
    )

    @classmethod
    def of(cls, trace: TurnTrace) -> TraceOut:
        """The view of ``trace``."""
        return cls(
            turn_id=trace.turn_id,
            parent_turn_id=trace.parent_turn_id,
            session_id=trace.session_id,
            started_at=trace.started_at,
            status=trace.status.value,
            duration_ms=trace.duration_ms,
            deadline_ms=trace.deadline_ms,
            total_budget=trace.total_budget,
            total_tokens=trace.total_tokens,
            ready_for_router=trace.ready_for_router,
            phases=tuple(PhaseOut.of(p) for p in trace.phases),
            warnings=trace.warnings,
            ended=trace.ending is not None,
            end_steps=tuple(PhaseOut.of(p) for p in trace.ending.steps) if trace.ending else (),
        )


# ---------------------------------------------------------------- memories


class RememberBody(Body):
    """Store something worth remembering about the user or the world."""

    user_id: Id = Field(description="Whose memory it is.")
    content: MemoryText = Field(description="The memory, as a sentence.")
    agent_id: Id | None = Field(default=None, description="Optional: the API key's agent.")
    importance: Importance = Field(default=0.5, description="0 (trivia) to 1 (vital).")
    kind: MemoryKind = Field(default=MemoryKind.FACT, description="What the memory records.")
    store: Literal["episodic", "semantic"] = Field(
        default="semantic",
        description="`semantic` for facts and preferences, `episodic` for things that happened.",
    )
    scope: Scope = Field(
        default=Scope.PRIVATE,
        description="`private` to the user, or `shared` with every user of the agent.",
    )
    tags: Labels = Field(default=())
    source: str | None = Field(
        default=None,
        max_length=200,
        description="Where it came from (a tool, a service); the memory's line names the key "
        "that wrote it too. `owner`, `agent`, `prefrontal`, `system`, `extracted`, `end_turn` "
        "and the like are reserved.",
    )

    @field_validator("source")
    @classmethod
    def _not_reserved(cls, source: str | None) -> str | None:
        if source is not None and is_reserved(source):
            raise ValueError(
                f"{source!r} is a source only prefrontal gives: name the tool or service"
            )
        return source


class SearchBody(Body):
    """Search the user's long-term memory."""

    user_id: Id
    query: Query = Field(description="What to look for.")
    agent_id: Id | None = Field(default=None, description="Optional: the API key's agent.")
    top_k: TopK = Field(default=10, description="At most this many memories.")
    session_id: Id | None = Field(
        default=None,
        description="With a session, its recall gate decides first whether the session's "
        "working memory already holds the topic (then nothing is searched).",
    )


def _content_or_importance(schema: dict[str, Any]) -> None:
    schema["anyOf"] = [
        {"required": ["content"], "properties": {"content": {"type": "string"}}},
        {"required": ["importance"], "properties": {"importance": {"type": "number"}}},
    ]


class UpdateBody(Body):
    """Change a memory's content or importance (one of them at least)."""

    model_config = ConfigDict(json_schema_extra=_content_or_importance)

    user_id: Id
    agent_id: Id | None = Field(default=None, description="Optional: the API key's agent.")
    content: MemoryText | None = None
    importance: Importance | None = None

    @model_validator(mode="after")
    def _something(self) -> UpdateBody:
        if self.content is None and self.importance is None:
            raise ValueError("give content, importance or both")
        return self


class MemoryOut(Out):
    """A long-term memory."""

    item_id: str
    content: str
    kind: str
    importance: float
    scope: str
    created_at: datetime
    tags: tuple[str, ...]
    author: str | None = Field(
        default=None,
        description="Who wrote it (the API key's name or the user); every shared memory has one.",
    )
    score: float | None = Field(default=None, description="Relevance, for a search hit.")

    @classmethod
    def of(cls, item: MemoryItem, score: float | None = None) -> MemoryOut:
        """The view of ``item``."""
        return cls(
            item_id=item.item_id,
            content=item.content,
            kind=item.kind.value,
            importance=item.importance,
            scope=item.scope.value,
            created_at=item.created_at,
            tags=item.tags,
            author=_author(item),
            score=score,
        )


def _author(item: MemoryItem) -> str | None:
    author = item.metadata.get(AUTHOR_KEY)
    return None if author is None else str(author)


class RecallOut(Out):
    """What a recall found, and whether it searched or reused the session's working memory."""

    mode: Literal["search", "reuse"] = Field(
        description="`search`: a full search ran (an explicit search always searches; "
        "`reuse` is kept for clients that know it and is never sent)."
    )
    reason: str = Field(description="`explicit` with a session, `no_session` without.")
    memories: tuple[MemoryOut, ...]


class ForgetOut(Out):
    """A forgotten memory."""

    item_id: str
    forgotten: bool = Field(description="False when there was nothing to forget.")


class ErasureOut(Out):
    """Everything of one user erased, with the count per store."""

    agent_id: str
    user_id: str
    removed: dict[str, int]


EndTurnOut.model_rebuild()
