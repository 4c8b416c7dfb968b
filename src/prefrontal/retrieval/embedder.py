"""The ``Embedder`` Protocol: text in, vectors out. None is configured by default.

A memory store given an embedder embeds each item's searchable text when it
is written (unless the item carries its own ``embedding``) and each query's
text when it is searched, and fuses vector similarity with BM25. Without one,
search is lexical only and no model is needed.
"""

from __future__ import annotations

import hashlib
import math
from typing import Protocol, runtime_checkable

import numpy as np

from prefrontal.retrieval.analysis import terms


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors of ``dimensions`` floats, one per text, in order."""

    @property
    def name(self) -> str:
        """A stable name for the model, recorded with what it embedded."""
        ...

    @property
    def dimensions(self) -> int:
        """The length of every vector ``embed`` returns."""
        ...

    async def embed(self, texts: list[str]) -> list[tuple[float, ...]]:
        """One vector per text, in the order given."""
        ...


class HashingEmbedder:
    """Feature hashing of analysed terms into a unit vector: no model, deterministic.

    Similarity is lexical (shared stems), so it adds nothing to BM25 in
    quality; it exists for tests and for exercising the hybrid path offline.
    Values are float32-exact, so a backend that stores float32 keeps them whole.
    """

    def __init__(self, dimensions: int = 256) -> None:
        self._dimensions = dimensions

    @property
    def name(self) -> str:
        return f"hashing-{self._dimensions}"

    @property
    def dimensions(self) -> int:
        return self._dimensions

    async def embed(self, texts: list[str]) -> list[tuple[float, ...]]:
        return [self._vector(text) for text in texts]

    def _vector(self, text: str) -> tuple[float, ...]:
        vector = [0.0] * self._dimensions
        for term in terms(text):
            digest = int.from_bytes(hashlib.blake2b(term.encode(), digest_size=8).digest(), "big")
            vector[digest % self._dimensions] += 1.0 if digest >> 63 else -1.0
        norm = math.sqrt(sum(x * x for x in vector))
        unit = [x / norm for x in vector] if norm else vector
        return tuple(np.asarray(unit, dtype=np.float32).tolist())
