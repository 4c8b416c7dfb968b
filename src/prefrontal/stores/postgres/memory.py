"""PostgreSQL episodic or semantic store: GIN-indexed terms, optional vectors, core ranking.

What is indexed is :func:`~prefrontal.stores.memory_search.searchable_text`
analysed by :func:`~prefrontal.retrieval.analysis.terms` (stop words out,
Porter stems), stored per item as its distinct terms (long ones as a
digest, :func:`.term_keys.key`) and their counts.
Search runs in one repeatable-read snapshot. A lexical search is BM25's
exact top k by :class:`.topk.TopK`, which reads the tenant's statistics and
per-term bounds (kept by a trigger, :mod:`.migrations`) and, through the GIN
index, only the holders of the query's terms that can still reach the top
k. With an embedding, the core's
:func:`~prefrontal.stores.capabilities.ranked_search`: the database finds
every candidate (live items the tenant may see that hold a query term,
with their counts of each term), the statistics of the terms they hold,
and every live visible vector; the core scores and fuses them as it does
every backend's. User text reaches the database only as parameters.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from prefrontal.retrieval.analysis import terms
from prefrontal.retrieval.embedder import Embedder
from prefrontal.retrieval.impacts import tokens as impact_tokens
from prefrontal.retrieval.ranking import Candidate, Corpus, LexicalMatches, query_terms
from prefrontal.retrieval.vectors import cosines, float32_bytes, from_blob
from prefrontal.stores.capabilities import ranked_search, scored_hits
from prefrontal.stores.decoded_items import DECODED, scored_hit
from prefrontal.stores.durable import SharesDatabase, dump, memory_table, readable
from prefrontal.stores.long_term import MemoryItem, MemoryKind, MemoryQuery, ScoredMemory
from prefrontal.stores.memory_pages import Position
from prefrontal.stores.memory_search import (
    best_hits,
    key_item_ids,
    query_embedding,
    searchable_text,
    with_embeddings,
)
from prefrontal.stores.postgres import lexical_search as lexical
from prefrontal.stores.postgres import memory_sql as sql
from prefrontal.stores.postgres import memory_versions as versions
from prefrontal.stores.postgres import thread_positions
from prefrontal.stores.postgres.bulk import AT_LEAST, BulkWriter
from prefrontal.stores.postgres.database import Connection, PostgresDatabase, storable_ids
from prefrontal.stores.postgres.dense import DenseColumn, detect, literal, set_up
from prefrontal.stores.postgres.dense_search import DenseSearch, DenseStatements
from prefrontal.stores.postgres.hybrid import HybridSearch, VectorStatements
from prefrontal.stores.postgres.term_keys import key
from prefrontal.stores.postgres.topk import TopK
from prefrontal.stores.postgres.vector_cache import VectorCache
from prefrontal.stores.records import utc_now
from prefrontal.stores.tenancy import Scope, Tenant
from prefrontal.trusted import evolve

_DERIVED = frozenset({"superseded_by", "recall_count", "last_recalled_at", "embedding"})
"""Fields kept only as columns (they change in place), not in ``body``."""


ERASE_BATCH = 100
"""Items one transaction of ``erase`` removes at most (see :meth:`PostgresMemoryStore.erase`)."""


class PostgresMemoryStore(SharesDatabase[PostgresDatabase]):
    """Items in ``<name>_items``; ``name`` is ``"episodic"`` or ``"semantic"``.

    Each name has its own table, so their BM25 statistics are separate as
    they are in memory.
    """

    def __init__(
        self,
        database: PostgresDatabase,
        name: str = "episodic",
        *,
        embedder: Embedder | None = None,
        vectors: VectorCache | None = None,
        dense: bool | int = True,
    ) -> None:
        self.name = memory_table(name)
        super().__init__(database)
        self.embedder = embedder
        self._sql = sql.Statements(name)
        self._bulk = BulkWriter(name)
        self._vector_sql = VectorStatements(name)
        self._lexical_sql = lexical.statement(self.name)
        """The one-statement lexical search (:mod:`.lexical_search`)."""
        self.vectors = vectors
        """The process's cache of the table's vectors (:mod:`.vector_cache`), which hybrid
        searches scan; ``None``: every hybrid search reads every visible vector instead
        (or, with pgvector, none: the server searches them)."""
        size = embedder.dimensions if embedder is not None else 0
        if not isinstance(dense, bool):
            size = dense
        self._dense_size: int | None = size if dense and size > 0 else None
        """The pgvector column's size: the embedder's, or ``dense`` when a number (for
        items and queries given their vectors)."""
        self._dense_wanted = self._dense_size is not None
        self.dense: DenseColumn | None = None
        """The table's pgvector column (:mod:`.dense`) once in use: vectors stay on the
        server and the cache is dropped."""
        self.dense_reason: str | None = None if self._dense_wanted else "pgvector turned off"
        """Why pgvector is not in use (``None`` while it is, or before :meth:`open`)."""
        self._dense_checked = not self._dense_wanted
        self._dense_sql: DenseStatements | None = None

    @property
    def vector_search(self) -> str:
        """Where hybrid searches find the vectors, in words (for status output)."""
        if self.dense is not None:
            return self.dense.describe()
        where = "process cache" if self.vectors is not None else "rows read per search"
        return where if self.dense_reason is None else f"{where} ({self.dense_reason})"

    async def open(self) -> None:
        """Open the pool (:meth:`PostgresDatabase.open`, when it has one); with an embedder,
        set up pgvector's column and index when the server has the extension (:func:`.dense.
        set_up`), else bring the vector cache to what is committed (built from the rows, or
        its files mapped): the work a process's first hybrid search would do, done at start-up.
        """
        await super().open()
        if self._dense_size is not None and self.dense is None:
            dimensions = self._dense_size

            async def run(connection: Connection) -> DenseColumn | str:
                return await set_up(connection, self.name, dimensions)

            found = await self.database.write(run, store=self.name)
            self._dense_checked = True
            if isinstance(found, DenseColumn):
                self._use(found)
            else:
                self.dense_reason = found
        if self.embedder is not None and self.vectors is not None:
            await self.follow(create=True)

    def _use(self, column: DenseColumn) -> None:
        """Search and write through pgvector's ``column``; drop the process's cache."""
        self.dense, self.dense_reason = column, None
        self._sql = sql.Statements(self.name, column.sql_type)
        self._bulk = BulkWriter(self.name, column.sql_type)
        self._dense_sql = DenseStatements(self.name, column)
        if self.vectors is not None:
            self.vectors.close()
            self.vectors = None

    async def _check_dense(self, connection: Connection) -> None:
        """Once per process: use the table's pgvector column when another process set it up
        (of the embedder's size)."""
        if self._dense_checked:
            return
        self._dense_checked = True
        column = await detect(connection, self.name)
        if column is None:
            self.dense_reason = "no pgvector column (the store was not opened with open())"
        elif column.dimensions != self._dense_size:
            self.dense_reason = f"the column holds {column.dimensions} dimensions"
        else:
            self._use(column)

    async def aclose(self) -> None:
        """Drop the vector cache (unmap its files), then close the shared database."""
        if self.vectors is not None:
            self.vectors.close()
        await super().aclose()

    async def put(self, item: MemoryItem) -> None:
        await self.put_many([item])

    async def put_many(self, items: list[MemoryItem]) -> None:
        if not items:
            return
        ready = await with_embeddings(items, self.embedder)

        async def run(connection: Connection) -> None:
            await self.put_in(connection, ready)

        await self.database.write(run, store=self.name)

    async def put_in(self, connection: Connection, items: Sequence[MemoryItem]) -> None:
        """Create or replace ``items`` (embedded already) inside the caller's transaction.

        Items are written agent by agent, in sorted order (each agent's in the
        order given): the statistics of each agent are locked before its
        terms', so every writer takes those locks in one order. Runs of new
        items are written set-wise (:mod:`prefrontal.stores.postgres.bulk`).
        """
        await self._check_dense(connection)
        items = sorted(items, key=lambda item: item.agent_id)
        dimensions = None if self.dense is None else self.dense.dimensions
        rows = [_row(item, self.name, dimensions) for item in items]

        async def others(connection: Connection, at: list[int]) -> None:
            if all(items[n].supersedes is None for n in at):
                await connection.executemany(self._sql.upsert, [rows[n] for n in at])
                return
            for n in at:
                item = items[n]
                await connection.execute(self._sql.upsert, *rows[n])
                if item.supersedes is not None:
                    await connection.execute(
                        self._sql.supersede,
                        item.agent_id,
                        item.item_id,
                        item.supersedes,
                        item.user_id,
                    )

        supersedes = [item.supersedes is not None for item in items]
        await self._bulk.put(connection, rows, supersedes, others)

    async def put_write(
        self, connection: Connection, items: Sequence[MemoryItem]
    ) -> tuple[str, tuple[Any, ...]] | None:
        """What :meth:`put_in` writes for ``items`` (embedded already) as one statement and
        its parameters, to be sent with other writes inside the caller's transaction
        (:mod:`.exchange`): one upsert of every item, in order, when :meth:`put_in` upserts
        them one by one (fewer than :data:`.bulk.AT_LEAST`, none superseding another) and no
        two share a key; ``None`` otherwise (and when there are none)."""
        keys = {(item.agent_id, item.item_id, item.user_id) for item in items}
        if not items or len(keys) < len(items) or len(items) >= AT_LEAST:
            return None
        if any(item.supersedes is not None for item in items):
            return None
        await self._check_dense(connection)
        dimensions = None if self.dense is None else self.dense.dimensions
        ordered = sorted(items, key=lambda item: item.agent_id)  # as put_in writes them
        args: list[Any] = []
        for item in ordered:
            args += _row(item, self.name, dimensions)
        return self._sql.upsert_of(len(ordered)), tuple(args)

    async def last_position_in(self, connection: Connection, tenant: Tenant, thread: str) -> int:
        """The highest position in the tenant's ``thread`` (-1 when empty), the thread locked.

        The lock (a transaction-scoped advisory lock on the thread) makes two
        writers to one thread take their positions one after the other; the lock and the
        read are one call (:mod:`.thread_positions`).
        """
        found = await connection.fetchval(
            f"SELECT {self.last_position(1)}", *self.last_position_args(tenant, thread)
        )
        return int(found)

    def last_position(self, first: int) -> str:
        """SQL of the tenant's thread's last position, its lock taken first
        (:func:`.thread_positions.call`), its parameters :meth:`last_position_args` from
        ``$first`` on."""
        return thread_positions.call(self.name, first)

    def last_position_args(self, tenant: Tenant, thread: str) -> tuple[str, str, str, str]:
        """The parameters of :meth:`last_position`: the thread's lock key, the agent, the
        thread and the user."""
        key = "\x1f".join((self.name, tenant.agent_id, tenant.user_id, thread))
        return key, tenant.agent_id, thread, tenant.user_id

    async def get(self, tenant: Tenant, item_ids: list[str]) -> list[MemoryItem]:
        wanted = storable_ids(item_ids)
        if not wanted:
            return []

        async def run(connection: Connection) -> list[MemoryItem]:
            rows = await connection.fetch(self._sql.get, *_tenant(tenant), wanted)
            found = dict(readable(rows, lambda r: (r[0], _item(r)), store=self.name))
            return [found[item_id] for item_id in item_ids if item_id in found]

        return await self.database.read(run, store=self.name)

    async def search(self, tenant: Tenant, query: MemoryQuery) -> list[ScoredMemory]:
        """The hybrid (or lexical) search; on a read replica when the database has one and the
        search reads no vector cache (which follows the primary): pgvector, no cache, or a
        search without vectors. A lexical search is one statement while its terms are held
        by few enough items (:mod:`.lexical_search`), else the pruned top-k (:mod:`.topk`)."""
        embedding = await query_embedding(query, self.embedder)
        kinds = None if query.kinds is None else [kind.value for kind in query.kinds]
        params = (*_tenant(tenant), query.now, kinds)
        if not self._dense_checked:
            await self.database.read(self._check_dense, store=self.name)
        if embedding is None:
            found = await self._lexical(tenant, query, params)
            if found is not None:
                return found
        return await self._searched(tenant, query, params, embedding)

    async def _searched(
        self,
        tenant: Tenant,
        query: MemoryQuery,
        params: tuple[Any, ...],
        embedding: Sequence[float] | None,
    ) -> list[ScoredMemory]:
        """The search in one repeatable-read snapshot of several statements."""

        async def run(connection: Connection) -> list[ScoredMemory]:
            snapshot = _Snapshot(self._sql, connection, params)
            if embedding is None:
                return await snapshot.top(tenant, query)
            if self.dense is not None and self._dense_sql is not None:
                found = await self._dense(connection, snapshot, tenant, query, embedding)
                if found is not None:
                    return found
            if cache is not None:
                found = await self._cached(cache, connection, snapshot, tenant, query, embedding)
                if found is not None:
                    return found
            return await ranked_search(snapshot, tenant, query, embedding)

        cache = self.vectors if embedding is not None else None
        if cache is None:
            return await self.database.read(
                run, store=self.name, isolation="repeatable_read", replica=True
            )
        async with cache.held():
            return await self.database.read(run, store=self.name, isolation="repeatable_read")

    async def _lexical(
        self, tenant: Tenant, query: MemoryQuery, params: tuple[Any, ...]
    ) -> list[ScoredMemory] | None:
        """The lexical search in one statement (:mod:`.lexical_search`); ``None`` when the
        query has too many terms for it, or its terms are held by too many items (the caller
        runs the pruned top-k)."""
        words = query_terms(query.text)
        if not words:
            return []
        keys = [key(w) for w in words]
        if len(keys) > lexical.MOST_TERMS:
            return None
        args = (
            *params,
            keys,
            query.limit,
            lexical.MOST_HOLDERS,
            lexical.ROUNDING,
            lexical.ALL_SENT,
        )
        statement = self._lexical_sql

        async def run(connection: Connection) -> list[Any]:
            found: list[Any] = await connection.fetch(statement, *args)
            return found

        async def fetch() -> lexical.LexicalAnswer:
            rows = await self.database.read(run, store=self.name, replica=True)
            return lexical.answer(rows, keys)

        asked = (self.name, "lexical", *params[:3], _frozen(params[3]), tuple(keys))
        answer = await self.database.turn_reads.reused(asked, fetch, _whole)
        if answer.too_common:
            return None
        if answer.matches is None:
            return []
        sent = answer.rows
        best = best_hits({"bm25": answer.scores}, query.limit)
        hits = [hit for hit in best if hit[0] in sent]
        return readable(hits, lambda hit: _scored(sent[hit[0]], hit[1], hit[2]), store=self.name)

    async def _dense(
        self,
        connection: Connection,
        snapshot: _Snapshot,
        tenant: Tenant,
        query: MemoryQuery,
        embedding: Sequence[float],
    ) -> list[ScoredMemory] | None:
        """The hybrid search with pgvector (:mod:`.dense_search`); ``None`` when it cannot
        answer (a query vector of another size)."""
        assert self.dense is not None
        assert self._dense_sql is not None
        search = DenseSearch(
            self._sql, self._dense_sql, self.dense, connection, snapshot.params, snapshot
        )
        signals = await search.signals(tenant, query, query_terms(query.text), embedding)
        if signals is None:
            return None
        return await scored_hits(snapshot, tenant, signals, query.limit)

    async def _cached(
        self,
        cache: VectorCache,
        connection: Connection,
        snapshot: _Snapshot,
        tenant: Tenant,
        query: MemoryQuery,
        embedding: Sequence[float],
    ) -> list[ScoredMemory] | None:
        """The hybrid search over the vector cache, brought to the transaction's snapshot
        first; ``None`` when it cannot answer (the caller then reads every vector)."""
        rows = await cache.rows(connection)
        if rows is None:
            return None
        search = HybridSearch(
            self._sql, self._vector_sql, cache, connection, snapshot.params, snapshot
        )
        signals = await search.signals(rows, tenant, query, query_terms(query.text), embedding)
        if signals is None:
            return None
        return await scored_hits(snapshot, tenant, signals, query.limit)

    async def follow(self, *, create: bool = False) -> None:
        """Bring the vector cache to what is committed (zeroing removed rows in its files).

        Run after a removal, so that no removed vector stays in the cache's
        files; a no-op without a cache, or before its first use unless
        ``create`` (then the cache is built when there is none).
        """
        cache = self.vectors
        if cache is None or not (create or cache.started):
            return

        async def run(connection: Connection) -> None:
            await cache.rows(connection, create=create)

        async with cache.held():
            await self.database.read(run, store=self.name, isolation="repeatable_read")

    async def around(
        self, tenant: Tenant, item_ids: list[str], *, radius: int, now: datetime | None = None
    ) -> list[MemoryItem]:
        wanted = storable_ids(item_ids)
        if not wanted or radius < 0:
            return []
        moment = now or utc_now()

        async def run(connection: Connection) -> list[MemoryItem]:
            params = (*_tenant(tenant), moment, wanted, radius)
            rows = await connection.fetch(self._sql.around, *params)
            return readable(rows, _item, store=self.name)

        return await self.database.read(run, store=self.name)

    async def record_recall(self, tenant: Tenant, item_ids: list[str], at: datetime) -> None:
        wanted = storable_ids(item_ids)
        if not wanted:
            return

        await self.database.execute(
            self._sql.record_recall, *_tenant(tenant), at, wanted, store=self.name
        )

    async def listed(
        self,
        tenant: Tenant,
        *,
        limit: int,
        below: Position | None = None,
        inclusive: bool = False,
        kinds: Sequence[MemoryKind] | None = None,
        scope: Scope | None = None,
    ) -> list[MemoryItem]:
        """A keyset page (:class:`~prefrontal.stores.memory_pages.ListsMemories`)."""
        statement = versions.page_sql(self.name, below=below is not None, inclusive=inclusive)
        args: list[Any] = [
            *_tenant(tenant),
            limit,
            None if kinds is None else [str(kind) for kind in kinds],
            None if scope is None else str(scope),
        ]
        if below is not None:
            args += [below[0], below[1]]

        async def run(connection: Connection) -> list[MemoryItem]:
            rows = await connection.fetch(statement, *args)
            return readable(rows, _item, store=self.name)

        return await self.database.read(run, store=self.name)

    async def versions(self, owner: Tenant, item_id: str) -> list[MemoryItem]:
        """The replaced versions of ``owner``'s item, oldest first."""
        statement = versions.versions_sql(self.name)

        async def run(connection: Connection) -> list[MemoryItem]:
            rows = await connection.fetch(statement, *_tenant(owner), item_id)
            return readable(
                rows, lambda row: MemoryItem.model_validate_json(row[0]), store=self.name
            )

        return await self.database.read(run, store=self.name)

    async def delete(self, tenant: Tenant, item_ids: list[str]) -> int:
        wanted = storable_ids(list(dict.fromkeys(item_ids)))
        if not wanted:
            return 0
        removed = await self.database.count(
            self._sql.delete, *_tenant(tenant), wanted, store=self.name
        )
        if removed:
            await self.follow()
        return removed

    async def erase(self, tenant: Tenant) -> int:
        """Remove the tenant's items in transactions of at most ``ERASE_BATCH`` rows each.

        Each batch holds the agent's statistics row locked only while it
        runs, so the other users' writes wait for one batch, never for the
        whole erase. Repeated until a batch finds nothing: a batch that removes fewer
        than it chose (another transaction removed some first) is no sign that none
        are left.
        """
        removed = 0
        while True:
            done = await self.database.count(
                self._sql.erase, *_tenant(tenant), ERASE_BATCH, store=self.name
            )
            removed += done
            if done == 0:
                if removed:
                    await self.follow()
                return removed


class _Snapshot:
    """One search's view of the table inside its repeatable-read transaction.

    Offers both search capabilities (:mod:`prefrontal.stores.capabilities`):
    the lexical candidates with their counts and the statistics, and the
    cosine of every live visible vector. ``params`` are the tenant, the
    query time and the kinds, the first four parameters of each statement.
    """

    def __init__(
        self, statements: sql.Statements, connection: Connection, params: tuple[Any, ...]
    ) -> None:
        self.statements, self.connection, self.params = statements, connection, params

    async def top(self, tenant: Tenant, query: MemoryQuery) -> list[ScoredMemory]:
        """The lexical search: BM25's exact top ``query.limit`` by :class:`.topk.TopK`."""
        words = query_terms(query.text)
        if not words:
            return []
        search = TopK(self.statements, self.connection, self.params, [key(w) for w in words])
        return await scored_hits(
            self, tenant, {"bm25": await search.scores(query.limit)}, query.limit
        )

    async def lexical_matches(
        self, tenant: Tenant, query: MemoryQuery, terms: Sequence[str]
    ) -> LexicalMatches:
        keys = [key(term) for term in terms]
        rows = await self.connection.fetch(self.statements.candidates, *self.params, keys)
        candidates = [Candidate(row[0], row[1], row[2]) for row in rows]
        held = [k for i, k in enumerate(keys) if any(c.counts[i] for c in candidates)]
        if not held:
            return LexicalMatches(Corpus(docs=0, tokens=0), [0] * len(keys), [])
        row = await self.connection.fetchrow(
            self.statements.statistics, held, tenant.agent_id, tenant.user_id
        )
        if row is None:
            return LexicalMatches(Corpus(docs=0, tokens=0), [0] * len(keys), [])
        docs, tokens, counted = row
        frequencies = dict(zip(held, (int(n) for n in counted), strict=True))
        corpus = Corpus(docs=int(docs), tokens=int(tokens))
        return LexicalMatches(corpus, [frequencies.get(k, 0) for k in keys], candidates)

    async def vector_matches(
        self, tenant: Tenant, query: MemoryQuery, embedding: Sequence[float]
    ) -> dict[str, float]:
        rows = await self.connection.fetch(self.statements.vectors, *self.params)
        values = cosines(embedding, [bytes(blob) for _, blob in rows])
        return {row[0]: v for row, v in zip(rows, values, strict=True)}

    async def items_by_key(self, tenant: Tenant, keys: Sequence[str]) -> dict[str, MemoryItem]:
        rows = await self.connection.fetch(
            self.statements.by_keys, *self.params[:2], key_item_ids(keys), list(keys)
        )
        return dict(readable(rows, lambda row: (row[0], _item(row)), store="memory"))


def _whole(answer: lexical.LexicalAnswer) -> bool:
    """Whether a lexical search's ``answer`` is that of the same search with any limit."""
    return answer.whole


def _frozen(kinds: list[str] | None) -> tuple[str, ...] | None:
    return None if kinds is None else tuple(kinds)


def _tenant(tenant: Tenant) -> tuple[str, str]:
    return (tenant.agent_id, tenant.user_id)


def _row(item: MemoryItem, store: str, dense: int | None = None) -> tuple[Any, ...]:
    """The upsert's parameters for ``item``, in ``$1..$19`` order; with ``dense`` (the
    pgvector column's size), the vector as text (``$20``) after them."""
    counts = sorted(Counter(key(t) for t in terms(searchable_text(item))).items())
    length = sum(count for _, count in counts)
    return (
        item.agent_id,
        item.item_id,
        item.user_id,
        item.scope.value,
        item.kind.value,
        item.importance,
        item.created_at,
        item.valid_until,
        item.superseded_by,
        item.recall_count,
        item.last_recalled_at,
        item.thread_id,
        item.position,
        dump(item, store=store, exclude=set(_DERIVED)),
        [term for term, _ in counts],
        [count for _, count in counts],
        length,
        None if item.embedding is None else float32_bytes(item.embedding),
        impact_tokens(counts, length),
        *(() if dense is None else (literal(item.embedding, dense),)),
    )


def _scored(row: Sequence[Any], score: float, signals: dict[str, float]) -> ScoredMemory:
    """The hit of ``row``, a row of the lexical statement (its item's columns from
    :data:`.lexical_search.ITEM_AT` on; :func:`~prefrontal.stores.decoded_items.scored_hit`)."""
    return scored_hit(_item(row[lexical.ITEM_AT :]), score, signals)


_decoded = DECODED
"""Stored bodies decoded once (:mod:`prefrontal.stores.decoded_items`)."""


def _item(row: Sequence[Any]) -> MemoryItem:
    """An item from ``item_id, body, superseded_by, recall_count, last_recalled_at, embedding``
    (the body as text, or as its UTF-8 bytes: :data:`.memory_sql.READ_BYTES`).

    The body is validated (its JSON may be older than this version of the model, or written
    by something else), once while :data:`_decoded` holds it; the columns kept beside it are
    set unchecked (:func:`~prefrontal.trusted.evolve`): PostgreSQL's types hold them (an id
    or NULL, a count the store only ever increments from zero, a ``timestamptz``, a vector
    :func:`~prefrontal.retrieval.vectors.float32_bytes` wrote), and the same values
    ``model_copy`` took unchecked.
    """
    _, body, superseded_by, recall_count, last_recalled_at, embedding = row
    return evolve(
        _decoded(body if isinstance(body, str) else body.decode()),
        {
            "superseded_by": superseded_by,
            "recall_count": recall_count,
            "last_recalled_at": last_recalled_at,
            "embedding": None if embedding is None else from_blob(bytes(embedding)),
        },
    )
