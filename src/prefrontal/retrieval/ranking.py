"""BM25, once: the formula, the statistics it reads, the score of a candidate and its bounds.

Backends find candidates with their own engines (FTS5, PostgreSQL's
indexes, in-memory postings); what they hand the core is counts, never
scores: for each candidate its length in terms and how often it holds each
query term, and for the collection (the items the searching user may read:
:class:`Corpus`) how many documents it holds, their total length and how
many hold each query term (:class:`LexicalMatches`). The
core scores them here with SQLite FTS5's BM25 (k1=1.2, b=0.75), adding term
scores in sorted term order, so that every backend gives the same bits.

A backend that prunes its top k (scores only what may enter it) bounds what
an unseen document can score with :class:`BoundedTerm`, from statistics it
keeps per agent, owner and term: the shortest documents holding the term once, twice and
three times or more.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from prefrontal.retrieval.analysis import term_set

K1 = 1.2
B = 0.75


def query_terms(text: str) -> list[str]:
    """The distinct index terms of ``text``, sorted: the order term scores are added in.

    The text is analysed once while :func:`~prefrontal.retrieval.analysis.term_set`
    remembers it: a turn searches its input in both memory stores, and probes it too.
    """
    return sorted(term_set(text))


def idf(n_docs: int, n_hits: int) -> float:
    """SQLite FTS5's BM25 IDF: ``log((N - n + 0.5) / (n + 0.5))``, floored at 1e-6.

    A term in more than half the documents weighs almost nothing.
    """
    value = math.log((n_docs - n_hits + 0.5) / (n_hits + 0.5))
    return value if value > 0 else 1e-6


def term_score(weight: float, tf: int, length: int, average: float) -> float:
    """One term's BM25 contribution to a document of ``length`` terms (k1=1.2, b=0.75).

    ``weight`` is the term's :func:`idf`; ``average`` the collection's mean
    document length.
    """
    return weight * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / average))


@dataclass(frozen=True, slots=True)
class Corpus:
    """Collection statistics at the time of a query: documents and their total length in terms.

    The collection is what the searching user may read, on every backend:
    its own items and its agent's shared ones (the statistics are kept per
    agent and owner, :mod:`~prefrontal.stores.statistics_owner`). ``docs``
    is how many items that is, ``tokens`` their total length, and a term's
    document frequency how many of them hold it. Each of them counts, live
    or not, as FTS5 counts its rows. Another user's private items and
    another agent's items never move a user's scores: nothing a user cannot
    read shows in them.
    """

    docs: int
    tokens: int

    @property
    def average(self) -> float:
        """The mean document length (1.0 when no document holds a term: nothing scores then)."""
        return self.tokens / self.docs if self.tokens else 1.0


@dataclass(frozen=True, slots=True)
class Candidate:
    """A document holding a query term: its key, its length and its count of each query term.

    ``counts`` follows the order of the query's terms (:func:`query_terms`).
    The key orders ties: use
    :func:`~prefrontal.stores.memory_search.hit_key` so that every backend
    breaks them alike.
    """

    key: str
    length: int
    counts: Sequence[int]


@dataclass(frozen=True, slots=True)
class LexicalMatches:
    """What a backend with lexical search finds for a query: all BM25 needs, nothing scored.

    ``frequencies`` is how many documents of the collection hold each query
    term, in the query's order (0 for a term no candidate holds is fine:
    its weight then never counts).
    """

    corpus: Corpus
    frequencies: Sequence[int]
    candidates: Sequence[Candidate]


class Scorer:
    """The BM25 score of documents for one query, each term score computed once.

    ``weights`` are the query terms' :func:`idf`, in sorted term order
    (:func:`query_terms`); ``terms``, the terms themselves in that order,
    are needed only by :meth:`padded`. A term's score for a frequency and a
    length is kept once computed: the value :func:`term_score` returns,
    without the arithmetic.
    """

    def __init__(self, weights: Sequence[float], corpus: Corpus, terms: Sequence[str] = ()) -> None:
        self.average = corpus.average
        self._terms: list[tuple[float, dict[tuple[int, int], float]]] = [
            (weight, {}) for weight in weights
        ]
        self._needles = [
            (f" {t} ", f" {t} {t} ", t, weight, cache)
            for t, (weight, cache) in zip(terms, self._terms, strict=bool(terms))
        ]

    @classmethod
    def of(cls, corpus: Corpus, frequencies: Sequence[int]) -> Scorer:
        """The scorer for query terms held by ``frequencies`` documents each."""
        return cls([idf(corpus.docs, n) for n in frequencies], corpus)

    def __call__(self, counts: Sequence[int], length: int) -> float:
        """The score of a document of ``length`` terms holding each query term ``counts`` times."""
        total = 0.0
        average = self.average
        for (weight, cache), tf in zip(self._terms, counts, strict=True):
            if tf:
                value = cache.get((tf, length))
                if value is None:
                    value = cache[(tf, length)] = term_score(weight, tf, length, average)
                total += value
        return total

    def padded(self, text: str, length: int) -> float:
        """The score of a document given as its analysed terms, a space between and either side.

        For backends that keep a document's terms as text (SQLite hands FTS5
        the same text): the counts are read off it, ``" t "`` counted, and
        the words split and counted exactly where ``t`` stands twice in a
        row (the two share a space), then scored as :meth:`__call__` would.
        """
        total = 0.0
        average = self.average
        for needle, twice, term, weight, cache in self._needles:
            tf = text.count(needle)
            if tf:
                if twice in text:
                    tf = text.split(" ").count(term)
                value = cache.get((tf, length))
                if value is None:
                    value = cache[(tf, length)] = term_score(weight, tf, length, average)
                total += value
        return total


def scores(matches: LexicalMatches) -> dict[str, float]:
    """The BM25 score of every candidate, by key."""
    if matches.corpus.docs == 0 or not matches.candidates:
        return {}
    scorer = Scorer.of(matches.corpus, matches.frequencies)
    return {c.key: scorer(c.counts, c.length) for c in matches.candidates}


def top(scores: Mapping[str, float], limit: int) -> list[tuple[str, float]]:
    """The ``limit`` best ``(key, score)`` pairs, ties broken by key for determinism."""
    return sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))[:limit]


@dataclass(frozen=True)
class BoundedTerm:
    """A query term with its IDF weight and the most it can add to any score.

    ``buckets`` pairs a frequency with the length of the shortest document
    holding the term that often (the last: the largest frequency, for the
    shortest document holding it three times or more); ``average`` is the
    collection's mean document length. Without buckets, :meth:`bound_at` is
    :attr:`bound` whatever the length.
    """

    text: str
    weight: float
    bound: float
    buckets: tuple[tuple[int, int], ...] = ()
    average: float = 1.0

    @classmethod
    def of(
        cls, text: str, corpus: Corpus, df: int, buckets: tuple[tuple[int, int], ...]
    ) -> BoundedTerm:
        """The term held by ``df`` documents, with its length ``buckets`` (at least one)."""
        weight = idf(corpus.docs, df)
        gain = max(term_score(1.0, tf, length, corpus.average) for tf, length in buckets)
        return cls(text, weight, weight * gain, buckets, corpus.average)

    @property
    def shortest(self) -> int:
        """No document holding the term is shorter than this."""
        return min((length for _, length in self.buckets), default=0)

    def bound_at(self, length: int) -> float:
        """The most the term adds to the score of a document of ``length`` terms or more.

        At a given length, the same frequencies taken at no less than that
        length bound what the term adds (a term adds less to a longer document).
        """
        if not self.buckets:
            return self.bound
        return self.weight * max(
            term_score(1.0, tf, max(length, shortest), self.average)
            for tf, shortest in self.buckets
        )
