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

from prefrontal.retrieval.analysis import terms, terms_of_each


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

    :meth:`embed` works a batch at a time: the texts' terms analysed together
    (:func:`~prefrontal.retrieval.analysis.terms_of_each`), each distinct
    term hashed once for the call, and the vectors counted, measured and
    scaled as one matrix. The vectors are :meth:`_vector`'s, bit for bit: each
    count is a whole number, so every sum of them and of their squares is
    exact in any order, and the square root, the division and the rounding
    to float32 are the same correctly rounded operations on the same values.
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
        return self._embedded(texts)

    def _embedded(self, texts: list[str]) -> list[tuple[float, ...]]:
        """The vectors of ``texts`` as one matrix for the batch (see the class)."""
        dimensions = self._dimensions
        slot_of = _Slots(dimensions).__getitem__
        cells: list[int] = []
        lengths: list[int] = []
        for words in terms_of_each(texts):
            cells.extend(map(slot_of, words))
            lengths.append(len(words))
        rows = np.repeat(np.arange(len(texts), dtype=np.int64), lengths)
        slot = np.asarray(cells, dtype=np.int64)
        plus = slot >= dimensions
        flat = rows * dimensions + np.where(plus, slot - dimensions, slot)
        signs = np.where(plus, 1.0, -1.0)
        counts = np.bincount(flat, weights=signs, minlength=len(texts) * dimensions)
        matrix = counts.reshape(len(texts), dimensions)
        norms = np.sqrt(np.einsum("ij,ij->i", matrix, matrix))
        scale = np.where(norms > 0, norms, 1.0)
        units = (matrix / scale[:, None]).astype(np.float32)
        return [tuple(row) for row in units.tolist()]

    def _vector(self, text: str) -> tuple[float, ...]:
        """The vector of one text worked out on its own, term by term: what :meth:`embed`
        gives for it in any batch, bit for bit."""
        vector = [0.0] * self._dimensions
        for term in terms(text):
            digest = int.from_bytes(hashlib.blake2b(term.encode(), digest_size=8).digest(), "big")
            vector[digest % self._dimensions] += 1.0 if digest >> 63 else -1.0
        norm = math.sqrt(sum(x * x for x in vector))
        unit = [x / norm for x in vector] if norm else vector
        return tuple(np.asarray(unit, dtype=np.float32).tolist())


class _Slots(dict[str, int]):
    """Term to the column it counts in, plus ``dimensions`` when it counts positively: each
    term hashed on its first look-up (one batch's terms)."""

    def __init__(self, dimensions: int) -> None:
        super().__init__()
        self.dimensions = dimensions

    def __missing__(self, term: str) -> int:
        digest = int.from_bytes(hashlib.blake2b(term.encode(), digest_size=8).digest(), "big")
        self[term] = slot = digest % self.dimensions + (self.dimensions if digest >> 63 else 0)
        return slot
