"""The top k of a search over a :class:`~prefrontal.stores.memory.view.View`, fused in arrays.

What :func:`~prefrontal.stores.memory_search.best_hits` gives for the
signals :func:`~prefrontal.stores.capabilities.gather_signals` gathers:
BM25 alone (:func:`lexical_top`), or BM25 normalised by its best and the
clamped cosine placed between its median and its best, weighted and added
(:func:`hybrid_top`); keys scoring 0 left out, ties broken by document.

**Screening.** The vector signal needs the exact median and best of every
embedded row's cosine, and the exact fused score of the rows that may
reach the top k; no other row's exact cosine matters. Over many rows,
:func:`hybrid_top` reads every row in fewer bytes than the float64 matrix
(:meth:`~prefrontal.stores.memory.view.View.screened`: float16 with SIMD
kernels for a dense query, else float32), each cosine within a proven
bound of the exact one, and computes exact cosines only for the rows that
bound can not settle: those near the best, those near the median (but for
rows sharing no nonzero component with a sparse query: exactly 0), and
those whose fused score may reach the k-th, found from the lexical hits
and the rows of best screening cosine alone (:func:`_contenders`). When
more than :data:`CAP` rows are unsettled (many rows tied at the median, or
a best hardly above it), it computes every row's exact cosine instead.
Either way the hits and scores are those of the exact computation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from prefrontal.retrieval.fusion import SIGNAL_WEIGHTS
from prefrontal.retrieval.scored_arrays import above_typical, best_positions, max_normalised
from prefrontal.stores.memory.view import View, sparse

SCREEN_FROM = 4_096
"""Below this many embedded rows every exact cosine is computed: screening would not pay."""
CAP = 2_048
"""Screening gives up when more rows than this need their exact cosine."""
LEXICAL_WEIGHT = SIGNAL_WEIGHTS.get("bm25", 1.0)
VECTOR_WEIGHT = SIGNAL_WEIGHTS.get("vector", 1.0)


class Hit(NamedTuple):
    """A search's hit: its document (index id), fused score and own signals."""

    doc: str
    score: float
    signals: dict[str, float]


@dataclass(frozen=True, slots=True)
class Signal:
    """One signal: the positions it scored (sorted) and its value at each."""

    positions: np.ndarray
    values: np.ndarray


def lexical_top(view: View, lexical: Signal, limit: int) -> list[Hit]:
    """The best ``limit`` hits by BM25 alone: each hit's one signal is its score.

    What :func:`_ranked` gives for the BM25 signal alone, without looking
    the signal up again at each hit (every candidate is one of its positions).
    """
    picked = best_positions(lexical.values, limit)
    documents = view.docs_at(lexical.positions[picked])
    ranked = sorted(zip((-lexical.values[picked]).tolist(), documents, strict=True))[:limit]
    return [Hit(doc, -negative, {"bm25": -negative}) for negative, doc in ranked]


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
    return _ranked(view, picked, fused[picked], limit, (("bm25", lexical), ("vector", vector)))


def _screened(
    view: View, lexical: Signal, embedded: np.ndarray, query: np.ndarray, limit: int
) -> list[Hit] | None:
    """:func:`hybrid_top` from screening cosines, exact where they can not settle; ``None``
    when more than :data:`CAP` rows would need their exact cosine."""
    raw, tie = view.screened(embedded, query)
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
    scored = _contenders(
        lexical.positions, lexical_part, embedded, approx, high, typical, tie, limit
    )
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
    signals = (("bm25", lexical), ("vector", vector))
    return _ranked(view, scored[picked], fused[picked], limit, signals)


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
    found = _median_near(approx, band, guess, tie, at, settle)
    if found is not None:
        return found
    return float(np.partition(settle(band), at)[at])


def _median_near(
    approx: np.ndarray,
    band: np.ndarray,
    guess: float,
    tie: float,
    at: int,
    settle: Callable[[np.ndarray], np.ndarray],
) -> float | None:
    """The ``at``-th smallest exact value of the ``band`` rows from the exact values of the
    rows within ``tie`` and a quarter of ``guess`` only, when it lies within a quarter tie of
    ``guess`` (as it does unless rounding errors near the bound pile up): the band's other
    rows are then surely below or above it. ``None`` when it does not."""
    near = tie / 4
    values = approx[band]
    lower = int(np.count_nonzero(values < guess - tie - near))
    inner = band[np.abs(values - guess) <= tie + near]
    rank = at - lower
    if not 0 <= rank < len(inner):
        return None
    found = float(np.partition(settle(inner), rank)[rank])
    return found if guess - near <= found <= guess + near else None


