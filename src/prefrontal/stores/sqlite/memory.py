"""SQLite episodic or semantic store: FTS5 postings, optional vectors, core ranking.

What is indexed is :func:`~prefrontal.stores.memory_search.searchable_text`
analysed by :func:`~prefrontal.retrieval.analysis.terms` (stop words out,
Porter stems). Search scores the table's postings held as arrays in the
process with the core's arithmetic (:mod:`prefrontal.stores.sqlite.lexical_arrays`,
kept in step with the file by its change log); when they cannot be brought
to the search's snapshot it takes each query term's postings from FTS5,
counts the terms of each candidate and has the core score them
(:class:`~prefrontal.retrieval.ranking.Scorer`), skipping what the core's
bounds say cannot reach the top k (:mod:`prefrontal.stores.sqlite.topk`).
Either way every backend ranks the same data the same way. User text reaches FTS5 only as analysed
terms, each quoted: quotes, ``NEAR``, ``*``, ``column:`` and parentheses in
the input are never syntax.

With an embedding (the query's own or the store's embedder), the BM25 and
cosine signals are fused by the core
(:func:`~prefrontal.stores.memory_search.best_hits`), as in every backend.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import datetime
from functools import partial
from typing import Any

import anyio.to_thread

from prefrontal.retrieval.analysis import terms, terms_of_each
from prefrontal.retrieval.embedder import Embedder
from prefrontal.retrieval.ranking import query_terms, top
from prefrontal.retrieval.vectors import cosines, float32_bytes, from_blob
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
from prefrontal.stores.records import utc_now
from prefrontal.stores.sqlite import memory_sql as sql
from prefrontal.stores.sqlite import memory_versions as versions
from prefrontal.stores.sqlite import topk
from prefrontal.stores.sqlite.bulk import BulkWriter
from prefrontal.stores.sqlite.database import (
    Database,
    from_us,
    id_list,
    to_us,
    to_us_or_none,
)
from prefrontal.stores.sqlite.hybrid import HybridSearch, best_rows
from prefrontal.stores.sqlite.lexical_arrays import LexicalArrays
from prefrontal.stores.sqlite.vector_file import VectorFile
from prefrontal.stores.tenancy import Scope, Tenant

_DERIVED = frozenset({"superseded_by", "recall_count", "last_recalled_at", "embedding"})
"""Fields kept only as columns (they change in place), not in ``body``."""
_EXCLUDED = set(_DERIVED)
""":data:`_DERIVED` as pydantic's ``exclude`` takes it (never changed)."""


_WARM_UP_TEXT = "what was said about it"
"""What :meth:`SqliteMemoryStore.open` embeds once, the vector discarded."""


