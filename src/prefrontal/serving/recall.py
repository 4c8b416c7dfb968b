"""Session recall: search long-term memory only when the session's working memory lacks the topic.

A remote agent that calls a recall tool on every message pays a full search
each time, although while the conversation stays on one topic the session's
working-memory buffer already holds what the search would find. Before
searching, :func:`session_recall` asks the session's recall gate
(:meth:`~prefrontal.buffer.SessionBuffer.recall_gate`, the same gate phases 5
and 6 use) for the episodic and the semantic store: when both say the topic
continues, it returns the memories the buffer holds and searches nothing;
otherwise it runs a full recall through the memory API and puts the hits in
the buffer (activates them), so that the next recall on the same topic can
reuse them. The gate's counters (searches run and saved) are saved with the
session.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from prefrontal.budgets.tokens import TokenCounter
from prefrontal.buffer import (
    Focus,
    ItemProvenance,
    ItemSource,
    Lifetime,
    NewItem,
    RecallDecision,
    SessionBuffer,
)
from prefrontal.orchestrator import Orchestrator
from prefrontal.serving.models import MemoryOut, RecallOut
from prefrontal.stores.long_term import MemoryItem, MemoryStore, ScoredMemory
from prefrontal.stores.tenancy import Tenant
from prefrontal.stores.working_memory import SessionKey

GATED_STORES = ("episodic", "semantic")


async def session_recall(
    orchestrator: Orchestrator,
    tenant: Tenant,
    session_id: str,
    query: str,
    *,
    top_k: int = 10,
    clock: Callable[[], datetime],
    counter: TokenCounter,
) -> RecallOut:
    """Memories for ``query``: the buffer's when the topic continues, else a full recall.

    ``clock`` is the orchestrator's clock (the moment of the decision and of
    the save); ``counter`` counts the activated items' tokens.
    """
    config = orchestrator.config
    stores = orchestrator.stores
    now = clock()
    session = await SessionBuffer.load(
        stores.working_memory,
        SessionKey(agent_id=tenant.agent_id, user_id=tenant.user_id, session_id=session_id),
        config=config.buffer,
        count_tokens=counter.count,
        clock=clock,
        max_attempts=config.writes.save_attempts,
    )
    held = [name for name in GATED_STORES if session.buffer.held_memory_ids(name)]
    consulted = held or list(GATED_STORES)
    decisions = {
        name: await session.recall_gate(
            _store(orchestrator, name), name, query, now=now, min_overlap=config.recall.gate_overlap
        )
        for name in consulted
    }
    if all(decision.reuse for decision in decisions.values()):
        memories = await _held(orchestrator, tenant, decisions, now, top_k)
        await session.save(now)
        return RecallOut(mode="reuse", reason="topic_continues", memories=memories)
    hits = await orchestrator.memory.recall(tenant, query, top_k=top_k)
    await _activate(orchestrator, session, tenant, query, hits, now)
    await session.save(now)
    reason = next(d.reason for d in decisions.values() if not d.reuse)
    return RecallOut(
        mode="search",
        reason=reason,
        memories=tuple(MemoryOut.of(hit.item, hit.score) for hit in hits),
    )


def _store(orchestrator: Orchestrator, name: str) -> MemoryStore:
    stores = orchestrator.stores
    return stores.episodic if name == "episodic" else stores.semantic


async def _held(
    orchestrator: Orchestrator,
    tenant: Tenant,
    decisions: dict[str, RecallDecision],
    now: datetime,
    top_k: int,
) -> tuple[MemoryOut, ...]:
    """The live memory items the buffer holds, most important first."""
    found: list[MemoryItem] = []
    for name, decision in decisions.items():
        items = await _store(orchestrator, name).get(tenant, list(decision.held_ids))
        found.extend(item for item in items if item.is_live(now))
    ranked = sorted(found, key=lambda item: (-item.importance, item.item_id))
    return tuple(MemoryOut.of(item) for item in ranked[:top_k])


async def _activate(
    orchestrator: Orchestrator,
    session: SessionBuffer,
    tenant: Tenant,
    query: str,
    hits: list[ScoredMemory],
    now: datetime,
) -> None:
    """Put the hits in the session's buffer, under the store each came from."""
    ids = [hit.item.item_id for hit in hits]
    episodic = {item.item_id for item in await orchestrator.stores.episodic.get(tenant, ids)}
    focus = Focus(input_text=query)
    for hit in hits:
        store = "episodic" if hit.item.item_id in episodic else "semantic"
        score = min(max(hit.score, 0.0), 1.0)
        await session.add(
            NewItem(
                item_id=f"{store}:{hit.item.item_id}",
                content=hit.item.content,
                source=ItemSource.MEMORY_RETRIEVAL,
                priority=score,
                relevance=score,
                lifetime=Lifetime.TURN,
                provenance=ItemProvenance(
                    store=store, item_ids=(hit.item.item_id,), section=store, score=hit.score
                ),
            ),
            focus=focus,
            now=now,
        )
