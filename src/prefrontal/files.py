"""Files and directories prefrontal creates: readable by their owner only.

What prefrontal writes to disk holds users' words (the SQLite database and
the logs SQLite keeps beside it, which it creates with the database's mode)
or secrets (a keys file). Each is created ``0600`` from its first byte (not
created and then narrowed), and each directory it creates for them ``0700``,
whatever the process's umask. A file or directory that exists already keeps
its mode: the operator may have chosen it.
"""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path

PRIVATE_FILE_MODE = 0o600
PRIVATE_DIR_MODE = 0o700


def private_directory(path: Path) -> None:
    """Create ``path`` and its missing parents, each ``0700`` (existing ones untouched).

    Raises ``FileExistsError`` when a file is in the way, as ``mkdir`` does.
    """
    missing = [p for p in (path, *path.parents) if not p.exists()]
    for directory in reversed(missing):
        with contextlib.suppress(FileExistsError):
            directory.mkdir(mode=PRIVATE_DIR_MODE)
            os.chmod(directory, PRIVATE_DIR_MODE)  # the umask may have narrowed more or less
    if not path.is_dir():
        raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(path))


def create_private(path: Path) -> None:
    """Create ``path`` empty and ``0600`` if it does not exist (an existing file is untouched)."""
    try:
        descriptor = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, PRIVATE_FILE_MODE)
    except FileExistsError:
        return
    try:
        os.fchmod(descriptor, PRIVATE_FILE_MODE)
    finally:
        os.close(descriptor)


def write_private(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8), atomically, as a ``0600`` file.

    The text goes to ``<path>.tmp``, created ``0600`` before anything is
    written to it, flushed to disk, then renamed over ``path``: a reader sees
    the old file or the new one, never half of one, and nobody else ever can.
    """
    temporary = path.with_name(path.name + ".tmp")
    temporary.unlink(missing_ok=True)
    descriptor = os.open(temporary, os.O_CREAT | os.O_EXCL | os.O_WRONLY, PRIVATE_FILE_MODE)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        os.fchmod(file.fileno(), PRIVATE_FILE_MODE)
        file.write(text)
        file.flush()
        os.fsync(file.fileno())
    temporary.replace(path)
