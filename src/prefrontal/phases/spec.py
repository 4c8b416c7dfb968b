"""``PhaseSpec``: a phase's name, what it needs, whether the deadline may cut it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from prefrontal.config import PhaseName
from prefrontal.phases.state import PhaseOutcome, TurnState


@dataclass(frozen=True, slots=True)
class PhaseSpec:
    """One phase of the turn.

    ``needs`` names the phases whose output this one reads; the runner starts
    it when they have ended (however they ended). ``loads`` marks the phases
    that read stores for context (1-7): at the deadline those still running
    are cancelled, and the others (8-11) run on what arrived.
    """

    index: int
    name: PhaseName
    needs: tuple[PhaseName, ...]
    loads: bool
    run: Callable[[TurnState], Awaitable[PhaseOutcome]]
    budget_ms: float
    """The specification's time budget (``OrchestratorConfig.phase_budgets_ms`` overrides it)."""
