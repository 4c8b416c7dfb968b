"""Exact BM25 top-k on PostgreSQL without scoring every holder of a query term (MaxScore).

The query's terms are visited highest bound first (a term's bound: the
most it adds to any item's score, from the agent's per-term statistics,
:class:`~prefrontal.retrieval.ranking.BoundedTerm`). For each, the GIN index
finds the live visible items holding it and none of the terms visited
before; each is scored on every query term by the core's
:class:`~prefrontal.retrieval.ranking.Scorer`, the arithmetic every backend's
candidates are scored with. Once k items are scored, the k-th score
prunes:

- an item not seen yet holds none of the visited terms, so its score is at
  most the bounds of the terms left: when they sum below the k-th score,
  the search stops;
- a term adds less to a longer item, so a term's holders are asked for only
  up to the length at which the term's bound, plus the bounds of the terms
  after it, still reaches the k-th score.

No item that could enter the top k is skipped, so the hits, scores and
order are those of scoring every match (ties included: nothing scoring as
much as the k-th is ever left out), as every backend's.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import Any

from prefrontal.retrieval.ranking import BoundedTerm, Corpus, Scorer, idf

MARGIN = 1 + 1e-9
"""Room for rounding: a bound summed in another order may differ in its last bits."""

_LONGEST = 1 << 30
"""Longer than any item: the upper end of the search for a length limit."""


class TopK:
    """One top-k search over ``keys`` (the query's term keys, in sorted term order).

    ``params`` are the search's first four statement parameters (agent, user,
    query time, kinds); ``statements`` the store's
    :class:`~prefrontal.stores.postgres.memory_sql.Statements`.
    """

    def __init__(
        self, statements: Any, connection: Any, params: tuple[Any, ...], keys: Sequence[str]
    ) -> None:
        self.statements, self.connection, self.params = statements, connection, params
        self.keys = list(keys)
        self.visited: list[str] = []
        self.fetched = 0
        """Rows the search read and scored: what the pruning saves is the rest of the holders."""

    async def scores(self, limit: int) -> dict[str, float]:
        """The BM25 score of every item scored: a superset of the exact top ``limit``."""
        statistics = await self._statistics()
        if statistics is None:
            return {}
        scorer, terms = statistics
        after = _suffix_sums([term.bound for term in terms])
        found: dict[str, float] = {}
        best: list[float] = []
        for at, term in enumerate(terms):
            threshold = best[0] if len(best) >= limit else None
            if threshold is not None and after[at] * MARGIN < threshold:
                break
            longest = None
            if threshold is not None:
                longest = _longest(term, threshold / MARGIN - after[at + 1] * MARGIN)
            if longest is None or longest >= term.shortest:
                await self._score_holders(term, longest, scorer, found, best, limit)
            self.visited.append(term.text)
        return found

    async def _statistics(self) -> tuple[Scorer, list[BoundedTerm]] | None:
        """The agent's scorer for the query and its held terms, highest bound first."""
        rows = await self.connection.fetch(self.statements.bounds, self.params[0], self.keys)
        if not rows or not rows[0]["docs"]:
            return None
        corpus = Corpus(docs=int(rows[0]["docs"]), tokens=int(rows[0]["tokens"]))
        held = {row["term"]: row for row in rows if row["term"] is not None and row["df"] > 0}
        if not held:
            return None
        scorer = Scorer([idf(corpus.docs, _df(held, key)) for key in self.keys], corpus)
        order = {key: n for n, key in enumerate(self.keys)}
        terms = [_bounded(corpus, key, row) for key, row in held.items()]
        terms.sort(key=lambda term: (-term.bound, order[term.text]))
        return scorer, terms

    async def _score_holders(
        self,
        term: BoundedTerm,
        longest: int | None,
        scorer: Scorer,
        found: dict[str, float],
        best: list[float],
        limit: int,
    ) -> None:
        """Score the holders of ``term`` (none of the visited terms, at most ``longest`` long)."""
        rows = await self.connection.fetch(
            self.statements.holders, *self.params, self.keys, term.text, self.visited, longest
        )
        self.fetched += len(rows)
        for key, length, counts in rows:
            value = scorer(counts, length)
            found[key] = value
            if len(best) < limit:
                heapq.heappush(best, value)
            elif value > best[0]:
                heapq.heapreplace(best, value)


def _df(held: dict[str, Any], key: str) -> int:
    row = held.get(key)
    return 0 if row is None else int(row["df"])


def _bounded(corpus: Corpus, key: str, row: Any) -> BoundedTerm:
    """The term's bound from its largest count and its shortest holders once, twice, more."""
    buckets = tuple(
        (tf, int(length))
        for tf, length in (
            (1, row["min_length_1"]),
            (2, row["min_length_2"]),
            (int(row["max_tf"]), row["min_length_3"]),
        )
        if length is not None
    )
    return BoundedTerm.of(key, corpus, int(row["df"]), buckets or ((int(row["max_tf"]), 1),))


def _suffix_sums(bounds: Sequence[float]) -> list[float]:
    """``out[i]``: the sum of ``bounds[i:]`` (``out[len]`` is 0)."""
    out = [0.0] * (len(bounds) + 1)
    for at in range(len(bounds) - 1, -1, -1):
        out[at] = out[at + 1] + bounds[at]
    return out


def _longest(term: BoundedTerm, need: float) -> int | None:
    """The greatest length at which ``term`` can still add ``need``; ``None``: any length.

    Below :attr:`~BoundedTerm.shortest` when no holder can (the caller then
    reads none).
    """
    if need <= 0 or term.bound_at(_LONGEST) >= need:
        return None
    low, high = term.shortest, _LONGEST
    if term.bound_at(low) < need:
        return low - 1
    while low < high:
        middle = (low + high + 1) // 2
        if term.bound_at(middle) >= need:
            low = middle
        else:
            high = middle - 1
    return low
