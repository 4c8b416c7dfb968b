"""One segment of an agent's in-memory index: the items one tenant class sees together.

An agent's items fall in segments by who may see them: each user's private
items are a segment, the agent's shared items another
(:mod:`prefrontal.stores.memory.agent_index`). A tenant's search reads its
own segment and the shared one and nothing else, so what it costs follows
what it may see, not what other users of the agent hold.

A segment numbers its items by slot and keeps, as arrays indexed by slot,
what search filters and scores on: whether the slot holds an item, whether
the item was superseded, when it expires (µs), its kind and its length in
terms; per term, the slots holding it and how often (:class:`TermPostings`,
numpy arrays that grow by doubling); per vector size, each embedded item's
unit vector as a row of one float64 matrix, with what gives back the
vector as put, and again in fewer bytes for screening
(:class:`VectorColumn`).

**Deletions.** A removed item's slot is cleared at once (searches never
see it again) but the postings naming it are left in place, stale, and the
slot is not reused while they are: :meth:`Segment.remove` compacts every
posting list when stale entries outnumber live ones, then frees the slots.
Each removal costs the same amortised, and postings stay in step. A
removed item's vector is zeroed in every array at once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence

import numpy as np

from prefrontal.retrieval.scored_arrays import term_scores
from prefrontal.retrieval.vector_index import grown_to
from prefrontal.stores.long_term import MemoryItem
from prefrontal.stores.memory import half
from prefrontal.stores.memory.vectors import FOREVER, length, microseconds

COMPACT_AT = 1_024
"""Stale postings entries are dropped once more than this many, and more than live ones."""


class TermPostings:
    """The slots holding one term in a segment and the term's count in each, in arrays.

    ``slots[:n]`` and ``counts[:n]`` are the entries; a slot appears at most
    once (it is not reused while an entry names it).
    """

    __slots__ = ("counts", "n", "slots")

    def __init__(self) -> None:
        self.slots = np.zeros(4, dtype=np.int64)
        self.counts = np.zeros(4, dtype=np.int32)
        self.n = 0

    def append(self, slot: int, count: int) -> None:
        """Add ``slot`` holding the term ``count`` times."""
        if self.n == len(self.slots):
            self.slots = grown_to(self.slots, 2 * self.n)
            self.counts = grown_to(self.counts, 2 * self.n)
        self.slots[self.n] = slot
        self.counts[self.n] = count
        self.n += 1

    def keep(self, present: np.ndarray) -> None:
        """Drop the entries whose slot ``present`` says is empty."""
        slots, counts = self.slots[: self.n], self.counts[: self.n]
        kept = present[slots]
        self.slots, self.counts = slots[kept].copy(), counts[kept].copy()
        self.n = len(self.slots)


class VectorColumn:
    """The vectors of one size held in a segment: row ``slot`` when ``has[slot]``.

    ``matrix`` holds them scaled to unit length in float64 (the cosines
    search returns), ``scale`` the length each was divided by
    (:func:`~prefrontal.stores.memory.vectors.length`): multiplied back,
    a row gives the vector as put, float for float, save the components
    where the division rounded (none, for vectors of length 1 as most
    embedders give); ``fixes`` holds those components of a row, their
    indices and their floats as put. So each vector is held once, and
    :meth:`vector` gives back the very floats put
    (:mod:`prefrontal.stores.memory.memory` keeps items without them). For
    screening (:mod:`prefrontal.stores.memory.view`), fewer bytes to read:
    ``half``, the same in float16, when the half-precision kernels run
    (:data:`~prefrontal.stores.memory.half.KERNELS`), with ``half_error``
    the longest difference of a row held from its float16 rounding; else
    ``single``, the same in float32. ``columns`` holds them again in
    float32, one row per component, so that a sparse query reads only its
    nonzero components of every slot; ``support`` which components of each
    are not zero, a bit each (``numpy.packbits``), one row of bytes per
    eight components. A cleared slot (:meth:`clear`) is zeros in every
    array and has no fixes.
    """

    __slots__ = (
        "columns",
        "fixes",
        "half",
        "half_error",
        "has",
        "matrix",
        "scale",
        "single",
        "support",
    )

    def __init__(self, dimensions: int, capacity: int) -> None:
        self.matrix = np.zeros((capacity, dimensions), dtype=np.float64)
        self.scale = np.zeros(capacity, dtype=np.float64)
        self.fixes: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self.half: np.ndarray | None = None
        self.single: np.ndarray | None = None
        if half.KERNELS is not None:
            self.half = np.zeros((capacity, dimensions), dtype=np.float16)
        else:
            self.single = np.zeros((capacity, dimensions), dtype=np.float32)
        self.half_error = 0.0
        self.columns = np.zeros((dimensions, capacity), dtype=np.float32)
        self.support = np.zeros(((dimensions + 7) // 8, capacity), dtype=np.uint8)
        self.has = np.zeros(capacity, dtype=bool)

    def put(self, slot: int, vector: np.ndarray) -> None:
        """Hold ``vector`` (float64, as put) at ``slot``, as its unit vector and length."""
        scale = length(vector)
        row = vector / scale
        self.matrix[slot] = row
        self.scale[slot] = scale
        wrong = np.flatnonzero(_bits(row * scale) != _bits(vector))
        if len(wrong):
            self.fixes[slot] = (wrong, vector[wrong])
        if self.half is not None:
            self.half[slot] = row
            error = half.rounding_error(row, self.half[slot])
            self.half_error = max(self.half_error, error)
        if self.single is not None:
            self.single[slot] = row
        self.columns[:, slot] = row
        self.support[:, slot] = np.packbits(row != 0)
        self.has[slot] = True

    def vector(self, slot: int) -> tuple[float, ...]:
        """The vector held at ``slot``: the floats it was put with."""
        out = self.matrix[slot]
        scale = float(self.scale[slot])
        if scale != 1.0:  # times 1.0 changes no float
            out = out * scale
        fix = self.fixes.get(slot)
        if fix is not None:
            out = out.copy() if scale == 1.0 else out  # never write into the matrix
            out[fix[0]] = fix[1]
        return tuple(out.tolist())

    def clear(self, slot: int) -> None:
        """Forget the vector at ``slot``: zeros in every array, no fixes."""
        self.matrix[slot] = 0.0
        self.scale[slot] = 0.0
        self.fixes.pop(slot, None)
        if self.half is not None:
            self.half[slot] = 0.0
        if self.single is not None:
            self.single[slot] = 0.0
        self.columns[:, slot] = 0.0
        self.support[:, slot] = 0
        self.has[slot] = False

    def grow(self, capacity: int) -> None:
        self.matrix, self.has = grown_to(self.matrix, capacity), grown_to(self.has, capacity)
        self.scale = grown_to(self.scale, capacity)
        if self.half is not None:
            self.half = grown_to(self.half, capacity)
        if self.single is not None:
            self.single = grown_to(self.single, capacity)
        self.columns = grown_to(self.columns.T, capacity).T.copy()
        self.support = grown_to(self.support.T, capacity).T.copy()


def _bits(vector: np.ndarray) -> np.ndarray:
    """The bits of float64 ``vector``'s components (``-0.0`` is not ``0.0``)."""
    out: np.ndarray = vector.view(np.int64)
    return out


