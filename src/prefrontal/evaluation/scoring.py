"""Scoring a context: which evidence turns it holds, and recall per category.

A piece of evidence is covered when the context holds a fragment whose
provenance names an item that covers that turn (see ``ingest.Coverage``).
Recall of a question is covered evidence over its evidence; a category's
recall is the mean over its questions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from prefrontal.bundle.models import ContextBundle
from prefrontal.evaluation.locomo import CATEGORIES

SUMMARY_SETS = {"overall_1_4": (1, 2, 3, 4), "overall_1_5": CATEGORIES}


@dataclass(frozen=True, slots=True)
class Scored:
    """One question's category and the share of its evidence a context held."""

    category: int
    recall: float


def covered(item_ids: Iterable[str], coverage: Mapping[str, frozenset[str]]) -> set[str]:
    """The turns (``dia_id``s) that a context holding ``item_ids`` holds."""
    return {dia for item_id in item_ids for dia in coverage.get(item_id, frozenset())}


def bundle_items(bundle: ContextBundle) -> list[str]:
    """Every item id named in the provenance of the bundle's fragments."""
    return [i for f in bundle.fragments for i in f.provenance.item_ids]


def recall(evidence: Sequence[str], held: set[str]) -> float:
    """Share of ``evidence`` in ``held`` (1.0 for no evidence)."""
    if not evidence:
        return 1.0
    return sum(1 for e in evidence if e in held) / len(evidence)


def summarise(scores: Sequence[Scored]) -> dict[str, float]:
    """Mean recall per category (``"1"``..``"5"``) and over ``overall_1_4``/``overall_1_5``."""
    out: dict[str, float] = {}
    for category in CATEGORIES:
        out[str(category)] = _mean([s.recall for s in scores if s.category == category])
    for name, categories in SUMMARY_SETS.items():
        out[name] = _mean([s.recall for s in scores if s.category in categories])
    return out


def counts(scores: Sequence[Scored]) -> dict[str, int]:
    """Questions per category and per summary set."""
    out = {str(c): sum(1 for s in scores if s.category == c) for c in CATEGORIES}
    for name, categories in SUMMARY_SETS.items():
        out[name] = sum(1 for s in scores if s.category in categories)
    return out


def _mean(values: Sequence[float]) -> float:
    return round(sum(values) / len(values), 4) if values else 0.0
