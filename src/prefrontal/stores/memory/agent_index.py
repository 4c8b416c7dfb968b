"""One agent's in-memory search index: segments by who may see them, statistics per segment.

**Cost isolation.** Each user's private items are a
:class:`~prefrontal.stores.memory.segment.Segment`, the agent's shared items
another. A tenant's search reads two segments, its own and the shared one:
the postings, filters and vectors of other users' private items are never
read, so another user's 50,000 items do not slow it.

**Statistics are the reader's.** BM25's collection statistics (documents,
their total length, each term's document frequency) are kept per segment
and a search adds those of the two segments it reads, as
:class:`~prefrontal.retrieval.ranking.Corpus` says: a tenant's scores count
its own items and the agent's shared ones, live or not, and nothing another
user wrote privately.

**One search, in arrays.** :meth:`AgentIndex.search` scores the BM25 of
every allowed item holding a query term and fuses it with the cosine of
the allowed embedded items over numpy arrays
(:mod:`prefrontal.stores.memory.hybrid`): the hits, scores and signals
:func:`~prefrontal.stores.capabilities.ranked_search` gives for the same
candidates, without a dictionary per candidate.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Hashable, Sequence

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


class Statistics:
    """BM25's counts over the items of one segment: items, their total length, holders per term."""

    __slots__ = ("df", "docs", "tokens")

    def __init__(self) -> None:
        self.docs = 0
        self.tokens = 0
        self.df: dict[str, int] = {}

    def add(self, words: Collection[str], length: int) -> None:
        """Count an item of ``length`` terms holding the distinct terms ``words``."""
        self.docs += 1
        self.tokens += length
        df = self.df
        for term in words:
            df[term] = df.get(term, 0) + 1

    def remove(self, words: Collection[str], length: int) -> None:
        """Count out an item :meth:`add` counted (a term held by none is dropped)."""
        self.docs -= 1
        self.tokens -= length
        df = self.df
        for term in words:
            left = df[term] - 1
            if left:
                df[term] = left
            else:
                del df[term]


class AgentIndex:
    """The items of one agent in segments, each segment with its BM25 statistics."""

    def __init__(self) -> None:
        self.statistics: dict[tuple[bool, str], Statistics] = {}
        self.segments: dict[tuple[bool, str], Segment] = {}
        self.where: dict[str, tuple[bool, str]] = {}
        self._scored: tuple[Hashable, View, Signal] | None = None
        """The last search's view and BM25 signal, by what they depend on (:meth:`_lexical`);
        forgotten by every change of the index."""

    def __len__(self) -> int:
        return len(self.where)

    def put(self, doc: str, item: MemoryItem, text: str, vector: np.ndarray | None) -> None:
        """Index ``item`` under ``doc`` with the terms of ``text`` and its embedding ``vector``
        (float64, as put; ``None`` when it has none), replacing what ``doc`` held."""
        self.remove(doc)
        self._scored = None
        counts = Counter(analysed(text))
        place = segment_of(item)
        segment = self.segments.get(place)
        if segment is None:
            segment = self.segments[place] = Segment()
        segment.put(doc, item, counts, vector)
        self.where[doc] = place
        statistics = self.statistics.get(place)
        if statistics is None:
            statistics = self.statistics[place] = Statistics()
        statistics.add(counts.keys(), sum(counts.values()))

    def vector(self, doc: str) -> tuple[float, ...] | None:
        """The embedding ``doc``'s item was put with, as put; ``None`` when it had none."""
        place = self.where.get(doc)
        return None if place is None else self.segments[place].vector(doc)

    def mark(self, doc: str, item: MemoryItem) -> None:
        """Follow a change of ``item``'s supersession under ``doc``."""
        place = self.where.get(doc)
        self._scored = None
        if place is not None:
            self.segments[place].mark(doc, item)

    def remove(self, doc: str) -> None:
        """Forget ``doc`` (nothing when it is not held)."""
        place = self.where.pop(doc, None)
        self._scored = None
        if place is None:
            return
        segment = self.segments[place]
        held = segment.remove(doc)
        if not segment:
            del self.segments[place]
        if held is None:
            return
        words, length = held
        statistics = self.statistics[place]
        statistics.remove(words, length)
        if not statistics.docs:
            del self.statistics[place]

    def _visible(self, tenant: Tenant) -> list[Segment]:
        found = (self.segments.get((False, tenant.user_id)), self.segments.get(SHARED))
        return [segment for segment in found if segment is not None]

    def _read(self, tenant: Tenant) -> list[Statistics]:
        places = ((False, tenant.user_id), SHARED)
        return [self.statistics[place] for place in places if place in self.statistics]

    def corpus(self, tenant: Tenant) -> Corpus:
        """The collection ``tenant`` searches: its own items and the agent's shared ones."""
        read = self._read(tenant)
        return Corpus(docs=sum(s.docs for s in read), tokens=sum(s.tokens for s in read))

    def frequencies(self, tenant: Tenant, terms: Sequence[str]) -> list[int]:
        """How many items of ``tenant``'s collection hold each of ``terms``."""
        counts = [0] * len(terms)
        for statistics in self._read(tenant):
            get = statistics.df.get
            counts = [count + get(term, 0) for count, term in zip(counts, terms, strict=True)]
        return counts

    def lexical_matches(
        self, tenant: Tenant, now: int, kinds: Collection[str] | None, terms: Sequence[str]
    ) -> LexicalMatches:
        """The allowed items holding one of ``terms`` with their counts; the tenant's statistics."""
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
            corpus=self.corpus(tenant),
            frequencies=self.frequencies(tenant, terms),
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
        found = self._lexical(tenant, now, kinds, terms)
        if found is None:
            return []
        view, lexical = found
        if query is None:
            return lexical_top(view, lexical, limit)
        return hybrid_top(view, lexical, query, limit)

    def _lexical(
        self, tenant: Tenant, now: int, kinds: Collection[str] | None, terms: Sequence[str]
    ) -> tuple[View, Signal] | None:
        """The view ``tenant`` searches at ``now`` for ``kinds`` and the BM25 of ``terms`` over
        it (``None`` when it sees no segment).

        Remembered for the next search until the index changes: a turn probes
        its input with a few hits, then searches it for many (same tenant,
        time, kinds and terms), and the second search only ranks again.
        """
        key = (tenant.user_id, now, None if kinds is None else tuple(kinds), tuple(terms))
        scored = self._scored
        if scored is not None and scored[0] == key:
            return scored[1], scored[2]
        segments = self._visible(tenant)
        if not segments:
            return None
        view = View(segments, now, kinds)
        corpus = self.corpus(tenant)
        if terms and corpus.docs:
            weights = [idf(corpus.docs, n) for n in self.frequencies(tenant, terms)]
            lexical = Signal(*view.bm25(terms, weights, corpus.average))
        else:
            lexical = Signal(np.zeros(0, dtype=np.int64), np.zeros(0))
        self._scored = (key, view, lexical)
        return view, lexical
