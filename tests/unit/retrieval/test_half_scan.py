"""The float16 scan gives each allowed row the same cosine however its rows are scanned."""

from __future__ import annotations

from collections.abc import Callable
from concurrent import futures

import numpy as np
import pytest

from prefrontal.retrieval import vector_index
from prefrontal.retrieval.vector_index import SIMSIMD, Similarities, half_dots
from prefrontal.retrieval.vectors import FLOAT32

pytestmark = pytest.mark.skipif(SIMSIMD is None, reason="needs the vectors extra (simsimd)")


class _Rows:
    """Rows of random vectors in the layout :class:`Similarities` scans."""

    def __init__(self, count: int, dimensions: int = 48, seed: int = 7) -> None:
        generator = np.random.default_rng(seed)
        self.matrix: np.ndarray = generator.standard_normal((count, dimensions)).astype(FLOAT32)
        self.norms = np.linalg.norm(self.matrix, axis=1).astype(FLOAT32)
        self.half: np.ndarray | None = (self.matrix / self.norms[:, None]).astype(np.float16)
        self.size = count


def _in_a_thread(pool: futures.ThreadPoolExecutor) -> vector_index.Split:
    return lambda work: pool.submit(work)


def test_a_split_scan_gives_the_bits_of_one_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    """Cut in two, the second half in another thread: every dot product is the same float."""
    monkeypatch.setattr(vector_index, "SPLIT_LEAST", 8)
    rows = _Rows(1001)
    assert rows.half is not None
    unit = rows.half[3]
    with futures.ThreadPoolExecutor(1) as pool:
        split = half_dots(unit, rows.half, _in_a_thread(pool))
    whole = half_dots(unit, rows.half)
    assert split.dtype == whole.dtype and split.tobytes() == whole.tobytes()


def test_a_split_scan_waits_for_its_other_half_when_its_own_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What the first half raised is raised, after the second half has finished."""
    monkeypatch.setattr(vector_index, "SPLIT_LEAST", 8)
    rows = _Rows(64)
    assert rows.half is not None
    other: list[futures.Future[np.ndarray]] = []

    def later(work: Callable[[], np.ndarray]) -> futures.Future[np.ndarray]:
        other.append(pool.submit(work))
        return other[-1]

    with futures.ThreadPoolExecutor(1) as pool, pytest.raises(Exception):  # noqa: B017, PT011
        half_dots(rows.half[0][:5], rows.half, later)  # the wrong size: both halves fail
    assert other and other[0].done()


@pytest.mark.parametrize("share", [0.01, 0.2, 0.3, 0.9, 1.0])
def test_the_allowed_rows_score_alike_gathered_or_scanned_with_every_row(share: float) -> None:
    """Few allowed rows are gathered and scanned alone; their cosines are those a scan of
    every row gives them, to the bit."""
    rows = _Rows(4000)
    generator = np.random.default_rng(11)
    allowed = np.flatnonzero(generator.random(rows.size) < share)
    query = np.asarray(generator.standard_normal(size=(rows.matrix.shape[1],))).tolist()
    with futures.ThreadPoolExecutor(1) as pool:
        found = Similarities(rows, lambda: allowed, query, split=_in_a_thread(pool))
    assert rows.half is not None
    every = half_dots(found_unit(query), rows.half)[allowed]
    expected = np.maximum(np.nan_to_num(every), np.float32(0.0))
    assert found.approx.tobytes() == expected.tobytes()
    assert np.array_equal(found.allowed, allowed)


def found_unit(query: list[float]) -> np.ndarray:
    """The float16 unit query the scan takes."""
    vector = np.asarray(query, dtype=np.float64)
    unit: np.ndarray = (vector / float(np.linalg.norm(vector))).astype(np.float16)
    return unit
