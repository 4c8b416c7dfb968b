"""What a memory backend indexes and embeds for an item: shared so every backend agrees."""

from __future__ import annotations

from prefrontal.retrieval.embedder import Embedder
from prefrontal.retrieval.lexical import WORD
from prefrontal.stores.long_term import MemoryItem, MemoryQuery

INDEXED_METADATA = ("speaker", "date")
"""Metadata fields whose values are searchable alongside the content."""


def searchable_text(item: MemoryItem) -> str:
    """The text indexed for ``item``: its content, tags, entities and selected metadata."""
    parts = [item.content, *item.tags, *item.entities]
    parts.extend(str(item.metadata[key]) for key in INDEXED_METADATA if key in item.metadata)
    return "\n".join(parts)


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
