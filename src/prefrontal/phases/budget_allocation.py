"""Phase 8, ``budget_allocation``: split the token budget across what was loaded.

A section's demand is what its fragments would cost rendered (text, line
breaks, its header). A section that failed, timed out or found nothing asks
for nothing, so its share flows to the others: to the memory sections first
(``memory_first``), whose search is what gains from more room.
"""

from __future__ import annotations

from prefrontal.budgets.leftovers import memory_first
from prefrontal.bundle.models import Fragment, Section
from prefrontal.bundle.render import section_header
from prefrontal.config import PhaseName
from prefrontal.phases.spec import PhaseSpec
from prefrontal.phases.state import PhaseOutcome, TurnState

NAME: PhaseName = "budget_allocation"
LINE_BREAK_TOKENS = 1
SECTION_BREAK_TOKENS = 2


def header_cost(turn: TurnState, section: Section) -> int:
    """Tokens of a section's header and the break before it."""
    return turn.count(section_header(section)) + SECTION_BREAK_TOKENS


def fragment_cost(fragment: Fragment) -> int:
    """Tokens a fragment adds when rendered on its own line."""
    return fragment.tokens + LINE_BREAK_TOKENS


def demand(turn: TurnState, section: Section, fragments: list[Fragment]) -> int:
    """What a section would cost with every fragment it loaded (0 when it has none)."""
    if not fragments:
        return 0
    return header_cost(turn, section) + sum(fragment_cost(f) for f in fragments)


async def run(turn: TurnState) -> PhaseOutcome:
    """Compute demands and allocate the turn's budget under its policy."""
    turn.demands = {s.value: demand(turn, s, turn.loads.get(s, [])) for s in Section}
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
