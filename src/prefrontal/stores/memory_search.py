"""What a memory backend indexes and embeds for an item: shared so every backend agrees."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pydantic import ValidationError

from prefrontal.retrieval.analysis import WORD, terms
from prefrontal.retrieval.embedder import Embedder
from prefrontal.retrieval.fusion import fuse
from prefrontal.retrieval.ranking import top
from prefrontal.stores.long_term import MemoryItem, MemoryQuery

INDEXED_METADATA = ("speaker", "date")
"""Metadata fields whose values are searchable alongside the content."""


def searchable_text(item: MemoryItem) -> str:
    """The text indexed for ``item``: its content, tags, entities and selected metadata."""
    parts = [item.content, *item.tags, *item.entities]
    parts.extend(str(item.metadata[key]) for key in INDEXED_METADATA if key in item.metadata)
    return "\n".join(parts)


def stored_terms(body: str) -> list[str] | None:
    """The index terms of an item stored as JSON ``body``; None when ``body`` is not an item.

    Used to analyse stored items anew when the analyser changes; an
    unreadable record keeps the terms it has (searches skip it anyway).
    """
    try:
        item = MemoryItem.model_validate_json(body)
    except ValidationError:
        return None
    return terms(searchable_text(item))


async def with_embeddings(items: list[MemoryItem], embedder: Embedder | None) -> list[MemoryItem]:
    """``items``, each without an embedding given one of its :func:`searchable_text`."""
    missing = [i for i, item in enumerate(items) if item.embedding is None]
    if embedder is None or not missing:
        return items
    vectors = await embedder.embed([searchable_text(items[i]) for i in missing])
    out = list(items)
    for i, vector in zip(missing, vectors, strict=True):
        out[i] = items[i].model_copy(update={"embedding": tuple(vector)})
    return out


async def query_embedding(
    query: MemoryQuery, embedder: Embedder | None
) -> tuple[float, ...] | None:
    """The query's own embedding, else the embedder's for its text when it has words."""
    if query.embedding is not None or embedder is None or not WORD.search(query.text):
        return query.embedding
    (vector,) = await embedder.embed([query.text])
    return tuple(vector)


KEY_SEPARATOR = "\x1f"
"""Between an item's id and its owner's in a hit's key (ids are unique per agent and user)."""


def hit_key(item_id: str, user_id: str) -> str:
    """The key a durable backend ranks an item of one agent by: id, then owner.

    Ties in the fused score break by this key, as the in-memory store breaks
    them by its index id (agent, id, owner): the same order in every backend.
    """
    return f"{item_id}{KEY_SEPARATOR}{user_id}"


def key_item_ids(keys: Iterable[str]) -> list[str]:
    """Every item id the :func:`hit_key` values in ``keys`` may start with.

    One per key unless an id itself holds the separator; a look-up by these
    ids that also matches the whole key is exact and uses the id index.
    """
    out: dict[str, None] = {}
    for key in keys:
        parts = key.split(KEY_SEPARATOR)
        for n in range(1, len(parts)):
            out[KEY_SEPARATOR.join(parts[:n])] = None
    return list(out)


Signals = Mapping[str, Mapping[str, float]]
"""Each signal's scores by key (``"bm25"`` with lexical search, ``"vector"`` with an embedding)."""


def best_hits(signals: Signals, limit: int) -> list[tuple[str, float, dict[str, float]]]:
    """The ``limit`` best keys by fused score, each with its score and its own signals.

    A signal's own scores when it is the only one, else
    :func:`~prefrontal.retrieval.fusion.fuse`; keys that score 0 are left
    out; ties are broken as :func:`~prefrontal.retrieval.ranking.top` breaks
    them, so every backend returns the same hits in the same order.
    """
    if not signals:
        return []
    fused = fuse(signals, {}) if len(signals) > 1 else next(iter(signals.values()))
    return [
        (key, value, {name: values[key] for name, values in signals.items() if key in values})
        for key, value in top(fused, limit)
        if value > 0
    ]
