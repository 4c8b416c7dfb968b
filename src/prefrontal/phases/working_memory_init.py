"""Phase 10, ``working_memory_init``: refresh the session's buffer and save it.

This turn's fragments take the place of the last turn's; entries the agent
put there itself stay. The buffer is bounded by items and tokens; the
lowest-ranked entries go first. The save is optimistic: on a conflict the
state is reloaded and the refresh applied again.
"""

from __future__ import annotations

from typing import Any

from prefrontal.bundle.models import Fragment
from prefrontal.errors import ConflictError
from prefrontal.phases.state import PhaseOutcome, TurnState
from prefrontal.phases.store_calls import call_store
from prefrontal.stores.working_memory import SessionState
from prefrontal.turn import WorkingMemoryItemView, WorkingMemoryView

NAME = "working_memory_init"
CONTEXT_SOURCE = "context"


def entry(fragment: Fragment) -> dict[str, Any]:
    """A buffer entry for a context fragment."""
    ids = fragment.provenance.item_ids
    return {
        "item_id": f"{fragment.section.value}:{'|'.join(ids)}",
        "section": fragment.section.value,
        "text": fragment.text,
        "tokens": fragment.tokens,
        "source": CONTEXT_SOURCE,
        "source_ids": list(ids),
        "pinned": False,
    }


def refreshed(turn: TurnState, previous: SessionState | None) -> list[dict[str, Any]]:
    """Agent-held entries kept, this turn's fragments in, bounded by items and tokens."""
    held = [
        e
        for e in (previous.state.get("items", []) if previous else [])
        if e["source"] != CONTEXT_SOURCE
    ]
    fresh = [
        entry(f) for f in sorted(turn.bundle.fragments if turn.bundle else (), key=lambda f: f.rank)
    ]
    kept: list[dict[str, Any]] = []
    tokens = 0
    for candidate in held + fresh:
        if (
            len(kept) < turn.config.buffer_max_items
            and tokens + candidate["tokens"] <= turn.config.buffer_max_tokens
        ):
            kept.append(candidate)
            tokens += candidate["tokens"]
    return kept


async def _save(turn: TurnState) -> SessionState:
    store, key = turn.stores.working_memory, turn.session_key
    previous = turn.session
    for _ in range(3):
        items = refreshed(turn, previous)
        state = SessionState(
            key=key, version=previous.version if previous else 0, state={"items": items}
        )
        if previous is not None:
            state = state.model_copy(update={"started_at": previous.started_at})
        try:
            return await _save_once(turn, state)
        except ConflictError:
            previous = await call_store(turn, NAME, lambda: store.load(key))
    raise ConflictError(
        f"session {key.session_id!r} kept changing under the turn", store="working_memory"
    )


async def _save_once(turn: TurnState, state: SessionState) -> SessionState:
    return await call_store(turn, NAME, lambda: turn.stores.working_memory.save(state))


async def run(turn: TurnState) -> PhaseOutcome:
    """Refresh and save the buffer; expose it on the turn."""
    saved = await _save(turn)
    items = saved.state["items"]
    turn.working_memory = WorkingMemoryView(
        items=tuple(
            WorkingMemoryItemView(
                item_id=e["item_id"],
                section=e["section"],
                tokens=e["tokens"],
                source=e["source"],
                pinned=e["pinned"],
            )
            for e in items
        ),
        total_tokens=sum(e["tokens"] for e in items),
        max_items=turn.config.buffer_max_items,
        max_tokens=turn.config.buffer_max_tokens,
    )
    offered = len(turn.bundle.fragments) if turn.bundle else 0
    return PhaseOutcome(
        items_loaded=len(items),
        tokens_loaded=turn.working_memory.total_tokens,
        items_dropped=max(offered - len(items), 0),
        detail={"version": saved.version},
    )
