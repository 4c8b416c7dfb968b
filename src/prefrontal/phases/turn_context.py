"""Phase 1, ``turn_context``: the turn's identity is set; the session's buffer is loaded.

The turn context itself (ULID, ids, clock, empty budget) is built before the
runner starts, so that every phase and the trace share it; this phase loads
the session's working-memory buffer so that the memory phases can tell what
it already holds (and reuse it while the topic continues), and offers the
agent's own items in it (tool results, reflections, notes) as the context's
working-notes section. Before it loads the buffer it starts the store reads
of phases 2, 3 and 4, which do not depend on it, and for a new session the
read of the user's recent sessions that phase 10 links it to, each beside
the loading phases (:mod:`prefrontal.phases.ahead`): so the working-memory
store's latency is not added to theirs on the turn's critical path. First of
all, a working-memory store that offers ``prefetch_turn`` (PostgreSQL's) reads
those reads' state together in one round trip, then serves them from it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from prefrontal.buffer import SessionBuffer
from prefrontal.bundle.models import Section
from prefrontal.config import PhaseName
from prefrontal.phases import consciousness, conversation, frontal_cortex
from prefrontal.phases.ahead import start_ahead
from prefrontal.phases.session import load_session, note_fragments
from prefrontal.phases.spec import PhaseSpec
from prefrontal.phases.state import PhaseOutcome, TurnState
from prefrontal.phases.store_calls import call_store
from prefrontal.stores.working_memory import SessionState

NAME: PhaseName = "turn_context"
SESSION_WAIT_BUDGETS = 4
"""How many of its time budgets phase 1 waits for the session's buffer (200 ms by default)."""
LINKING_PHASE: PhaseName = "working_memory_init"
AHEAD_OF_THE_SESSION: dict[PhaseName, Callable[[TurnState], Callable[[], Awaitable[Any]]]] = {
    consciousness.NAME: consciousness.read,
    frontal_cortex.NAME: frontal_cortex.read,
    conversation.NAME: conversation.read,
}
"""The phases whose store reads phase 1 starts before it loads the buffer, and those reads."""
LINKING_SLACK = 2.0
"""A new session's read of recent sessions gets twice phase 10's budget, as phase 10 would."""


async def run(turn: TurnState) -> PhaseOutcome:
    """Load the session's buffer (a new, empty one for a new session) and its working notes.

    Items that faded out since the last turn go first, so that the notes
    offered to this turn's context are the ones still alive. Every loading
    phase waits for this one, so the wait for the working-memory store is
    bounded (``SESSION_WAIT_BUDGETS`` times this phase's budget): a store
    that hangs times this phase out, and the others load without the buffer.
    """
    await _prefetch(turn)
    _start_loading_ahead(turn)
    with anyio.fail_after(turn.budgets_ms[NAME] * SESSION_WAIT_BUDGETS / 1_000):
        turn.buffer = await load_session(turn, NAME)
    turn.session = turn.buffer.state
    if turn.buffer.is_new:
        turn.linking = start_ahead(
            turn.spawn, _recent_sessions(turn, turn.buffer), _linking_seconds(turn)
        )
    faded = await turn.buffer.expire(now=turn.context.started_at)
    notes = note_fragments(turn)
    turn.loads[Section.WORKING_MEMORY] = notes
    return PhaseOutcome(
        items_loaded=len(turn.buffer.items),
        tokens_loaded=turn.buffer.total_tokens,
        detail={
            "turn_id": turn.context.turn_id,
            "new_session": turn.buffer.is_new,
            "concurrency": "sequential" if turn.spawn is None else "graph",
            "buffer_version": turn.buffer.version,
            "notes": len(notes),
            "faded": len(faded),
            "promoted": [e.promoted_to for e in faded if e.promoted_to is not None],
        },
    )


async def _prefetch(turn: TurnState) -> None:
    """Let the working-memory store read the turn's state in one round trip before the reads
    start, when it offers to (an optional ``prefetch_turn``, PostgreSQL's); it waits at most
    as long as the buffer's load may, and a read it missed is made as usual."""
    prefetch = getattr(turn.stores.working_memory, "prefetch_turn", None)
    if prefetch is None:
        return
    context = turn.context
    await prefetch(
        turn.session_key,
        parent_turn_id=context.parent_turn_id,
        now=context.started_at,
        seconds=turn.budgets_ms[NAME] * SESSION_WAIT_BUDGETS / 1_000,
    )


def _start_loading_ahead(turn: TurnState) -> None:
    """Start the store reads of phases 2, 3 and 4 (they do not need the buffer), in graph mode.

    Where nothing can run beside the phases (no spawn), no read is even made ready.
    """
    if turn.spawn is None:
        return
    seconds = turn.seconds_left()
    for name, read in AHEAD_OF_THE_SESSION.items():
        ahead = start_ahead(turn.spawn, read(turn), seconds)
        if ahead is not None:
            turn.loading[name] = ahead


def _recent_sessions(
    turn: TurnState, buffer: SessionBuffer
) -> Callable[[], Awaitable[list[SessionState]]]:
    """The read of the user's recent sessions phase 10 links a new session to (counted there)."""
    at = turn.context.started_at

    async def read() -> list[SessionState]:
        return await call_store(turn, LINKING_PHASE, lambda: buffer.recent_sessions(now=at))

    return read


def _linking_seconds(turn: TurnState) -> float:
    """As long as phase 10 would give the read itself: twice its budget."""
    return turn.budgets_ms[LINKING_PHASE] * LINKING_SLACK / 1_000


SPEC = PhaseSpec(
    name=NAME,
    run=run,
    budget_ms=50,
    writes=frozenset({"buffer", "linking", "loading", "loads", "session"}),
)
