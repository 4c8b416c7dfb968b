"""Phase 7, ``scratch_page``: active observations, risk alerts, pending confirmations.

Risk alerts and pending confirmations come first; among the rest, entries
whose tags match the input or focus are kept before those that do not.
Every line carries the entry's handle (``Risk alert #482913 (agent): ...``),
which the tools and routes take to resolve it.
"""

from __future__ import annotations

from collections.abc import Set

from prefrontal.agents.handles import handle_of
from prefrontal.bundle.fence import as_data
from prefrontal.bundle.models import Fragment, Section
from prefrontal.config import PhaseName
from prefrontal.object_cache import ObjectCache
from prefrontal.phases.fragments import fragment, input_terms, loaded, made_once
from prefrontal.phases.origins import author_label
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
ENTRIES_KEPT = 4_096
"""Entries whose tag terms are remembered (see :func:`tag_terms`)."""
_TAG_TERMS: ObjectCache[frozenset[str]] = ObjectCache(ENTRIES_KEPT)


def tag_terms(entry: Observation) -> frozenset[str]:
    """The analysed terms of ``entry``'s tags, worked out once for the very same (frozen) entry."""
    return _TAG_TERMS((entry,), None, lambda: frozenset(terms(" ".join(entry.tags))))


def sort_key(entry: Observation, query_terms: Set[str]) -> tuple[bool, bool, float, float, str]:
    """Urgent kinds first, then tag matches, priority, recency, id."""
    tag_match = not tag_terms(entry).isdisjoint(query_terms)
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
    fragments = [entry_fragment(turn, entry, rank) for rank, entry in enumerate(chosen)]
    turn.loads[Section.SCRATCH_PAGE] = fragments
    count, tokens = loaded(fragments)
    since = turn.session.updated_at if turn.session is not None else None
    return PhaseOutcome(
        items_loaded=count,
        tokens_loaded=tokens,
        items_dropped=len(entries) - len(chosen),
        detail={
            "shown": [f"{e.kind.value}:{e.item_id}@v{e.version}" for e in chosen],
            "new": [e.item_id for e in entries if since is not None and e.created_at > since],
        },
    )


def entry_text(entry: Observation) -> str:
    """``Kind #handle (owner): content``, the content as data; ``(by KEY)`` instead of the
    owner when a key wrote it, ``(shared by NAME)`` when it is shared (:func:`author_label`)."""
    who = author_label(entry.author, entry.scope, entry.user_id) or entry.owner.value
    content = as_data(entry.content, opens_line=False)
    return f"{LABELS[entry.kind]} {handle_of(entry)} ({who}): {content}"


def entry_fragment(turn: TurnState, entry: Observation, rank: int) -> Fragment:
    """The fragment of ``entry`` at ``rank``, made once for the same entry and rank."""
    return made_once(
        turn,
        entry,
        (NAME, rank),
        lambda: fragment(
            turn,
            Section.SCRATCH_PAGE,
            entry_text(entry),
            store="scratch_page",
            item_ids=(entry.item_id,),
            phase=NAME,
            rank=rank,
            position=rank,
            score=entry.priority,
            created_at=entry.created_at,
        ),
    )


SPEC = PhaseSpec(
    name=NAME,
    run=run,
    budget_ms=50,
    needs=("turn_context",),
    reads=frozenset({"session"}),
    writes=frozenset({"loads"}),
)
