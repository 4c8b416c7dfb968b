"""``open_stores``: every store kind in one PostgreSQL schema, as one ``Stores``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from prefrontal.retrieval.embedder import Embedder
from prefrontal.stores.postgres.consciousness import PostgresConsciousnessStore
from prefrontal.stores.postgres.conversation import PostgresConversationStore
from prefrontal.stores.postgres.database import PostgresDatabase
from prefrontal.stores.postgres.frontal_cortex import PostgresFrontalCortexStore
from prefrontal.stores.postgres.memory import PostgresMemoryStore
from prefrontal.stores.postgres.replicas import MAX_STALENESS
from prefrontal.stores.postgres.scratch_page import PostgresScratchPageStore
from prefrontal.stores.postgres.session_items import PostgresSessionItemStore
from prefrontal.stores.postgres.traces import PostgresTraceStore
from prefrontal.stores.postgres.vector_cache import VectorCache
from prefrontal.stores.postgres.working_memory import PostgresWorkingMemoryStore
from prefrontal.stores.set import Stores


def open_stores(  # noqa: PLR0913
    dsn: str,
    *,
    embedder: Embedder | None = None,
    schema: str = "prefrontal",
    min_size: int = 1,
    max_size: int = 10,
    vector_cache: Path | str | bool = True,
    dense: bool | int = True,
    read_dsns: Sequence[str] = (),
    max_staleness: float = MAX_STALENESS,
) -> Stores:
    """Every store in one schema of a PostgreSQL database: shared by many processes.

    Needs the ``postgres`` extra (asyncpg). The stores share one
    :class:`~prefrontal.stores.postgres.PostgresDatabase`, a pool of
    ``min_size`` to ``max_size`` connections opened on first use, when
    ``schema`` is created if missing and migrated forward;
    :meth:`Stores.aclose` closes the pool. With an ``embedder``, episodic
    and semantic search fuse vector similarity with BM25.

    ``vector_cache``: where hybrid searches find the vectors
    (:mod:`~prefrontal.stores.postgres.vector_cache`). ``True``: in a cache of
    this process, kept in step with the table; a directory: in memory-mapped
    files there, shared by the processes of the machine and ready for a
    fresh one; ``False``: read from the server on every search.

    ``dense``: with an embedder, keep the vectors where the rows are when the
    server has pgvector (:mod:`~prefrontal.stores.postgres.dense`: a column
    and an HNSW index, set up by :meth:`Stores.open`), the cache then unused;
    ``False``: never; a number: that vector size, for items and queries that
    bring their own vectors.

    ``read_dsns``: streaming replicas that answer the memory searches of stores
    keeping no vector cache, at most ``max_staleness`` seconds stale and never
    behind this process's writes (:mod:`~prefrontal.stores.postgres.replicas`).
    """
    db = PostgresDatabase(
        dsn,
        schema=schema,
        min_size=min_size,
        max_size=max_size,
        read_dsns=read_dsns,
        max_staleness=max_staleness,
    )

    def cache(name: str) -> VectorCache | None:
        if vector_cache is False:
            return None
        return VectorCache(name, None if vector_cache is True else Path(vector_cache))

    return Stores(
        consciousness=PostgresConsciousnessStore(db),
        frontal_cortex=PostgresFrontalCortexStore(db),
        conversation=PostgresConversationStore(db),
        episodic=PostgresMemoryStore(
            db, "episodic", embedder=embedder, vectors=cache("episodic"), dense=dense
        ),
        semantic=PostgresMemoryStore(
            db, "semantic", embedder=embedder, vectors=cache("semantic"), dense=dense
        ),
        scratch_page=PostgresScratchPageStore(db),
        working_memory=PostgresWorkingMemoryStore(db),
        traces=PostgresTraceStore(db),
        session_items=PostgresSessionItemStore(db),
    )
