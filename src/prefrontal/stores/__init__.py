"""Store Protocols, their item models, and the :class:`Stores` set.

One Protocol per store kind, each with a narrow async surface; tenancy
(:class:`Tenant`, :class:`Scope`) is part of every query. Memory search is
ranked by the core (:func:`ranked_search`) over the candidates a backend's
optional capabilities find (:class:`LexicalSearch`, :class:`VectorSearch`).
Backends live in ``prefrontal.stores.memory`` (reference, in process),
``prefrontal.stores.sqlite`` (embedded default) and
``prefrontal.stores.postgres``; each durable one builds its own
:class:`Stores` (``open_stores``).
"""

from prefrontal.stores.capabilities import (
    KeyedItems,
    LexicalSearch,
    VectorSearch,
    ranked_search,
)
from prefrontal.stores.consciousness import (
    AgentProfile,
    Capability,
    ConsciousnessStore,
    Governance,
    Mode,
)
from prefrontal.stores.conversation import (
    ConversationStore,
    ConversationSummary,
    ConversationTurn,
    Role,
)
from prefrontal.stores.frontal_cortex import (
    FrontalCortexStore,
    FrontalItem,
    FrontalKind,
    FrontalQuery,
    FrontalStatus,
    Owner,
)
from prefrontal.stores.long_term import (
    MemoryItem,
    MemoryKind,
    MemoryQuery,
    MemoryStore,
    ScoredMemory,
)
from prefrontal.stores.scratch_page import Observation, ScratchKind, ScratchPageStore
from prefrontal.stores.session_items import SessionItemStore
from prefrontal.stores.set import STORE_KINDS, Stores
from prefrontal.stores.tenancy import Scope, Tenant, visible_to
from prefrontal.stores.traces import TraceQuery, TraceStore
from prefrontal.stores.working_memory import SessionKey, SessionState, WorkingMemoryStore

__all__ = [
    "STORE_KINDS",
    "AgentProfile",
    "Capability",
    "ConsciousnessStore",
    "ConversationStore",
    "ConversationSummary",
    "ConversationTurn",
    "FrontalCortexStore",
    "FrontalItem",
    "FrontalKind",
    "FrontalQuery",
    "FrontalStatus",
    "Governance",
    "KeyedItems",
    "LexicalSearch",
    "MemoryItem",
    "MemoryKind",
    "MemoryQuery",
    "MemoryStore",
    "Mode",
    "Observation",
    "Owner",
    "Role",
    "Scope",
    "ScoredMemory",
    "ScratchKind",
    "ScratchPageStore",
    "SessionItemStore",
    "SessionKey",
    "SessionState",
    "Stores",
    "Tenant",
    "TraceQuery",
    "TraceStore",
    "VectorSearch",
    "WorkingMemoryStore",
    "ranked_search",
    "visible_to",
]
