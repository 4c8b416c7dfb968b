"""Where the suite keeps its temporary files: in memory when the machine has room.

A run writes and deletes tens of thousands of files: SQLite files in each
test's ``tmp_path``, and each PostgreSQL test server's directory (a database
per module, a schema per test). On a disk mounted with ``discard`` (this
project's CI machines) every deletion waits on the device: deleting one
server's directory took 77 s at the end of a run, and the SQLite store tests
took twice as long on the disk as in memory (120.9 against 59.1 s, same CPU).
So the suite's temporary directory is a memory file system (:data:`MEMORY_DIR`)
when it has :data:`MEMORY_DIR_ROOM` free, unless ``TMPDIR`` says otherwise.
Nothing a test checks depends on where its files are.
"""

from __future__ import annotations

import os
from pathlib import Path

MEMORY_DIR = Path("/dev/shm")
"""A memory file system (Linux's shared memory mount)."""
MEMORY_DIR_ROOM = 8 * 1024**3
"""Free bytes :data:`MEMORY_DIR` must have: a whole run's files and servers take 2 to 4 GB."""


def memory_dir() -> Path | None:
    """:data:`MEMORY_DIR` when it has :data:`MEMORY_DIR_ROOM` free and may be written, else
    ``None``."""
    try:
        stats = os.statvfs(MEMORY_DIR)
    except OSError:
        return None
    if stats.f_bavail * stats.f_frsize < MEMORY_DIR_ROOM or not os.access(MEMORY_DIR, os.W_OK):
        return None
    return MEMORY_DIR
