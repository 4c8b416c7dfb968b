"""Phase 4, ``conversation``: recent turns, the rolling summary, the parent turn's outcome.

Recent turns are ranked newest first (the newest are kept when the budget is
short) and rendered oldest first, as a transcript.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta

from prefrontal.buffer.summarizer import fit_tokens
from prefrontal.bundle.fence import as_data, speaker_label
from prefrontal.bundle.models import Fragment, Section
from prefrontal.config import PhaseName
from prefrontal.phases.ahead import taken
from prefrontal.phases.fragments import fragment, loaded, made_once
from prefrontal.phases.spec import PhaseSpec
from prefrontal.phases.state import PhaseOutcome, TurnState
from prefrontal.phases.store_calls import call_store, list_of
from prefrontal.phases.together import run_together
from prefrontal.stores.conversation import ConversationSummary, ConversationTurn
from prefrontal.traces.models import TurnTrace

NAME: PhaseName = "conversation"
SUMMARY_SEPARATOR = " · "
"""Between the summary, its topics and its decisions: a data fragment is one line."""
Loaded = tuple[list[ConversationTurn], "ConversationSummary | None", "TurnTrace | None"]
"""What the phase reads: the recent messages, the rolling summary, the parent turn's trace."""


def turn_line(turn: ConversationTurn) -> str:
    """``Speaker: text`` (the role when the turn names no speaker), both as data."""
    speaker = speaker_label(turn.speaker) if turn.speaker else turn.role.value
    return f"{speaker}: {inline(turn.content)}"


def inline(text: str) -> str:
    """Untrusted ``text`` as data after a label on the same line."""
    return as_data(text, opens_line=False)


def summary_text(summary: ConversationSummary) -> str:
    """The rolling summary with its topics and decisions, each written as data, on one line."""
    parts = [f"Summary so far: {inline(summary.text)}"]
    if summary.topics:
        parts.append("Topics: " + ", ".join(map(inline, summary.topics)))
    if summary.decisions:
        parts.append("Decisions: " + "; ".join(map(inline, summary.decisions)))
    return SUMMARY_SEPARATOR.join(parts)


def parent_text(trace: TurnTrace) -> str:
    """What the parent turn left unfinished: its status (or outcome) and the tools it used.

    Empty when the parent ended with nothing to say beyond its exchange. The
    parent's errors and warnings are diagnostics: they stay in its trace and
    are never rendered into the model's context.
    """
    ending = trace.ending
    if ending is None:
        return f"The previous turn ended {trace.status.value}."
    parts: list[str] = []
    if ending.outcome:
        parts.append(f"Outcome of the previous turn: {inline(ending.outcome)}.")
    if ending.tool_calls:
        parts.append("Tools used: " + ", ".join(map(inline, ending.tool_calls)) + ".")
    return " ".join(parts)


def cut(text: str, max_tokens: int, count: Callable[[str], int]) -> str:
    """``text`` cut at a word to ``max_tokens`` tokens, with an ellipsis when cut."""
    kept = fit_tokens(text, max_tokens, count)
    return kept if kept == text else f"{kept} …"


def previous_exchange(
    turn: TurnState, parent: TurnTrace, recent: list[ConversationTurn]
) -> list[Fragment]:
    """The parent turn's exchange, its reply cut to ``reply_tokens``, ranked high.

    Messages of the exchange already in ``recent`` keep their place in the
    transcript; those missing (an earlier session, a short window) follow it.
    """
    ending = parent.ending
    if ending is None or parent.user_input is None:
        return []
    limit = turn.config.end_turn.reply_tokens
    held = {m.item_id: (k, m) for k, m in enumerate(recent)}
    user_id, reply_id = ending.message_ids[0], ending.message_ids[-1]
    said = (
        (user_id, "user", parent.user_input, parent.started_at),
        (reply_id, "assistant", cut(ending.reply, limit, turn.count), ending.ended_at),
    )
    fragments = []
    for extra, (item_id, role, text, at) in enumerate(said):
        position, speaker = len(recent) + extra, role
        if item_id in held:
            position, message = held[item_id]
            speaker = message.speaker or role
        fragments.append(
            _fragment(
                turn,
                f"{speaker_label(speaker)}: {inline(text)}",
                (item_id,),
                rank=1,
                position=position,
                created_at=at,
                role=role,
            )
        )
    return fragments


def still_recent(turn: TurnState, turns: list[ConversationTurn]) -> list[ConversationTurn]:
    """``turns`` less those of other sessions said before the turn's recent window."""
    window = turn.config.conversation.recent_window_s
    if window is None:
        return turns
    since = turn.context.started_at - timedelta(seconds=window)
    session = turn.context.session_id
    return [t for t in turns if t.session_id == session or t.created_at >= since]


def read(turn: TurnState) -> Callable[[], Awaitable[Loaded]]:
    """This phase's store reads, together (started ahead by phase 1 in graph mode)."""
    return lambda: _load(turn)


async def _load(turn: TurnState) -> Loaded:
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

    calls = [load_recent, load_summary, *([load_parent] if parent else [])]
    await run_together(calls, at_once=turn.overlap)
    return recent, summary, trace


async def run(turn: TurnState) -> PhaseOutcome:
    """Load the recent transcript, summary and parent outcome as fragments."""
    found, summary, parent = await taken(turn.loading.get(NAME), read(turn))
    recent = still_recent(turn, list_of(found, ConversationTurn, NAME))
    turn.recent_turns = recent
    fragments: list[Fragment] = []
    if summary is not None:
        fragments.append(summary_fragment(turn, summary))
    exchange = previous_exchange(turn, parent, recent) if parent is not None else []
    shown = {f.provenance.item_ids[0] for f in exchange}
    fragments.extend(exchange)
    note = parent_text(parent) if parent is not None else ""
    if parent is not None and note:
        fragments.append(_fragment(turn, note, (f"trace:{parent.turn_id}",), rank=1, position=-1))
    fragments.extend(
        message_fragment(turn, item, rank=2 + len(recent) - 1 - index, position=index)
        for index, item in enumerate(recent)
        if item.item_id not in shown
    )
    turn.loads[Section.CONVERSATION] = fragments
    count, tokens = loaded(fragments)
    missing = turn.context.parent_turn_id is not None and parent is None
    warnings = (f"parent turn {turn.context.parent_turn_id} has no trace",) if missing else ()
    return PhaseOutcome(items_loaded=count, tokens_loaded=tokens, warnings=warnings)


def summary_fragment(turn: TurnState, summary: ConversationSummary) -> Fragment:
    """The rolling summary's fragment, first of the section: made once for the same summary."""
    ids = (f"summary:{summary.agent_id}:{summary.user_id}",)
    return made_once(
        turn,
        summary,
        (NAME, "summary"),
        lambda: _fragment(turn, summary_text(summary), ids, rank=0, position=-2),
    )


def message_fragment(
    turn: TurnState, message: ConversationTurn, *, rank: int, position: int
) -> Fragment:
    """A recent message's transcript line: made once for the same message, rank and position."""
    return made_once(
        turn,
        message,
        (NAME, rank, position),
        lambda: _fragment(
            turn,
            turn_line(message),
            (message.item_id,),
            rank=rank,
            position=position,
            created_at=message.created_at,
            role=message.role.value,
        ),
    )


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
    reads=frozenset({"loading"}),
    writes=frozenset({"loads", "recent_turns"}),
)
