"""Exact BM25 top-k over FTS5 without scoring every match (MaxScore).

A query's terms are visited rarest first. Each term's matching items (live
and visible only) come from FTS5, are scored on every query term with
:func:`~prefrontal.retrieval.lexical.term_score` (the in-memory index's own
arithmetic) and kept in a top-k heap. Before the next term, the best score
any item not yet seen could still reach is the sum of the remaining terms'
upper bounds; once that is below the k-th score, no unseen item can enter
the top k and the search stops. The result is the same as scoring every
match, at the cost of the rare terms' postings instead of the common ones'.

A term's bound is its IDF times its term score at its largest frequency in
the shortest document that holds it (both kept by triggers, only widening).
"""

from __future__ import annotations

import heapq
import json
import sqlite3
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from prefrontal.retrieval.lexical import idf, term_score

_MARGIN = 1 + 1e-9
"""Room for rounding: a bound summed in another order may differ in its last bits."""


@dataclass(frozen=True)
class Term:
    """A query term with its IDF weight and the most it can add to any score."""

    text: str
    weight: float
    bound: float

    @property
    def needle(self) -> str:
        """The term with a space either side, as it appears in padded terms text."""
        return f" {self.text} "


@dataclass(frozen=True)
class Corpus:
    """Collection statistics at the time of the query."""

    docs: int
    average: float


def quoted(term: str) -> str:
    """``term`` as one FTS5 string: never syntax, whatever it holds."""
    return '"' + term.replace('"', '""') + '"'


def query_terms(
    connection: sqlite3.Connection, statements: Any, texts: list[str]
) -> tuple[Corpus, list[Term]]:
    """The corpus statistics and the known terms among ``texts``, highest bound first."""
    docs, tokens = connection.execute(statements.stats).fetchone()
    if not docs or not texts:
        return Corpus(docs=0, average=0.0), []
    corpus = Corpus(docs=docs, average=tokens / docs if tokens else 1.0)
    rows = connection.execute(statements.term_stats, {"terms": json.dumps(texts)}).fetchall()
    known = [_term(corpus, *row) for row in rows if row[1] > 0]
    order = {text: i for i, text in enumerate(texts)}
    known.sort(key=lambda t: (-t.bound, order[t.text]))
    return corpus, known


def _term(corpus: Corpus, text: str, df: int, max_tf: int, min_length: int) -> Term:
    weight = idf(corpus.docs, df)
    bound = term_score(weight, max_tf, min_length, corpus.average) if corpus.average else weight
    return Term(text=text, weight=weight, bound=bound)


def score(terms_text: str, length: int, query: list[tuple[Term, str]], corpus: Corpus) -> float:
    """The BM25 score of a document (its space-separated terms) for the query terms.

    ``query`` pairs each term with its :attr:`Term.needle`.
    """
    padded = f" {terms_text} "
    total = 0.0
    for term, needle in query:
        tf = padded.count(needle)
        if tf and f"{needle}{term.text} " in padded:
            tf = padded.split(" ").count(term.text)
        if tf:
            total += term_score(term.weight, tf, length, corpus.average)
    return total


def scores(
    connection: sqlite3.Connection,
    statements: Any,
    params: Mapping[str, Any],
    texts: list[str],
    limit: int | None,
) -> dict[str, float]:
    """BM25 scores of matching items: a superset of the best ``limit`` (all when ``None``).

    Every score returned is exact, so ``top(result, limit)`` is the true top
    ``limit``, ties broken by id as the in-memory store breaks them.
    """
    corpus, terms = query_terms(connection, statements, texts)
    needles = [(term, term.needle) for term in terms]
    found: dict[str, float] = {}
    best: list[float] = []
    remaining = sum(term.bound for term in terms)
    for term in terms:
        if _settled(best, limit, remaining):
            break
        ceiling, remaining = remaining, remaining - term.bound
        for item_id, terms_text, length in _postings(connection, statements, params, term):
            if item_id not in found:
                found[item_id] = score(terms_text, length, needles, corpus)
                if _keep(best, found[item_id], limit) and _settled(best, limit, ceiling):
                    break
    return found


def _settled(best: list[float], limit: int | None, ceiling: float) -> bool:
    """True when an item not seen yet, scoring at most ``ceiling``, cannot enter the top k.

    Within a term's postings the ceiling of a new item is the sum of the bounds
    of that term and those after it, so the scan may stop there too.
    """
    return limit is not None and len(best) >= limit and ceiling * _MARGIN < best[0]


def _postings(
    connection: sqlite3.Connection, statements: Any, params: Mapping[str, Any], term: Term
) -> Iterator[tuple[str, str, int]]:
    return connection.execute(statements.postings, {**params, "match": quoted(term.text)})


def _keep(best: list[float], value: float, limit: int | None) -> bool:
    """Keep the ``limit`` largest scores in a min-heap (``best[0]`` is the k-th); True if kept."""
    if limit is None:
        return False
    if len(best) < limit:
        heapq.heappush(best, value)
        return True
    if value > best[0]:
        heapq.heapreplace(best, value)
        return True
    return False
