"""Score fusion: combine per-signal scores after normalising each per query."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity of two vectors (0.0 when either is zero or sizes differ)."""
    if len(a) != len(b):
        return 0.0
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def max_normalised(scores: Mapping[str, float]) -> dict[str, float]:
    """Each score divided by the best one, so the top hit of a signal scores 1.0."""
    best = max(scores.values(), default=0.0)
    if best <= 0:
        return dict.fromkeys(scores, 0.0)
    return {key: max(value, 0.0) / best for key, value in scores.items()}


def fuse(
    signals: Mapping[str, Mapping[str, float]], weights: Mapping[str, float]
) -> dict[str, float]:
    """Weighted sum of max-normalised signals over every id any signal scored."""
    fused: dict[str, float] = {}
    for name, scores in signals.items():
        weight = weights.get(name, 1.0)
        for key, value in max_normalised(scores).items():
            fused[key] = fused.get(key, 0.0) + weight * value
    return fused
