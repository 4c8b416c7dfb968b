"""What the in-memory index stores vectors and times as: unit float64 vectors, microseconds.

Each embedded item's vector, divided by its :func:`length` in float64 as
:func:`unit` does, is a row of a matrix of its segment
(:mod:`prefrontal.stores.memory.segment`), its length beside it. Expiry
times are integer microseconds (:func:`microseconds`), compared in
arrays.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np

FOREVER = int(np.iinfo(np.int64).max)
"""The expiry (µs) of an item that never expires."""
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def microseconds(value: datetime) -> int:
    """``value`` as integer microseconds since the epoch (naive is read as UTC)."""
    aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    return (aware - _EPOCH) // _MICROSECOND


def length(vector: np.ndarray) -> float:
    """What :func:`unit` divides float64 ``vector`` by: its norm, or 1.0 when that is 0."""
    norm = float(np.linalg.norm(vector))
    return norm if norm else 1.0


def unit(vector: tuple[float, ...]) -> np.ndarray:
    """``vector`` in float64 scaled to unit length (unchanged when its norm is 0)."""
    array = np.asarray(vector, dtype=np.float64)
    out: np.ndarray = array / length(array)
    return out
