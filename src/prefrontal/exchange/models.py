"""The values of the write side: tool calls, extracted items, what ``end_turn`` returns."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from prefrontal.model_reads import FastReads
from prefrontal.stores.long_term import MemoryKind
from prefrontal.stores.records import MetadataValue
from prefrontal.traces.models import TurnEnding

MAX_TOOL_TEXT = 20_000


class _Frozen(FastReads):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ToolCall(_Frozen):
    """A tool the model called during the turn, with what it was given and what it returned."""

    name: str = Field(min_length=1, max_length=256)
    arguments: dict[str, MetadataValue] = Field(default_factory=dict)
    result: str | None = Field(default=None, max_length=MAX_TOOL_TEXT)
    error: str | None = Field(default=None, max_length=MAX_TOOL_TEXT)

    def text(self) -> str:
        """One line: ``name(arguments) -> result`` (or ``-> error: ...``)."""
        args = ", ".join(f"{k}={v!r}" for k, v in self.arguments.items())
        head = f"{self.name}({args})"
        if self.error is not None:
            return f"{head} -> error: {self.error}"
        return head if self.result is None else f"{head} -> {self.result}"


class Extracted(_Frozen):
    """One semantic item an :class:`~prefrontal.exchange.extract.Extractor` found in an exchange.

    ``key`` names the fact (``"user.home_city"``): an item with the same key
    as a live earlier one supersedes it, so only the newest version is recalled.
    """

    content: str = Field(min_length=1, max_length=20_000)
    key: str | None = Field(default=None, min_length=1, max_length=200)
    kind: MemoryKind = MemoryKind.FACT
    importance: float = Field(default=0.5, ge=0.0, le=1.0)
    tags: tuple[str, ...] = ()


class EndTurnResult(_Frozen):
    """What ``Orchestrator.end_turn`` returns.

    ``written`` is False when the turn had already ended (an idempotent
    retry): the ids and trace are then those of the first call.
    """

    turn_id: str
    written: bool
    message_ids: tuple[str, ...]
    """The conversation messages of the exchange (user input, then reply)."""
    memory_ids: tuple[str, ...]
    """The episodic items of the exchange (the same ids, plus one per tool call)."""
    trace: TurnEnding
