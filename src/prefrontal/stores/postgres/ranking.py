"""BM25 over candidates fetched from PostgreSQL, scored with the in-memory arithmetic.

The database finds the candidates (the live, visible items holding a query
term, through the GIN index over their terms) and says how often each holds
each query term; the scoring is :func:`~prefrontal.retrieval.lexical.term_score`
in Python, terms added in sorted order exactly as
:class:`~prefrontal.retrieval.lexical.Bm25Index` adds them, with the corpus
statistics of the whole table (every item, live or not, of every tenant, as
the in-memory index counts them). So both backends give the same scores to
the bit, and the same ranking.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from prefrontal.retrieval.lexical import Corpus, idf, term_score

LONGEST_KEY = 64
"""Terms longer than this many characters are indexed by their digest instead."""


def key(term: str) -> str:
    """How ``term`` is stored and looked up: itself, or ``~`` and its SHA-256 when long.

    An index entry must fit in a page; a term may be any length (a long
    word, a base64 blob). Analysed terms are letters and digits only, so a
    digest key, starting with ``~``, never equals a real term; two long
    terms share a key only if SHA-256 collides.
    """
    if len(term) <= LONGEST_KEY:
        return term
    return "~" + hashlib.sha256(term.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Candidate:
    """An item holding a query term: its length and its count of each query term."""

    item_id: str
    length: int
    counts: Sequence[int]


def held_terms(query: Sequence[str], candidates: Sequence[Candidate]) -> list[str]:
    """The query keys some candidate holds: the only ones whose weight matters."""
    return [t for i, t in enumerate(query) if any(c.counts[i] for c in candidates)]


def scores(
    query: Sequence[str],
    candidates: Sequence[Candidate],
    corpus: Corpus,
    frequencies: Mapping[str, int],
) -> dict[str, float]:
    """The BM25 score of every candidate.

    ``query`` is the :func:`key` of each distinct query term, in sorted term
    order (the order the scores are added in, as in memory) and the order
    each candidate's ``counts`` follow; ``frequencies`` gives the number of
    items holding each key that a candidate holds.
    """
    if not candidates or corpus.docs == 0:
        return {}
    average = corpus.average
    weights = [idf(corpus.docs, frequencies.get(t, 0)) for t in query]
    out: dict[str, float] = {}
    for candidate in candidates:
        total = 0.0
        for weight, tf in zip(weights, candidate.counts, strict=True):
            if tf:
                total += term_score(weight, tf, candidate.length, average)
        out[candidate.item_id] = total
    return out
