"""``float32_bytes``: a vector's stored bytes packed without NumPy, equal to ``to_blob``'s."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from prefrontal.retrieval.vectors import float32_bytes, to_blob

EDGES = [0.0, -0.0, 1e-45, 1.4e-45, 3.4028235e38, 3.4028236e38, 1 + 2**-24, 1 + 3 * 2**-24]
EDGES += [2**-149, 2**-150, -(2**-150), 1 / 3, math.nan, math.inf, -math.inf]


@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=64))
def test_the_bytes_are_numpys_float32_bytes(vector: list[float]) -> None:
    """Every double, rounded to float32 as NumPy does: overflow to infinity included."""
    with np.errstate(over="ignore"):  # NumPy warns of the overflow it gives
        assert float32_bytes(vector) == to_blob(vector)
        assert float32_bytes(tuple(vector)) == to_blob(vector)


def test_rounding_edges_subnormals_and_overflow() -> None:
    """The values where a cast could differ: ties, subnormals, the largest float32 and past it."""
    for vector in (EDGES, [3.5e38, *EDGES], [-1e39], [1e308, -1e308], []):
        with np.errstate(over="ignore"):
            assert float32_bytes(vector) == to_blob(vector)
    assert float32_bytes([1e39]) == np.float32(np.inf).tobytes()


def test_every_size_packs_its_own_length() -> None:
    """Vectors of different sizes one after another: each packed at its own size."""
    for size in (1, 384, 3, 384, 1536, 2):
        vector = [float(n) / 7 for n in range(size)]
        assert len(float32_bytes(vector)) == 4 * size
        assert float32_bytes(vector) == to_blob(vector)
