"""``open_stores``: every store kind in one PostgreSQL schema, as one ``Stores``."""

from __future__ import annotations

from prefrontal.retrieval.embedder import Embedder
from prefrontal.stores.postgres.consciousness import PostgresConsciousnessStore
from prefrontal.stores.postgres.conversation import PostgresConversationStore
from prefrontal.stores.postgres.database import PostgresDatabase
from prefrontal.stores.postgres.frontal_cortex import PostgresFrontalCortexStore
from prefrontal.stores.postgres.memory import PostgresMemoryStore
from prefrontal.stores.postgres.scratch_page import PostgresScratchPageStore
from prefrontal.stores.postgres.traces import PostgresTraceStore
from prefrontal.stores.postgres.working_memory import PostgresWorkingMemoryStore
from prefrontal.stores.set import Stores


def open_stores(
    dsn: str,
    *,
    embedder: Embedder | None = None,
    schema: str = "prefrontal",
    min_size: int = 1,
    max_size: int = 10,
) -> Stores:
    """Every store in one schema of a PostgreSQL database: shared by many processes.

    Needs the ``postgres`` extra (asyncpg). The stores share one
    :class:`~prefrontal.stores.postgres.PostgresDatabase`, a pool of
    ``min_size`` to ``max_size`` connections opened on first use, when
    ``schema`` is created if missing and migrated forward;
    :meth:`Stores.aclose` closes the pool. With an ``embedder``, episodic
    and semantic search fuse vector similarity with BM25.
    """
    db = PostgresDatabase(dsn, schema=schema, min_size=min_size, max_size=max_size)
    return Stores(
        consciousness=PostgresConsciousnessStore(db),
        frontal_cortex=PostgresFrontalCortexStore(db),
        conversation=PostgresConversationStore(db),
        episodic=PostgresMemoryStore(db, "episodic", embedder=embedder),
        semantic=PostgresMemoryStore(db, "semantic", embedder=embedder),
        scratch_page=PostgresScratchPageStore(db),
        working_memory=PostgresWorkingMemoryStore(db),
        traces=PostgresTraceStore(db),
    )
