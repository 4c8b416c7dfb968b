"""The top k of a search over a :class:`~prefrontal.stores.memory.view.View`, fused in arrays.

What :func:`~prefrontal.stores.memory_search.best_hits` gives for the
signals :func:`~prefrontal.stores.capabilities.gather_signals` gathers:
BM25 alone (:func:`lexical_top`), or BM25 normalised by its best and the
clamped cosine placed between its median and its best, weighted and added
(:func:`hybrid_top`); keys scoring 0 left out, ties broken by document.

**Screening.** The vector signal needs the exact median and best of every
embedded row's cosine, and the exact fused score of the rows that may
reach the top k; no other row's exact cosine matters. Over many rows,
:func:`hybrid_top` reads the float32 matrix (half the bytes of the float64
one), each cosine within a proven :func:`~prefrontal.stores.memory.view.tolerance`
of the exact one, and computes exact cosines only for the rows that bound
can not settle: those near the best, those near the median (but for rows
sharing no nonzero component with a sparse query: exactly 0), and those
whose fused score may reach the k-th. When more than :data:`CAP` rows are
unsettled (many rows tied at the median, or a best hardly above it), it
computes every row's exact cosine instead. Either way the hits and scores
are those of the exact computation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from prefrontal.retrieval.fusion import SIGNAL_WEIGHTS
from prefrontal.retrieval.scored_arrays import above_typical, best_positions, max_normalised
from prefrontal.stores.memory.view import View, sparse, tolerance

SCREEN_FROM = 4_096
"""Below this many embedded rows every exact cosine is computed: screening would not pay."""
CAP = 2_048
"""Screening gives up when more rows than this need their exact cosine."""
LEXICAL_WEIGHT = SIGNAL_WEIGHTS.get("bm25", 1.0)
VECTOR_WEIGHT = SIGNAL_WEIGHTS.get("vector", 1.0)


@dataclass(frozen=True, slots=True)
class Hit:
    """A search's hit: its document (index id), fused score and own signals."""

    doc: str
    score: float
    signals: dict[str, float]


@dataclass(frozen=True, slots=True)
class Signal:
    """One signal: the positions it scored (sorted) and its value at each."""

    positions: np.ndarray
    values: np.ndarray

    def at(self, position: int) -> float | None:
        """The value at ``position``, ``None`` when the signal did not score it."""
        found = int(np.searchsorted(self.positions, position))
        if found < len(self.positions) and int(self.positions[found]) == position:
            return float(self.values[found])
        return None


def lexical_top(view: View, lexical: Signal, limit: int) -> list[Hit]:
    """The best ``limit`` hits by BM25 alone."""
    picked = best_positions(lexical.values, limit)
    positions = lexical.positions[picked]
    return _ranked(view, positions, lexical.values[picked], limit, lambda p: _own(p, lexical))


def hybrid_top(view: View, lexical: Signal, query: np.ndarray, limit: int) -> list[Hit]:
    """The best ``limit`` hits by BM25 and the cosine with unit ``query``, fused."""
    embedded = view.embedded(len(query))
    if len(embedded) >= SCREEN_FROM:
        found = _screened(view, lexical, embedded, query, limit)
        if found is not None:
            return found
    vector = Signal(embedded, np.maximum(view.exact(embedded, query), 0.0))
    fused = np.zeros(view.total)
    fused[lexical.positions] += LEXICAL_WEIGHT * max_normalised(lexical.values)
    fused[vector.positions] += VECTOR_WEIGHT * above_typical(vector.values)
    picked = best_positions(fused, limit)
    return _ranked(view, picked, fused[picked], limit, lambda p: _own(p, lexical, vector))


