"""Phase 5, ``episodic``: what happened that bears on this input.

The query is composite: the input, the active goals, the last exchanges of
the conversation and the current mode. Hits are reranked and those the turn
already holds are dropped.
"""

from __future__ import annotations

from prefrontal.bundle.models import Section
from prefrontal.config import PhaseName
from prefrontal.phases.recall import input_text, load_section
from prefrontal.phases.spec import PhaseSpec
from prefrontal.phases.state import PhaseOutcome, TurnState

NAME: PhaseName = "episodic"
CONTEXT_TURNS = 2


def composite_query(turn: TurnState) -> dict[str, str]:
    """The input (with its focus tags), and its context: goal titles, last exchanges, mode."""
    parts = [item.title for item in turn.frontal_items[:3]]
    parts.extend(t.content for t in turn.recent_turns[-CONTEXT_TURNS:])
    if turn.profile is not None and turn.profile.current_mode:
        parts.append(turn.profile.current_mode)
    return {"input": input_text(turn), "context": "\n".join(parts)}


async def run(turn: TurnState) -> PhaseOutcome:
    """Search episodic memory with the composite query and rank what it finds."""
    query = composite_query(turn)
    recall = turn.config.recall
    return await load_section(
        turn,
        turn.stores.episodic,
        Section.EPISODIC,
        NAME,
        query,
        recall.episodic_candidates,
        recall.episodic_weights,
    )


SPEC = PhaseSpec(
    name=NAME,
    run=run,
    budget_ms=150,
    needs=("consciousness", "frontal_cortex", "conversation"),
    reads=frozenset({"buffer", "frontal_items", "profile", "recent_turns"}),
    writes=frozenset({"loads"}),
)
