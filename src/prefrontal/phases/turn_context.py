"""Phase 1, ``turn_context``: the turn's identity is set; the session's buffer is loaded.

The turn context itself (ULID, ids, clock, empty budget) is built before the
runner starts, so that every phase and the trace share it; this phase loads
the session's saved working-memory state so that the memory phases can tell
what the buffer already holds.
"""

from __future__ import annotations

from prefrontal.phases.state import PhaseOutcome, TurnState
from prefrontal.phases.store_calls import call_store

NAME = "turn_context"


async def run(turn: TurnState) -> PhaseOutcome:
    """Load the session's working-memory state (``None`` for a new session)."""
    key = turn.session_key
    turn.session = await call_store(turn, NAME, lambda: turn.stores.working_memory.load(key))
    held = len(turn.session.state.get("items", [])) if turn.session else 0
    return PhaseOutcome(
        items_loaded=held,
        detail={"turn_id": turn.context.turn_id, "new_session": turn.session is None},
    )
