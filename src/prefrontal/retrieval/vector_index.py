"""Stored vectors kept in memory for search: one float32 matrix per agent and size.

A backend that keeps its vectors in rows (SQLite, PostgreSQL) would
otherwise read and decode every visible vector on every query. A
:class:`VectorRows` holds the vectors of one agent of one size as a float32
matrix, with what search filters on beside it as arrays: the owner, whether
the item is shared, whether it was superseded, when it expires and its kind.
The backend keeps it in step with its writes (SQLite through a change
counter, :mod:`prefrontal.stores.sqlite.vectors`).

**Tenancy inside the search.** :meth:`VectorRows.allowed` is the rows the
tenant may see, live at the query's time, of the kinds asked for: other
users' private items, dead items and other kinds are never scored, ranked
or returned, whatever their similarity.

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
import threading
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

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
BAND = 1_024
"""At most this many rows near the median have their exact cosine computed to place it
exactly; past that (many rows within ``tie`` of it), the median is placed to ``tie``."""
"""Fused scores within this of the k-th are taken as possible contenders."""


def grown_to(array: np.ndarray, capacity: int) -> np.ndarray:
    """A copy of ``array`` with ``capacity`` rows: its rows first, zeros after."""
    out = np.zeros((capacity, *array.shape[1:]), dtype=array.dtype)
    out[: len(array)] = array
    return out


@dataclass(frozen=True, slots=True)
class StoredVector:
    """One stored vector with what search filters on.

    ``row`` names it in the backend (a row id); ``key`` is its
    :func:`~prefrontal.stores.memory_search.hit_key`; ``until`` its
    ``valid_until`` in µs (:data:`FOREVER` when it never expires).
    """

    row: int
    key: str
    user: str
    shared: bool
    superseded: bool
    until: int
    kind: str
    vector: bytes


class VectorRows:
    """The vectors of one agent of one size, as one float32 matrix and filter columns.

    Not thread-safe: the backend's :class:`Guarded` serialises access.
    """

    def __init__(self, dimensions: int, *, half: bool = False) -> None:
        self.dimensions = dimensions
        self.half: np.ndarray | None = np.zeros((0, dimensions), np.float16) if half else None
        """Each row scaled to unit length in float16, scanned instead of ``matrix`` when set."""
        self.slots: dict[int, int] = {}
        """Row to its slot in the arrays."""
        self.free: list[int] = []
        self.size = 0
        self.matrix = np.zeros((0, dimensions), dtype=FLOAT32)
        self.norms = np.zeros(0, dtype=FLOAT32)
        self.present = np.zeros(0, dtype=bool)
        self.shared = np.zeros(0, dtype=bool)
        self.dead = np.zeros(0, dtype=bool)
        self.until = np.zeros(0, dtype=np.int64)
        self.user = np.zeros(0, dtype=np.int32)
        self.kind = np.zeros(0, dtype=np.int32)
        self.keys: list[str] = []
        self.rows: list[int] = []
        self._codes: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self.slots)

    def code(self, text: str) -> int:
        """The number standing for a user id or kind in the filter columns."""
        return self._codes.setdefault(text, len(self._codes))

    def put(self, vectors: Sequence[StoredVector]) -> None:
        """Store ``vectors`` (all of this size), replacing rows held already."""
        for vector in vectors:
            self.drop(vector.row)
        slots = [self._slot() for _ in vectors]
        at = np.asarray(slots, dtype=np.int64)
        joined = b"".join(v.vector for v in vectors)
        matrix = np.frombuffer(joined, dtype=FLOAT32).reshape(-1, self.dimensions)
        self.matrix[at] = matrix
        norms = np.sqrt(np.einsum("ij,ij->i", matrix, matrix))
        self.norms[at] = norms
        if self.half is not None:
            with np.errstate(divide="ignore", invalid="ignore"):
                units = np.nan_to_num(matrix / norms[:, None], nan=0.0, posinf=0.0, neginf=0.0)
            self.half[at] = units.astype(np.float16)
        self.present[at] = True
        self.shared[at] = [v.shared for v in vectors]
        self.dead[at] = [v.superseded for v in vectors]
        self.until[at] = [v.until for v in vectors]
        self.user[at] = [self.code(v.user) for v in vectors]
        self.kind[at] = [self.code(v.kind) for v in vectors]
        for vector, slot in zip(vectors, slots, strict=True):
            self.slots[vector.row] = slot
            self.keys[slot], self.rows[slot] = vector.key, vector.row

    def drop(self, row: int) -> None:
        """Forget ``row`` (nothing when it is not held)."""
        slot = self.slots.pop(row, None)
        if slot is not None:
            self.present[slot] = False
            self.keys[slot], self.rows[slot] = "", -1
            self.free.append(slot)

    def allowed(self, user: str, now: int, kinds: Collection[str] | None) -> np.ndarray:
        """The slots ``user`` may see (shared or their own), live at ``now`` (µs), of ``kinds``."""
        n = self.size
        mask: np.ndarray = self.present[:n] & ~self.dead[:n] & (self.until[:n] > now)
        mask &= self.shared[:n] | (self.user[:n] == self._codes.get(user, -1))
        if kinds is not None:
            codes = [self._codes[kind] for kind in kinds if kind in self._codes]
            mask &= np.isin(self.kind[:n], codes)
        return np.flatnonzero(mask)

    def _slot(self) -> int:
        if self.free:
            return self.free.pop()
        if self.size == len(self.present):
            self._grow(max(1_024, 2 * self.size))
        self.keys.append("")
        self.rows.append(-1)
        self.size += 1
        return self.size - 1

    def _grow(self, capacity: int) -> None:
        def grown(array: np.ndarray) -> np.ndarray:
            return grown_to(array, capacity)

        self.matrix, self.norms = grown(self.matrix), grown(self.norms)
        if self.half is not None:
            self.half = grown(self.half)
        self.present, self.shared = grown(self.present), grown(self.shared)
        self.dead, self.until = grown(self.dead), grown(self.until)
        self.user, self.kind = grown(self.user), grown(self.kind)


class Guarded:
    """The :class:`VectorRows` of one store by agent and size, behind one lock."""

    def __init__(self, *, half: bool | None = None) -> None:
        self.half = SIMSIMD is not None if half is None else half
        """Whether rows are scanned as float16 unit vectors (with ``simsimd``)."""
        self.lock = threading.Lock()
        self.by_agent: dict[tuple[str, int], VectorRows] = {}
        self.where: dict[int, tuple[str, int]] = {}

    def clear(self) -> None:
        """Forget every row."""
        self.by_agent.clear()
        self.where.clear()

    def drop(self, row: int) -> None:
        """Forget ``row`` wherever it is held."""
        where = self.where.pop(row, None)
        if where is not None:
            self.by_agent[where].drop(row)

    def put(self, agent: str, vectors: Iterable[StoredVector]) -> None:
        """Hold ``vectors`` of ``agent`` (each replacing its row), grouped by size."""
        groups: dict[int, list[StoredVector]] = {}
        for vector in vectors:
            self.drop(vector.row)
            size = len(vector.vector) // FLOAT32.itemsize
            if size and len(vector.vector) % FLOAT32.itemsize == 0:
                groups.setdefault(size, []).append(vector)
        for size, group in groups.items():
            rows = self.by_agent.get((agent, size))
            if rows is None:
                rows = self.by_agent[(agent, size)] = VectorRows(size, half=self.half)
            rows.put(group)
            for vector in group:
                self.where[vector.row] = (agent, size)


class Similarities:
    """The cosine of one query embedding with the allowed rows of one :class:`VectorRows`.

    ``approx`` is the float32 cosine of each allowed row, clamped at 0 (as
    the vector signal counts negative similarities); positions index
    ``allowed``.
    """

    def __init__(self, rows: VectorRows, allowed: np.ndarray, embedding: Sequence[float]) -> None:
        self.rows, self.allowed = rows, allowed
        self.query = np.asarray(embedding, dtype=np.float64)
        if rows.half is not None and SIMSIMD is not None:
            raw, self.tie = self._half(rows.half[: rows.size]), HALF_TIE
        else:
            raw, self.tie = self._single(), TIE
        raw = np.nan_to_num(raw, copy=False, nan=0.0, posinf=0.0, neginf=0.0)
        """No approximate cosine is further than this from the exact one."""
        self.zero = raw < -self.tie
        """Rows whose exact cosine is surely 0 once clamped."""
        self.approx: np.ndarray = np.maximum(raw, np.float32(0.0))
        self._median: tuple[int, float] | None = None
        self.spread = 1.0
        """The best cosine less the median, once :meth:`normalised` has run."""

    def __len__(self) -> int:
        return len(self.allowed)

    def _single(self) -> np.ndarray:
        """The float32 cosine of every allowed row, from one matrix-vector product."""
        rows, query = self.rows, np.asarray(self.query, dtype=FLOAT32)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            dots = rows.matrix[: rows.size] @ query
            norms = rows.norms[: rows.size] * np.linalg.norm(query)
            if len(self.allowed) < rows.size:
                dots, norms = dots[self.allowed], norms[self.allowed]
            raw: np.ndarray = dots / norms
        return raw

    def _half(self, half: np.ndarray) -> np.ndarray:
        """The cosine of every allowed row from float16 unit vectors, with SIMD kernels."""
        norm = float(np.linalg.norm(self.query))
        unit = (self.query / norm if norm else self.query).astype(np.float16)
        found = SIMSIMD.cdist(unit[None, :], half, metric="dot", out_dtype="float32")
        dots = np.asarray(found).reshape(-1)
        raw: np.ndarray = dots if len(self.allowed) == len(dots) else dots[self.allowed]
        return raw

    def median(self) -> tuple[int, float]:
        """The position of a row whose exact cosine is the median of all, and that cosine.

        The median of the exact cosines is within ``tie`` of the median of
        the approximate ones: rows surely below or above it are counted, the
        others' exact cosines are computed and the median is found among them
        (unless more than :data:`BAND` rows are that close to it: then the
        row at the approximate median is taken, within ``tie`` of the exact).
        """
        if self._median is None:
            self._median = self._find_median()
        return self._median

    def _find_median(self) -> tuple[int, float]:
        middle, approx, tie = len(self.approx) // 2, self.approx, self.tie
        typical = float(np.partition(approx, middle)[middle])
        below = self.zero | (approx < typical - 2 * tie)
        if int(np.count_nonzero(below)) > middle:
            return int(np.flatnonzero(self.zero)[0]), 0.0
        band = np.flatnonzero(~below & (approx <= typical + 2 * tie))
        if len(band) > BAND:
            at = int(np.flatnonzero(approx == typical)[0])
            return at, float(self.exact(np.asarray([at]))[0])
        exact = self.exact(band)
        order = np.argsort(exact, kind="stable")
        at = int(order[middle - int(np.count_nonzero(below))])
        return int(band[at]), float(exact[at])

    def normalised(self) -> np.ndarray | None:
        """Each row's float32 cosine placed between the median (0) and the best (1), as fusion
        places the exact ones; ``None`` when the two are too close to place rows surely."""
        typical = self.median()[1]
        high = float(self.approx.max())
        if high - typical < max(1e-2, 20 * self.tie):
            return None
        self.spread = high - typical
        return np.maximum(self.approx - typical, 0.0) / (high - typical)

    def best(self, count: int) -> np.ndarray:
        """The positions of the ``count`` best rows by float32 cosine, and of any within ``TIE``."""
        if count >= len(self.approx):
            return np.arange(len(self.approx))
        best = np.argpartition(-self.approx, count - 1)[:count]
        return np.flatnonzero(self.approx >= float(self.approx[best].min()) - 2 * self.tie)

    def exact(self, positions: np.ndarray) -> np.ndarray:
        """The clamped float64 cosines of the rows at ``positions``."""
        matrix = self.rows.matrix[self.allowed[positions]].astype(np.float64)
        norms = np.linalg.norm(matrix, axis=1) * np.linalg.norm(self.query)
        dots = matrix @ self.query
        values = np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)
        clamped: np.ndarray = np.maximum(values, 0.0)
        return clamped

    def signal(self, wanted: np.ndarray, limit: int) -> dict[str, float] | None:
        """The vector signal for a fused top ``limit``, by key; ``None`` when it cannot be sure.

        The exact cosine of the rows at positions ``wanted``, of the best
        ``limit`` (and :data:`MARGIN`) by float32 cosine, and of rows
        chosen so that the median and the best of the rows given are those
        of every allowed row: fusion then normalises them as it would every
        row's. Every row when there are few.
        """
        n = len(self.approx)
        if n <= 2 * (limit + MARGIN):
            picked = np.ones(n, dtype=bool)
        else:
            picked = np.zeros(n, dtype=bool)
            picked[wanted] = True
            picked[self.best(limit + MARGIN)] = True
            at, typical = self.median()
            picked[at] = True
            if not self._balance(picked, typical):
                return None
        positions = np.flatnonzero(picked)
        values = self.exact(positions).tolist()
        keys = self.rows.keys
        slots = self.allowed[positions].tolist()
        return {keys[slot]: value for slot, value in zip(slots, values, strict=True)}

    def _balance(self, picked: np.ndarray, typical: float) -> bool:
        """Add rows from below or above ``typical`` until it is the median of the picked.

        ``False`` when there are not enough rows surely below or above it.
        """
        exact = self.exact(np.flatnonzero(picked))
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
            return True
        found = np.flatnonzero(sure)
        if len(found) < wanted:
            near = ~picked & ~sure & (np.abs(self.approx - typical) <= self.tie)
            maybe = np.flatnonzero(near)[: max(BAND, 2 * wanted)]
            values = self.exact(maybe)
            fits = values >= typical if above else values <= typical
            found = np.concatenate([found, maybe[fits]])
        if len(found) < wanted:
            return False
        picked[found[:wanted]] = True
        return True


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
    ``limit``-th best least are the contenders. ``None`` when the median and
    the best cosine are too close to tell, or when more than ``cap`` rows
    contend (the caller then asks for a longer lexical top).
    """
    normalised = similarities.normalised()
    if normalised is None:
        return None
    weight = SIGNAL_WEIGHTS.get("vector", 1.0)
    lexical_weight = SIGNAL_WEIGHTS.get("bm25", 1.0)
    best = max([*lexical.scores.values(), *lexical.others], default=0.0)
    least = weight * normalised
    scale = lexical_weight / best if best > 0 else 0.0
    inside = np.fromiter(lexical.scores, dtype=np.int64, count=len(lexical.scores))
    if len(inside):
        values = np.fromiter(lexical.scores.values(), dtype=np.float64, count=len(inside))
        least[inside] += scale * values
    pool = np.concatenate([least, scale * np.asarray(lexical.others, dtype=np.float64)])
    if len(pool) <= limit:
        threshold = 0.0
    else:
        threshold = float(np.partition(pool, len(pool) - limit)[len(pool) - limit])
    most = weight * normalised + scale * lexical.bound
    most[inside] = -1.0
    slack = weight * 3 * similarities.tie / similarities.spread + SLACK
    found = np.flatnonzero((most >= threshold - slack) & (most > 0))
    return None if len(found) > cap else found
