"""One agent's in-memory search index: segments by who may see them, statistics for the agent.

**Cost isolation.** Each user's private items are a
:class:`~prefrontal.stores.memory.segment.Segment`, the agent's shared items
another. A tenant's search reads two segments, its own and the shared one:
the postings, filters and vectors of other users' private items are never
read, so another user's 50,000 items do not slow it.

**Statistics are the agent's.** BM25's collection statistics (documents,
their total length, each term's document frequency) count every item of
the agent, live or not, of every user, as
:class:`~prefrontal.retrieval.ranking.Corpus` says: a tenant's scores are
what they would be in one index of the whole agent.

**One search, in arrays.** :meth:`AgentIndex.search` scores the BM25 of
every allowed item holding a query term and fuses it with the cosine of
the allowed embedded items over numpy arrays
(:mod:`prefrontal.stores.memory.hybrid`): the hits, scores and signals
:func:`~prefrontal.stores.capabilities.ranked_search` gives for the same
candidates, without a dictionary per candidate.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence

import numpy as np

from prefrontal.retrieval.analysis import terms as analysed
from prefrontal.retrieval.ranking import Candidate, Corpus, LexicalMatches, idf
from prefrontal.stores.long_term import MemoryItem
from prefrontal.stores.memory.hybrid import Hit, Signal, hybrid_top, lexical_top
from prefrontal.stores.memory.segment import Segment
from prefrontal.stores.memory.view import View
from prefrontal.stores.tenancy import Scope, Tenant

SHARED: tuple[bool, str] = (True, "")
"""The segment of the agent's shared items (a private segment is ``(False, user_id)``)."""


def segment_of(item: MemoryItem) -> tuple[bool, str]:
    """The segment ``item`` belongs in: the shared one, or its owner's private one."""
    return SHARED if item.scope is Scope.SHARED else (False, item.user_id)


class AgentIndex:
    """The items of one agent in segments, with the agent's BM25 statistics."""

    def __init__(self) -> None:
        self.docs = 0
        self.tokens = 0
        self.df: dict[str, int] = {}
        self.segments: dict[tuple[bool, str], Segment] = {}
        self.where: dict[str, tuple[bool, str]] = {}

    def __len__(self) -> int:
        return len(self.where)

    def put(self, doc: str, item: MemoryItem, text: str, vector: np.ndarray | None) -> None:
        """Index ``item`` under ``doc`` with the terms of ``text`` and its embedding ``vector``
        (float64, as put; ``None`` when it has none), replacing what ``doc`` held."""
        self.remove(doc)
        counts = Counter(analysed(text))
        place = segment_of(item)
        segment = self.segments.get(place)
        if segment is None:
            segment = self.segments[place] = Segment()
        segment.put(doc, item, counts, vector)
        self.where[doc] = place
        self.docs += 1
        self.tokens += sum(counts.values())
        df = self.df
        for term in counts:
            df[term] = df.get(term, 0) + 1

    def vector(self, doc: str) -> tuple[float, ...] | None:
        """The embedding ``doc``'s item was put with, as put; ``None`` when it had none."""
        place = self.where.get(doc)
        return None if place is None else self.segments[place].vector(doc)

    def mark(self, doc: str, item: MemoryItem) -> None:
        """Follow a change of ``item``'s supersession under ``doc``."""
        place = self.where.get(doc)
        if place is not None:
            self.segments[place].mark(doc, item)

    def remove(self, doc: str) -> None:
        """Forget ``doc`` (nothing when it is not held)."""
        place = self.where.pop(doc, None)
        if place is None:
            return
        segment = self.segments[place]
        held = segment.remove(doc)
        if not segment:
            del self.segments[place]
        if held is None:
            return
        words, length = held
        self.docs -= 1
        self.tokens -= length
        df = self.df
        for term in words:
            left = df[term] - 1
            if left:
                df[term] = left
            else:
                del df[term]

    def _visible(self, tenant: Tenant) -> list[Segment]:
        found = (self.segments.get((False, tenant.user_id)), self.segments.get(SHARED))
        return [segment for segment in found if segment is not None]

    def corpus(self) -> Corpus:
        return Corpus(docs=self.docs, tokens=self.tokens)

    def lexical_matches(
        self, tenant: Tenant, now: int, kinds: Collection[str] | None, terms: Sequence[str]
    ) -> LexicalMatches:
        """The allowed items holding one of ``terms`` with their counts; the agent's statistics."""
        candidates: list[Candidate] = []
        for segment in self._visible(tenant):
            counts = segment.counts(terms)
            held = np.flatnonzero(segment.allowed(now, kinds) & counts.any(axis=0))
            columns = counts[:, held].T.tolist()
            lengths = segment.length[held].tolist()
            candidates += [
                Candidate(segment.docs[slot], length, row)
                for slot, length, row in zip(held.tolist(), lengths, columns, strict=True)
            ]
        return LexicalMatches(
            corpus=self.corpus(),
            frequencies=[self.df.get(term, 0) for term in terms],
            candidates=candidates,
        )

    def cosines(
        self, tenant: Tenant, now: int, kinds: Collection[str] | None, query: np.ndarray
    ) -> dict[str, float]:
        """The cosine of unit ``query`` with each allowed item of its size, by document."""
        view = View(self._visible(tenant), now, kinds)
        embedded = view.embedded(len(query))
        values = view.exact(embedded, query).tolist()
        return dict(zip(view.docs(embedded), values, strict=True))

    def search(
        self,
        tenant: Tenant,
        now: int,
        kinds: Collection[str] | None,
        terms: Sequence[str],
        query: np.ndarray | None,
        limit: int,
    ) -> list[Hit]:
        """The best ``limit`` hits for ``terms`` (sorted) and unit ``query`` (``None``: lexical).

        As :func:`~prefrontal.stores.capabilities.ranked_search` ranks
        (:mod:`prefrontal.stores.memory.hybrid`), over the tenant's segment
        and the shared one only.
        """
        segments = self._visible(tenant)
        if not segments:
            return []
        view = View(segments, now, kinds)
        corpus = self.corpus()
        if terms and corpus.docs:
            weights = [idf(corpus.docs, self.df.get(term, 0)) for term in terms]
            lexical = Signal(*view.bm25(terms, weights, corpus.average))
        else:
            lexical = Signal(np.zeros(0, dtype=np.int64), np.zeros(0))
        if query is None:
            return lexical_top(view, lexical, limit)
        return hybrid_top(view, lexical, query, limit)
