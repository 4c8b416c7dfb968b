"""BM25 scoring, shared by every backend that ranks in Python.

Text is analysed by :mod:`prefrontal.retrieval.analysis` (its names are
re-exported here). The SQLite backend indexes the output of :func:`terms`
itself (FTS5 then only splits on spaces) and :class:`Bm25Index` uses FTS5's
BM25 formula, so the in-memory and SQLite backends agree on what matches and
how it scores.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from prefrontal.retrieval.analysis import terms


def idf(n_docs: int, n_hits: int) -> float:
    """SQLite FTS5's BM25 IDF: ``log((N - n + 0.5) / (n + 0.5))``, floored at 1e-6.

    The same formula as FTS5's ``bm25()`` so that every backend scores alike;
    a term in more than half the documents weighs almost nothing.
    """
    value = math.log((n_docs - n_hits + 0.5) / (n_hits + 0.5))
    return value if value > 0 else 1e-6


@dataclass(frozen=True, slots=True)
class Corpus:
    """Collection statistics at the time of a query: documents and their total length in terms.

    Backends that score in the database's stead (SQLite, PostgreSQL) read
    these from their tables and hand them to :func:`term_score` through
    :attr:`average`, as :class:`Bm25Index` does from its own counts.
    """

    docs: int
    tokens: int

    @property
    def average(self) -> float:
        """The mean document length (1.0 when no document holds a term: nothing scores then)."""
        return self.tokens / self.docs if self.tokens else 1.0


K1 = 1.2
B = 0.75


def term_score(weight: float, tf: int, length: int, average: float) -> float:
    """One term's BM25 contribution to a document of ``length`` terms (k1=1.2, b=0.75).

    ``weight`` is the term's :func:`idf`. Every backend that scores in
    Python calls this, so their scores agree to the last bit.
    """
    return weight * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / average))


@dataclass
class Bm25Index:
    """An incremental BM25 index over documents keyed by id (k1=1.2, b=0.75).

    Scores equal those of SQLite FTS5's ``bm25()`` over the same analysed text.
    """

    _docs: dict[str, Counter[str]] = field(default_factory=dict)
    _lengths: dict[str, int] = field(default_factory=dict)
    _postings: dict[str, set[str]] = field(default_factory=dict)
    _total_length: int = 0

    def add(self, doc_id: str, text: str) -> None:
        """Index ``text`` under ``doc_id`` (replacing what was there)."""
        self.remove(doc_id)
        counts = Counter(terms(text))
        self._docs[doc_id] = counts
        self._lengths[doc_id] = sum(counts.values())
        self._total_length += self._lengths[doc_id]
        for term in counts:
            self._postings.setdefault(term, set()).add(doc_id)

    def remove(self, doc_id: str) -> None:
        """Forget ``doc_id`` (no-op when absent)."""
        counts = self._docs.pop(doc_id, None)
        if counts is None:
            return
        self._total_length -= self._lengths.pop(doc_id)
        for term in counts:
            posting = self._postings[term]
            posting.discard(doc_id)
            if not posting:
                del self._postings[term]

    def scores(self, query: str, *, allowed: Iterable[str] | None = None) -> dict[str, float]:
        """BM25 score of every document that shares a term with ``query``.

        Terms are added in sorted order, so scores do not depend on set order
        (hash seeding) and every backend that sums the same way gets the same bits.
        """
        query_terms = sorted(set(terms(query)))
        allowed_set = set(allowed) if allowed is not None else None
        n_docs = len(self._docs)
        if not query_terms or n_docs == 0:
            return {}
        average = self._total_length / n_docs
        out: dict[str, float] = {}
        for term in query_terms:
            posting = self._postings.get(term, set())
            weight = idf(n_docs, len(posting))
            for doc_id in posting:
                if allowed_set is not None and doc_id not in allowed_set:
                    continue
                tf = self._docs[doc_id][term]
                gain = term_score(weight, tf, self._lengths[doc_id], average)
                out[doc_id] = out.get(doc_id, 0.0) + gain
        return out


def top(scores: Mapping[str, float], limit: int) -> list[tuple[str, float]]:
    """The ``limit`` best ``(id, score)`` pairs, ties broken by id for determinism."""
    return sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))[:limit]
