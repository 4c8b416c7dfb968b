"""prefrontal: an LLM agent's working memory, assembled at the start of every turn.

``await Orchestrator(stores).start_turn(TurnRequest(...))`` runs eleven timed,
cancellable phases over pluggable stores and returns a token-bounded,
provenance-tagged :class:`ContextBundle` and a :class:`TurnTrace`.
"""

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
