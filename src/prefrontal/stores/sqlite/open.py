"""``open_stores``: every store kind in one SQLite file, as one ``Stores``."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from prefrontal.retrieval.embedder import Embedder
from prefrontal.stores.set import Stores
from prefrontal.stores.sqlite.consciousness import SqliteConsciousnessStore
from prefrontal.stores.sqlite.conversation import SqliteConversationStore
from prefrontal.stores.sqlite.database import Database
from prefrontal.stores.sqlite.frontal_cortex import SqliteFrontalCortexStore
from prefrontal.stores.sqlite.memory import SqliteMemoryStore
from prefrontal.stores.sqlite.scratch_page import SqliteScratchPageStore
from prefrontal.stores.sqlite.session_items import SqliteSessionItemStore
from prefrontal.stores.sqlite.traces import SqliteTraceStore
from prefrontal.stores.sqlite.working_memory import SqliteWorkingMemoryStore


def open_stores(
    path: str | Path,
    *,
    embedder: Embedder | None = None,
    pool_size: int = 4,
    synchronous: Literal["FULL", "NORMAL"] = "FULL",
    populate: bool = True,
    lexical_arrays: bool = True,
) -> Stores:
    """Every store in one SQLite file (created on first use): durable, no server.

    The stores share one :class:`~prefrontal.stores.sqlite.Database`;
    :meth:`Stores.aclose` closes it. With an ``embedder``, episodic and
    semantic search fuse vector similarity with BM25.
    ``synchronous="NORMAL"`` skips the sync on each commit: writes still
    survive a killed process, not a power cut. ``populate``: opening the
    stores (:meth:`Stores.open`) enters the file's pages into the
    process's page tables (:class:`~prefrontal.stores.sqlite.Database`).
    ``lexical_arrays``: the memory stores hold their postings as arrays in
    the process (:mod:`~prefrontal.stores.sqlite.lexical_arrays`: memory,
    and a read of every item in a thread of their own from opening on, for
    searches that add up arrays; until it is done searches walk FTS5's
    postings); ``False`` walks FTS5's postings at every search instead,
    with the same results.
    """
    db = Database(path, pool_size=pool_size, synchronous=synchronous, populate=populate)
    episodic = SqliteMemoryStore(db, "episodic", embedder=embedder)
    semantic = SqliteMemoryStore(db, "semantic", embedder=embedder)
    if not lexical_arrays:
        episodic.lexical = semantic.lexical = None
    return Stores(
        consciousness=SqliteConsciousnessStore(db),
        frontal_cortex=SqliteFrontalCortexStore(db),
        conversation=SqliteConversationStore(db),
        episodic=episodic,
        semantic=semantic,
        scratch_page=SqliteScratchPageStore(db),
        working_memory=SqliteWorkingMemoryStore(db),
        traces=SqliteTraceStore(db),
        session_items=SqliteSessionItemStore(db),
    )