class SqliteMemoryStore(SharesDatabase[Database]):
    """Items in ``<name>_items`` with an FTS5 index in ``<name>_fts``.

    ``name`` is ``"episodic"`` or ``"semantic"``; each has its own tables, so
    their BM25 statistics are separate as they are in memory.
    """

    def __init__(
        self, database: Database, name: str = "episodic", *, embedder: Embedder | None = None
    ) -> None:
        self.name = memory_table(name)
        super().__init__(database)
        self.embedder = embedder
        self._sql = sql.Statements(name)
        self._bulk = BulkWriter(name)
        self.vectors: VectorFile | None = VectorFile(database.path, name)
        """The stored vectors in memory-mapped files for search; ``None``: every search reads
        and decodes every visible vector instead (the way to compare with scoring every row)."""
        self.lexical: LexicalArrays | None = LexicalArrays(
            self.name, partial(database.read_here, store=self.name)
        )
        """The table's postings as arrays in the process (:mod:`.lexical_arrays`), read in a
        thread of their own from :meth:`open` on; ``None``: every search walks FTS5's
        postings instead (:mod:`.topk`)."""

    async def open(self) -> None:
        """Open the database (:meth:`Database.open`) and, with an embedder, map the vector
        files at what is committed (built from the rows when missing or stale) and make the
        embedder's first call (a model's lazy set-up): the work a process's first search
        would do, done at start-up instead. So are the table's postings, read into arrays
        in a thread of their own (a search before that walks FTS5's postings meanwhile)."""
        await super().open()
        if self.lexical is not None:
            self.lexical.start()
            await self.lexical_ready()
        if self.embedder is not None:
            await self._follow()
            await self.embedder.embed([_WARM_UP_TEXT])

    async def lexical_ready(self) -> None:
        """Wait until the thread reading the table's postings into arrays, if one runs, is
        done (searches use the arrays from then on)."""
        if self.lexical is not None:
            await anyio.to_thread.run_sync(self.lexical.join)

    async def aclose(self) -> None:
        """Wait for the postings being read into arrays, unmap the vector files, then close
        the shared database."""
        await self.lexical_ready()
        if self.vectors is not None:
            self.vectors.close()
        await super().aclose()

    async def put(self, item: MemoryItem) -> None:
        await self.put_many([item])

    async def put_many(self, items: list[MemoryItem]) -> None:
        if not items:
            return
        ready = await with_embeddings(items, self.embedder)
        await self.database.write(lambda c: self.put_in(c, ready), store=self.name)
        if any(item.embedding is not None for item in ready):
            await self._follow()

    async def _follow(self, *, created: bool = True) -> None:
        """Bring the vector files to what is committed (set-wise), zeroing removed rows.

        ``created``: also when the files were never made (else only when they exist).
        Read on the writer connection when it is free (``after_write``): the rows just
        written are in its cache, where a read connection would read them again from the
        log.
        """
        vectors = self.vectors
        if vectors is not None and (created or vectors.directory.exists()):
            await self.database.read(vectors.follow, store=self.name, after_write=True)

    def put_in(self, connection: sqlite3.Connection, items: Sequence[MemoryItem]) -> None:
        """Create or replace ``items`` (embedded already) inside the caller's transaction.

        In order, as one ``put`` after another would; runs of new items are
        written set-wise (:mod:`prefrontal.stores.sqlite.bulk`).
        """
        analysed = terms_of_each(searchable_text(item) for item in items)
        rows = [_row(item, self.name, words) for item, words in zip(items, analysed, strict=True)]
        self._bulk.put(connection, rows, self._put_row)

    def _put_row(self, connection: sqlite3.Connection, row: dict[str, Any]) -> None:
        connection.execute(self._sql.upsert, row)
        if row["supersedes"] is not None:
            connection.execute(self._sql.supersede, row)

    def last_position_in(self, connection: sqlite3.Connection, tenant: Tenant, thread: str) -> int:
        """The highest position held in the tenant's ``thread`` (-1 when it is empty)."""
        row = connection.execute(
            f"SELECT max(position) FROM {self.name}_items"
            " WHERE agent_id = ? AND thread_id = ? AND user_id = ?",
            (tenant.agent_id, thread, tenant.user_id),
        ).fetchone()
        return -1 if row is None or row[0] is None else int(row[0])

    async def get(self, tenant: Tenant, item_ids: list[str]) -> list[MemoryItem]:
        if not item_ids:
            return []
        params = _tenant(tenant) | {"ids": id_list(item_ids)}

        def run(connection: sqlite3.Connection) -> list[MemoryItem]:
            rows = connection.execute(self._sql.get, params)
            found = dict(readable(rows, lambda r: (r[0], _item(r[1:])), store=self.name))
            return [found[item_id] for item_id in item_ids if item_id in found]

        return await self.database.read(run, store=self.name, one_statement=True, quick=True)

    async def search(self, tenant: Tenant, query: MemoryQuery) -> list[ScoredMemory]:
        embedding = await query_embedding(query, self.embedder)
        params = _tenant(tenant) | _filters(query)
        search = _Search(self._sql, params, query.text, embedding, query.limit)
        search.vectors, search.lexical = self.vectors, self.lexical
        found = await self.database.read(search, store=self.name)
        if found is None:  # the files moved past the snapshot its BM25 top was ranked in
            search.wait = True
            found = await self.database.read(search, store=self.name)
        assert found is not None
        return found

    async def around(
        self, tenant: Tenant, item_ids: list[str], *, radius: int, now: datetime | None = None
    ) -> list[MemoryItem]:
        if not item_ids or radius < 0:
            return []
        params = _tenant(tenant) | {"ids": id_list(item_ids), "radius": radius}
        params["now"] = to_us(now or utc_now())

        def run(connection: sqlite3.Connection) -> list[MemoryItem]:
            return readable(connection.execute(self._sql.around, params), _item, store=self.name)

        return await self.database.read(run, store=self.name, one_statement=True, quick=True)

    async def record_recall(self, tenant: Tenant, item_ids: list[str], at: datetime) -> None:
        if not item_ids:
            return
        params = _tenant(tenant) | {"ids": id_list(item_ids), "at": to_us(at)}

        def run(connection: sqlite3.Connection) -> None:
            connection.execute(self._sql.record_recall, params)

        await self.database.write(run, store=self.name)

    async def delete(self, tenant: Tenant, item_ids: list[str]) -> int:
        if not item_ids:
            return 0
        params = _tenant(tenant) | {"ids": id_list(list(dict.fromkeys(item_ids)))}
        return await self._remove(self._sql.delete, params)

    async def erase(self, tenant: Tenant) -> int:
        return await self._remove(self._sql.erase, _tenant(tenant))

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
        params = _tenant(tenant) | {
            "limit": limit,
            "kinds": None if kinds is None else json.dumps([str(kind) for kind in kinds]),
            "scope": None if scope is None else str(scope),
        }
        if below is not None:
            params |= {"below_id": below[0], "below_user": below[1]}

        def run(connection: sqlite3.Connection) -> list[MemoryItem]:
            return readable(connection.execute(statement, params), _item, store=self.name)

        return await self.database.read(run, store=self.name, one_statement=True)

    async def versions(self, owner: Tenant, item_id: str) -> list[MemoryItem]:
        """The replaced versions of ``owner``'s item, oldest first."""
        params = _tenant(owner) | {"item": item_id}
        statement = versions.versions_sql(self.name)

        def run(connection: sqlite3.Connection) -> list[MemoryItem]:
            rows = connection.execute(statement, params)
            return readable(rows, lambda row: _decoded(row[0]), store=self.name)

        return await self.database.read(run, store=self.name, one_statement=True)

    async def scrub(self) -> None:
        """Rewrite this store's full-text indexes and truncate the log (after a removal)."""
        await self.database.scrub((f"{self.name}_fts", f"{self.name}_impacts"), store=self.name)

    async def _remove(self, statement: str, params: dict[str, Any]) -> int:
        def run(connection: sqlite3.Connection) -> int:
            return connection.execute(statement, params).rowcount

        removed = await self.database.write(run, store=self.name)
        if removed:
            await self._follow(created=False)
        return removed


