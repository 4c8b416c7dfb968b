"""SQLite hybrid search over the vector files: the scan beside the BM25 top k, fused by row id.

One search, inside its read transaction and holding the vector files
(:meth:`~prefrontal.stores.sqlite.vector_file.VectorFile.rows`):

1. **Both legs at once.** The vector leg (the cosine of the rows the
   tenant may see, their median and best:
   :class:`~prefrontal.retrieval.vector_index.Similarities`) runs in a scan
   thread while the search's own thread finds the rows the tenant may see
   (:meth:`~prefrontal.stores.sqlite.vector_file.MappedRows.allowed`, handed
   to the scan) and ranks the BM25 top k (:func:`.topk.by_rowid`). The
   float16 scan reads only those rows when they are few, and a large one
   has its second half scanned in another thread
   (:func:`~prefrontal.retrieval.vector_index.half_dots`). The kernels and
   NumPy let other threads run while they work, and SQLite does while it
   steps, so the legs overlap;
   the search waits for the scan before it goes on, and before it leaves
   whatever happened (:func:`beside`): no scan outlives its search or the
   files it reads.
2. **The contenders.** The rows whose fused score may still reach the top
   k (:func:`~prefrontal.retrieval.vector_index.hybrid_rows`) have their
   BM25 score computed; longer BM25 tops are asked for while too many
   contend. The vector signal holds their exact cosine
   (:meth:`~prefrontal.retrieval.vector_index.Similarities.signal`).
3. **Fused by row id, read once.** Both signals are fused by
   :func:`~prefrontal.retrieval.fusion.fuse` (the arithmetic every backend
   fuses with) keyed by row id; only the rows that reach the ``limit``-th
   fused score (ties with it included) are read, with the tenant's own
   conditions, and ranked by :func:`~prefrontal.retrieval.ranking.top` on
   their :func:`~prefrontal.stores.memory_search.hit_key`: the hits, order
   and ties of fusing every scored row by key.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from concurrent import futures
from contextlib import contextmanager
from typing import Any, TypeVar

import numpy as np

from prefrontal.retrieval.fusion import SIGNAL_WEIGHTS
from prefrontal.retrieval.ranking import Scorer, top
from prefrontal.retrieval.scored_arrays import above_typical, max_normalised
from prefrontal.retrieval.vector_index import MARGIN, LexicalTop, Similarities, hybrid_rows
from prefrontal.stores.sqlite import topk
from prefrontal.stores.sqlite.lexical_arrays import LexicalArrays, ScoredRows
from prefrontal.stores.sqlite.vector_file import MappedRows

T = TypeVar("T")
Signals = dict[str, dict[int, float]]
"""Each signal's scores by row id."""
Lexical = tuple[dict[int, float], float, Scorer | ScoredRows | None]
"""A BM25 top by row id, a bound on every other row's score, and the scorer of the others."""

CONTENDERS = 2048
"""Rows outside the BM25 top k whose BM25 a hybrid search scores at most, before asking
for a longer top."""
SCAN_THREADS = 4
"""Scans running at once in a process (one per store searching: each store's searches
take turns on its vector files)."""


def _scan_threads(name: str = "scan") -> futures.ThreadPoolExecutor:
    return futures.ThreadPoolExecutor(SCAN_THREADS, thread_name_prefix=f"prefrontal-vector-{name}")


_SCANS = _scan_threads()
"""The scan threads, started at the first scan and joined when the interpreter exits."""
_HALVES = _scan_threads("half")
"""The threads scanning the second half of a large scan (:func:`.vector_index.half_dots`):
apart from :data:`_SCANS`, so that a scan never waits for a thread its own pool holds."""


def _after_fork() -> None:
    """A forked child has none of its parent's threads: it starts scan threads of its own."""
    global _SCANS, _HALVES
    _SCANS, _HALVES = _scan_threads(), _scan_threads("half")


def _in_half_thread(work: Callable[[], np.ndarray]) -> futures.Future[np.ndarray]:
    """``work()`` in one of :data:`_HALVES` (a split scan's second half)."""
    return _HALVES.submit(work)


os.register_at_fork(after_in_child=_after_fork)


