"""Phase 8, ``budget_allocation``: split the token budget across what was loaded.

A section's demand is what its fragments would cost rendered (text, line
breaks, its header: :mod:`prefrontal.bundle.costs`). A section that failed,
timed out or found nothing asks for nothing, so its share flows to the
others: to the memory sections first (``memory_first``), whose search is
what gains from more room.
"""

from __future__ import annotations

from prefrontal.budgets.leftovers import memory_first
from prefrontal.bundle.costs import demand
from prefrontal.bundle.models import Section
from prefrontal.config import PhaseName
from prefrontal.phases.spec import PhaseSpec
from prefrontal.phases.state import PhaseOutcome, TurnState

NAME: PhaseName = "budget_allocation"


async def run(turn: TurnState) -> PhaseOutcome:
    """Compute demands and allocate the turn's budget under its policy."""
    turn.demands = {s.value: demand(turn.count, s, turn.loads.get(s, [])) for s in Section}
    turn.allocation = memory_first(turn.policy, turn.demands)
    asked = sum(turn.demands.values())
    given = sum(turn.allocation.values())
    return PhaseOutcome(
        tokens_loaded=asked,
        tokens_dropped=max(asked - given, 0),
        detail={
            "available": turn.policy.available,
            "allocated": given,
            "reserve": turn.policy.reserve,
        },
    )


SPEC = PhaseSpec(
    name=NAME,
    run=run,
    budget_ms=50,
    needs=(
        "turn_context",
        "consciousness",
        "frontal_cortex",
        "conversation",
        "episodic",
        "semantic",
        "scratch_page",
    ),
    reads=frozenset({"loads"}),
    writes=frozenset({"allocation", "demands"}),
    loads=False,
)
