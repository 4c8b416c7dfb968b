"""What a LangGraph item offers to a query, and how similar a query is to it.

LangGraph indexes an item by the text at its index fields (``"$"``: the
whole value; ``"a.b"``, ``"tags[*]"``, ``"items[-1].text"``: LangGraph's
field paths), chosen per put (``index=False``: not indexed, a list: those
fields) or by the store's ``index={"fields": [...]}`` configuration.
:func:`indexed_texts` is that text: the values found there, never the JSON
keys, and never the namespace.

:func:`similarities` scores a query against each item: the best cosine of
the TF-IDF vectors (over prefrontal's index terms,
:func:`prefrontal.retrieval.analysis.terms`) of the query and of one of the
item's texts, as LangGraph keeps the best of an item's vectors; IDF is
taken over the texts ranked together. A similarity is in ``[0, 1]``: 1 for
the same terms in the same proportions, 0 for no term in common; ``None``
for an item that is not indexed.

With an embedding function in the index configuration (``index={"embed":
...}``), :func:`dense_similarities` scores as LangGraph's stores do: the
best cosine of the query's vector and the vectors of an item's texts.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from langgraph.store.base.embed import get_text_at_path

from prefrontal.retrieval.analysis import terms_of_each

WHOLE = "$"
"""The field path of the whole value: LangGraph's default index field."""


def _leaves(value: Any) -> Iterator[str]:
    """The scalar values inside ``value`` (strings, numbers, booleans), depth first; no keys."""
    if isinstance(value, Mapping):
        for inner in value.values():
            yield from _leaves(inner)
    elif isinstance(value, (list, tuple)):
        for inner in value:
            yield from _leaves(inner)
    elif value is not None:
        yield str(value)


def _found(value: Mapping[str, Any], path: str) -> Iterator[str]:
    if path == WHOLE:
        yield from _leaves(value)
        return
    for text in get_text_at_path(value, path):
        # LangGraph gives an object or a list found at the path as its JSON: take its values.
        if text[:1] in ("{", "["):
            try:
                yield from _leaves(json.loads(text))
                continue
            except json.JSONDecodeError:
                pass
        yield text


def indexed_texts(value: Mapping[str, Any], fields: Sequence[str] | None) -> list[str]:
    """The texts of ``value`` at ``fields``, one per value found (``None``: not indexed, none).

    ``"$"`` gives the whole value's scalars as one text; any other path one
    text per value it reaches, as LangGraph embeds one vector per value.
    """
    if not fields:
        return []
    texts: list[str] = []
    for path in fields:
        found = list(_found(value, path))
        if path == WHOLE:
            found = [" ".join(found)] if found else []
        texts.extend(t for t in found if t.strip())
    return texts


def similarities(query: str, items: Sequence[Sequence[str]]) -> list[float | None]:
    """Each item's similarity to ``query``: the best TF-IDF cosine of its texts, in ``[0, 1]``.

    ``None`` for an item without texts (not indexed). IDF is taken over
    every text of ``items``.
    """
    flat = [text for texts in items for text in texts]
    analysed = terms_of_each([query, *flat])
    asked, documents = Counter(analysed[0]), [Counter(t) for t in analysed[1:]]
    frequency: Counter[str] = Counter()
    for counts in documents:
        frequency.update(counts.keys())
    total = len(documents)

    def weight(term: str, count: int) -> float:
        return (1.0 + math.log(count)) * math.log(1.0 + total / (1 + frequency[term]) + 1.0)

    query_vector = {term: weight(term, n) for term, n in asked.items()}
    query_norm = math.sqrt(sum(w * w for w in query_vector.values()))

    def cosine(counts: Counter[str]) -> float:
        vector = {term: weight(term, n) for term, n in counts.items()}
        norm = math.sqrt(sum(w * w for w in vector.values()))
        if not norm or not query_norm:
            return 0.0
        dot = sum(w * vector.get(term, 0.0) for term, w in query_vector.items())
        return min(1.0, max(0.0, dot / (norm * query_norm)))

    scores: list[float | None] = []
    at = 0
    for texts in items:
        own = documents[at : at + len(texts)]
        at += len(texts)
        scores.append(max(map(cosine, own)) if own else None)
    return scores


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """The cosine of two vectors, as LangGraph's stores compute it (0 for a zero vector)."""
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    norms = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norms if norms > 0 else 0.0


def dense_similarities(
    query: Sequence[float], items: Sequence[Sequence[Sequence[float]]]
) -> list[float | None]:
    """Each item's best cosine to ``query`` over its texts' vectors; ``None`` without any."""
    return [max(cosine(query, v) for v in vectors) if vectors else None for vectors in items]