class _Search:
    """One search, run in a worker thread inside one read transaction.

    The query text is analysed here too, off the event loop: it may be long.

    Lexical only: exact BM25 top-k by :func:`.topk.scores`. With an
    embedding and the vector files: :mod:`.hybrid` (the same hits). Without
    them: BM25 of every match and cosine of every live item with a vector,
    each normalised per query and fused
    (:func:`~prefrontal.stores.memory_search.best_hits`).
    """

    def __init__(
        self,
        statements: sql.Statements,
        params: dict[str, Any],
        text: str,
        embedding: Sequence[float] | None,
        limit: int,
    ) -> None:
        self.statements, self.params, self.text = statements, params, text
        self.embedding, self.limit = embedding, limit
        self.vectors: VectorFile | None = None
        """The store's vector files; without them (or when they reflect a later snapshot than
        the search's) every visible vector is read and decoded."""
        self.lexical: LexicalArrays | None = None
        """The table's postings as arrays, when the store keeps them."""
        self.wait = False
        """Wait for the vector files before the transaction's first statement, whoever holds
        them (else rank the BM25 top while another search of the store holds them)."""
        self.kinds = None if params["kinds"] is None else json.loads(params["kinds"])

    def __call__(self, connection: sqlite3.Connection) -> list[ScoredMemory] | None:
        """The hits; ``None`` when the search is to be run again in a new transaction."""
        texts = query_terms(self.text)
        if self.embedding is None:
            if not texts:
                return []
            lexical = topk.by_rowid(
                connection, self.statements, self.params, texts, self.limit, self.lexical
            )
            return self._lexical_best(connection, lexical[0])
        if self.embedding is not None and self.vectors is not None:
            search = HybridSearch(
                self.statements, self.params, self.kinds, self.embedding, self.limit
            )
            search.lexical = self.lexical
            lock, first = self.vectors.lock, None
            if not lock.acquire(blocking=self.wait):
                first = search.lexical_top(connection, texts)
                lock.acquire()
            try:
                with self.vectors.rows(connection) as mapped:
                    if mapped is None and first is not None:
                        return None
                    found = None
                    if mapped is not None:
                        found = search.signals(connection, texts, mapped, first)
            finally:
                lock.release()
            if found is not None:
                best = best_rows(connection, self.statements, self.params, found, self.limit)
                return readable(best, lambda b: _scored(b[2], b[0], b[1]), store="memory")
        signals = {"bm25": self._bm25(connection, texts)}
        if self.embedding is not None:
            signals["vector"] = self._vector(connection, self.embedding)
        return self._best(connection, signals)

    def _best(
        self, connection: sqlite3.Connection, signals: dict[str, dict[str, float]]
    ) -> list[ScoredMemory]:
        """The best hits of ``signals`` (by key), read with the tenant's conditions."""
        best = best_hits(signals, self.limit)
        if not best:
            return []
        keys = [key for key, _, _ in best]
        params = self.params | {"ids": json.dumps(key_item_ids(keys)), "keys": json.dumps(keys)}
        rows = {row[0]: row[1:] for row in connection.execute(self.statements.by_keys, params)}
        return readable(best, lambda b: _scored(rows[b[0]], b[1], b[2]), store="memory")

    def _lexical_best(
        self, connection: sqlite3.Connection, found: dict[int, float]
    ) -> list[ScoredMemory]:
        """The best hits of BM25 scores by row id, ranked by key as
        :func:`~prefrontal.stores.memory_search.best_hits` ranks one signal, read in one
        statement with the tenant's conditions.

        ``found`` holds every row tied with the ``limit``-th score, often several times
        ``limit`` rows (a conversation's lines alike): then the rows are ranked by their keys
        first, read alone, and only the records of the best ``limit`` are read (in the same
        transaction, so the same rows).
        """
        positive = [rowid for rowid, value in found.items() if value > 0]
        if not positive:
            return []
        if len(positive) > self.limit:
            params = self.params | {"rowids": json.dumps(positive)}
            keys = dict(connection.execute(self.statements.keys_by_rowids, params).fetchall())
            rowid_of = {key: rowid for rowid, key in keys.items()}
            chosen = top({key: found[rowid] for rowid, key in keys.items()}, self.limit)
            positive = [rowid_of[key] for key, _ in chosen]
            if not positive:
                return []
        params = self.params | {"rowids": json.dumps(positive)}
        rows = {row[1]: row for row in connection.execute(self.statements.by_rowids, params)}
        ranked = top({key: found[row[0]] for key, row in rows.items()}, self.limit)
        return readable(
            ranked, lambda hit: _scored(rows[hit[0]][2:], hit[1], {"bm25": hit[1]}), store="memory"
        )

    def _bm25(self, connection: sqlite3.Connection, texts: list[str]) -> dict[str, float]:
        limit = self.limit if self.embedding is None else None
        return topk.scores(connection, self.statements, self.params, texts, limit, self.lexical)

    def _vector(
        self, connection: sqlite3.Connection, embedding: Sequence[float]
    ) -> dict[str, float]:
        rows = connection.execute(self.statements.vectors, self.params).fetchall()
        values = cosines(embedding, [blob for _, blob in rows])
        return {key: max(v, 0.0) for (key, _), v in zip(rows, values, strict=True)}


