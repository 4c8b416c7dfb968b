"""The eleven phases of a turn, in the specification's order: one tuple.

Each phase is a small module with an async ``run(turn) -> PhaseOutcome`` and
its ``SPEC``: what it waits for, what it reads and writes, its time budget
(:class:`~prefrontal.phases.spec.PhaseSpec`). ``PHASES`` orders them; a
phase's index is its place in the tuple. Phases 2, 3, 4 and 7 need only
phase 1 and load concurrently; 5 and 6 wait for what their queries use
(goals, the recent conversation, and for 5 the agent's mode); 8-11 are
assembly on what arrived. The contract is checked on import
(:func:`~prefrontal.phases.contract.check`).
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
from prefrontal.phases.contract import check
from prefrontal.phases.spec import PhaseSpec, StateField
from prefrontal.phases.state import PhaseOutcome, TurnState

PHASES: tuple[PhaseSpec, ...] = (
    turn_context.SPEC,
    consciousness.SPEC,
    frontal_cortex.SPEC,
    conversation.SPEC,
    episodic.SPEC,
    semantic.SPEC,
    scratch_page.SPEC,
    budget_allocation.SPEC,
    context_assembly.SPEC,
    working_memory_init.SPEC,
    finalize.SPEC,
)
check(PHASES)

PHASE_NAMES: tuple[PhaseName, ...] = tuple(p.name for p in PHASES)
PHASE_INDEX: dict[PhaseName, int] = {name: i for i, name in enumerate(PHASE_NAMES, start=1)}
"""Each phase's number: its place in ``PHASES``, from 1."""
LOADING: tuple[PhaseName, ...] = tuple(p.name for p in PHASES if p.loads)

__all__ = [
    "LOADING",
    "PHASES",
    "PHASE_INDEX",
    "PHASE_NAMES",
    "PhaseOutcome",
    "PhaseSpec",
    "StateField",
    "TurnState",
]
