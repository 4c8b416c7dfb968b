"""Fusing signals after normalising each per query."""

from __future__ import annotations

import pytest

from prefrontal.retrieval.fusion import above_typical, fuse, max_normalised


def test_vector_similarity_is_spread_between_the_typical_and_the_best() -> None:
    """Cosines bunched together still separate; no better than the median scores 0."""
    spread = above_typical({"a": 0.6, "b": 0.5, "c": 0.4, "d": 0.1, "e": 0.35})
    assert spread == pytest.approx({"a": 1.0, "b": 0.5, "c": 0.0, "d": 0.0, "e": 0.0})
    assert above_typical({"a": 0.4, "b": 0.4}) == {"a": 1.0, "b": 1.0}
    assert above_typical({}) == {}


def test_fuse_normalises_each_signal_its_own_way() -> None:
    """BM25 by its best hit, vectors by their range; weights apply after."""
    signals = {"bm25": {"a": 4.0, "b": 2.0}, "vector": {"a": 0.3, "b": 0.5, "c": 0.1}}
    fused = fuse(signals, {"vector": 2.0})
    assert fused == {"a": 1.0, "b": 0.5 + 2.0, "c": 0.0}
    assert fuse(signals, {"vector": 1.0}, normalisers={}) == {
        k: max_normalised(signals["bm25"]).get(k, 0.0) + max_normalised(signals["vector"])[k]
        for k in ("a", "b", "c")
    }


def test_vector_similarity_weighs_less_than_bm25_by_default() -> None:
    """With no weights given, the vector signal counts 0.7 of BM25 in every backend."""
    fused = fuse({"bm25": {"a": 1.0}, "vector": {"b": 0.9, "c": 0.1, "d": 0.5}}, {})
    assert fused == pytest.approx({"a": 1.0, "b": 0.7, "c": 0.0, "d": 0.0})
