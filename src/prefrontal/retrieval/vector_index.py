"""Search over a matrix of stored vectors, with the same answer as scoring every row.

A backend that keeps its vectors in rows (SQLite, PostgreSQL) would
otherwise read and decode every visible vector on every query. SQLite keeps
them in memory-mapped files beside the database, one slot a row in row id
order, with what search filters on beside them
(:mod:`prefrontal.stores.sqlite.vector_file`); the search takes the slots
the tenant may see, live and of the kinds asked for, before it scores any:
other users' private items, dead items and other kinds are never scored,
ranked or returned, whatever their similarity.

**The same answer as scoring every row.** Fusion normalises the vector
signal between its median and its best
(:func:`~prefrontal.retrieval.fusion.above_typical`), so a search needs the
median and the best of every allowed row, and the exact cosine of the rows
that may reach the top k. :class:`Similarities` computes the float32 cosine
of every allowed row at once (one matrix-vector product), and
:meth:`Similarities.signal` the exact cosine (float64, as
:func:`~prefrontal.retrieval.vectors.cosines`) of a few: the rows asked
for, the best by float32 cosine, the median row, and as many rows from
below or above it as keep it the median. :func:`hybrid_rows` says which rows
may reach the fused top k given the BM25 top k and a bound on every other
row's BM25 score; only those need their BM25 score and exact cosine.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from concurrent import futures
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from prefrontal.retrieval.fusion import SIGNAL_WEIGHTS
from prefrontal.retrieval.vectors import FLOAT32


def _simsimd() -> Any:
    """The ``simsimd`` module when installed (the ``vectors`` extra), else ``None``."""
    try:
        return importlib.import_module("simsimd")
    except ImportError:
        return None


SIMSIMD = _simsimd()
"""SIMD kernels for half-precision dot products, when installed."""
HALF_TIE = 2e-3
"""How far a cosine of float16 unit vectors may be from the exact one: each of the two
roundings moves it by at most 2**-11, the float32 sums by far less."""
FOREVER = int(np.iinfo(np.int64).max)
"""The ``valid_until`` (µs) of an item that never expires."""
MARGIN = 16
"""Rows taken past ``limit`` by float32 cosine, against float32 rounding."""
TIE = 1e-5
"""Rows within this of a float32 cosine that decides something are taken too."""
SLACK = 1e-6
"""Fused scores within this of the k-th are taken as possible contenders."""
BAND = 1_024
"""At most this many rows near the median have their exact cosine computed to place it
exactly; past that (many rows within ``tie`` of it), the median is placed to ``tie``."""


GATHERED_SHARE = 0.25
"""The float16 rows the tenant may see are gathered and only they are scanned when they are
at most this share of the rows (gathering a row costs about what scanning it does)."""
SPLIT_LEAST = 32_768
"""Scans of at least this many float16 rows are cut in two, the second half scanned in
another thread when the caller gives one (:data:`Split`)."""

RADIX_LEAST = 4_096
"""Fewer values than this are partitioned whole by :func:`ranked`."""

Split = Callable[[Callable[[], np.ndarray]], "futures.Future[np.ndarray]"]
"""Runs a scan of some rows in another thread: the future of its result."""


def grown_to(array: np.ndarray, capacity: int) -> np.ndarray:
    """A copy of ``array`` with ``capacity`` rows: its rows first, zeros after."""
    out = np.zeros((capacity, *array.shape[1:]), dtype=array.dtype)
    out[: len(array)] = array
    return out


class Scanned(Protocol):
    """Rows of vectors of one size as :class:`Similarities` scans them.

    Slots ``0 .. size - 1`` index ``matrix`` (float32), ``norms`` (each
    row's length) and ``half`` (each row scaled to unit length in float16,
    scanned instead of ``matrix`` when set).
    """

    size: int
    matrix: np.ndarray
    norms: np.ndarray
    half: np.ndarray | None


class Similarities:
    """The cosine of one query embedding with the allowed slots of one :class:`Scanned`.

    ``approx`` is the float32 cosine of each allowed row, clamped at 0 (as
    the vector signal counts negative similarities); positions index
    ``allowed``. ``allowed`` may be given as a function returning them, so
    that another thread may find them meanwhile: the float16 scan calls it
    first (it scans only the allowed rows when they are few), the float32
    one once every row has been scanned. ``split`` runs part of a large
    float16 scan in another thread (:func:`half_dots`).
    """

    def __init__(
        self,
        rows: Scanned,
        allowed: np.ndarray | Callable[[], np.ndarray],
        embedding: Sequence[float],
        *,
        split: Split | None = None,
    ) -> None:
        self.rows = rows
        self.query = np.asarray(embedding, dtype=np.float64)
        if rows.half is not None and SIMSIMD is not None:
            self.allowed = allowed if isinstance(allowed, np.ndarray) else allowed()
            raw, self.tie = self._half(rows.half, split), HALF_TIE
        else:
            every, self.tie = self._single(), TIE
            self.allowed = allowed if isinstance(allowed, np.ndarray) else allowed()
            raw = every if len(self.allowed) == len(every) else every[self.allowed]
        raw = np.nan_to_num(raw, copy=False, nan=0.0, posinf=0.0, neginf=0.0)
        """No approximate cosine is further than this from the exact one."""
        self.zero = raw < -self.tie
        """Rows whose exact cosine is surely 0 once clamped."""
        self.approx: np.ndarray = np.maximum(raw, np.float32(0.0))
        self._median: tuple[int, float] | None = None
        self._normalised: tuple[np.ndarray | None] | None = None
        self._best: dict[int, np.ndarray] = {}
        self.spread = 1.0
        """The best cosine less the median, once :meth:`normalised` has run."""

    def __len__(self) -> int:
        return len(self.allowed)

    def prepare(self, limit: int) -> None:
        """Compute now what a fused top ``limit`` asks of every row: the median, the placed
        cosines and the best rows, so that a caller may have it done in another thread
        (NumPy and the kernels let other threads run meanwhile) while it ranks by BM25."""
        if len(self) > 2 * (limit + MARGIN):
            self._find_median_and_best(limit + MARGIN)
            self.normalised()

    def _single(self) -> np.ndarray:
        """The float32 cosine of every row, from one matrix-vector product."""
        rows, query = self.rows, np.asarray(self.query, dtype=FLOAT32)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            dots = rows.matrix[: rows.size] @ query
            norms = rows.norms[: rows.size] * np.linalg.norm(query)
            raw: np.ndarray = dots / norms
        return raw

    def _half(self, half: np.ndarray, split: Split | None) -> np.ndarray:
        """The cosine of each allowed row from float16 unit vectors, with SIMD kernels.

        Only the allowed rows are scanned when they are few
        (:data:`GATHERED_SHARE`); a pair's dot product is the same bits
        whichever rows are scanned with it, and however they are cut.
        """
        norm = float(np.linalg.norm(self.query))
        unit = (self.query / norm if norm else self.query).astype(np.float16)
        if len(self.allowed) <= GATHERED_SHARE * self.rows.size:
            return half_dots(unit, half[self.allowed], split)
        every = half_dots(unit, half[: self.rows.size], split)
        return every if len(self.allowed) == len(every) else every[self.allowed]

    def median(self) -> tuple[int, float]:
        """The position of a row whose exact cosine is the median of all, and that cosine.

        The median of the exact cosines is within ``tie`` of the median of
        the approximate ones: rows surely below or above it are counted, the
        others' exact cosines are computed and the median is found among them
        (unless more than :data:`BAND` rows are that close to it: then the
        row at the approximate median is taken, within ``tie`` of the exact).
        """
        if self._median is None:
            self._find_median_and_best(None)
        assert self._median is not None
        return self._median

    def _find_median_and_best(self, count: int | None) -> None:
        """Place the median (and the ``count``-th best float32 cosine) with one partition."""
        approx, middle = self.approx, len(self.approx) // 2
        if self._median is not None and (count is None or count in self._best):
            return
        kth = [middle] if count is None or count >= len(approx) else [middle, len(approx) - count]
        parted = ranked(approx, kth)
        if count is not None and count < len(approx):
            self._best[count] = self._within_tie(parted[-1])
        if self._median is None:
            self._median = self._find_median(parted[0])

    def _within_tie(self, least: float) -> np.ndarray:
        """The positions of rows whose float32 cosine is at least ``least`` or within ``TIE``."""
        return np.flatnonzero(self.approx >= least - 2 * self.tie)

    def _find_median(self, typical: float) -> tuple[int, float]:
        middle, approx, tie = len(self.approx) // 2, self.approx, self.tie
        below = self.zero | (approx < typical - 2 * tie)
        if int(np.count_nonzero(below)) > middle:
            return int(np.flatnonzero(self.zero)[0]), 0.0
        band = np.flatnonzero(~below & (approx <= typical + 2 * tie))
        if len(band) > BAND:
            at = int(np.argmax(approx == typical))
            return at, float(self.exact(np.asarray([at]))[0])
        exact = self.exact(band)
        order = np.argsort(exact, kind="stable")
        at = int(order[middle - int(np.count_nonzero(below))])
        return int(band[at]), float(exact[at])

    def normalised(self) -> np.ndarray | None:
        """Each row's float32 cosine placed between the median (0) and the best (1), as fusion
        places the exact ones; ``None`` when the two are too close to place rows surely."""
        if self._normalised is None:
            self._normalised = (self._placed(),)
        return self._normalised[0]

    def _placed(self) -> np.ndarray | None:
        typical = self.median()[1]
        high = float(self.approx.max())
        if high - typical < max(1e-2, 20 * self.tie):
            return None
        self.spread = high - typical
        placed: np.ndarray = np.maximum(self.approx - typical, 0.0) / (high - typical)
        return placed

    def best(self, count: int) -> np.ndarray:
        """The positions of the ``count`` best rows by float32 cosine, and of any within ``TIE``."""
        if count >= len(self.approx):
            return np.arange(len(self.approx))
        if count not in self._best:
            (least,) = ranked(self.approx, [len(self.approx) - count])
            self._best[count] = self._within_tie(least)
        return self._best[count]

    def exact(self, positions: np.ndarray) -> np.ndarray:
        """The clamped float64 cosines of the rows at ``positions``."""
        matrix = self.rows.matrix[self.allowed[positions]].astype(np.float64)
        norms = np.linalg.norm(matrix, axis=1) * np.linalg.norm(self.query)
        dots = matrix @ self.query
        values = np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)
        clamped: np.ndarray = np.maximum(values, 0.0)
        return clamped

    def signal(self, wanted: np.ndarray, limit: int) -> dict[int, float] | None:
        """The vector signal for a fused top ``limit``, by slot; ``None`` when it cannot be sure.

        The exact cosine of the rows at positions ``wanted``, of the best
        ``limit`` (and :data:`MARGIN`) by float32 cosine, and of rows
        chosen so that the median and the best of the rows given are those
        of every allowed row: fusion then normalises them as it would every
        row's. Every row when there are few.
        """
        n = len(self.approx)
        if n <= 2 * (limit + MARGIN):
            positions = np.arange(n)
            values = self.exact(positions)
        else:
            picked = np.zeros(n, dtype=bool)
            picked[wanted] = True
            picked[self.best(limit + MARGIN)] = True
            at, typical = self.median()
            picked[at] = True
            positions = np.flatnonzero(picked)
            values = self.exact(positions)
            added = self._balance(picked, values, typical)
            if added is None:
                return None
            if len(added):
                positions = np.concatenate([positions, added])
                values = np.concatenate([values, self.exact(added)])
                order = np.argsort(positions, kind="stable")
                positions, values = positions[order], values[order]
        slots = self.allowed[positions].tolist()
        return dict(zip(slots, values.tolist(), strict=True))

    def _balance(self, picked: np.ndarray, exact: np.ndarray, typical: float) -> np.ndarray | None:
        """The rows from below or above ``typical`` that make it the median of the picked.

        ``exact``: the exact cosines of the picked rows. ``None`` when there
        are not enough rows surely below or above it.
        """
        under = int(np.count_nonzero(exact < typical))
        level = len(exact) - under - int(np.count_nonzero(exact > typical))
        total = len(exact)
        if total // 2 < under:
            wanted, above = 2 * under - total, True
            sure = ~picked & (self.approx > typical + self.tie)
        elif total // 2 > under + level - 1:
            wanted, above = total - 2 * (under + level) + 1, False
            sure = ~picked & (self.zero | (self.approx < typical - self.tie))
        else:
            return np.zeros(0, dtype=np.int64)
        found = np.flatnonzero(sure)
        if len(found) < wanted:
            near = ~picked & ~sure & (np.abs(self.approx - typical) <= self.tie)
            maybe = np.flatnonzero(near)[: max(BAND, 2 * wanted)]
            values = self.exact(maybe)
            fits = values >= typical if above else values <= typical
            found = np.concatenate([found, maybe[fits]])
        if len(found) < wanted:
            return None
        added: np.ndarray = found[:wanted]
        return added


def ranked(values: np.ndarray, ranks: Sequence[int]) -> list[float]:
    """The value at each of ``ranks`` in ``values`` sorted (what ``np.partition`` places
    there), for ``values`` of at least 0 (clamped cosines).

    A radix select, not a partition of every value (slow when many values
    are equal, as clamped cosines often are): float32 values of one sign
    order as their bits do, so the values are counted by their top 15 bits
    of magnitude, and only the values sharing the bucket a rank falls in are
    partitioned. A rank among the zeros is 0.0 at once.
    """
    if values.dtype != np.float32 or len(values) < RADIX_LEAST:
        parted = np.partition(values, list(ranks))
        return [float(parted[rank]) for rank in ranks]
    zeros = len(values) - int(np.count_nonzero(values))
    if all(rank < zeros for rank in ranks):
        return [0.0] * len(ranks)
    keys = (values.view(np.uint32) & np.uint32(0x7FFF_FFFF)) >> np.uint32(16)
    ends = np.cumsum(np.bincount(keys, minlength=1 << 15))
    found = []
    for rank in ranks:
        if rank < zeros:
            found.append(0.0)
            continue
        bucket = int(np.searchsorted(ends, rank, side="right"))
        inside = values[keys == bucket]
        at = rank - (int(ends[bucket - 1]) if bucket else 0)
        found.append(float(np.partition(inside, at)[at]))
    return found


def half_dots(unit: np.ndarray, half: np.ndarray, split: Split | None = None) -> np.ndarray:
    """The dot product (float32) of float16 ``unit`` with each float16 row of ``half``.

    With ``split``, a scan of at least :data:`SPLIT_LEAST` rows is cut in
    two and the second half scanned by ``split`` meanwhile; it has finished
    when this returns, whatever happened.
    """
    if split is None or len(half) < SPLIT_LEAST:
        return _half_dots(unit, half)
    middle = len(half) // 2
    other = split(lambda: _half_dots(unit, half[middle:]))
    try:
        first = _half_dots(unit, half[:middle])
    finally:
        futures.wait([other])
    return np.concatenate([first, other.result()])


def _half_dots(unit: np.ndarray, half: np.ndarray) -> np.ndarray:
    if not len(half):
        return np.zeros(0, dtype=FLOAT32)
    found = SIMSIMD.cdist(unit[None, :], half, metric="dot", out_dtype="float32")
    dots: np.ndarray = np.asarray(found).reshape(-1)
    return dots


@dataclass(frozen=True, slots=True)
class LexicalTop:
    """What a backend's BM25 top k gave: exact scores and a bound on every other's.

    ``scores`` are exact BM25 scores by position among the allowed rows
    (rows without a vector are in ``others``); no row outside both scores
    more than ``bound`` (0 when every match was scored).
    """

    scores: Mapping[int, float]
    others: Sequence[float]
    bound: float


def hybrid_rows(
    similarities: Similarities, lexical: LexicalTop, limit: int, cap: int
) -> np.ndarray | None:
    """The positions of rows whose fused score may reach the top ``limit``, lexical top aside.

    A row outside the lexical top scores at least its vector part and at
    most that plus ``bound`` normalised: the rows whose most reaches the
    ``limit``-th best least are the contenders. That ``limit``-th best is
    taken among the lexical top, the rows without a vector and the best
    rows by float32 cosine (:meth:`Similarities.best`): no more than the
    ``limit``-th best of every row, so no contender is missed. ``None``
    when the median and the best cosine are too close to tell, or when
    more than ``cap`` rows contend (the caller then asks for a longer
    lexical top).
    """
    normalised = similarities.normalised()
    if normalised is None:
        return None
    weight = SIGNAL_WEIGHTS.get("vector", 1.0)
    lexical_weight = SIGNAL_WEIGHTS.get("bm25", 1.0)
    best = max([*lexical.scores.values(), *lexical.others], default=0.0)
    scale = lexical_weight / best if best > 0 else 0.0
    inside = np.fromiter(lexical.scores, dtype=np.int64, count=len(lexical.scores))
    values = np.fromiter(lexical.scores.values(), dtype=np.float64, count=len(inside))
    nearest = np.setdiff1d(similarities.best(limit + MARGIN), inside, assume_unique=True)
    pool = np.concatenate(
        [
            weight * normalised[inside] + scale * values,
            weight * normalised[nearest],
            scale * np.asarray(lexical.others, dtype=np.float64),
        ]
    )
    if len(pool) <= limit:
        threshold = 0.0
    else:
        threshold = float(np.partition(pool, len(pool) - limit)[len(pool) - limit])
    most = weight * normalised + scale * lexical.bound
    most[inside] = -1.0
    slack = weight * 3 * similarities.tie / similarities.spread + SLACK
    found = np.flatnonzero((most >= threshold - slack) & (most > 0))
    return None if len(found) > cap else found
