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
every allowed item holding a query term, the cosine of every allowed
embedded item, normalises and fuses them and picks the top k, all over
numpy arrays (:mod:`prefrontal.retrieval.scored_arrays`): the hits, scores
and signals :func:`~prefrontal.stores.capabilities.ranked_search` gives
for the same candidates, without a dictionary per candidate.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

import numpy as np

from prefrontal.retrieval.analysis import terms as analysed
from prefrontal.retrieval.fusion import SIGNAL_WEIGHTS
from prefrontal.retrieval.ranking import Candidate, Corpus, LexicalMatches, idf
from prefrontal.retrieval.scored_arrays import above_typical, best_positions, max_normalised
from prefrontal.stores.long_term import MemoryItem
from prefrontal.stores.memory.segment import Segment
from prefrontal.stores.tenancy import Scope, Tenant

SHARED: tuple[bool, str] = (True, "")
"""The segment of the agent's shared items (a private segment is ``(False, user_id)``)."""


def segment_of(item: MemoryItem) -> tuple[bool, str]:
    """The segment ``item`` belongs in: the shared one, or its owner's private one."""
    return SHARED if item.scope is Scope.SHARED else (False, item.user_id)


@dataclass(frozen=True, slots=True)
class Hit:
    """A search's hit: its document (index id), fused score and own signals."""

    doc: str
    score: float
    signals: dict[str, float]


