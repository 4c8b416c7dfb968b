"""Exact BM25 top-k on PostgreSQL without scoring every holder of a query term (MaxScore).

The query's terms are visited highest bound first (a term's bound: the
most it adds to any item's score, from the per-term statistics of what the tenant may read,
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
  after it, still reaches the k-th score, and only in the impact classes
  (:mod:`prefrontal.retrieval.impacts`: the term's count and the item's
  length bucket, a GIN-indexed token per item and term) whose bound does.

Before k items are scored there is no k-th score to prune with: the holders
of a common term are then read class by class, those that can add the most
first, until k are scored; the classes left are pruned as above. Rare terms
that follow one another are read together then, one round trip for all.
Once k items are scored, each read also leaves out, in SQL, the holders
whose score on the terms they may still hold (this one and those after it)
cannot reach the k-th score, before their counts are gathered and sent.

No item that could enter the top k is skipped, so the hits, scores and
order are those of scoring every match (ties included: nothing scoring as
much as the k-th is ever left out), as every backend's.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import Any

from prefrontal.retrieval.impacts import best_classes, class_tokens, reaching
from prefrontal.retrieval.ranking import K1, BoundedTerm, Corpus, Scorer, idf
from prefrontal.stores.postgres.memory_sql import REACH_SLOTS

MARGIN = 1 + 1e-9
"""Room for rounding: a bound summed in another order may differ in its last bits."""

_LONGEST = 1 << 30
"""Longer than any item: the upper end of the search for a length limit."""

CLASSES_PAST = 500
"""A term held by more items than this is read by impact class before k items are scored."""
RARE_TOGETHER = 500
"""Before k items are scored, terms that follow one another and are held by this many items
together at most are read in one query: nothing prunes such a read yet, so the terms' holders
one after the other are the same items in as many round trips."""
FIRST_CLASSES = 16
"""Before k items are scored, at most this many of a common term's classes are read one by
one, those adding the most first; then the rest of its holders together."""


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
        self.scorer = Scorer([], Corpus(docs=0, tokens=0))
        self.found: dict[str, float] = {}
        self.best: list[float] = []
        """The best scores so far, a heap of at most ``limit``: ``best[0]`` is the k-th."""
        self.limit = 0

    async def scores(self, limit: int) -> dict[str, float]:
        """The BM25 score of every item scored: a superset of the exact top ``limit``."""
        statistics = await self._statistics()
        if statistics is None:
            return {}
        scorer, terms, held = statistics
        after = _suffix_sums([term.bound for term in terms])
        self.scorer, self.found, self.best, self.limit = scorer, {}, [], limit
        together = 0
        for at, term in enumerate(terms):
            if self._full() and after[at] * MARGIN < self.best[0]:
                break
            if at < together:
                continue
            if not self._full():
                rare = _rare_run(terms[at:], held)
                if len(rare) > 1:
                    await self._score(self.statements.holders_of_any, rare, None)
                    self.visited += rare
                    together = at + len(rare)
                    continue
            read: list[str] = []
            if not self._full() and held[term.text] > CLASSES_PAST and term.buckets:
                read = await self._best_classes_first(term)
            if self._full():
                await self._score_reaching(term, read, terms[at + 1 :], after[at + 1])
            else:
                await self._score(self.statements.holders, term.text, None, read)
            self.visited.append(term.text)
        return self.found

    def _full(self) -> bool:
        return len(self.best) >= self.limit

    async def _best_classes_first(self, term: BoundedTerm) -> list[str]:
        """Read ``term``'s classes one by one, those adding the most first, until k items are
        scored (:data:`FIRST_CLASSES` at most); the impact tokens read."""
        read: list[str] = []
        for code in best_classes(term, FIRST_CLASSES):
            read += class_tokens(term.text, [code])
            await self._score(self.statements.class_holders, read[-1:], None)
            if self._full():
                break
        return read

    async def _score_reaching(
        self, term: BoundedTerm, read: list[str], later: list[BoundedTerm], bounds: float
    ) -> None:
        """Score the holders of ``term`` that may reach the k-th score (k are scored).

        Those under the impact tokens ``read`` were scored already; ``later``
        are the terms not visited yet, adding at most ``bounds`` together.
        First the classes whose bound alone reaches the k-th score; then,
        holding a later term, those whose bound does with the later terms'
        at the class's length (:func:`~prefrontal.retrieval.impacts.reaching`),
        no longer than a holder that may.
        """
        reach = self._reach([term, *later])
        alone = reaching(term, self.best[0], MARGIN)
        if alone is None:
            longest = self._longest(term, bounds)
            if longest is None or longest >= term.shortest:
                await self._score(self.statements.holders, term.text, longest, read, reach=reach)
            return
        tokens = [token for token in class_tokens(term.text, alone.codes) if token not in read]
        if tokens:
            await self._score(self.statements.class_holders, tokens, None, reach=reach)
        with_later = reaching(term, self.best[0], MARGIN, later)
        longest = self._longest(term, bounds)
        if not later or with_later is None or (longest is not None and longest < term.shortest):
            return
        read = read + tokens
        tokens = [token for token in class_tokens(term.text, with_later.codes) if token not in read]
        if tokens:
            keys = [other.text for other in later]
            statement = self.statements.class_holders_with_later
            await self._score(statement, tokens, longest, keys, reach=reach)

    def _reach(self, terms: list[BoundedTerm]) -> tuple[Any, ...]:
        """The parameters that leave out, in SQL, the holders of ``terms[0]`` that cannot reach.

        Such a holder holds no visited term, so ``terms`` (the term and those
        not visited yet) are all it may score on. SQL scores the first
        :data:`~prefrontal.stores.postgres.memory_sql.REACH_SLOTS` (those of
        highest bound); the rest may add their bounds. What it needs is the
        k-th score less those bounds, with room for rounding.
        """
        scored, rest = terms[:REACH_SLOTS], terms[REACH_SLOTS:]
        need = self.best[0] / MARGIN - sum(term.bound for term in rest) * MARGIN
        weights = [term.weight * (K1 + 1) for term in scored]
        return [term.text for term in scored], weights, self.scorer.average, need

    def _longest(self, term: BoundedTerm, bounds: float) -> int | None:
        """The longest holder of ``term`` that may reach the k-th score with ``bounds`` more."""
        return _longest(term, self.best[0] / MARGIN - bounds * MARGIN)

    async def _statistics(self) -> tuple[Scorer, list[BoundedTerm], dict[str, int]] | None:
        """The tenant's scorer for the query, its held terms (highest bound first), their holders.

        The statistics are those of what the tenant may read (its own items
        and the agent's shared ones), and so are the holders counted (up to
        one more than :data:`CLASSES_PAST` and :data:`RARE_TOGETHER`, all the
        reads are planned by): another user's private items change neither
        the scores nor how many reads a search takes.
        """
        agent, user = self.params[0], self.params[1]
        cap = max(CLASSES_PAST, RARE_TOGETHER) + 1
        rows = await self.connection.fetch(self.statements.bounds, agent, self.keys, user, cap)
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
        return scorer, terms, {key: int(row["visible"]) for key, row in held.items()}

    async def _score(
        self,
        statement: str,
        held: Any,
        longest: int | None,
        *rest: Any,
        reach: tuple[Any, ...] = (None, None, None, None),
    ) -> None:
        """Score the items ``statement`` reads: none of the visited terms, at most ``longest`` long.

        ``held``: the term (:attr:`~Statements.holders`, with the impact tokens it
        leaves out after it) or its impact tokens (:attr:`~Statements.class_holders`).
        ``reach``: what an item must score to be read (:meth:`_reach`; every item
        when left out).
        """
        rows = await self.connection.fetch(
            statement, *self.params, self.keys, held, self.visited, longest, *rest, *reach
        )
        self.fetched += len(rows)
        found, best, limit, scorer = self.found, self.best, self.limit, self.scorer
        for key, length, counts in rows:
            value = scorer(counts, length)
            found[key] = value
            if len(best) < limit:
                heapq.heappush(best, value)
            elif value > best[0]:
                heapq.heapreplace(best, value)


def _rare_run(terms: Sequence[BoundedTerm], held: dict[str, int]) -> list[str]:
    """The first of ``terms`` whose holders number :data:`RARE_TOGETHER` at most together."""
    run: list[str] = []
    total = 0
    for term in terms:
        total += held[term.text]
        if total > RARE_TOGETHER:
            break
        run.append(term.text)
    return run


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