@contextmanager
def beside(work: Callable[[], T]) -> Iterator[futures.Future[T]]:
    """``work()`` in a scan thread while the block runs; waited for when the block ends.

    The block takes the result with ``future.result()`` (which raises what
    ``work`` raised). Whatever ends the block, ``work`` has finished when
    this returns: the scan never reads the vector files after the search
    has let them go.
    """
    future = _SCANS.submit(work)
    try:
        yield future
    finally:
        futures.wait([future])


class HybridSearch:
    """One hybrid search over ``rows`` (the vector files at the transaction's snapshot).

    ``params`` holds the tenant (``agent``, ``user``), ``now`` and ``kinds``
    as the store's statements take them; ``kinds`` also decoded.
    """

    def __init__(
        self,
        statements: Any,
        params: Mapping[str, Any],
        kinds: Collection[str] | None,
        embedding: Sequence[float],
        limit: int,
    ) -> None:
        self.statements, self.params, self.kinds = statements, params, kinds
        self.embedding, self.limit = embedding, limit
        self.lexical: LexicalArrays | None = None
        """The table's postings as arrays (:mod:`.lexical_arrays`), when the store keeps them."""
        self._every: ScoredRows | None = None
        """Every allowed match's BM25 score, once the arrays gave them."""

    def lexical_top(self, connection: sqlite3.Connection, texts: list[str]) -> Lexical:
        """The BM25 top ``limit`` that :meth:`signals` starts from, ranked ahead of it.

        For a search that waits for the vector files (another search of the
        store holds them): it ranks this while it waits, in the same read
        transaction, and hands it to :meth:`signals`.
        """
        return self._lexical(connection, texts, self.limit)

    def signals(
        self,
        connection: sqlite3.Connection,
        texts: list[str],
        rows: MappedRows,
        first: Lexical | None = None,
    ) -> Signals | None:
        """Both signals by row id; ``None`` to score every row instead.

        The BM25 top k is ranked while the vectors are scanned (unless
        ``first``, from :meth:`lexical_top` in the same transaction, has it),
        then longer tops while too many rows might still reach the fused top k.
        """
        if rows.dimensions != len(self.embedding):
            return None
        if not any(self.embedding):
            return {"bm25": self._lexical(connection, texts, None)[0], "vector": {}}
        allowed: futures.Future[np.ndarray] = futures.Future()
        with beside(lambda: self._scan(rows, allowed.result)) as scanning:
            try:
                params = self.params
                allowed.set_result(
                    rows.allowed(params["agent"], params["user"], params["now"], self.kinds)
                )
            except BaseException as error:
                allowed.set_exception(error)
                raise
            if first is None:
                first = self._lexical(connection, texts, self.limit)
            similar = scanning.result()
        if not len(similar):  # no vector the tenant may see: the rows without one, by BM25
            return {"bm25": self._lexical(connection, texts, None)[0], "vector": {}}
        small = len(similar) <= 2 * (self.limit + MARGIN)
        limit = self.limit
        for depth in (None,) if small else (limit, 8 * limit, 64 * limit, None):
            lexical = first if depth == limit else self._lexical(connection, texts, depth)
            found = self._contenders(connection, lexical, similar, depth, rows)
            if found is not None:
                scored, wanted = found
                vector = similar.signal(wanted, limit)
                return None if vector is None else {"bm25": scored, "vector": rows.by_key(vector)}
        return None

    def _scan(self, rows: MappedRows, allowed: Callable[[], np.ndarray]) -> Similarities:
        """The allowed rows' cosines, with what a fused top k asks of every row computed.

        ``allowed`` gives the rows the tenant may see once every row is scanned.
        """
        similar = Similarities(rows, allowed, self.embedding, split=_in_half_thread)
        if len(similar):  # none the tenant may see: nothing to place rows against
            similar.prepare(self.limit)
        return similar

    def _lexical(
        self, connection: sqlite3.Connection, texts: list[str], depth: int | None
    ) -> Lexical:
        """The BM25 top ``depth`` by row id, a bound on every other's score, the scorer.

        Once a top came from the arrays (the scorer is every allowed match's score, in this
        transaction), a longer one is picked from those scores, not ranked again."""
        if not texts:
            return {}, 0.0, None
        if self._every is not None:
            return self._every.best(depth)
        found, bound, scorer = topk.by_rowid(
            connection, self.statements, self.params, texts, depth, self.lexical
        )
        if isinstance(scorer, ScoredRows):
            self._every = scorer
        return found, bound, scorer

    def _contenders(
        self,
        connection: sqlite3.Connection,
        lexical: Lexical,
        similar: Similarities,
        depth: int | None,
        rows: MappedRows,
    ) -> tuple[dict[int, float], np.ndarray] | None:
        """The BM25 scores by row id and the positions of the rows that may reach the fused
        top k; ``None`` when too many rows might, with the BM25 top ``depth``."""
        scored, bound, scorer = lexical
        allowed = similar.allowed
        slots = rows.slots(np.fromiter(scored, dtype=np.int64, count=len(scored)))
        at = np.searchsorted(allowed, slots)
        held = at < len(allowed)
        held[held] = allowed[at[held]] == slots[held]
        values = list(scored.values())
        inside = {
            int(p): v for p, v, h in zip(at.tolist(), values, held.tolist(), strict=True) if h
        }
        others = [v for v, h in zip(values, held.tolist(), strict=True) if not h]
        cap = CONTENDERS if depth is not None else len(similar)
        wanted = hybrid_rows(similar, LexicalTop(inside, others, bound), self.limit, cap)
        if wanted is None:
            return None
        if bound > 0 and scorer is not None:
            outside = [p for p in wanted.tolist() if p not in inside]
            extra = rows.keys(allowed[outside]).tolist()
            scored = scored | topk.rows_scores(connection, self.statements, scorer, extra)
        everything = np.concatenate([wanted, np.fromiter(inside, dtype=np.int64)])
        return scored, everything


