"""The orchestrator: requests in, context bundles and traces out."""

from prefrontal.orchestrator.orchestrator import Orchestrator
from prefrontal.turn import (
    OrchestratorConfig,
    TurnContext,
    TurnRequest,
    TurnResult,
    WorkingMemoryItemView,
    WorkingMemoryView,
)

__all__ = [
    "Orchestrator",
    "OrchestratorConfig",
    "TurnContext",
    "TurnRequest",
    "TurnResult",
    "WorkingMemoryItemView",
    "WorkingMemoryView",
]
