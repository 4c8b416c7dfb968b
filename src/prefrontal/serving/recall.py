"""Session recall: an explicit search for a session, whose hits join its working memory.

An explicit search always searches: a memory stored a moment ago is found.
The recall gate (:meth:`~prefrontal.buffer.SessionBuffer.recall_gate`)
serves turns only: phases 5 and 6 may reuse what the session's buffer holds
while a conversation stays on one topic, but a caller who asks for a search
(``/v1/memories/search`` with a ``session_id``, the MCP ``recall`` tool) gets
one. :func:`session_recall` runs a full recall through the memory API and
puts the hits in the session's buffer (activates them) as fragments of the
turn, so that the session's next turn can reuse them; the buffer is saved.
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
    SessionBuffer,
)
from prefrontal.formation import episodic_keeper
from prefrontal.orchestrator import Orchestrator
from prefrontal.serving.models import MemoryOut, RecallOut
from prefrontal.stores.long_term import ScoredMemory
from prefrontal.stores.tenancy import Tenant
from prefrontal.stores.working_memory import SessionKey


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
    """Memories for ``query``: always a full recall, its hits activated in the session's buffer.

    ``clock`` is the orchestrator's clock (the moment of the search and of
    the save); ``counter`` counts the activated items' tokens.
    """
    config = orchestrator.config
    stores = orchestrator.stores
    now = clock()
    key = SessionKey(agent_id=tenant.agent_id, user_id=tenant.user_id, session_id=session_id)
    session = await SessionBuffer.load(
        stores.working_memory,
        key,
        config=config.buffer,
        count_tokens=counter.count,
        clock=clock,
        max_attempts=config.writes.save_attempts,
        keeper=episodic_keeper(stores.episodic, key),
    )
    hits = await orchestrator.memory.recall(tenant, query, top_k=top_k)
    await _activate(orchestrator, session, tenant, query, hits, now)
    await session.save(now)
    return RecallOut(
        mode="search",
        reason="explicit",
        memories=tuple(MemoryOut.of(hit.item, hit.score) for hit in hits),
    )


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
