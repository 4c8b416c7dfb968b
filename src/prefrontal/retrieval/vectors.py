"""Brute-force cosine similarity over many stored float32 vectors, with numpy."""

from __future__ import annotations

import struct
import sys
from array import array
from collections.abc import Sequence

import numpy as np

from prefrontal.forgetting import remembered

FLOAT32 = np.dtype("<f4")
"""How vectors are stored: little-endian float32, four bytes a dimension."""


def to_blob(vector: Sequence[float]) -> bytes:
    """A vector as float32 bytes."""
    return np.asarray(vector, dtype=FLOAT32).tobytes()


def float32_bytes(vector: Sequence[float]) -> bytes:
    """:func:`to_blob` of ``vector``, the same bytes, without a NumPy array: each float
    rounded to float32 by the C cast NumPy uses, packed by one :class:`struct.Struct` call
    (a float whose float32 is infinite, which ``struct`` refuses, by ``array`` instead)."""
    try:
        return _packer(len(vector)).pack(*vector)
    except OverflowError:
        if sys.byteorder != "little":
            return to_blob(vector)
        return array("f", vector).tobytes()


@remembered(maxsize=64, holds_text=False)
def _packer(size: int) -> struct.Struct:
    """The little-endian float32 packing of ``size`` floats."""
    return struct.Struct(f"<{size}f")


def from_blob(blob: bytes) -> tuple[float, ...]:
    """The vector stored in ``blob``."""
    return tuple(np.frombuffer(blob, dtype=FLOAT32).tolist())


def cosines(query: Sequence[float], blobs: Sequence[bytes]) -> list[float]:
    """Cosine of ``query`` with each stored vector: 0.0 where sizes differ or a norm is zero.

    Computed in float64 over one matrix, as the in-memory store does.
    """
    out = [0.0] * len(blobs)
    width = len(query) * FLOAT32.itemsize
    rows = [i for i, blob in enumerate(blobs) if width and len(blob) == width]
    if not rows:
        return out
    matrix = np.frombuffer(b"".join(blobs[i] for i in rows), dtype=FLOAT32)
    matrix = matrix.reshape(len(rows), len(query)).astype(np.float64)
    q = np.asarray(query, dtype=np.float64)
    norms = np.linalg.norm(matrix, axis=1) * np.linalg.norm(q)
    dots = matrix @ q
    values = np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)
    for i, value in zip(rows, values.tolist(), strict=True):
        out[i] = float(value)
    return out
