"""In-memory backends: the reference implementation of every store Protocol.

They keep everything in dictionaries, honour every contract of the
Protocols (tenancy, TTL, supersession, optimistic concurrency) and are what
tests and examples use. Nothing is persisted.
"""

from prefrontal.stores.memory.consciousness import InMemoryConsciousnessStore
from prefrontal.stores.memory.conversation import InMemoryConversationStore
from prefrontal.stores.memory.frontal_cortex import InMemoryFrontalCortexStore
from prefrontal.stores.memory.memory import InMemoryMemoryStore
from prefrontal.stores.memory.scratch_page import InMemoryScratchPageStore
from prefrontal.stores.memory.session_items import InMemorySessionItemStore
from prefrontal.stores.memory.traces import InMemoryTraceStore
from prefrontal.stores.memory.working_memory import InMemoryWorkingMemoryStore

__all__ = [
    "InMemoryConsciousnessStore",
    "InMemoryConversationStore",
    "InMemoryFrontalCortexStore",
    "InMemoryMemoryStore",
    "InMemoryScratchPageStore",
    "InMemorySessionItemStore",
    "InMemoryTraceStore",
    "InMemoryWorkingMemoryStore",
]
