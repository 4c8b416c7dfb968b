"""BM25 term scores, fusion's normalisers and the top k over numpy arrays, to the bit.

What :mod:`prefrontal.retrieval.ranking` and :mod:`prefrontal.retrieval.fusion`
compute one key at a time, computed here for a whole array at once, with
the same operations in the same order: each value is the float the scalar
function gives (IEEE arithmetic rounds each operation alike in numpy and
in Python), so a backend that scores arrays ranks exactly as one that
scores dictionaries. ``tests/unit/retrieval/test_scored_arrays.py`` holds
them to it.
"""

from __future__ import annotations

import numpy as np

from prefrontal.retrieval.ranking import K1, B


def term_scores(
    weight: float | np.ndarray, tf: np.ndarray, length: np.ndarray, average: float
) -> np.ndarray:
    """:func:`~prefrontal.retrieval.ranking.term_score` of each ``(tf, length)`` pair, of IDF
    ``weight`` (one for all, or one for each pair)."""
    scored: np.ndarray = weight * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / average))
    return scored


def max_normalised(values: np.ndarray) -> np.ndarray:
    """:func:`~prefrontal.retrieval.fusion.max_normalised` of ``values``, in their order."""
    best = float(values.max()) if len(values) else 0.0
    if best <= 0:
        return np.zeros(len(values))
    normalised: np.ndarray = np.maximum(values, 0.0) / best
    return normalised


def above_typical(values: np.ndarray) -> np.ndarray:
    """:func:`~prefrontal.retrieval.fusion.above_typical` of ``values``, in their order.

    The typical score is the upper median (the element at ``len // 2`` in
    sorted order), found by a partition rather than a sort.
    """
    if not len(values):
        return np.zeros(0)
    middle = len(values) // 2
    typical, high = float(np.partition(values, middle)[middle]), float(values.max())
    if high <= typical:
        return np.full(len(values), 1.0 if high > 0 else 0.0)
    placed: np.ndarray = np.maximum(values - typical, 0.0) / (high - typical)
    return placed


def best_positions(scores: np.ndarray, limit: int) -> np.ndarray:
    """The positions of the ``limit`` best positive scores, and of every score tied with the last.

    The caller orders them (by score, then by key, as
    :func:`~prefrontal.retrieval.ranking.top` does): ties at the cut are all
    kept so that the key decides among them, whatever the partition chose.
    """
    positive = (scores > 0).nonzero()[0]  # np.flatnonzero of a 1-d array, without its wrappers
    if len(positive) <= limit or limit <= 0:
        return positive if limit > 0 else positive[:0]
    values = scores[positive]
    cut = float(np.partition(values, len(values) - limit)[len(values) - limit])
    kept: np.ndarray = positive[values >= cut]
    return kept
