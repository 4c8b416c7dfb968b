"""prefrontal: an LLM agent's working memory, assembled at the start of every turn.

``await Orchestrator(stores).start_turn(TurnRequest(...))`` runs eleven timed,
cancellable phases over pluggable stores and returns a token-bounded,
provenance-tagged :class:`ContextBundle` and a :class:`TurnTrace`.

Importing the package is cheap: each exported name is imported from its
module the first time it is used (PEP 562 ``__getattr__``), so ``import
prefrontal`` loads neither the stores, numpy, structlog nor the pydantic
models until something needs them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prefrontal.agents import AgentStateAPI
    from prefrontal.budgets.policy import BudgetPolicy, SectionRule, allocate, default_policy
    from prefrontal.budgets.tokens import TokenCounter
    from prefrontal.buffer.config import BufferConfig, OverflowPolicy
    from prefrontal.bundle.models import ContextBundle, Fragment, Provenance, Section
    from prefrontal.config import (
        AdmissionConfig,
        ConversationConfig,
        FrontalCortexConfig,
        OrchestratorConfig,
        PhaseName,
        RecallConfig,
        ScratchPageConfig,
        WritesConfig,
    )
    from prefrontal.errors import (
        AgentFileError,
        BudgetBelowFloorError,
        BudgetError,
        ConfigurationError,
        ConflictError,
        DatasetError,
        ItemRejectedError,
        NotFoundError,
        OverloadedError,
        PrefrontalError,
        StoreError,
        TransientStoreError,
        WorkingMemoryError,
    )
    from prefrontal.exchange import (
        EndTurnConfig,
        EndTurnResult,
        ExchangeView,
        Extracted,
        ExtractiveSummarizer,
        Extractor,
        Summarizer,
        ToolCall,
    )
    from prefrontal.gc_tuning import tune_gc
    from prefrontal.memory import ErasureReport, MemoryAPI
    from prefrontal.orchestrator import Orchestrator
    from prefrontal.retrieval.settings import RecallSettings, RerankWeights
    from prefrontal.stores.set import Stores
    from prefrontal.traces.models import PhaseRecord, PhaseStatus, TurnEnding, TurnStatus, TurnTrace
    from prefrontal.turn import (
        TurnContext,
        TurnRequest,
        TurnResult,
        WorkingMemoryItemView,
        WorkingMemoryView,
    )

_HOMES: dict[str, str] = {
    "AdmissionConfig": "prefrontal.config",
    "AgentFileError": "prefrontal.errors",
    "AgentStateAPI": "prefrontal.agents",
    "BudgetBelowFloorError": "prefrontal.errors",
    "BudgetError": "prefrontal.errors",
    "BudgetPolicy": "prefrontal.budgets.policy",
    "BufferConfig": "prefrontal.buffer.config",
    "ConfigurationError": "prefrontal.errors",
    "ConflictError": "prefrontal.errors",
    "ContextBundle": "prefrontal.bundle.models",
    "ConversationConfig": "prefrontal.config",
    "DatasetError": "prefrontal.errors",
    "EndTurnConfig": "prefrontal.exchange",
    "EndTurnResult": "prefrontal.exchange",
    "ErasureReport": "prefrontal.memory",
    "ExchangeView": "prefrontal.exchange",
    "Extracted": "prefrontal.exchange",
    "ExtractiveSummarizer": "prefrontal.exchange",
    "Extractor": "prefrontal.exchange",
    "Fragment": "prefrontal.bundle.models",
    "FrontalCortexConfig": "prefrontal.config",
    "ItemRejectedError": "prefrontal.errors",
    "MemoryAPI": "prefrontal.memory",
    "NotFoundError": "prefrontal.errors",
    "Orchestrator": "prefrontal.orchestrator",
    "OrchestratorConfig": "prefrontal.config",
    "OverflowPolicy": "prefrontal.buffer.config",
    "OverloadedError": "prefrontal.errors",
    "PhaseName": "prefrontal.config",
    "PhaseRecord": "prefrontal.traces.models",
    "PhaseStatus": "prefrontal.traces.models",
    "PrefrontalError": "prefrontal.errors",
    "Provenance": "prefrontal.bundle.models",
    "RecallConfig": "prefrontal.config",
    "RecallSettings": "prefrontal.retrieval.settings",
    "RerankWeights": "prefrontal.retrieval.settings",
    "ScratchPageConfig": "prefrontal.config",
    "Section": "prefrontal.bundle.models",
    "SectionRule": "prefrontal.budgets.policy",
    "StoreError": "prefrontal.errors",
    "Stores": "prefrontal.stores.set",
    "Summarizer": "prefrontal.exchange",
    "TokenCounter": "prefrontal.budgets.tokens",
    "ToolCall": "prefrontal.exchange",
    "TransientStoreError": "prefrontal.errors",
    "TurnContext": "prefrontal.turn",
    "TurnEnding": "prefrontal.traces.models",
    "TurnRequest": "prefrontal.turn",
    "TurnResult": "prefrontal.turn",
    "TurnStatus": "prefrontal.traces.models",
    "TurnTrace": "prefrontal.traces.models",
    "WorkingMemoryError": "prefrontal.errors",
    "WorkingMemoryItemView": "prefrontal.turn",
    "WorkingMemoryView": "prefrontal.turn",
    "WritesConfig": "prefrontal.config",
    "allocate": "prefrontal.budgets.policy",
    "default_policy": "prefrontal.budgets.policy",
    "tune_gc": "prefrontal.gc_tuning",
}
"""The module each exported name lives in."""

__all__ = [
    "AdmissionConfig",
    "AgentFileError",
    "AgentStateAPI",
    "BudgetBelowFloorError",
    "BudgetError",
    "BudgetPolicy",
    "BufferConfig",
    "ConfigurationError",
    "ConflictError",
    "ContextBundle",
    "ConversationConfig",
    "DatasetError",
    "EndTurnConfig",
    "EndTurnResult",
    "ErasureReport",
    "ExchangeView",
    "Extracted",
    "ExtractiveSummarizer",
    "Extractor",
    "Fragment",
    "FrontalCortexConfig",
    "ItemRejectedError",
    "MemoryAPI",
    "NotFoundError",
    "Orchestrator",
    "OrchestratorConfig",
    "OverflowPolicy",
    "OverloadedError",
    "PhaseName",
    "PhaseRecord",
    "PhaseStatus",
    "PrefrontalError",
    "Provenance",
    "RecallConfig",
    "RecallSettings",
    "RerankWeights",
    "ScratchPageConfig",
    "Section",
    "SectionRule",
    "StoreError",
    "Stores",
    "Summarizer",
    "TokenCounter",
    "ToolCall",
    "TransientStoreError",
    "TurnContext",
    "TurnEnding",
    "TurnRequest",
    "TurnResult",
    "TurnStatus",
    "TurnTrace",
    "WorkingMemoryError",
    "WorkingMemoryItemView",
    "WorkingMemoryView",
    "WritesConfig",
    "allocate",
    "default_policy",
    "tune_gc",
]


if not TYPE_CHECKING:  # type checkers see the imports above, so a misspelt name stays an error

    def __getattr__(name: str) -> Any:
        """Import an exported name from its module on first use and keep it on the package."""
        home = _HOMES.get(name)
        if home is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        """The package's names, the lazily imported ones included."""
        return sorted({*globals(), *__all__})
