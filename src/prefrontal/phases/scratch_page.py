"""Phase 7, ``scratch_page``: active observations, risk alerts, pending confirmations.

Risk alerts and pending confirmations come first; among the rest, entries
whose tags match the input or focus are kept before those that do not.
"""

from __future__ import annotations

from collections.abc import Set

from prefrontal.bundle.models import Section
from prefrontal.config import PhaseName
from prefrontal.phases.fragments import fragment, input_terms, loaded
from prefrontal.phases.spec import PhaseSpec
from prefrontal.phases.state import PhaseOutcome, TurnState
from prefrontal.phases.store_calls import call_store
from prefrontal.retrieval.analysis import terms
from prefrontal.stores.scratch_page import Observation, ScratchKind

NAME: PhaseName = "scratch_page"
URGENT = (ScratchKind.RISK_ALERT, ScratchKind.PENDING_CONFIRMATION)
LABELS = {
    ScratchKind.OBSERVATION: "Observation",
    ScratchKind.RISK_ALERT: "Risk alert",
    ScratchKind.PENDING_CONFIRMATION: "Awaiting confirmation",
    ScratchKind.INSIGHT: "Insight",
}


def sort_key(entry: Observation, query_terms: Set[str]) -> tuple[bool, bool, float, float, str]:
    """Urgent kinds first, then tag matches, priority, recency, id."""
    tag_match = bool(set(terms(" ".join(entry.tags))) & query_terms)
    return (
        entry.kind not in URGENT,
        not tag_match,
        -entry.priority,
        -entry.created_at.timestamp(),
        entry.item_id,
    )


async def run(turn: TurnState) -> PhaseOutcome:
    """Load the active scratch entries, most pressing first."""
    tenant, now, limit = turn.tenant, turn.context.started_at, turn.config.scratch_page.entries
    entries = await call_store(
        turn,
        NAME,
        lambda: turn.stores.scratch_page.active(tenant, now=now, limit=max(limit * 3, 1)),
    )
    query_terms = input_terms(turn)
    chosen = sorted(entries, key=lambda e: sort_key(e, query_terms))[:limit]
    fragments = [
        fragment(
            turn,
            Section.SCRATCH_PAGE,
            f"{LABELS[e.kind]} ({e.owner.value}): {e.content}",
            store="scratch_page",
            item_ids=(e.item_id,),
            phase=NAME,
            rank=rank,
            position=rank,
            score=e.priority,
            created_at=e.created_at,
        )
        for rank, e in enumerate(chosen)
    ]
    turn.loads[Section.SCRATCH_PAGE] = fragments
    count, tokens = loaded(fragments)
    return PhaseOutcome(
        items_loaded=count, tokens_loaded=tokens, items_dropped=len(entries) - len(chosen)
    )


SPEC = PhaseSpec(
    name=NAME,
    run=run,
    budget_ms=50,
    needs=("turn_context",),
    writes=frozenset({"loads"}),
)
