"""Arrays kept in memory-mapped files: created owner-only, extended with zeros, mapped shared.

The vector caches of SQLite (:mod:`prefrontal.stores.sqlite.vector_file`) and
PostgreSQL (:mod:`prefrontal.stores.postgres.vector_cache`) keep each array
of their layout in a file of its own; every process that maps a file shares
its pages through the operating system's cache.
"""

from __future__ import annotations

import mmap
import os
from pathlib import Path
from typing import Any

import numpy as np

from prefrontal.files import PRIVATE_FILE_MODE

Layout = dict[str, tuple[np.dtype[Any], tuple[int, ...]]]
"""Each file's name, and the dtype and shape of the array it holds."""


def extend_files(directory: Path, layout: Layout) -> None:
    """Create each file of ``layout`` in ``directory`` (0600), or extend it with zeros to
    its array's length; a longer file is left as it is (compaction writes a new generation
    of files instead of cutting one)."""
    for name, (dtype, shape) in layout.items():
        fd = os.open(directory / name, os.O_RDWR | os.O_CREAT, PRIVATE_FILE_MODE)
        try:
            length = int(np.prod(shape)) * dtype.itemsize
            if os.fstat(fd).st_size < length:
                os.ftruncate(fd, length)
        finally:
            os.close(fd)


def mapped_array(
    path: Path, dtype: np.dtype[Any], shape: tuple[int, ...], *, scanned: bool
) -> np.ndarray:
    """``path`` mapped shared as an array, its pages entered at once (``MAP_POPULATE``), so
    that those in the page cache cost no fault at their first read; ``scanned``: read whole,
    else a row at a time (``MADV_RANDOM``: a page read again from disk brings no neighbours)."""
    length = int(np.prod(shape)) * dtype.itemsize
    fd = os.open(path, os.O_RDWR)
    try:
        flags = mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)
        mapped = mmap.mmap(fd, length, flags=flags)
    finally:
        os.close(fd)
    if not scanned and hasattr(mmap, "MADV_RANDOM"):
        mapped.madvise(mmap.MADV_RANDOM)
    return np.frombuffer(mapped, dtype=dtype).reshape(shape)


def map_files(directory: Path, layout: Layout, *, unscanned: str) -> dict[str, np.ndarray]:
    """Every array of ``layout`` mapped from its file in ``directory``, each file extended
    first where it is shorter than its array (:func:`extend_files`); every file populated,
    and every file but ``unscanned`` (read a row at a time) read whole (:func:`mapped_array`).

    The rows the exact cosines read from ``unscanned`` are few a search but scattered:
    populated, a fresh process's first searches find them mapped as a warm one does.
    """
    extend_files(directory, layout)
    return {
        name: mapped_array(directory / name, dtype, shape, scanned=name != unscanned)
        for name, (dtype, shape) in layout.items()
    }


def state_file(path: Path, words: int) -> tuple[int, np.ndarray]:
    """``path`` opened (created 0600), at least ``words`` int64 words long (zeros added),
    and mapped shared as those words: its descriptor, left open for ``flock``, and the array."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, PRIVATE_FILE_MODE)
    try:
        if os.fstat(fd).st_size < words * 8:
            os.ftruncate(fd, words * 8)
        state = np.memmap(path, dtype=np.int64, mode="r+", shape=(words,))
    except BaseException:
        os.close(fd)
        raise
    return fd, state