def _tenant(tenant: Tenant) -> dict[str, Any]:
    return {"agent": tenant.agent_id, "user": tenant.user_id}


def _filters(query: MemoryQuery) -> dict[str, Any]:
    kinds = None if query.kinds is None else json.dumps([kind.value for kind in query.kinds])
    return {"now": to_us(query.now), "kinds": kinds}


def _row(item: MemoryItem, store: str, analysed: list[str] | None = None) -> dict[str, Any]:
    """The statement parameters of ``item``; ``analysed``: the terms of its :func:`searchable_text`
    if known (kept as ``words`` too, for the bulk writer's statistics)."""
    if analysed is None:
        analysed = terms(searchable_text(item))
    return {
        "agent": item.agent_id,
        "item": item.item_id,
        "user": item.user_id,
        "scope": str(item.scope),  # the value: these are string enums
        "kind": str(item.kind),
        "importance": item.importance,
        "created_at": to_us(item.created_at),
        "valid_until": to_us_or_none(item.valid_until),
        "superseded_by": item.superseded_by,
        "supersedes": item.supersedes,
        "recall_count": item.recall_count,
        "last_recalled_at": to_us_or_none(item.last_recalled_at),
        "thread_id": item.thread_id,
        "position": item.position,
        "body": dump(item, store=store, exclude=_EXCLUDED),
        "terms": " ".join(analysed),
        "words": analysed,
        "length": len(analysed),
        "embedding": None if item.embedding is None else float32_bytes(item.embedding),
    }


