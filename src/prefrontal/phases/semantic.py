"""Phase 6, ``semantic``: facts, skills and patterns that bear on this input.

The query is the key concepts of the input and the active goals. Duplicates
of episodic hits are removed at assembly, where both are known.
"""

from __future__ import annotations

from prefrontal.bundle.models import Section
from prefrontal.config import PhaseName
from prefrontal.phases.recall import input_text, load_section
from prefrontal.phases.spec import PhaseSpec
from prefrontal.phases.state import PhaseOutcome, TurnState

NAME: PhaseName = "semantic"


def concept_query(turn: TurnState) -> dict[str, str]:
    """The input, and the titles of the active goals as its context."""
    return {
        "input": input_text(turn),
        "context": "\n".join(i.title for i in turn.frontal_items[:3]),
    }


async def run(turn: TurnState) -> PhaseOutcome:
    """Search semantic memory for the input's concepts and rank what it finds."""
    query = concept_query(turn)
    recall = turn.config.recall
    return await load_section(
        turn,
        turn.stores.semantic,
        Section.SEMANTIC,
        NAME,
        query,
        recall.semantic_candidates,
        recall.semantic_weights,
    )


SPEC = PhaseSpec(
    name=NAME,
    run=run,
    budget_ms=150,
    needs=("frontal_cortex", "conversation"),
    reads=frozenset({"buffer", "frontal_items"}),
    writes=frozenset({"loads"}),
)
