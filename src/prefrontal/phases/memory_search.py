"""Search a long-term memory store and rerank its hits: shared by phases 5 and 6.

The rerank blends the store's relevance (normalised to the best hit of the
query) with recency, importance and novelty (items recalled often lately
make way for others). Items the turn already has elsewhere (the recent
conversation, the agent's own working notes) are dropped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from prefrontal.bundle.models import Fragment, Section
from prefrontal.phases.fragments import fragment
from prefrontal.phases.state import TurnState
from prefrontal.phases.store_calls import call_store
from prefrontal.stores.long_term import MemoryItem, MemoryQuery, MemoryStore, ScoredMemory

RECENCY_HALF_LIFE_DAYS = 30.0


@dataclass(frozen=True, slots=True)
class RerankWeights:
    """How much each signal counts in the rerank (they need not sum to 1)."""

    relevance: float = 0.70
    recency: float = 0.10
    importance: float = 0.15
    novelty: float = 0.05


def recency(item: MemoryItem, now: datetime) -> float:
    """1.0 for something from now, halving every ``RECENCY_HALF_LIFE_DAYS``."""
    when = item.occurred_at or item.created_at
    age_days = max((now - when).total_seconds(), 0.0) / 86_400
    return math.pow(0.5, age_days / RECENCY_HALF_LIFE_DAYS)


def novelty(item: MemoryItem) -> float:
    """Lower for items recalled many times already (1.0 when never recalled)."""
    return 1.0 / (1.0 + math.log1p(item.recall_count))


def rerank(hits: list[ScoredMemory], now: datetime, weights: RerankWeights) -> list[ScoredMemory]:
    """Hits rescored by the weighted blend, best first (ties by item id)."""
    best = max((h.score for h in hits), default=0.0) or 1.0
    rescored = [
        h.model_copy(
            update={
                "score": weights.relevance * h.score / best
                + weights.recency * recency(h.item, now)
                + weights.importance * h.item.importance
                + weights.novelty * novelty(h.item)
            }
        )
        for h in hits
    ]
    return sorted(rescored, key=lambda h: (-h.score, h.item.item_id))


def already_held(turn: TurnState) -> set[str]:
    """Ids the turn has from elsewhere: recent conversation turns and the agent's own notes.

    Last turn's context fragments in the buffer do not count: this turn's
    context replaces them.
    """
    held = {t.item_id for t in turn.recent_turns}
    if turn.session is not None:
        for entry in turn.session.state.get("items", []):
            if entry.get("source") != "context":
                held.update(entry.get("source_ids", []))
    return held


def memory_line(item: MemoryItem) -> str:
    """The item's text, prefixed by its speaker when it has one."""
    speaker = item.metadata.get("speaker")
    return f"{speaker}: {item.content}" if speaker else item.content


def memory_heading(item: MemoryItem) -> str | None:
    """The date an item happened on, as a group header (``None`` when unknown)."""
    when = item.occurred_at
    return f"{when:%d %B %Y}" if when else None


async def search(
    turn: TurnState, store: MemoryStore, phase: str, text: str, limit: int
) -> list[ScoredMemory]:
    """The store's hits for ``text`` (nothing when ``limit`` is 0 or the text is blank)."""
    if limit == 0 or not text.strip():
        return []
    query = MemoryQuery(text=text[:20_000], limit=limit, now=turn.context.started_at)
    tenant = turn.tenant
    return await call_store(turn, phase, lambda: store.search(tenant, query))


def to_fragments(
    turn: TurnState, hits: list[ScoredMemory], section: Section, phase: str
) -> list[Fragment]:
    """One fragment per hit, ranked as given, rendered in the order things happened."""
    return [
        fragment(
            turn,
            section,
            memory_line(hit.item),
            store=section.value,
            item_ids=(hit.item.item_id,),
            phase=phase,
            rank=rank,
            position=(hit.item.occurred_at or hit.item.created_at).timestamp()
            + (hit.item.position or 0) * 1e-3,
            score=round(hit.score, 6),
            created_at=hit.item.created_at,
            heading=memory_heading(hit.item),
        )
        for rank, hit in enumerate(hits)
    ]