class Segment:
    """Items by slot, their term postings and their vectors: see the module."""

    def __init__(self) -> None:
        self.size = 0
        """Slots in use or freed: every array is read up to here."""
        self.slots: dict[str, int] = {}
        """Each held document (the store's index id) and its slot."""
        self.docs: list[str] = []
        self.terms: list[tuple[str, ...]] = []
        """Each slot's distinct terms (to forget them when it is removed)."""
        self.present = np.zeros(0, dtype=bool)
        self.dead = np.zeros(0, dtype=bool)
        self.until = np.zeros(0, dtype=np.int64)
        self.kind = np.zeros(0, dtype=np.int32)
        self.length = np.zeros(0, dtype=np.int64)
        self.postings: dict[str, TermPostings] = {}
        self.vectors: dict[int, VectorColumn] = {}
        self.free: list[int] = []
        """Slots no posting names: reused first."""
        self.freed: list[int] = []
        """Slots of removed items that stale postings still name."""
        self.entries = 0
        """Postings entries, stale ones included."""
        self.stale = 0
        self._kinds: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self.slots)

    def put(
        self, doc: str, item: MemoryItem, counts: Counter[str], vector: np.ndarray | None
    ) -> None:
        """Hold ``item`` under ``doc`` with its term ``counts`` and embedding ``vector`` (float64,
        as put; ``None`` when it has none) (:meth:`remove` ``doc`` first)."""
        slot = self._slot()
        self.slots[doc] = slot
        self.docs[slot] = doc
        self.terms[slot] = tuple(counts)
        self.present[slot] = True
        self.dead[slot] = item.superseded_by is not None
        self.until[slot] = FOREVER if item.valid_until is None else microseconds(item.valid_until)
        self.kind[slot] = self._kinds.setdefault(item.kind, len(self._kinds))
        self.length[slot] = sum(counts.values())
        for term, count in counts.items():
            posting = self.postings.get(term)
            if posting is None:
                posting = self.postings[term] = TermPostings()
            posting.append(slot, count)
        self.entries += len(counts)
        if vector is not None and len(vector):
            column = self.vectors.get(len(vector))
            if column is None:
                column = self.vectors[len(vector)] = VectorColumn(len(vector), len(self.present))
            column.put(slot, vector)

    def mark(self, doc: str, item: MemoryItem) -> None:
        """Follow a change of ``item``'s supersession under ``doc``."""
        slot = self.slots.get(doc)
        if slot is not None:
            self.dead[slot] = item.superseded_by is not None

    def remove(self, doc: str) -> tuple[tuple[str, ...], int] | None:
        """Forget ``doc``: its distinct terms and length, or ``None`` when it was not held."""
        slot = self.slots.pop(doc, None)
        if slot is None:
            return None
        held = self.terms[slot], int(self.length[slot])
        self.present[slot] = False
        self.docs[slot], self.terms[slot] = "", ()
        for column in self.vectors.values():
            if column.has[slot]:
                column.clear(slot)
        self.freed.append(slot)
        self.stale += len(held[0])
        if self.stale > COMPACT_AT and 2 * self.stale > self.entries:
            self._compact()
        return held

    def vector(self, doc: str) -> tuple[float, ...] | None:
        """The vector ``doc`` was put with, or ``None`` when it had none (or is not held)."""
        slot = self.slots.get(doc)
        if slot is None:
            return None
        for column in self.vectors.values():
            if column.has[slot]:
                return column.vector(slot)
        return None

    def allowed(self, now: int, kinds: Collection[str] | None) -> np.ndarray:
        """Whether each slot holds an item live at ``now`` (µs) of ``kinds`` (any when ``None``)."""
        n = self.size
        mask: np.ndarray = self.present[:n] & ~self.dead[:n] & (self.until[:n] > now)
        if kinds is not None:
            codes = [self._kinds[kind] for kind in kinds if kind in self._kinds]
            mask &= np.isin(self.kind[:n], codes)
        return mask

    def bm25(self, terms: Sequence[str], weights: Sequence[float], average: float) -> np.ndarray:
        """Each slot's BM25 score for ``terms`` of IDF ``weights``: 0.0 where it holds none.

        Term scores are added in the order of ``terms`` (sorted), from 0.0,
        as :class:`~prefrontal.retrieval.ranking.Scorer` adds them. Removed
        slots may score: :meth:`allowed` leaves them out.

        Every held term's entries are scored at once, then summed into their
        slots by ``bincount``, which adds in the order given (term after
        term): each slot's sum is the one a term-by-term loop makes, to the bit.
        """
        postings = self.postings
        held = [
            (posting, weight)
            for term, weight in zip(terms, weights, strict=True)
            if (posting := postings.get(term)) is not None and posting.n
        ]
        if not held:
            return np.zeros(self.size)
        if len(held) == 1:
            ((posting, weight),) = held
            slots, counts = posting.slots[: posting.n], posting.counts[: posting.n]
            each: float | np.ndarray = weight
        else:
            slots = np.concatenate([posting.slots[: posting.n] for posting, _ in held])
            counts = np.concatenate([posting.counts[: posting.n] for posting, _ in held])
            each = np.array([weight for _, weight in held]).repeat([p.n for p, _ in held])
        values = term_scores(each, counts, self.length[slots], average)
        scores: np.ndarray = np.bincount(slots, weights=values, minlength=self.size)
        return scores

    def counts(self, terms: Sequence[str]) -> np.ndarray:
        """How often each slot holds each of ``terms``: one row per term."""
        out = np.zeros((len(terms), self.size), dtype=np.int64)
        for row, term in enumerate(terms):
            posting = self.postings.get(term)
            if posting is not None:
                out[row, posting.slots[: posting.n]] = posting.counts[: posting.n]
        return out

    def _compact(self) -> None:
        keep_present(self.postings, self.present)
        self.entries -= self.stale
        self.stale = 0
        self.free.extend(self.freed)
        self.freed.clear()

    def _slot(self) -> int:
        if self.free:
            return self.free.pop()
        if self.size == len(self.present):
            self._grow(max(64, 2 * self.size))
        self.docs.append("")
        self.terms.append(())
        self.size += 1
        return self.size - 1

    def _grow(self, capacity: int) -> None:
        self.present, self.dead = grown_to(self.present, capacity), grown_to(self.dead, capacity)
        self.until, self.kind = grown_to(self.until, capacity), grown_to(self.kind, capacity)
        self.length = grown_to(self.length, capacity)
        for column in self.vectors.values():
            column.grow(capacity)


def keep_present(postings: dict[str, TermPostings], present: np.ndarray) -> None:
    """Compact every posting of ``postings`` to the slots ``present`` marks, dropping the
    terms none of whose holders is left."""
    for term in list(postings):
        posting = postings[term]
        posting.keep(present)
        if not posting.n:
            del postings[term]