def _screened(
    view: View, lexical: Signal, embedded: np.ndarray, query: np.ndarray, limit: int
) -> list[Hit] | None:
    """:func:`hybrid_top` from float32 cosines, exact where they can not settle; ``None``
    when more than :data:`CAP` rows would need their exact cosine."""
    tie = tolerance(len(query))
    raw = view.screened(embedded, query)
    approx = np.maximum(raw, 0.0)
    exact = np.full(len(embedded), np.nan)

    def settle(rows: np.ndarray) -> np.ndarray:
        unknown = rows[np.isnan(exact[rows])]
        exact[unknown] = np.maximum(view.exact(embedded[unknown], query), 0.0)
        settled: np.ndarray = exact[rows]
        return settled

    near_best = np.flatnonzero(approx >= approx.max() - 2 * tie)
    if len(near_best) > CAP:
        return None
    high = float(settle(near_best).max())
    typical = _median(view, embedded, query, raw, approx, exact, tie, settle)
    if typical is None:
        return None
    lexical_part = LEXICAL_WEIGHT * max_normalised(lexical.values)
    estimate = np.zeros(view.total)
    estimate[lexical.positions] += lexical_part
    if high <= typical:
        _add(estimate, embedded, VECTOR_WEIGHT * (1.0 if high > 0 else 0.0))
        slack = 0.0
    else:
        _add(
            estimate, embedded, VECTOR_WEIGHT * np.maximum(approx - typical, 0.0) / (high - typical)
        )
        slack = 2 * VECTOR_WEIGHT * tie / (high - typical) + 1e-12
    members = np.zeros(view.total, dtype=bool)
    members[lexical.positions] = True
    members[embedded] = True
    cut = _kth_largest(estimate, limit)
    scored = np.flatnonzero(members & (estimate >= cut - slack))
    if len(scored) > CAP:
        return None
    rows = np.searchsorted(embedded, scored)
    in_vector = (rows < len(embedded)) & (embedded[np.minimum(rows, len(embedded) - 1)] == scored)
    cosines = settle(rows[in_vector])
    lexical_rows = np.searchsorted(lexical.positions, scored)
    in_lexical = np.zeros(len(scored), dtype=bool)
    inside = lexical_rows < len(lexical.positions)
    in_lexical[inside] = lexical.positions[lexical_rows[inside]] == scored[inside]
    fused = np.zeros(len(scored))
    fused[in_lexical] += lexical_part[lexical_rows[in_lexical]]
    if high <= typical:
        fused[in_vector] += VECTOR_WEIGHT * (1.0 if high > 0 else 0.0)
    else:
        fused[in_vector] += VECTOR_WEIGHT * (np.maximum(cosines - typical, 0.0) / (high - typical))
    settled = np.flatnonzero(~np.isnan(exact))
    vector = Signal(embedded[settled], exact[settled])
    picked = best_positions(fused, limit)
    return _ranked(view, scored[picked], fused[picked], limit, lambda p: _own(p, lexical, vector))


def _median(
    view: View,
    embedded: np.ndarray,
    query: np.ndarray,
    raw: np.ndarray,
    approx: np.ndarray,
    exact: np.ndarray,
    tie: float,
    settle: Callable[[np.ndarray], np.ndarray],
) -> float | None:
    """The exact clamped cosine at the middle of all, in sorted order (the upper median).

    It is within ``tie`` of the float32 one's: rows more than twice that
    below or above are counted, the others' exact cosines found (0 without
    computing it for a row surely negative, or sharing no nonzero component
    with a sparse query) and the median taken among them. ``None`` when
    more than :data:`CAP` would need computing (a quarter of the rows for
    a sparse query: rows alike on its components are computed once).
    """
    middle = len(approx) // 2
    if int(np.count_nonzero(approx == 0.0)) > middle:  # as often with sparse vectors
        guess = 0.0
    else:
        guess = float(np.partition(approx, middle)[middle])
    below = approx < guess - 2 * tie
    band = np.flatnonzero(~below & (approx <= guess + 2 * tie))
    exact[band[raw[band] < -tie]] = 0.0
    if not query.all():
        zeros = band[raw[band] == 0.0]
        exact[zeros[view.disjoint(embedded[zeros], query)]] = 0.0
    if int(np.count_nonzero(np.isnan(exact[band]))) > (len(approx) // 4 if sparse(query) else CAP):
        return None
    at = middle - int(np.count_nonzero(below))
    return float(np.partition(settle(band), at)[at])


def _add(dense: np.ndarray, positions: np.ndarray, values: np.ndarray | float) -> None:
    """Add ``values`` at ``positions`` (sorted, distinct) of ``dense``, all of it when all."""
    if len(positions) == len(dense):
        dense += values
    else:
        dense[positions] += values


def _kth_largest(values: np.ndarray, k: int) -> float:
    """The ``k``-th largest of ``values`` (``-inf`` when there are fewer), partitioning only
    the values above a threshold halved until ``k`` are."""
    if len(values) < k or k <= 0:
        return -np.inf
    threshold = float(values.max())
    while threshold > 0:
        threshold /= 2
        above = values[values >= threshold]
        if len(above) >= k:
            return float(np.partition(above, len(above) - k)[len(above) - k])
        if threshold < 1e-300:
            break
    return float(np.partition(values, len(values) - k)[len(values) - k])


def _ranked(
    view: View,
    positions: np.ndarray,
    scores: np.ndarray,
    limit: int,
    own: Callable[[int], dict[str, float]],
) -> list[Hit]:
    """The ``limit`` best hits at ``positions`` with ``scores``, ties broken by document."""
    ranked = sorted(
        (-score, view.doc(position), position)
        for position, score in zip(positions.tolist(), scores.tolist(), strict=True)
    )[:limit]
    return [Hit(doc, -negative, own(position)) for negative, doc, position in ranked]


def _own(position: int, lexical: Signal, vector: Signal | None = None) -> dict[str, float]:
    """The signals that scored ``position``, with their values."""
    own: dict[str, float] = {}
    for name, signal in (("bm25", lexical), ("vector", vector)):
        value = None if signal is None else signal.at(position)
        if value is not None:
            own[name] = value
    return own