@dataclass
class _Signal:
    """One signal over the segments searched: per segment, the slots it scored and their values."""

    slots: list[np.ndarray] = field(default_factory=list)
    values: list[np.ndarray] = field(default_factory=list)

    def joined(self) -> np.ndarray:
        return np.concatenate(self.values) if self.values else np.zeros(0)


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

    def put(self, doc: str, item: MemoryItem, text: str) -> None:
        """Index ``item`` under ``doc`` with the terms of ``text``, replacing what ``doc`` held."""
        self.remove(doc)
        counts = Counter(analysed(text))
        place = segment_of(item)
        segment = self.segments.get(place)
        if segment is None:
            segment = self.segments[place] = Segment()
        segment.put(doc, item, counts)
        self.where[doc] = place
        self.docs += 1
        self.tokens += sum(counts.values())
        df = self.df
        for term in counts:
            df[term] = df.get(term, 0) + 1

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
        segments = self._visible(tenant)
        allowed = [segment.allowed(now, kinds) for segment in segments]
        signal = _vector(segments, allowed, query)
        out: dict[str, float] = {}
        for segment, slots, values in zip(segments, signal.slots, signal.values, strict=True):
            docs = segment.docs
            out |= zip([docs[s] for s in slots.tolist()], values.tolist(), strict=True)
        return out

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

        As :func:`~prefrontal.stores.capabilities.ranked_search` ranks: BM25
        alone without ``query``, else BM25 normalised by its best and the
        clamped cosine by its median and best, weighted and summed; keys
        scoring 0 left out; ties broken by document.
        """
        segments = self._visible(tenant)
        if not segments:
            return []
        allowed = [segment.allowed(now, kinds) for segment in segments]
        lexical = self._lexical(segments, allowed, terms)
        if query is None:
            return self._best(segments, lexical, None, lexical.joined(), limit)
        vector = _vector(segments, allowed, query)
        vector.values = [np.maximum(values, 0.0) for values in vector.values]
        bm25 = max_normalised(lexical.joined())
        near = above_typical(vector.joined())
        fused = self._fused(segments, lexical, bm25, vector, near)
        return self._best(segments, lexical, vector, fused, limit)

    def _lexical(
        self, segments: list[Segment], allowed: list[np.ndarray], terms: Sequence[str]
    ) -> _Signal:
        """Each segment's allowed slots holding a query term and their BM25 scores."""
        signal = _Signal()
        corpus = self.corpus()
        if not terms or not corpus.docs:
            for _ in segments:
                signal.slots.append(np.zeros(0, dtype=np.int64))
                signal.values.append(np.zeros(0))
            return signal
        weights = [idf(corpus.docs, self.df.get(term, 0)) for term in terms]
        for segment, mask in zip(segments, allowed, strict=True):
            scores = segment.bm25(terms, weights, corpus.average)
            slots = np.flatnonzero(mask & (scores > 0))
            signal.slots.append(slots)
            signal.values.append(scores[slots])
        return signal

    @staticmethod
    def _fused(
        segments: list[Segment],
        lexical: _Signal,
        bm25: np.ndarray,
        vector: _Signal,
        near: np.ndarray,
    ) -> np.ndarray:
        """The fused score of every slot of every segment searched, segment after segment.

        As :func:`~prefrontal.retrieval.fusion.fuse` adds: 0.0, plus the
        weighted BM25 part, plus the weighted vector part (0.0 where
        neither signal scored the slot).
        """
        lexical_weight = SIGNAL_WEIGHTS.get("bm25", 1.0)
        vector_weight = SIGNAL_WEIGHTS.get("vector", 1.0)
        parts: list[np.ndarray] = []
        lexical_at = vector_at = 0
        for index, segment in enumerate(segments):
            dense = np.zeros(segment.size)
            slots = lexical.slots[index]
            dense[slots] += lexical_weight * bm25[lexical_at : lexical_at + len(slots)]
            lexical_at += len(slots)
            slots = vector.slots[index]
            dense[slots] += vector_weight * near[vector_at : vector_at + len(slots)]
            vector_at += len(slots)
            parts.append(dense)
        return np.concatenate(parts)

    def _best(
        self,
        segments: list[Segment],
        lexical: _Signal,
        vector: _Signal | None,
        scores: np.ndarray,
        limit: int,
    ) -> list[Hit]:
        """The hits of the ``limit`` best positive ``scores``, ordered by score then document.

        ``scores`` are the lexical candidates' (segment after segment)
        without ``vector``, else every slot's of every segment.
        """
        if vector is None:
            sizes = [len(slots) for slots in lexical.slots]
        else:
            sizes = [segment.size for segment in segments]
        starts = np.cumsum([0, *sizes])
        picked = best_positions(scores, limit)
        owners = np.searchsorted(starts, picked, side="right") - 1
        ranked: list[tuple[float, str, int, int]] = []
        for position, index in zip(picked.tolist(), owners.tolist(), strict=True):
            offset = position - int(starts[index])
            slot = int(lexical.slots[index][offset]) if vector is None else offset
            ranked.append((-float(scores[position]), segments[index].docs[slot], index, slot))
        ranked.sort()
        return [
            Hit(doc, -negative, _own(lexical, vector, index, slot))
            for negative, doc, index, slot in ranked[:limit]
        ]


def _vector(segments: list[Segment], allowed: list[np.ndarray], query: np.ndarray) -> _Signal:
    """Each segment's allowed slots with a vector of unit ``query``'s size, and their cosines."""
    signal = _Signal()
    for segment, mask in zip(segments, allowed, strict=True):
        found = segment.cosines(query)
        if found is None:
            signal.slots.append(np.zeros(0, dtype=np.int64))
            signal.values.append(np.zeros(0))
            continue
        has, cosines = found
        slots = np.flatnonzero(has & mask)
        signal.slots.append(slots)
        signal.values.append(cosines[slots])
    return signal


def _own(lexical: _Signal, vector: _Signal | None, index: int, slot: int) -> dict[str, float]:
    """The signals that scored ``slot`` of segment ``index``, with their values."""
    own: dict[str, float] = {}
    for name, signal in (("bm25", lexical), ("vector", vector)):
        if signal is None:
            continue
        slots = signal.slots[index]
        found = int(np.searchsorted(slots, slot))
        if found < len(slots) and int(slots[found]) == slot:
            own[name] = float(signal.values[index][found])
    return own
