"""SQLite backends: every store kind in one database file, WAL, FTS5.

The embedded default. Build them all at once with
:func:`open_stores`, or one by one on a shared
:class:`Database`.
"""

from prefrontal.stores.sqlite.consciousness import SqliteConsciousnessStore
from prefrontal.stores.sqlite.conversation import SqliteConversationStore
from prefrontal.stores.sqlite.database import Database
from prefrontal.stores.sqlite.frontal_cortex import SqliteFrontalCortexStore
from prefrontal.stores.sqlite.memory import SqliteMemoryStore
from prefrontal.stores.sqlite.open import open_stores
from prefrontal.stores.sqlite.scratch_page import SqliteScratchPageStore
from prefrontal.stores.sqlite.session_items import SqliteSessionItemStore
from prefrontal.stores.sqlite.traces import SqliteTraceStore
from prefrontal.stores.sqlite.working_memory import SqliteWorkingMemoryStore

__all__ = [
    "Database",
    "SqliteConsciousnessStore",
    "SqliteConversationStore",
    "SqliteFrontalCortexStore",
    "SqliteMemoryStore",
    "SqliteScratchPageStore",
    "SqliteSessionItemStore",
    "SqliteTraceStore",
    "SqliteWorkingMemoryStore",
    "open_stores",
]
