"""A hybrid search on PostgreSQL with pgvector: the dense part computed where the rows are.

No vector crosses the socket and the process holds none. Inside the
search's repeatable-read transaction:

- **a sample** (one statement): the cosine of up to :data:`EXACT_ROWS` + 1
  live rows the tenant may see (tenancy, liveness and kinds in its
  ``WHERE``). When the tenant sees at most :data:`EXACT_ROWS` rows, these
  are all of them: the search is exact, the lexical candidates are every
  match (:meth:`lexical_matches`), and the hits are those of scoring every
  row, as the process cache's (float32 cosines on the server instead of
  float64 ones: scores may differ in the seventh digit).
- **past that, a tenant of a few rows scored exactly** (one statement
  more): when the tenant may read at most :data:`SCANNED_ROWS` items (the
  statistics' estimate, ``<name>_owner_stats``, read with the sample), the
  nearest :data:`MARGIN` + ``limit`` of its rows are found by scoring every
  one of them, read through the owners' index (:func:`.dense.owners_index`):
  exact, and no HNSW walk whose filter rejects most of what it visits.
- **past that, the index** (one statement more): the HNSW walk for the
  nearest :data:`MARGIN` + ``limit`` rows (in a table of more than
  :data:`.dense.SMALL_TABLE` rows, the nearest by exact cosine of
  :data:`.dense.WALKED_ROWS` rows taken from it) with pgvector's iterative scan
  (``hnsw.iterative_scan``), which keeps walking while the tenancy filter
  rejects what it finds, so another tenant's rows never fill the top; in
  the same statement, the cosine of the BM25 top rows (:class:`.topk.TopK`)
  and each row's counts of the query's terms (the BM25 of a near row
  outside the lexical top is scored from them). The sample's cosines stay in
  the vector signal: fusion places each cosine between the median and the
  best (:func:`~prefrontal.retrieval.fusion.above_typical`), and the
  median is the sample's.

In the last two, the same statement also gives the cosine of the BM25 top
rows and each row's counts of the query's terms.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from prefrontal.retrieval.ranking import scores
from prefrontal.stores.postgres import memory_sql as sql
from prefrontal.stores.postgres.dense import (
    MAX_SCAN_TUPLES,
    SCAN_MEMORY,
    WALKED_SCAN_TUPLES,
    DenseColumn,
    ef_search_for,
    literal,
    walked_rows_for,
)
from prefrontal.stores.postgres.term_keys import key
from prefrontal.stores.postgres.topk import TopK
from prefrontal.stores.statistics_owner import owner_sql

EXACT_ROWS = 1024
"""A tenant who sees at most this many rows with vectors is searched exactly."""
SCANNED_ROWS = 10_000
"""A tenant who may read at most this many items (the statistics' count) has its nearest rows
found by scoring every one of its rows, not by the HNSW walk (docs/postgres.md)."""
MARGIN = 16
"""Rows taken past ``limit`` from the index walk."""
DEPTH = 1
"""The BM25 top taken, in multiples of ``limit``, past the sample."""

Signals = dict[str, dict[str, float]]

_FILTER = """m.agent_id = $1 AND (m.scope = 'shared' OR m.user_id = $2)
    AND m.superseded_by IS NULL AND (m.valid_until IS NULL OR m.valid_until > $3)
    AND ($4::text[] IS NULL OR m.kind = ANY($4::text[])) AND m.dense IS NOT NULL"""
_OWNED = f"""m.agent_id = $1 AND {owner_sql("m.scope", "m.user_id")} = ANY(ARRAY['', $2])"""
"""The tenant's rows as the owners' index finds them (:func:`.dense.owners_index`): the same
rows as the tenancy filter's (no user id is empty), which is kept as well."""
_COUNTS = """ARRAY(
    SELECT coalesce(m.counts[array_position(m.terms, q.term)], 0)
    FROM unnest($6::text[]) WITH ORDINALITY AS q(term, n) ORDER BY q.n)"""


class DenseStatements:
    """The statements of a pgvector search over ``<name>_items`` (``$1..$4`` as in
    :mod:`.memory_sql`: agent, user, query time, kinds; ``$5`` the query vector as text)."""

    def __init__(self, name: str, column: DenseColumn) -> None:
        items = f"{name}_items"
        vector = f"$5::text::{column.sql_type}"
        distance = f"(m.dense {column.distance} {vector})"
        cosine = f"coalesce(nullif(1 - {distance}, 'NaN'::float8), 0)"
        self.sample = f"""
            SELECT {sql.KEY}, {cosine},
                (SELECT c.reltuples FROM pg_class AS c WHERE c.oid = '{items}'::regclass),
                (SELECT sum(s.docs) FROM {name}_owner_stats AS s
                 WHERE s.agent_id = $1 AND s.owner = ANY(ARRAY['', $2]))
            FROM {items} AS m WHERE {_FILTER} AND {_OWNED} LIMIT $6"""
        """The key and cosine of up to ``$6`` live visible rows, each with the table's
        estimated row count (for :func:`.dense.ef_search_for`) and the number of items the
        tenant may read (the statistics', live or not)."""
        lexical = f"""
            SELECT {sql.KEY}, {cosine}, m.length, {_COUNTS}
            FROM {items} AS m
            WHERE {_FILTER} AND m.item_id = ANY($8::text[]) AND {sql.KEY} = ANY($9::text[])"""
        self.near = f"""
            WITH w AS MATERIALIZED (
                SELECT m.slot, {cosine} AS c FROM {items} AS m WHERE {_FILTER}
                ORDER BY {distance} LIMIT $10),
            n AS MATERIALIZED (SELECT w.slot, w.c FROM w ORDER BY w.c DESC, w.slot LIMIT $7)
            SELECT {sql.KEY}, n.c, m.length, {_COUNTS}
            FROM n JOIN {items} AS m ON m.slot = n.slot
            UNION ALL {lexical}"""
        """The ``$7`` nearest by exact cosine of the ``$10`` nearest live visible rows by the
        index (:func:`.dense.walked_rows_for`), then the rows of keys ``$9`` (items ``$8``):
        key, cosine, length and counts of the term keys ``$6``."""
        self.scanned = f"""
            WITH n AS MATERIALIZED (
                SELECT m.slot, {cosine} AS c FROM {items} AS m WHERE {_FILTER} AND {_OWNED}
                ORDER BY c DESC, m.slot LIMIT $7)
            SELECT {sql.KEY}, n.c, m.length, {_COUNTS}
            FROM n JOIN {items} AS m ON m.slot = n.slot
            UNION ALL {lexical}"""
        """:attr:`near` with the ``$7`` nearest found by scoring every live visible row (read
        through the owners' index; the order, by cosine, is one the HNSW index cannot give)."""
        self.walk = """SELECT set_config('hnsw.ef_search', $1, true),
            set_config('hnsw.iterative_scan', 'relaxed_order', true),
            set_config('hnsw.max_scan_tuples', $2, true),
            set_config('hnsw.scan_mem_multiplier', $3, true),
            set_config('enable_seqscan', 'off', true),
            set_config('enable_bitmapscan', 'off', true)"""
        """The index walk's settings, for the rest of the transaction (only look-ups by key
        follow): the planner is kept from reading every visible vector instead."""


class DenseSearch:
    """One pgvector hybrid search in the search's transaction; ``snapshot`` offers the
    lexical candidates (``lexical_matches``), ``params`` the statements' first four."""

    def __init__(
        self,
        statements: sql.Statements,
        dense: DenseStatements,
        column: DenseColumn,
        connection: Any,
        params: tuple[Any, ...],
        snapshot: Any,
    ) -> None:
        self.statements, self.dense, self.column = statements, dense, column
        self.connection, self.params, self.snapshot = connection, params, snapshot
        self.exact = False
        """Whether the last search scored every visible row (set by :meth:`signals`)."""
        self.walked = False
        """Whether the last search took its nearest rows from the HNSW walk (not exactly)."""

    async def signals(
        self, tenant: Any, query: Any, words: list[str], embedding: Sequence[float]
    ) -> Signals | None:
        """Both signals by key; ``None`` when the query vector is not of the column's size."""
        vector = literal(embedding, self.column.dimensions)
        if vector is None:
            return None
        rows = await self.connection.fetch(self.dense.sample, *self.params, vector, EXACT_ROWS + 1)
        cosine = {row[0]: max(float(row[1]), 0.0) for row in rows}
        self.exact = len(rows) <= EXACT_ROWS
        self.walked = False
        if self.exact:
            bm25 = {}
            if words:
                bm25 = scores(await self.snapshot.lexical_matches(tenant, query, words))
            return {"bm25": bm25, "vector": cosine}
        readable = rows[0][3]
        few = readable is not None and readable <= SCANNED_ROWS
        ef = None if few else ef_search_for(rows[0][2])
        walked = walked_rows_for(rows[0][2], query.limit + MARGIN)
        return await self._indexed(query, words, vector, cosine, walked, ef)

    async def _indexed(
        self,
        query: Any,
        words: list[str],
        vector: str,
        cosine: dict[str, float],
        walked: int,
        ef: int | None,
    ) -> Signals:
        """The signals with the nearest rows of the ``walked`` rows walked with
        ``hnsw.ef_search`` ``ef``, or found by scoring every visible row (``ef`` ``None``)."""
        keys = [key(w) for w in words]
        lexical: dict[str, float] = {}
        bound, scorer = 0.0, None
        if keys:
            search = TopK(self.statements, self.connection, self.params, keys)
            depth = DEPTH * query.limit
            lexical = await search.scores(depth)
            if len(search.best) >= depth and search.best:
                bound, scorer = search.best[0], search.scorer
        nearest = query.limit + MARGIN
        arguments: tuple[Any, ...] = (vector, keys, nearest, ids_of(lexical), list(lexical))
        statement = self.dense.scanned
        if ef is not None:
            walked = max(walked, nearest)
            wide = walked > nearest
            scanned = WALKED_SCAN_TUPLES if wide else MAX_SCAN_TUPLES
            memory = SCAN_MEMORY if wide else 1
            await self.connection.execute(self.dense.walk, str(ef), str(scanned), str(memory))
            statement, self.walked, arguments = self.dense.near, True, (*arguments, walked)
        rows = await self.connection.fetch(statement, *self.params, *arguments)
        bm25 = dict(lexical)
        extra: dict[str, float] = {}
        for found, value, length, counts in rows:
            extra[found] = max(float(value), 0.0)
            if scorer is not None and bound > 0 and found not in bm25:
                scored = scorer(counts, length)
                if scored > 0:
                    bm25[found] = scored
        return {"bm25": bm25, "vector": keeping_median(cosine, extra)}


def ids_of(keys: dict[str, float]) -> list[str]:
    """The item ids of the keys (``item id``, unit separator, owner), sorted, once each."""
    return sorted({k.split("\x1f", 1)[0] for k in keys})


def keeping_median(sample: dict[str, float], extra: dict[str, float]) -> dict[str, float]:
    """``sample``'s cosines with ``extra``'s, the sample's median kept the median.

    The rows of ``extra`` (the nearest, the lexical top) are no sample: most
    lie above the typical row, and would raise the median fusion measures
    each cosine from. For each row of ``extra`` not in ``sample``, the
    sample's row nearest its median on the same side leaves the signal: a
    row that near the median scores next to nothing by vector (0 at the
    median).
    """
    ordered = sorted(sample, key=sample.__getitem__)
    if not ordered:
        return dict(extra)
    middle = len(ordered) // 2
    typical = sample[ordered[middle]]
    new = [value for found, value in extra.items() if found not in sample]
    above = sum(1 for value in new if value > typical)
    below = len(new) - above
    above = min(above, len(ordered) - middle - 1)
    below = min(below, middle)
    dropped = set(ordered[middle + 1 : middle + 1 + above]) | set(ordered[middle - below : middle])
    kept = {found: value for found, value in sample.items() if found not in dropped}
    return kept | extra
