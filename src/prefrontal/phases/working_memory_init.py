"""Phase 10, ``working_memory_init``: refresh the session's buffer for the save behind the turn.

This turn's fragments take the place of the last turn's (a fragment already
held is refreshed, not added twice); items the agent put there itself stay
under the buffer's eviction rules, and those the context showed as working
notes count as used. The buffer never exceeds its item and
token bounds. The trace detail explains it all: ``admitted`` and
``refreshed`` counts, ``refused`` with reasons, ``evicted`` as reason to
count and ``evictions`` listed, ``themes``, ``coherence`` and, on a
session's first turn, ``links`` to the user's recent sessions (read ahead by
phase 1 where the phases run concurrently), and
``base_version``, the version the buffer was loaded at.

The phase does not save: it leaves the refreshed buffer on the turn
(``saving``), and the orchestrator saves it behind the turn, with its trace
(:mod:`prefrontal.orchestrator.writes`). The save is optimistic: on a
conflict the newer state is reloaded and the turn's refresh replayed on it
(:class:`~prefrontal.buffer.SessionBuffer`), so concurrent turns of one
session merge rather than lose each other's updates.
"""

from __future__ import annotations

from collections import Counter

from prefrontal.buffer import RefreshReport, SessionBuffer, SessionLink
from prefrontal.bundle.models import Section
from prefrontal.config import PhaseName
from prefrontal.phases.session import focus_of, load_session, turn_offer, view
from prefrontal.phases.spec import PhaseSpec
from prefrontal.phases.state import PhaseOutcome, TurnState
from prefrontal.phases.store_calls import call_store

NAME: PhaseName = "working_memory_init"
DETAIL_LIMIT = 20
"""At most this many refusals and evictions are listed in the trace detail."""


async def run(turn: TurnState) -> PhaseOutcome:
    """Refresh the buffer with the bundle's fragments; leave it on the turn to be saved."""
    session = turn.buffer or await load_session(turn, NAME)
    at = turn.context.started_at
    context = turn.bundle.fragments if turn.bundle else ()
    notes = [f for f in context if f.section is Section.WORKING_MEMORY]
    for note in notes:
        await session.access(note.provenance.item_ids[0], now=at)
    turn_id = turn.context.turn_id
    fragments = [turn_offer(f, turn_id) for f in context if f.section is not Section.WORKING_MEMORY]
    report = await session.refresh_turn(fragments, focus=focus_of(turn), now=at, turn_id=turn_id)
    turn.saving = session  # saved behind the turn even when the links below are cut
    links = await _links_of(turn, session) if session.is_new else ()
    turn.working_memory = view(session, report, links)
    return PhaseOutcome(
        items_loaded=report.total_items,
        tokens_loaded=report.total_tokens,
        items_dropped=len(report.refused),
        tokens_dropped=sum(r.tokens for r in report.refused),
        detail={
            "base_version": session.version,
            "notes_used": len(notes),
            **_explain(report),
            "links": _links(links),
        },
    )


async def _links_of(turn: TurnState, session: SessionBuffer) -> tuple[SessionLink, ...]:
    """A new session's links: from the recent sessions read ahead, or read now."""
    at = turn.context.started_at
    recent = turn.linking.result() if turn.linking is not None else None
    if recent is None:
        return await call_store(turn, NAME, lambda: session.links(now=at))
    return session.links_among(recent, now=at)


def _links(links: tuple[SessionLink, ...]) -> list[dict[str, object]]:
    return [
        {
            "session_id": k.session_id,
            "relationship": k.relationship.value,
            "similarity": round(k.similarity, 4),
        }
        for k in links[:DETAIL_LIMIT]
    ]


def _explain(report: RefreshReport) -> dict[str, object]:
    """What the trace says about the refresh: counts, reasons, themes, coherence."""
    return {
        "admitted": len(report.admitted),
        "refreshed": len(report.refreshed),
        "refused": [
            {"item_id": r.item_id, "reason": r.reason} for r in report.refused[:DETAIL_LIMIT]
        ],
        "evicted": dict(Counter(e.reason.value for e in report.evicted)),
        "evictions": [
            {"item_id": e.item_id, "reason": e.reason.value, "detail": e.detail}
            for e in report.evicted[:DETAIL_LIMIT]
        ],
        "items": report.total_items,
        "themes": list(report.themes),
        "coherence": round(report.coherence.score, 4),
    }


SPEC = PhaseSpec(
    name=NAME,
    run=run,
    budget_ms=50,
    needs=("context_assembly",),
    reads=frozenset({"buffer", "bundle", "frontal_items", "linking"}),
    writes=frozenset({"working_memory", "saving"}),
    loads=False,
)
