"""PostgreSQL backends: every store kind in one schema, shared by many processes.

The scale-out backend (asyncpg, a connection pool per process). Build them
all at once with :func:`open_stores`, or one by one on
a shared :class:`PostgresDatabase`.
"""

from prefrontal.stores.postgres.consciousness import PostgresConsciousnessStore
from prefrontal.stores.postgres.conversation import PostgresConversationStore
from prefrontal.stores.postgres.database import PostgresDatabase
from prefrontal.stores.postgres.frontal_cortex import PostgresFrontalCortexStore
from prefrontal.stores.postgres.memory import PostgresMemoryStore
from prefrontal.stores.postgres.open import open_stores
from prefrontal.stores.postgres.scratch_page import PostgresScratchPageStore
from prefrontal.stores.postgres.session_items import PostgresSessionItemStore
from prefrontal.stores.postgres.traces import PostgresTraceStore
from prefrontal.stores.postgres.working_memory import PostgresWorkingMemoryStore

__all__ = [
    "PostgresConsciousnessStore",
    "PostgresConversationStore",
    "PostgresDatabase",
    "PostgresFrontalCortexStore",
    "PostgresMemoryStore",
    "PostgresScratchPageStore",
    "PostgresSessionItemStore",
    "PostgresTraceStore",
    "PostgresWorkingMemoryStore",
    "open_stores",
]
