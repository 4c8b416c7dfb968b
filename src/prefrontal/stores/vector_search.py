"""Where each memory store's hybrid searches find their vectors, in words, for status output.

A store says so through a ``vector_search`` attribute (PostgreSQL's: pgvector
with its type and index, or the process cache and why); the others are
named by their class. ``/readyz`` reports it.
"""

from __future__ import annotations

from prefrontal.stores.set import Stores


def vector_search(stores: Stores) -> dict[str, str]:
    """For the episodic and semantic stores: where their vector search runs."""
    found: dict[str, str] = {}
    for name in ("episodic", "semantic"):
        store = getattr(stores, name)
        described = getattr(store, "vector_search", None)
        found[name] = described if isinstance(described, str) else type(store).__name__
    return found
