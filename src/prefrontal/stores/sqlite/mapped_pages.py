"""A database file's memory maps entered into this process's page tables at once.

SQLite maps the file once per connection (``mmap_size``) and a page enters
a map's page table at its first read: a minor fault, about 1 to 2 µs, that
brings in at most 16 neighbouring pages, several thousand in a turn over a
large file. :func:`populate_maps` enters every page of this process's maps
of a file at once (``madvise(MADV_POPULATE_READ)``, Linux 5.14 and later):
the pages in the operating system's page cache cost no fault afterwards,
and those on disk are read now instead of during a turn. Called at
opening, it makes a fresh process's first turn fault none of them. The
maps do not stay whole: once another connection has committed, SQLite
maps the file anew for a connection's next read, and later turns fault
the pages they reach again.

The pages are the page cache's own, shared by every map and every process;
populating adds page-table entries, not copies (the resident size of the
process counts each map's pages, the proportional set size counts each
page once). Where the call or ``/proc/self/maps`` is missing (another
system, an older kernel) nothing is done. A map that SQLite replaces while
this runs (the file grew) is skipped: the call fails for it and the next
reads fault as before.
"""

from __future__ import annotations

import ctypes
import errno
import os
from collections.abc import Callable
from pathlib import Path

MADV_POPULATE_READ = 22
"""``madvise`` advice (Linux 5.14): fault every page of the range in for reading."""

_MAPS = Path("/proc/self/maps")


def populate_maps(path: Path) -> int:
    """Enter every page of this process's maps of ``path`` into its page tables.

    Returns the bytes populated: 0 where this system cannot, or where no
    map of ``path`` exists (SQLite maps a file at a connection's first read).
    Never raises for a map it cannot populate.
    """
    madvise = _madvise()
    if madvise is None:
        return 0
    populated = 0
    for start, end in maps_of(path):
        if madvise(start, end - start, MADV_POPULATE_READ) == 0:
            populated += end - start
        elif ctypes.get_errno() == errno.EINVAL:
            return populated  # the kernel does not know the advice
    return populated


def maps_of(path: Path) -> list[tuple[int, int]]:
    """The address ranges of this process's maps of ``path`` (none where unknown)."""
    try:
        lines = _MAPS.read_text().splitlines()
    except OSError:
        return []
    target = os.path.realpath(path)
    ranges: list[tuple[int, int]] = []
    for line in lines:
        fields = line.split(maxsplit=5)
        if len(fields) == 6 and fields[5] == target:
            low, high = fields[0].split("-")
            ranges.append((int(low, 16), int(high, 16)))
    return ranges


def _madvise() -> Callable[[int, int, int], int] | None:
    """libc's ``madvise``, typed; ``None`` where it cannot be loaded."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        function = libc.madvise
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    function.restype = ctypes.c_int
    return function
