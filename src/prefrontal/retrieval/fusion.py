"""Score fusion: combine per-signal scores after normalising each per query."""

from __future__ import annotations

from collections.abc import Callable, Mapping


def max_normalised(scores: Mapping[str, float]) -> dict[str, float]:
    """Each score divided by the best one, so the top hit of a signal scores 1.0."""
    best = max(scores.values(), default=0.0)
    if best <= 0:
        return dict.fromkeys(scores, 0.0)
    # (0.0 if value < 0.0 else value) is max(value, 0.0) without the call: -0.0 and NaN kept
    return {key: (0.0 if value < 0.0 else value) / best for key, value in scores.items()}


def above_typical(scores: Mapping[str, float]) -> dict[str, float]:
    """Each score placed between the typical (median) score (0.0) and the best (1.0).

    For a signal that scores every item (vector similarity), whose floor is
    far from zero: dividing by the best alone would leave every item with
    most of the top score. Items no better than typical score 0.0.
    """
    if not scores:
        return {}
    ordered = sorted(scores.values())
    typical, high = ordered[len(ordered) // 2], ordered[-1]
    if high <= typical:
        return dict.fromkeys(scores, 1.0 if high > 0 else 0.0)
    return {key: max(value - typical, 0.0) / (high - typical) for key, value in scores.items()}


Normaliser = Callable[[Mapping[str, float]], dict[str, float]]
NORMALISERS: dict[str, Normaliser] = {"vector": above_typical}
"""How each signal is normalised per query before fusing (by best hit when not named)."""
SIGNAL_WEIGHTS: dict[str, float] = {"bm25": 1.0, "vector": 0.7}
"""Each signal's weight when the caller gives none (1.0 when not named)."""


def fuse(
    signals: Mapping[str, Mapping[str, float]],
    weights: Mapping[str, float],
    normalisers: Mapping[str, Normaliser] | None = None,
) -> dict[str, float]:
    """Weighted sum of per-query normalised signals over every id any signal scored.

    Each signal is normalised by ``normalisers[name]`` (default
    :data:`NORMALISERS`), else by its best hit, then weighted by
    ``weights[name]``, else :data:`SIGNAL_WEIGHTS`, else 1.0.
    """
    chosen = NORMALISERS if normalisers is None else normalisers
    fused: dict[str, float] = {}
    for name, scores in signals.items():
        weight = weights.get(name, SIGNAL_WEIGHTS.get(name, 1.0))
        for key, value in chosen.get(name, max_normalised)(scores).items():
            fused[key] = fused.get(key, 0.0) + weight * value
    return fused