class Fused:
    """Both signals fused by row id, in arrays: :attr:`rowids` (every row a signal scored) and
    their :attr:`scores`.

    The arithmetic of :func:`~prefrontal.retrieval.fusion.fuse`, element for
    element: each signal normalised as it normalises it (the vector signal
    between its upper median and its best, any other by its best), weighted,
    and added from 0.0 in the signals' order. ``fuse`` reads keys only as
    keys: each row scores what fusing by hit key gives its item, to the bit.
    """

    def __init__(self, signals: Signals) -> None:
        at: dict[int, int] = {}
        parts = []
        for name, scored in signals.items():
            rowids = np.fromiter(scored, dtype=np.int64, count=len(scored))
            values = np.fromiter(scored.values(), dtype=np.float64, count=len(scored))
            normalised = above_typical(values) if name == "vector" else max_normalised(values)
            for rowid in rowids.tolist():
                at.setdefault(rowid, len(at))
            parts.append((rowids, SIGNAL_WEIGHTS.get(name, 1.0) * normalised))
        self.rowids = np.fromiter(at, dtype=np.int64, count=len(at))
        self.scores = np.zeros(len(at))
        for rowids, weighted in parts:
            positions = np.fromiter((at[r] for r in rowids.tolist()), np.int64, len(rowids))
            self.scores[positions] += weighted

    def reaching(self, limit: int) -> dict[int, float]:
        """The rows scoring above 0 and at least the ``limit``-th best (ties included), with
        their scores."""
        positive = self.scores > 0
        values = self.scores[positive]
        least = 0.0
        if len(values) > limit:
            least = float(np.partition(values, len(values) - limit)[len(values) - limit])
        kept = positive & (self.scores >= least)
        return dict(zip(self.rowids[kept].tolist(), self.scores[kept].tolist(), strict=True))


def best_rows(
    connection: sqlite3.Connection,
    statements: Any,
    params: Mapping[str, Any],
    signals: Signals,
    limit: int,
) -> list[tuple[float, dict[str, float], Sequence[Any]]]:
    """The ``limit`` best hits as :func:`~prefrontal.stores.memory_search.best_hits` ranks
    them by key, each as its score, its own signals and its row.

    Only the rows that may be in the top ``limit`` are read (with the
    tenant's conditions: a row that fails them is left out); the fusion is
    :class:`Fused`'s, in arrays.
    """
    scores = Fused(signals).reaching(limit)
    if not scores:
        return []
    query = {**params, "rowids": json.dumps(list(scores))}
    found = {row[0]: row[1:] for row in connection.execute(statements.by_rowids, query)}
    keys = {row[0]: rowid for rowid, row in found.items()}
    out = []
    for key, value in top({key: scores[rowid] for key, rowid in keys.items()}, limit):
        rowid = keys[key]
        own = {name: values[rowid] for name, values in signals.items() if rowid in values}
        out.append((value, own, found[rowid][1:]))
    return out
