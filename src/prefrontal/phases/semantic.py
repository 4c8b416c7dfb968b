"""Phase 6, ``semantic``: facts, skills and patterns that bear on this input.

The query is the key concepts of the input and the active goals. Duplicates
of episodic hits are removed at assembly, where both are known.
"""

from __future__ import annotations

from prefrontal.bundle.models import Section
from prefrontal.phases.fragments import loaded
from prefrontal.phases.memory_search import (
    RerankWeights,
    already_held,
    candidate_limit,
    input_text,
    recall,
    rerank,
    to_fragments,
)
from prefrontal.phases.state import PhaseOutcome, TurnState

NAME = "semantic"
WEIGHTS = RerankWeights(relevance=0.75, recency=0.05, importance=0.15, novelty=0.05)


def concept_query(turn: TurnState) -> dict[str, str]:
    """The input, and the titles of the active goals as its context."""
    return {
        "input": input_text(turn),
        "context": "\n".join(i.title for i in turn.frontal_items[:3]),
    }


async def run(turn: TurnState) -> PhaseOutcome:
    """Search semantic memory for the input's concepts and rank what it finds."""
    query = concept_query(turn)
    limit = candidate_limit(turn, turn.config.semantic_candidates)
    hits, how = await recall(turn, turn.stores.semantic, NAME, query, limit)
    held = already_held(turn)
    fresh = [
        h for h in rerank(hits, turn.context.started_at, WEIGHTS) if h.item.item_id not in held
    ]
    fragments = to_fragments(turn, fresh, Section.SEMANTIC, NAME)
    turn.loads[Section.SEMANTIC] = fragments
    count, tokens = loaded(fragments)
    return PhaseOutcome(
        items_loaded=count,
        tokens_loaded=tokens,
        items_dropped=len(hits) - len(fresh),
        detail={"hits": len(hits), **how},
    )
