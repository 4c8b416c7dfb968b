"""Cosines screened from float16 unit vectors with SIMD kernels, within a proven bound.

When ``simsimd`` is installed (the ``vectors`` extra) and its half-precision
dot product sums in float32 on this machine, the in-memory index keeps each
dense unit vector in float16 too (:mod:`prefrontal.stores.memory.segment`)
and screens a dense query's cosines from it (:mod:`prefrontal.stores.memory.view`):
a quarter of the bytes of the float64 matrix, half those of a float32 one.
Without it, or where the kernels sum in float16 (``sapphire``, Arm's
``neon_f16`` and ``sve_f16``: far less exact), :data:`KERNELS` is ``None``
and the index screens in float32.

**The bound** (:func:`tolerance`). For unit ``q`` and ``x`` rounded to
``q'`` and ``x'`` (float16), ``|q.x - q'.x'| <= |q.(x - x')| + |(q - q').x'|
<= |x - x'| + |q - q'| |x'|`` by Cauchy-Schwarz: the rounding errors'
lengths, measured, not their worst case (each row's is the column's
``half_error``, the largest of any row it held). Each product of two
float16 numbers is exact in float32; summing ``n`` of them in float32, in
any order, and rounding the sum to the float32 returned moves it by at most
``(n + 1) u / (1 - (n + 1) u)`` times ``|q'| |x'|`` (``u`` float32's unit
roundoff). A margin of 1 % and a millionth on top.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

import numpy as np

SINGLE_ROUNDING = 2.0**-24
"""The unit roundoff of float32."""
HALF_SUMS = ("sapphire", "neon_f16", "sve_f16")
"""``simsimd`` capabilities whose half-precision kernels sum in float16."""
PARALLEL_FROM = 16_384
"""From this many rows a scan may run on two threads (:func:`threads`)."""


def _kernels() -> Any:
    """``simsimd`` when installed and summing half-precision products in float32, else ``None``."""
    try:
        module = importlib.import_module("simsimd")
    except ImportError:
        return None
    capabilities = module.get_capabilities()
    if any(capabilities.get(name, False) for name in HALF_SUMS):
        return None
    return module


KERNELS = _kernels()
"""The SIMD kernels the half-precision screen runs on, ``None`` when it does not run."""


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


CORES = _cores()
"""The cores this process may run on."""


def threads(rows: int) -> int:
    """Threads a scan of ``rows`` rows runs on: two while the load average leaves a core idle,
    else one. The threads of a scan wait for each other: on a loaded machine a second one
    waits for a core (p50 8.9 ms against 3.2 for one over 90,000 rows of 384 at load 3.8 on
    two cores), on an idle one it halves the scan (1.5 ms)."""
    if rows < PARALLEL_FROM or CORES < 2:
        return 1
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # no load average here
        return 1
    return 2 if load < CORES - 0.5 else 1


def rounding_error(row: np.ndarray, half: np.ndarray) -> float:
    """An upper bound on the length of ``row`` (float64) less its float16 rounding ``half``."""
    return float(np.linalg.norm(row - half.astype(np.float64))) * (1 + 1e-12)


def tolerance(dimensions: int, row_error: float, query_error: float) -> float:
    """How far a cosine from float16 unit vectors of ``dimensions`` may be from the float64
    one, when no row is further than ``row_error`` from its float16 rounding and the query
    ``query_error`` from its own (see the module)."""
    half_row = 1.0 + row_error
    n = dimensions + 1
    summing = n * SINGLE_ROUNDING / (1 - n * SINGLE_ROUNDING) * (1.0 + query_error) * half_row
    return 1.01 * (row_error + query_error * half_row + summing) + 1e-6


def dots(rows: np.ndarray, query: np.ndarray) -> np.ndarray:
    """The float32 dot product of float16 ``query`` with each float16 row of ``rows``, on
    :func:`threads` threads."""
    found = KERNELS.cdist(
        query[None, :], rows, metric="dot", out_dtype="float32", threads=threads(len(rows))
    )
    out: np.ndarray = np.asarray(found).reshape(-1)
    return out
