"""Compacting the vector files of a set of stores at once (maintenance, ``erase --vacuum``).

The files also compact themselves once most of their slots are dead
(:class:`~prefrontal.stores.sqlite.vector_file.VectorFile`); this is the
explicit call, for after a removal: every dead slot is dropped.
"""

from __future__ import annotations

import anyio

from prefrontal.stores.set import Stores
from prefrontal.stores.sqlite.vector_file import VectorFile


async def compact_vectors(stores: Stores) -> list[str]:
    """Compact the vector files of each memory store of ``stores`` that keeps them and has a
    dead slot (in a worker thread: it waits for every process's searches to leave the
    files); the names of the stores compacted."""
    compacted = []
    for name, store in (("episodic", stores.episodic), ("semantic", stores.semantic)):
        vectors = getattr(store, "vectors", None)
        if isinstance(vectors, VectorFile) and await anyio.to_thread.run_sync(vectors.compact):
            compacted.append(name)
    return compacted
