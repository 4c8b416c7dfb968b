"""The segments one tenant may see, read as one run of positions.

A search reads a tenant's own segment and the agent's shared one
(:mod:`prefrontal.stores.memory.agent_index`); a :class:`View` numbers
their slots one segment after the other, so that each signal is an array
of positions and values, and fusion adds arrays. Which items are allowed
(live at the query's time, of its kinds) is one mask over those positions.

Cosines come two ways. :meth:`View.exact` is the float64 cosine of unit
vectors, computed one row at a time by ``einsum`` (each row's value does
not depend on which other rows are computed with it, so every path of a
search gives a row the same bits). :meth:`View.screened` is a cosine
of every embedded row read in fewer bytes, within a proven bound of the
exact one: from float16 rows with SIMD kernels
(:mod:`prefrontal.stores.memory.half`), else from float32 ones within
:func:`tolerance`. Both run in one thread rather than BLAS's: on a loaded
machine a threaded matrix-vector product waits for a core (p50 6.1 ms
against 2.9 for the same 50,000 rows).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from itertools import accumulate

import numpy as np

from prefrontal.stores.memory import half
from prefrontal.stores.memory.segment import Segment

UNIT_ROUNDING = 2.0**-24
"""The unit roundoff of float32."""


def tolerance(dimensions: int) -> float:
    """How far a float32 cosine of unit vectors of ``dimensions`` may be from the float64 one.

    Rounding each factor to float32 moves the dot product by at most
    ``2u`` (``u`` the unit roundoff; the sum of the absolute products of
    two unit vectors is at most 1), and summing ``n`` products in float32,
    in any order, by at most ``n u / (1 - n u)``; clamping at 0 moves
    nothing further. A margin of 1 % on top.
    """
    n = dimensions + 3
    return 1.01 * n * UNIT_ROUNDING / (1 - n * UNIT_ROUNDING)


ALIKE_FROM = 256
"""From this many rows, :meth:`View.exact` computes rows alike for a sparse query once."""


def sparse(query: np.ndarray) -> bool:
    """Whether ``query`` is nonzero in at most a quarter of its components."""
    return 4 * int(np.count_nonzero(query)) <= len(query)


class View:
    """The positions of ``segments``, one after the other, and which are allowed."""

    def __init__(
        self, segments: Sequence[Segment], now: int, kinds: Collection[str] | None
    ) -> None:
        self.segments = list(segments)
        sizes = [segment.size for segment in self.segments]
        self.starts = np.array([*accumulate(sizes, initial=0)])
        self.total = int(self.starts[-1])
        masks = [segment.allowed(now, kinds) for segment in self.segments]
        self.allowed: np.ndarray = _joined(masks, bool)

    def docs_at(self, positions: np.ndarray) -> list[str]:
        """The documents at ``positions`` (any order), in the order given (their segments
        found in one search)."""
        if len(positions) == 0:
            return []
        indexes = np.searchsorted(self.starts, positions, side="right") - 1
        offsets = (positions - self.starts[indexes]).tolist()
        segments = self.segments
        return [
            segments[index].docs[offset]
            for index, offset in zip(indexes.tolist(), offsets, strict=True)
        ]

    def docs(self, positions: np.ndarray) -> list[str]:
        """The documents at ``positions`` (sorted), in order."""
        out: list[str] = []
        bounds = np.searchsorted(positions, self.starts)
        for index, segment in enumerate(self.segments):
            slots = positions[int(bounds[index]) : int(bounds[index + 1])] - int(self.starts[index])
            docs = segment.docs
            out += [docs[slot] for slot in slots.tolist()]
        return out

    def bm25(
        self, terms: Sequence[str], weights: Sequence[float], average: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """The allowed positions holding one of ``terms`` and their BM25 scores."""
        parts = [segment.bm25(terms, weights, average) for segment in self.segments]
        scores = _joined(parts, np.float64)
        positions = (self.allowed & (scores > 0)).nonzero()[0]
        return positions, scores[positions]

    def embedded(self, dimensions: int) -> np.ndarray:
        """The allowed positions with a vector of ``dimensions``."""
        parts = []
        for segment in self.segments:
            column = segment.vectors.get(dimensions)
            if column is None:
                parts.append(np.zeros(segment.size, dtype=bool))
            else:
                parts.append(column.has[: segment.size])
        has = np.concatenate(parts) if parts else np.zeros(0, dtype=bool)
        return np.flatnonzero(has & self.allowed)

    def exact(self, positions: np.ndarray, query: np.ndarray) -> np.ndarray:
        """The float64 cosine of unit ``query`` with the row at each of ``positions`` (sorted).

        For a sparse query (:func:`sparse`) and many rows, rows alike where
        the query is not zero are computed once: the others' components
        add exact zeros, so such rows have the same cosine, to the bit.
        """
        out = np.zeros(len(positions))
        bounds = np.searchsorted(positions, self.starts)
        nonzero = np.flatnonzero(query) if sparse(query) else None
        for index, segment in enumerate(self.segments):
            low, high = int(bounds[index]), int(bounds[index + 1])
            if low == high:
                continue
            matrix = segment.vectors[len(query)].matrix
            slots = positions[low:high] - int(self.starts[index])
            if nonzero is not None and len(slots) > ALIKE_FROM:
                seen = np.ascontiguousarray(matrix[slots[:, None], nonzero[None, :]])
                keys = seen.view(np.dtype((np.void, seen.dtype.itemsize * len(nonzero))))
                _, first, inverse = np.unique(keys.ravel(), return_index=True, return_inverse=True)
                once = np.einsum("ij,j->i", matrix[slots[first]], query)
                out[low:high] = once[inverse.ravel()]
            elif 4 * len(slots) > segment.size:
                out[low:high] = np.einsum("ij,j->i", matrix[: segment.size], query)[slots]
            else:
                out[low:high] = np.einsum("ij,j->i", matrix[slots], query)
        return out

    def disjoint(self, positions: np.ndarray, query: np.ndarray) -> np.ndarray:
        """Whether the row at each of ``positions`` (sorted) has no nonzero component where
        ``query`` has one: its cosine with ``query`` is then exactly 0."""
        out = np.zeros(len(positions), dtype=bool)
        bits = np.packbits(query != 0)
        touched = np.flatnonzero(bits)
        bounds = np.searchsorted(positions, self.starts)
        for index, segment in enumerate(self.segments):
            low, high = int(bounds[index]), int(bounds[index + 1])
            if low == high:
                continue
            support = segment.vectors[len(query)].support
            shared = np.zeros(segment.size, dtype=bool)
            for byte in touched.tolist():
                shared |= (support[byte, : segment.size] & bits[byte]) != 0
            out[low:high] = ~shared[positions[low:high] - int(self.starts[index])]
        return out

    def screened(self, positions: np.ndarray, query: np.ndarray) -> tuple[np.ndarray, float]:
        """The screening cosine of unit ``query`` with the row at each of ``positions``
        (sorted), as float64, and how far any may be from :meth:`exact`'s.

        A sparse query (:func:`sparse`) reads only its nonzero components
        of each row in float32, the rest would add exact zeros (within
        :func:`tolerance`); a dense one reads every row in float16 with
        SIMD kernels when the segment holds them
        (:func:`~prefrontal.stores.memory.half.tolerance`), else in float32.
        A segment all of whose slots are wanted is copied whole, not
        gathered slot by slot.
        """
        out = np.empty(len(positions))
        tie = tolerance(len(query))
        nonzero = np.flatnonzero(query)
        single = query.astype(np.float32)
        rounded = query.astype(np.float16)
        query_error = half.rounding_error(query, rounded)
        bounds = np.searchsorted(positions, self.starts)
        for index, segment in enumerate(self.segments):
            low, high = int(bounds[index]), int(bounds[index + 1])
            if low == high:
                continue
            column = segment.vectors[len(query)]
            if sparse(query):
                rows = column.columns[nonzero, : segment.size]
                found = np.einsum("j,ji->i", single[nonzero], rows)
            elif column.half is not None:
                found = half.dots(column.half[: segment.size], rounded)
                bound = half.tolerance(len(query), column.half_error, query_error)
                tie = max(tie, bound)
            else:
                assert column.single is not None
                found = np.einsum("ij,j->i", column.single[: segment.size], single)
            if high - low == segment.size:
                out[low:high] = found
            else:
                out[low:high] = found[positions[low:high] - int(self.starts[index])]
        return out, tie


def _joined(parts: list[np.ndarray], dtype: type) -> np.ndarray:
    """``parts`` one after the other: the one part itself when there is one (every part is
    made fresh for the view and only read), else a new array (empty of ``dtype`` when none)."""
    if len(parts) == 1:
        return parts[0]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)
