"""An in-memory inverted index: finds lexical candidates, scores nothing.

What the in-memory store and the BM25 baseline search with. It keeps each
document's term counts and length, the documents holding each term and the
total length, and answers a query with
:class:`~prefrontal.retrieval.ranking.LexicalMatches`, which
:func:`~prefrontal.retrieval.ranking.scores` scores as it scores every
backend's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Container, Sequence
from dataclasses import dataclass, field

from prefrontal.retrieval.analysis import terms
from prefrontal.retrieval.ranking import Candidate, Corpus, LexicalMatches


@dataclass
class Postings:
    """Documents keyed by id, indexed by their :func:`~prefrontal.retrieval.analysis.terms`."""

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

    def __len__(self) -> int:
        """The number of documents indexed."""
        return len(self._docs)

    def matches(
        self, query: Sequence[str], allowed: Container[str] | None = None
    ) -> LexicalMatches:
        """The documents among ``allowed`` (all when ``None``) holding a term of ``query``.

        ``query`` is the query's terms in sorted order
        (:func:`~prefrontal.retrieval.ranking.query_terms`); each candidate's
        counts follow it. The statistics are the whole index's. ``allowed``
        is asked once per document, however many query terms it holds.
        """
        counts: dict[str, list[int]] = {}
        refused: set[str] = set()
        for i, term in enumerate(query):
            for doc_id in self._postings.get(term, ()):
                held = counts.get(doc_id)
                if held is None:
                    if doc_id in refused:
                        continue
                    if allowed is not None and doc_id not in allowed:
                        refused.add(doc_id)
                        continue
                    held = counts[doc_id] = [0] * len(query)
                held[i] = self._docs[doc_id][term]
        return LexicalMatches(
            corpus=Corpus(docs=len(self._docs), tokens=self._total_length),
            frequencies=[len(self._postings.get(term, ())) for term in query],
            candidates=[Candidate(d, self._lengths[d], c) for d, c in counts.items()],
        )
