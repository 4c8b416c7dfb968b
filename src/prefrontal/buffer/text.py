"""Word-level matching shared by salience, themes and the recall gate.

Terms are the lexical analyser's (lower-cased, stop words out, Porter-stemmed),
so "planning" in the input matches "plans" in an item, as it does in search.
"""

from __future__ import annotations

from collections.abc import Iterable

from prefrontal.forgetting import remembered
from prefrontal.retrieval.analysis import term_set


def label_terms(labels: Iterable[str]) -> frozenset[str]:
    """The terms of a set of tags or entities ("Summer trip" gives "summer", "trip")."""
    return _label_terms(tuple(labels))


@remembered(maxsize=4_096)
def _label_terms(labels: tuple[str, ...]) -> frozenset[str]:
    out: set[str] = set()
    for label in labels:
        out |= term_set(label)
    return frozenset(out)


def overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """Overlap coefficient ``|a & b| / min(|a|, |b|)``; 0.0 when either is empty."""
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))


def coverage(part: frozenset[str], whole: frozenset[str]) -> float:
    """Share of ``whole`` found in ``part``; 0.0 when ``whole`` is empty."""
    if not whole:
        return 0.0
    return len(part & whole) / len(whole)


def jaccard(a: frozenset[str], b: frozenset[str], shared: frozenset[str] | None = None) -> float:
    """``|a & b| / |a | b|``; 0.0 when both are empty. ``shared`` is ``a & b`` when known."""
    common = len(a & b if shared is None else shared)
    union = len(a) + len(b) - common
    return common / union if union else 0.0
