"""``EndTurnConfig``: how ``end_turn`` records an exchange and forms memory from it.

Nested in :class:`~prefrontal.turn.OrchestratorConfig` as ``end_turn``; phase
4 reads ``reply_tokens`` from it to cut the previous turn's reply.
"""

from __future__ import annotations

from pydantic import ConfigDict, Field

from prefrontal.model_reads import FastReads


class EndTurnConfig(FastReads):
    """Settings of the write side. Every field has a default that works offline."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    reply_tokens: int = Field(default=200, ge=1, le=100_000)
    """The next turn shows at most this many tokens of the previous turn's reply."""
    summary_tokens: int = Field(default=300, ge=16, le=100_000)
    """The rolling summary is kept within this many tokens (its oldest sentences go first)."""
    fold: bool = True
    """Fold what leaves the recent-conversation window into the rolling summary."""
    fold_batch: int = Field(default=40, ge=1, le=1_000)
    """How many messages past the window one fold looks back over."""
    consolidate: bool = True
    """Promote the session's cooling working-memory items into episodic memory at each end."""
    extract_timeout_s: float = Field(default=30.0, gt=0, le=3_600)
    """An extractor that takes longer is cancelled and its failure recorded in the trace."""
    max_pending_extractions: int = Field(default=16, ge=1, le=10_000)
    """Extractions running or waiting at once; ``end_turn`` waits for a slot beyond this."""
    bookkeeping_timeout_s: float = Field(default=5.0, gt=0, le=600)
    """The summary and buffer steps (before the commit), and what runs after it (shielded),
    each get at most this long."""
