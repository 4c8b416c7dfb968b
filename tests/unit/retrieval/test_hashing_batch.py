"""``HashingEmbedder.embed`` works a batch as one matrix: every vector is the one its text
gets on its own, term by term, bit for bit (signs of zero included)."""

from __future__ import annotations

import struct

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

from prefrontal.retrieval.embedder import HashingEmbedder

WORDS = ["invoice", "payment", "Porto", "launch", "the", "a", "s", "café", "東京", "🙂", "x1"]
"""Stop words, a lone ``s`` (no term), accents, a spaceless script, a symbol."""

texts = st.lists(st.sampled_from(WORDS), max_size=30).map(" ".join) | st.text(max_size=40)


def bits(vector: tuple[float, ...]) -> bytes:
    return struct.pack(f"{len(vector)}d", *vector)


@settings(max_examples=200, deadline=None)
@given(batch=st.lists(texts, max_size=12), dimensions=st.sampled_from([1, 3, 16, 384]))
def test_a_batch_gives_each_text_its_own_vector_bit_for_bit(
    batch: list[str], dimensions: int
) -> None:
    embedder = HashingEmbedder(dimensions)
    together = anyio.run(embedder.embed, batch)
    assert len(together) == len(batch)
    for text, vector in zip(batch, together, strict=True):
        alone = embedder._vector(text)
        assert len(vector) == dimensions
        assert bits(vector) == bits(alone), text


def test_repeated_terms_and_texts_without_terms() -> None:
    """A term counted many times, a text of stop words only, an empty text, an empty batch."""
    embedder = HashingEmbedder(8)
    batch = ["invoice " * 50, "the a an", "", "payment invoice payment"]
    together = anyio.run(embedder.embed, batch)
    assert [bits(v) for v in together] == [bits(embedder._vector(t)) for t in batch]
    assert together[1] == together[2] == (0.0,) * 8
    assert anyio.run(embedder.embed, []) == []