def _contenders(
    lexical: np.ndarray,
    lexical_part: np.ndarray,
    embedded: np.ndarray,
    approx: np.ndarray,
    high: float,
    typical: float,
    tie: float,
    limit: int,
) -> np.ndarray:
    """The positions (sorted) whose exact fused score may reach the ``limit``-th best: a
    superset of the top ``limit`` (every position when fewer than ``limit`` estimates
    are positive).

    A row's estimate is its exact lexical part (``lexical_part`` at the
    ``lexical`` positions) and its vector part placed from ``approx`` (the
    clamped screening cosine at each ``embedded`` position), within
    ``slack`` of its exact fused score. The ``limit``-th best estimate is
    that of the lexical positions and of the embedded rows with the best
    ``approx`` (no other row's estimate beats theirs), so only those are
    placed (each once); the contenders are the lexical positions and
    embedded rows whose estimate reaches it less twice the slack.
    """
    spread = high - typical
    slack = 2 * VECTOR_WEIGHT * tie / spread + 1e-12 if spread > 0 else 0.0

    def vector_part(values: np.ndarray) -> np.ndarray:
        if spread <= 0:
            return np.full(len(values), VECTOR_WEIGHT * (1.0 if high > 0 else 0.0))
        placed: np.ndarray = VECTOR_WEIGHT * (np.maximum(values - typical, 0.0) / spread)
        return placed

    best = _best_rows(approx, typical, limit)
    lexical_estimate = lexical_part.copy()
    count = len(embedded)
    if count and int(embedded[-1]) == count - 1 and (not len(lexical) or lexical[-1] < count):
        # positions 0 .. count - 1 are the embedded rows, in order
        lexical_estimate += vector_part(approx[lexical])
    else:
        rows = np.searchsorted(embedded, lexical)
        inside = rows < len(embedded)
        inside[inside] = embedded[rows[inside]] == lexical[inside]
        lexical_estimate[inside] += vector_part(approx[rows[inside]])
    best = best[~_among(embedded[best], lexical)]
    best_estimate = vector_part(approx[best])
    pool = np.concatenate([lexical_estimate, best_estimate])
    if len(pool) < limit or limit <= 0:
        cut = 0.0
    else:
        cut = float(np.partition(pool, len(pool) - limit)[len(pool) - limit]) - slack
    if cut <= 0:
        every: np.ndarray = np.union1d(lexical, embedded)
        return every
    if spread > 0:
        floor = typical + cut * spread / VECTOR_WEIGHT - 1e-9
        vectors = embedded[approx >= floor]
    else:
        vectors = embedded if VECTOR_WEIGHT * (1.0 if high > 0 else 0.0) >= cut else embedded[:0]
    found: np.ndarray = np.union1d(lexical[lexical_estimate >= cut], vectors)
    return found


def _among(values: np.ndarray, sorted_: np.ndarray) -> np.ndarray:
    """Whether each of ``values`` is in ``sorted_`` (sorted): a binary search each."""
    at = np.searchsorted(sorted_, values)
    found = at < len(sorted_)
    found[found] = sorted_[at[found]] == values[found]
    return found


def _best_rows(approx: np.ndarray, typical: float, limit: int) -> np.ndarray:
    """Indices of rows of ``approx`` that no other row's value exceeds, at least ``limit`` of
    them (all when fewer): those at or above a threshold halved from the best towards
    ``typical`` until ``limit`` are, else the ``limit`` largest."""
    top = float(approx.max())
    for fraction in (0.5, 0.25, 0.125):
        found = np.flatnonzero(approx >= typical + fraction * (top - typical))
        if len(found) >= limit:
            return found
    if len(approx) <= limit:
        return np.arange(len(approx))
    return np.argpartition(approx, len(approx) - limit)[len(approx) - limit :]


def _ranked(
    view: View,
    positions: np.ndarray,
    scores: np.ndarray,
    limit: int,
    signals: Sequence[tuple[str, Signal]],
) -> list[Hit]:
    """The ``limit`` best hits at ``positions`` with ``scores``, ties broken by document;
    each with the ``signals`` that scored it (looked up for those ``limit`` only)."""
    ranked = sorted(
        zip(
            (-scores).tolist(),
            view.docs_at(positions),
            positions.tolist(),
            strict=True,
        )
    )[:limit]
    own: list[dict[str, float]] = [{} for _ in ranked]
    if ranked:
        kept = np.fromiter((position for _, _, position in ranked), np.int64, len(ranked))
        for name, signal in signals:
            for index, value in _values_at(signal, kept):
                own[index][name] = value
    return [
        Hit(doc, -negative, signals)
        for (negative, doc, _), signals in zip(ranked, own, strict=True)
    ]


def _values_at(signal: Signal, positions: np.ndarray) -> list[tuple[int, float]]:
    """``(index, value)`` for each of ``positions`` the signal scored (one search for all)."""
    found = np.searchsorted(signal.positions, positions)
    inside = found < len(signal.positions)
    hit = np.zeros(len(positions), dtype=bool)
    hit[inside] = signal.positions[found[inside]] == positions[inside]
    indexes = np.flatnonzero(hit)
    values = signal.values[found[indexes]]
    return list(zip(indexes.tolist(), values.tolist(), strict=True))
