"""The eleven phases of a turn, in the specification's order: one tuple.

Each phase is a small module with an async ``run(turn) -> PhaseOutcome``;
``PHASES`` says which needs which. Phases 2, 3, 4 and 7 need only phase 1
and load concurrently; 5 and 6 need 3 and 4 (their query uses goals and the
recent conversation); 8-11 are assembly on what arrived.
"""

from prefrontal.config import PhaseName
from prefrontal.phases import (
    budget_allocation,
    consciousness,
    context_assembly,
    conversation,
    episodic,
    finalize,
    frontal_cortex,
    scratch_page,
    semantic,
    turn_context,
    working_memory_init,
)
from prefrontal.phases.spec import PhaseSpec
from prefrontal.phases.state import PhaseOutcome, TurnState

LOADING: tuple[PhaseName, ...] = (
    "consciousness",
    "frontal_cortex",
    "conversation",
    "episodic",
    "semantic",
    "scratch_page",
)

PHASES: tuple[PhaseSpec, ...] = (
    PhaseSpec(1, "turn_context", (), True, turn_context.run, 50),
    PhaseSpec(2, "consciousness", ("turn_context",), True, consciousness.run, 100),
    PhaseSpec(3, "frontal_cortex", ("turn_context",), True, frontal_cortex.run, 100),
    PhaseSpec(4, "conversation", ("turn_context",), True, conversation.run, 100),
    PhaseSpec(5, "episodic", ("frontal_cortex", "conversation"), True, episodic.run, 150),
    PhaseSpec(6, "semantic", ("frontal_cortex", "conversation"), True, semantic.run, 150),
    PhaseSpec(7, "scratch_page", ("turn_context",), True, scratch_page.run, 50),
    PhaseSpec(8, "budget_allocation", LOADING, False, budget_allocation.run, 50),
    PhaseSpec(9, "context_assembly", ("budget_allocation",), False, context_assembly.run, 50),
    PhaseSpec(10, "working_memory_init", ("context_assembly",), False, working_memory_init.run, 50),
    PhaseSpec(11, "finalize", ("working_memory_init",), False, finalize.run, 50),
)

PHASE_NAMES: tuple[PhaseName, ...] = tuple(p.name for p in PHASES)

__all__ = ["PHASES", "PHASE_NAMES", "PhaseOutcome", "PhaseSpec", "TurnState"]
