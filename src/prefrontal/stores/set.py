"""``Stores``: the set of store backends one orchestrator reads and writes."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from prefrontal.stores.consciousness import ConsciousnessStore
from prefrontal.stores.conversation import ConversationStore
from prefrontal.stores.frontal_cortex import FrontalCortexStore
from prefrontal.stores.long_term import MemoryStore
from prefrontal.stores.scratch_page import ScratchPageStore
from prefrontal.stores.traces import TraceStore
from prefrontal.stores.working_memory import WorkingMemoryStore

if TYPE_CHECKING:
    from prefrontal.retrieval.embedder import Embedder

STORE_KINDS = (
    "consciousness",
    "frontal_cortex",
    "conversation",
    "episodic",
    "semantic",
    "scratch_page",
    "working_memory",
    "traces",
)


@dataclass(frozen=True, slots=True)
class Stores:
    """One backend per store kind. Build with :meth:`in_memory`, :meth:`sqlite` or :meth:`postgres`.

    Backends may be mixed freely: ``stores.replace(episodic=my_store)`` swaps
    one and keeps the rest.
    """

    consciousness: ConsciousnessStore
    frontal_cortex: FrontalCortexStore
    conversation: ConversationStore
    episodic: MemoryStore
    semantic: MemoryStore
    scratch_page: ScratchPageStore
    working_memory: WorkingMemoryStore
    traces: TraceStore

    @classmethod
    def in_memory(cls, *, embedder: Embedder | None = None) -> Stores:
        """Every store in process memory: fast, isolated, gone at exit. For tests.

        With an ``embedder``, episodic and semantic search fuse vector
        similarity with BM25.
        """
        from prefrontal.stores import memory as m

        return cls(
            consciousness=m.InMemoryConsciousnessStore(),
            frontal_cortex=m.InMemoryFrontalCortexStore(),
            conversation=m.InMemoryConversationStore(),
            episodic=m.InMemoryMemoryStore("episodic", embedder=embedder),
            semantic=m.InMemoryMemoryStore("semantic", embedder=embedder),
            scratch_page=m.InMemoryScratchPageStore(),
            working_memory=m.InMemoryWorkingMemoryStore(),
            traces=m.InMemoryTraceStore(),
        )

    @classmethod
    def sqlite(
        cls,
        path: str | Path,
        *,
        embedder: Embedder | None = None,
        pool_size: int = 4,
        synchronous: Literal["FULL", "NORMAL"] = "FULL",
    ) -> Stores:
        """Every store in one SQLite file (created on first use): durable, no server.

        The stores share one :class:`~prefrontal.stores.sqlite.Database`;
        :meth:`aclose` closes it. With an ``embedder``, episodic and semantic
        search fuse vector similarity with BM25. ``synchronous="NORMAL"``
        skips the sync on each commit: writes still survive a killed process,
        not a power cut.
        """
        from prefrontal.stores import sqlite as s

        db = s.Database(path, pool_size=pool_size, synchronous=synchronous)
        return cls(
            consciousness=s.SqliteConsciousnessStore(db),
            frontal_cortex=s.SqliteFrontalCortexStore(db),
            conversation=s.SqliteConversationStore(db),
            episodic=s.SqliteMemoryStore(db, "episodic", embedder=embedder),
            semantic=s.SqliteMemoryStore(db, "semantic", embedder=embedder),
            scratch_page=s.SqliteScratchPageStore(db),
            working_memory=s.SqliteWorkingMemoryStore(db),
            traces=s.SqliteTraceStore(db),
        )

    @classmethod
    def postgres(
        cls,
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
        ``schema`` is created if missing and migrated forward; :meth:`aclose`
        closes the pool. With an ``embedder``, episodic and semantic search
        fuse vector similarity with BM25.
        """
        from prefrontal.stores import postgres as p

        db = p.PostgresDatabase(dsn, schema=schema, min_size=min_size, max_size=max_size)
        return cls(
            consciousness=p.PostgresConsciousnessStore(db),
            frontal_cortex=p.PostgresFrontalCortexStore(db),
            conversation=p.PostgresConversationStore(db),
            episodic=p.PostgresMemoryStore(db, "episodic", embedder=embedder),
            semantic=p.PostgresMemoryStore(db, "semantic", embedder=embedder),
            scratch_page=p.PostgresScratchPageStore(db),
            working_memory=p.PostgresWorkingMemoryStore(db),
            traces=p.PostgresTraceStore(db),
        )

    def replace(self, **backends: Any) -> Stores:
        """A copy with the named backends swapped (``ValueError`` for an unknown kind)."""
        unknown = set(backends) - set(STORE_KINDS)
        if unknown:
            raise ValueError(f"unknown store kinds {sorted(unknown)}; known: {list(STORE_KINDS)}")
        return dataclasses.replace(self, **backends)

    def items(self) -> list[tuple[str, object]]:
        """``(kind, backend)`` pairs in a fixed order."""
        return [(kind, getattr(self, kind)) for kind in STORE_KINDS]

    async def aclose(self) -> None:
        """Close every backend that holds resources (each one once)."""
        seen: set[int] = set()
        for _, backend in self.items():
            close = getattr(backend, "aclose", None)
            if close is not None and id(backend) not in seen:
                seen.add(id(backend))
                await close()