_decoded = DECODED
"""Stored bodies decoded once (:mod:`prefrontal.stores.decoded_items`)."""


def _item(row: Sequence[Any]) -> MemoryItem:
    """An item from ``body, superseded_by, recall_count, last_recalled_at, embedding``.

    A row whose columns hold nothing the body lacks (never recalled nor
    superseded, no vector) is its decoded body itself, shared (no copy).
    """
    body, superseded_by, recall_count, last_recalled_at, embedding = row
    if embedding is None and superseded_by is None and last_recalled_at is None:
        decoded = _decoded(body)
        if not recall_count and _unset(decoded):
            return decoded
    return _with_columns(row)


def _unset(item: MemoryItem) -> bool:
    """True when ``item`` holds none of the columns a body leaves out."""
    return (
        item.superseded_by is None
        and not item.recall_count
        and item.last_recalled_at is None
        and item.embedding is None
    )


def _with_columns(row: Sequence[Any]) -> MemoryItem:
    """The decoded body of ``row`` with the columns it lacks set: what
    ``model_copy(update=...)`` of those four fields gives (the same fields, the same fields
    set), made without pydantic's generic copy (a memory read is most often one such copy).

    A shallow copy, as ``model_copy`` makes: the values are the decoded body's own
    (frozen, shared). :class:`MemoryItem` forbids extra fields and has no private
    attributes, so both are ``None``, as ``model_copy`` leaves them.
    """
    body, superseded_by, recall_count, last_recalled_at, embedding = row
    decoded = _decoded(body)
    values = decoded.__dict__.copy()
    values["superseded_by"] = superseded_by
    values["recall_count"] = recall_count
    values["last_recalled_at"] = None if last_recalled_at is None else from_us(last_recalled_at)
    values["embedding"] = None if embedding is None else from_blob(embedding)
    item = _new(MemoryItem)
    _set(item, "__dict__", values)
    _set(item, "__pydantic_fields_set__", decoded.__pydantic_fields_set__ | _DERIVED)
    _set(item, "__pydantic_extra__", None)
    _set(item, "__pydantic_private__", None)
    return item


_new = object.__new__
_set = object.__setattr__


def _scored(row: Sequence[Any], score: float, signals: dict[str, float]) -> ScoredMemory:
    """The hit of ``row`` (:func:`~prefrontal.stores.decoded_items.scored_hit`)."""
    return scored_hit(_item(row), score, signals)
