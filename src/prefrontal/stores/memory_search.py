"""What a memory backend indexes for an item: shared so every backend agrees."""

from __future__ import annotations

from prefrontal.stores.long_term import MemoryItem

INDEXED_METADATA = ("speaker", "date")
"""Metadata fields whose values are searchable alongside the content."""


def searchable_text(item: MemoryItem) -> str:
    """The text indexed for ``item``: its content, tags, entities and selected metadata."""
    parts = [item.content, *item.tags, *item.entities]
    parts.extend(str(item.metadata[key]) for key in INDEXED_METADATA if key in item.metadata)
    return "\n".join(parts)
