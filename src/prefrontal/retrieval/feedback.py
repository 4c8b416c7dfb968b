"""Pseudo-relevance feedback: words from the best hits, searched as a further query.

The best few hits of a search usually share words with what is asked for
that the query itself does not use ("counseling" for "what career").
``expansion_terms`` picks them: each word of a feedback document counts
the document's score times the word's share of the document, times how
rare the word is among all the candidates (so words every hit has, which
say nothing, count little). Words of the query and stop words are out.
The words come back as they were written (one spelling per stem), so the
store's analyser treats them as it treats any query.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from prefrontal.retrieval.analysis import terms, written_terms


def document_frequency(texts: Sequence[str]) -> Counter[str]:
    """How many of ``texts`` have each index term."""
    frequency: Counter[str] = Counter()
    for text in texts:
        frequency.update(set(terms(text)))
    return frequency


def expansion_terms(
    feedback: Sequence[tuple[str, float]],
    background: Sequence[str],
    query: str,
    count: int,
) -> list[str]:
    """The ``count`` best words of the ``feedback`` documents that ``query`` does not have.

    ``feedback`` is ``(text, score)`` pairs (the best hits); ``background``
    is the text of every candidate, for how rare each word is (the
    feedback documents should be among them). A word's weight is the sum
    over feedback documents of score x term frequency / length, times
    ``log(1 + N / document frequency)`` over the background. Ties go
    alphabetically; words with no weight are never returned.
    """
    asked = set(terms(query))
    frequency = document_frequency(background)
    total = max(len(background), 1)
    weights: dict[str, float] = {}
    spelling: dict[str, str] = {}
    for text, score in feedback:
        analysed = written_terms(text) if score > 0 else []
        for term, word in analysed:
            if term in asked or word.isdigit() or not asked.isdisjoint(terms(word)):
                continue
            spelling.setdefault(term, word)
            rarity = math.log1p(total / max(frequency.get(term, 0), 1))
            weights[term] = weights.get(term, 0.0) + score * rarity / len(analysed)
    ranked = sorted(weights.items(), key=lambda kv: (-kv[1], kv[0]))
    return [spelling[term] for term, weight in ranked[:count] if weight > 0]
