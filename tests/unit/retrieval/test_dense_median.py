"""The pgvector search's vector signal keeps the sample's median as fusion's typical cosine."""

from __future__ import annotations

import pytest

from prefrontal.retrieval.fusion import above_typical
from prefrontal.stores.postgres.dense_search import keeping_median


def _median(scores: dict[str, float]) -> float:
    ordered = sorted(scores.values())
    return ordered[len(ordered) // 2]


def test_near_rows_added_leave_the_median_where_the_sample_put_it() -> None:
    """Adding the nearest rows (all above the median) would raise it; the signal keeps it."""
    sample = {f"s{n}": n / 100 for n in range(101)}
    near = {f"n{n}": 0.9 + n / 1000 for n in range(26)}
    merged = keeping_median(sample, near)
    assert _median({**sample, **near}) > _median(sample)
    assert _median(merged) == _median(sample) == 0.5
    assert set(near) <= set(merged) and len(merged) == len(sample)
    assert above_typical(merged)["n25"] == pytest.approx((0.925 - 0.5) / (1.0 - 0.5))


def test_rows_dropped_are_those_nearest_the_median_and_the_best_stays() -> None:
    """Only rows next to the median leave (they score next to nothing); the best row stays."""
    sample = {f"s{n}": n / 100 for n in range(101)}
    extra = {"a": 0.95, "b": 0.01}
    merged = keeping_median(sample, extra)
    assert set(sample) - set(merged) == {"s51", "s49"}
    assert merged["s100"] == 1.0 and _median(merged) == 0.5


def test_rows_already_in_the_sample_take_their_new_value_and_drop_nothing() -> None:
    """A row of the sample found again (by the index) replaces its value; no row leaves."""
    sample = {"a": 0.1, "b": 0.2, "c": 0.3}
    assert keeping_median(sample, {"c": 0.3}) == sample
    assert keeping_median({}, {"x": 0.4}) == {"x": 0.4}
