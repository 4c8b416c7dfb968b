"""The order statistics of clamped cosines are those a full sort gives, zeros and all."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from prefrontal.retrieval import vector_index
from prefrontal.retrieval.vector_index import ranked

_COSINES = st.lists(
    st.one_of(
        st.just(0.0),
        st.sampled_from([0.125, 0.5, 2**-20]),
        st.floats(min_value=0.0, max_value=1.0, width=32),
    ),
    min_size=1,
    max_size=200,
)


@given(values=_COSINES, data=st.data())
def test_each_rank_holds_the_value_of_the_sorted_array(
    values: list[float], data: st.DataObject
) -> None:
    """Whatever the share of zeros and of equal values, by radix select or by partition, each
    rank asked for gets the sorted array's value there."""
    array = np.asarray(values, dtype=np.float32)
    ranks = data.draw(st.lists(st.integers(0, len(values) - 1), min_size=1, max_size=3))
    ordered = [float(ordered) for ordered in np.sort(array)]
    least = vector_index.RADIX_LEAST
    try:
        for threshold in (1, least):
            vector_index.RADIX_LEAST = threshold
            assert ranked(array, ranks) == [ordered[rank] for rank in ranks]
    finally:
        vector_index.RADIX_LEAST = least


def test_ranks_among_the_zeros_are_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ranks below the count of zeros are 0.0; one above it is the positive value there."""
    monkeypatch.setattr(vector_index, "RADIX_LEAST", 1)
    array = np.asarray([0.0, 0.5, 0.0, 0.25, 0.0], dtype=np.float32)
    assert ranked(array, [2, 0]) == [0.0, 0.0]
    assert ranked(array, [2, 4, 3]) == [0.0, 0.5, 0.25]


def test_a_large_array_of_many_equal_cosines_ranks_as_sorted() -> None:
    """Past the radix select's threshold: mostly zeros and a few distinct values."""
    generator = np.random.default_rng(5)
    array = generator.choice(np.asarray([0.0, 0.0, 0.1, 0.2, 0.7], dtype=np.float32), 50_000)
    ordered = np.sort(array)
    ranks = [0, 25_000, 49_974, 49_999]
    assert ranked(array, ranks) == [float(ordered[rank]) for rank in ranks]
