"""The float16 screen's bound: no cosine the SIMD kernels give is further from the exact one."""

from __future__ import annotations

import os

import numpy as np
import pytest

from prefrontal.stores.memory import half

pytestmark = pytest.mark.skipif(half.KERNELS is None, reason="no half-precision kernels here")


def units(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    unit: np.ndarray = rows / np.where(norms > 0, norms, 1.0)
    return unit


def shapes(rng: np.random.Generator, dimensions: int) -> np.ndarray:
    """Dense, sparse, tiny components (float16 subnormals), components halfway between float16
    neighbours, repeats of the query and vectors equal but for rounding."""
    dense = rng.normal(size=(200, dimensions))
    sparse = np.where(rng.random((200, dimensions)) < 0.05, rng.normal(size=(200, dimensions)), 0)
    tiny = rng.normal(size=(200, dimensions)) * np.where(rng.random(dimensions) < 0.5, 1e-6, 1)
    grid = rng.normal(size=(200, dimensions)).astype(np.float16).astype(np.float64)
    halfway = grid + np.abs(grid) * 2.0**-11 * rng.choice((-1, 1), size=grid.shape)
    return units(np.concatenate([dense, sparse, tiny, halfway, units(halfway)]))


@pytest.mark.parametrize("dimensions", [3, 12, 384, 1_536])
def test_cosines_stay_within_the_bound(dimensions: int) -> None:
    rng = np.random.default_rng(dimensions)
    rows = shapes(rng, dimensions)
    rounded = rows.astype(np.float16)
    row_error = max(half.rounding_error(row, kept) for row, kept in zip(rows, rounded, strict=True))
    for query in [*rows[::97], rows[0], -rows[1]]:
        query_half = query.astype(np.float16)
        bound = half.tolerance(dimensions, row_error, half.rounding_error(query, query_half))
        found = half.dots(rounded, query_half).astype(np.float64)
        assert np.abs(found - rows @ query).max() <= bound
        assert bound < 0.01  # loose enough to hold, tight enough to screen


def test_a_long_scan_takes_a_second_thread_only_while_a_core_is_idle(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(half, "CORES", 2)
    monkeypatch.setattr(os, "getloadavg", lambda: (1.4, 1.0, 1.0))
    assert half.threads(half.PARALLEL_FROM) == 2
    assert half.threads(half.PARALLEL_FROM - 1) == 1
    monkeypatch.setattr(os, "getloadavg", lambda: (1.6, 1.0, 1.0))
    assert half.threads(half.PARALLEL_FROM) == 1
    monkeypatch.setattr(half, "CORES", 1)
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    assert half.threads(half.PARALLEL_FROM) == 1


def test_two_threads_give_each_row_the_same_bits(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(5)
    rows = units(rng.normal(size=(3_000, 64))).astype(np.float16)
    query = units(rng.normal(size=(1, 64)))[0].astype(np.float16)
    one = half.dots(rows, query)
    monkeypatch.setattr(half, "threads", lambda _: 2)
    assert np.array_equal(half.dots(rows, query), one)
