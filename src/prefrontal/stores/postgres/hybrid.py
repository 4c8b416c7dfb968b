"""A hybrid search on PostgreSQL over the process's vector cache: the answer of scoring every row.

The search of :mod:`prefrontal.retrieval.vector_index`, as SQLite runs it
over its vector files: the cache (:class:`~.vector_cache.VectorCache`) gives
the rows the tenant may see, live and of the kinds asked for (tenancy inside
the search, by hashed columns); :class:`~.vector_index.Similarities` takes
the cosine of each at once; the BM25 top k comes from :class:`.topk.TopK`
(with the k-th score bounding every item it did not score), longer tops
while too many rows might still reach the fused top k
(:func:`~.vector_index.hybrid_rows`), every match at last. Only the rows that
may reach the fused top k, and those that keep the median and the best
cosine of every allowed row, cross the socket: by slot, with their key and
their counts of the query's terms (the BM25 of those outside the lexical top
is scored from them). Hits, order and scores are those of scoring every
row (``tests/stores/test_postgres_vector_cache.py`` compares them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from prefrontal.retrieval.ranking import Scorer, scores
from prefrontal.retrieval.vector_index import MARGIN, LexicalTop, Similarities, hybrid_rows
from prefrontal.stores.postgres import memory_sql as sql
from prefrontal.stores.postgres.term_keys import key
from prefrontal.stores.postgres.topk import MARGIN as ROUNDING
from prefrontal.stores.postgres.topk import TopK
from prefrontal.stores.postgres.vector_cache import VectorCache
from prefrontal.stores.sqlite.database import to_us
from prefrontal.stores.sqlite.vector_file import MappedRows

CONTENDERS = 2048
"""Rows outside the BM25 top k whose BM25 a hybrid search scores at most, before asking
for a longer top."""

Signals = dict[str, dict[str, float]]


class VectorStatements:
    """The statements of a hybrid search over ``<name>_items`` (parameters as in
    :mod:`.memory_sql`: agent, user, query time, kinds, then the query's term keys)."""

    def __init__(self, name: str) -> None:
        items = f"{name}_items"
        self.slots_of = f"""
            SELECT {sql.KEY}, m.slot FROM {items} AS m
            WHERE m.agent_id = $1 AND m.item_id = ANY($2::text[]) AND {sql.KEY} = ANY($3::text[])"""
        """The slot of each of the keys ``$3`` (the items ``$2``) of agent ``$1``."""
        counts = """ARRAY(
            SELECT coalesce(m.counts[array_position(m.terms, q.term)], 0)
            FROM unnest($5::text[]) WITH ORDINALITY AS q(term, n) ORDER BY q.n)"""
        self.by_slots = f"""
            SELECT m.slot, {sql.KEY}, m.length, {counts} FROM {items} AS m
            WHERE m.slot = ANY($6::bigint[])
              AND m.agent_id = $1 AND (m.scope = 'shared' OR m.user_id = $2)
              AND m.superseded_by IS NULL AND (m.valid_until IS NULL OR m.valid_until > $3)
              AND ($4::text[] IS NULL OR m.kind = ANY($4::text[]))"""
        """The key, length and counts of the terms ``$5`` of the live visible rows ``$6``."""


class HybridSearch:
    """One hybrid search inside the search's repeatable-read transaction.

    ``snapshot`` is the store's view of the transaction (its lexical
    candidates and statistics: ``lexical_matches``); ``params`` the
    statements' first four parameters.
    """

    def __init__(
        self,
        statements: sql.Statements,
        vectors: VectorStatements,
        cache: VectorCache,
        connection: Any,
        params: tuple[Any, ...],
        snapshot: Any,
    ) -> None:
        self.statements, self.vectors, self.cache = statements, vectors, cache
        self.connection, self.params, self.snapshot = connection, params, snapshot

    async def signals(
        self,
        rows: MappedRows,
        tenant: Any,
        query: Any,
        words: list[str],
        embedding: Sequence[float],
    ) -> Signals | None:
        """Both signals, by key; ``None`` when this search cannot be sure (the caller then
        scores every row)."""
        if rows.dimensions != len(embedding) or not any(embedding):
            return None
        kinds = None if query.kinds is None else [kind.value for kind in query.kinds]
        allowed = rows.allowed(tenant.agent_id, tenant.user_id, to_us(query.now), kinds)
        similar = Similarities(rows, allowed, embedding)
        limit = query.limit
        small = len(similar) <= 2 * (limit + MARGIN)
        for depth in (None,) if small else (limit, 8 * limit, 64 * limit, None):
            found = await self._contenders(tenant, query, words, similar, depth)
            if found is None:
                continue
            lexical, wanted, extra, scorer, bound = found
            picked = similar.signal(wanted, limit)
            if picked is None:
                return None
            return await self._keyed(lexical, picked, extra, scorer, bound, words)
        return None

    async def _lexical(
        self, tenant: Any, query: Any, words: list[str], depth: int | None
    ) -> tuple[dict[str, float], float, Scorer | None]:
        """The BM25 scores of the top ``depth`` (every match when ``None``), a bound on every
        other's score, and the scorer."""
        if not words:
            return {}, 0.0, None
        if depth is None:
            return scores(await self.snapshot.lexical_matches(tenant, query, words)), 0.0, None
        search = TopK(self.statements, self.connection, self.params, [key(w) for w in words])
        found = await search.scores(depth)
        full = len(search.best) >= depth
        bound = search.best[0] * ROUNDING if full and search.best else 0.0
        return found, bound, search.scorer

    async def _contenders(
        self, tenant: Any, query: Any, words: list[str], similar: Similarities, depth: int | None
    ) -> tuple[dict[str, float], np.ndarray, np.ndarray, Scorer | None, float] | None:
        """The BM25 scores; the positions (among the allowed) of the rows that may reach the
        fused top k; the cache positions of those outside the lexical top; the scorer and the
        bound. ``None`` when too many rows might, with the top ``depth``."""
        lexical, bound, scorer = await self._lexical(tenant, query, words, depth)
        allowed, size = similar.allowed, similar.rows.size
        where = np.full(size, -1, dtype=np.int64)
        where[allowed] = np.arange(len(allowed))
        keys = list(lexical)
        slots = await self._slots(tenant, keys)
        inside: dict[int, float] = {}
        others: list[float] = []
        for found_key, position in zip(keys, self.cache.positions(slots), strict=True):
            at = int(where[position]) if 0 <= position < size else -1
            if at < 0:
                others.append(lexical[found_key])
            else:
                inside[at] = lexical[found_key]
        cap = CONTENDERS if depth is not None else len(similar)
        wanted = hybrid_rows(similar, LexicalTop(inside, others, bound), query.limit, cap)
        if wanted is None:
            return None
        extra = allowed[[at for at in wanted.tolist() if at not in inside]]
        everything = np.concatenate([wanted, np.fromiter(inside, dtype=np.int64)])
        return lexical, everything, extra, scorer, bound

    async def _slots(self, tenant: Any, keys: list[str]) -> list[int]:
        """The slot of each of ``keys`` (-1 where none)."""
        if not keys:
            return []
        ids = sorted({k.split("\x1f", 1)[0] for k in keys})
        rows = await self.connection.fetch(self.vectors.slots_of, tenant.agent_id, ids, keys)
        found = {row[0]: int(row[1]) for row in rows}
        return [found.get(k, -1) for k in keys]

    async def _keyed(
        self,
        lexical: dict[str, float],
        picked: dict[int, float],
        extra: np.ndarray,
        scorer: Scorer | None,
        bound: float,
        words: list[str],
    ) -> Signals | None:
        """Name the picked rows (by cache position) by key; score the ``extra`` rows (cache
        positions outside the lexical top) when the lexical top left rows unscored."""
        positions = np.fromiter(picked, dtype=np.int64, count=len(picked))
        scored = bound > 0 and scorer is not None
        every = np.union1d(positions, extra) if scored else positions
        slots = self.cache.slots(every) if len(every) else []
        keys = [key(w) for w in words]
        rows = await self.connection.fetch(self.vectors.by_slots, *self.params, keys, slots)
        by_slot = {int(row[0]): row for row in rows}
        at_slot = dict(zip(every.tolist(), slots, strict=True))
        vector: dict[str, float] = {}
        for position, value in picked.items():
            row = by_slot.get(at_slot[position])
            if row is None:
                return None
            vector[row[1]] = value
        bm25 = dict(lexical)
        if scored and scorer is not None:
            for position in extra.tolist():
                row = by_slot.get(at_slot[position])
                if row is not None and row[1] not in bm25:
                    value = scorer(row[3], row[2])
                    if value > 0:
                        bm25[row[1]] = value
        return {"bm25": bm25, "vector": vector}
