"""The vector files' unit rows are those of dividing every row and zeroing what is not finite."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from prefrontal.retrieval.vectors import FLOAT32
from prefrontal.stores.sqlite.vector_file import unit_rows

_VALUES = st.one_of(
    st.just(0.0),
    st.floats(width=32, allow_nan=True, allow_infinity=True),
    st.floats(min_value=-1.0, max_value=1.0, width=32).map(lambda value: value * 1e-30),
    st.sampled_from([3e38, -3e38, 1e-45]),
)


def _straightforward(matrix: np.ndarray, norms: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        units: np.ndarray = matrix / norms[:, None]
    units[~np.isfinite(units)] = 0.0
    return units


@given(rows=st.lists(st.lists(_VALUES, min_size=4, max_size=4), min_size=1, max_size=12))
def test_unit_rows_equal_dividing_every_row_then_zeroing_what_is_not_finite(
    rows: list[list[float]],
) -> None:
    """Rows of length 0, of overflowing or underflowing squares, with NaN or infinities: the
    float16 unit rows the files hold are the same bits as the straightforward division's."""
    matrix = np.asarray(rows, dtype=FLOAT32)
    with np.errstate(over="ignore", invalid="ignore"):
        norms = np.sqrt(np.einsum("ij,ij->i", matrix, matrix))
    expected = _straightforward(matrix, norms).astype(np.float16)
    found = unit_rows(matrix, norms).astype(np.float16)
    assert found.tobytes() == expected.tobytes()
