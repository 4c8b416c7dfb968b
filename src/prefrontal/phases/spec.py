"""``PhaseSpec``: a phase's name, what it waits for, reads and writes, and its time budget.

Each phase module declares its own ``SPEC``; :data:`prefrontal.phases.PHASES`
orders them, and :func:`prefrontal.phases.contract.check` checks the whole
graph when the package is imported.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal

from prefrontal.config import PhaseName
from prefrontal.phases.state import PhaseOutcome, TurnState

__all__ = ["PhaseSpec", "StateField"]

StateField = Literal[
    "session",
    "buffer",
    "linking",
    "loading",
    "profile",
    "frontal_items",
    "recent_turns",
    "loads",
    "pin",
    "demands",
    "allocation",
    "sections",
    "bundle",
    "dropped",
    "working_memory",
    "saving",
    "trace",
]
"""The fields of :class:`~prefrontal.phases.state.TurnState` that phases produce.

Everything else on the turn (request, context, config, policy, stores,
counter, clock, budgets) is there before the first phase runs; the runner's
own bookkeeping (records, attempts, start times) is not a phase's output.
"""


@dataclass(frozen=True, slots=True)
class PhaseSpec:
    """One phase of the turn and its contract.

    ``needs`` names the phases this one waits for: the runner starts it when
    they have ended (however they ended). ``reads`` are the turn's fields it
    uses, ``writes`` those it fills; every phase that writes a field this one
    reads must be among the phases it waits for, directly or not, so that
    what it reads does not depend on which phase finished first. ``loads``
    marks the phases that read stores for context (1-7): at the deadline
    those still running are cancelled, and the others (8-11) run on what
    arrived.
    """

    name: PhaseName
    run: Callable[[TurnState], Awaitable[PhaseOutcome]]
    budget_ms: float
    """The specification's time budget (``OrchestratorConfig.phase_budgets_ms`` overrides it)."""
    needs: tuple[PhaseName, ...] = ()
    reads: frozenset[StateField] = frozenset()
    writes: frozenset[StateField] = frozenset()
    loads: bool = True
