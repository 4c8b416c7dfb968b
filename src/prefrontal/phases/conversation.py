"""Phase 4, ``conversation``: recent turns, the rolling summary, the parent turn's outcome.

Recent turns are ranked newest first (the newest are kept when the budget is
short) and rendered oldest first, as a transcript.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import anyio

from prefrontal.bundle.models import Fragment, Section
from prefrontal.config import PhaseName
from prefrontal.phases.fragments import fragment, loaded
from prefrontal.phases.spec import PhaseSpec
from prefrontal.phases.state import PhaseOutcome, TurnState
from prefrontal.phases.store_calls import call_store, list_of
from prefrontal.stores.conversation import ConversationSummary, ConversationTurn
from prefrontal.traces.models import TurnTrace

NAME: PhaseName = "conversation"


def turn_line(turn: ConversationTurn) -> str:
    """``Speaker: text`` (the role when the turn names no speaker)."""
    return f"{turn.speaker or turn.role.value}: {turn.content}"


def summary_text(summary: ConversationSummary) -> str:
    """The rolling summary with its topics and decisions."""
    parts = [f"Summary so far: {summary.text}"]
    if summary.topics:
        parts.append("Topics: " + ", ".join(summary.topics))
    if summary.decisions:
        parts.append("Decisions: " + "; ".join(summary.decisions))
    return "\n".join(parts)


def parent_text(trace: TurnTrace) -> str:
    """What the parent turn left unfinished: its status, errors and warnings."""
    parts = [f"Previous turn {trace.turn_id} ended {trace.status.value}."]
    parts.extend(f"Error in {e.store or 'turn'}: {e.message}" for e in trace.errors[:3])
    parts.extend(f"Warning: {w}" for w in trace.warnings[:3])
    return " ".join(parts)


def still_recent(turn: TurnState, turns: list[ConversationTurn]) -> list[ConversationTurn]:
    """``turns`` less those of other sessions said before the turn's recent window."""
    window = turn.config.conversation.recent_window_s
    if window is None:
        return turns
    since = turn.context.started_at - timedelta(seconds=window)
    session = turn.context.session_id
    return [t for t in turns if t.session_id == session or t.created_at >= since]


async def _load(
    turn: TurnState,
) -> tuple[list[ConversationTurn], ConversationSummary | None, TurnTrace | None]:
    store, tenant, parent = turn.stores.conversation, turn.tenant, turn.context.parent_turn_id
    recent: list[ConversationTurn] = []
    summary: ConversationSummary | None = None
    trace: TurnTrace | None = None

    async def load_recent() -> None:
        nonlocal recent
        recent = await call_store(
            turn, NAME, lambda: store.recent(tenant, limit=turn.config.conversation.recent_turns)
        )

    async def load_summary() -> None:
        nonlocal summary
        summary = await call_store(turn, NAME, lambda: store.get_summary(tenant))

    async def load_parent() -> None:
        nonlocal trace
        if parent is not None:
            trace = await call_store(turn, NAME, lambda: turn.stores.traces.get(tenant, parent))

    async with anyio.create_task_group() as tg:
        for load in (load_recent, load_summary, load_parent):
            tg.start_soon(load)
    return recent, summary, trace


async def run(turn: TurnState) -> PhaseOutcome:
    """Load the recent transcript, summary and parent outcome as fragments."""
    found, summary, parent = await _load(turn)
    recent = still_recent(turn, list_of(found, ConversationTurn, NAME))
    turn.recent_turns = recent
    fragments: list[Fragment] = []
    if summary is not None:
        ids = (f"summary:{summary.agent_id}:{summary.user_id}",)
        fragments.append(_fragment(turn, summary_text(summary), ids, rank=0, position=-2))
    if parent is not None:
        fragments.append(
            _fragment(turn, parent_text(parent), (f"trace:{parent.turn_id}",), rank=1, position=-1)
        )
    for index, item in enumerate(recent):
        newest_rank = 2 + len(recent) - 1 - index
        fragments.append(
            _fragment(
                turn,
                turn_line(item),
                (item.item_id,),
                rank=newest_rank,
                position=index,
                created_at=item.created_at,
                role=item.role.value,
            )
        )
    turn.loads[Section.CONVERSATION] = fragments
    count, tokens = loaded(fragments)
    missing = turn.context.parent_turn_id is not None and parent is None
    warnings = (f"parent turn {turn.context.parent_turn_id} has no trace",) if missing else ()
    return PhaseOutcome(items_loaded=count, tokens_loaded=tokens, warnings=warnings)


def _fragment(
    turn: TurnState,
    text: str,
    ids: tuple[str, ...],
    *,
    rank: int,
    position: float,
    created_at: datetime | None = None,
    role: str | None = None,
) -> Fragment:
    return fragment(
        turn,
        Section.CONVERSATION,
        text,
        store="conversation",
        item_ids=ids,
        phase=NAME,
        rank=rank,
        position=position,
        created_at=created_at,
        role=role,
    )


SPEC = PhaseSpec(
    name=NAME,
    run=run,
    budget_ms=100,
    needs=("turn_context",),
    writes=frozenset({"loads", "recent_turns"}),
)
