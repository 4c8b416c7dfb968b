"""The vectors of one SQLite memory table in memory-mapped files beside the database.

The rows of ``<name>_items`` are the truth; the files are a cache of what
vector search reads, laid out by row id (a row's vector sits at index
``rowid``), so a process that opens the database maps them instead of
reading every vector, and every process on the machine shares their pages
through the operating system's cache.

``<database>.vectors/<name>/`` (a directory readable by its owner only,
each file created ``0600``) holds:

- ``state``: :data:`MAGIC`, :data:`VERSION`, the change count the files
  reflect (``<name>_stats.changes``), a flag set while they are being
  changed, the database file's device and inode, the vector size, the
  capacity and the highest row id plus one;
- ``matrix``: each vector as float32, ``capacity x size``;
- ``norms``: each vector's length (float32);
- ``half``: each vector scaled to unit length as float16 (scanned instead
  of ``matrix`` with ``simsimd``);
- ``columns``: what search filters on, per row: present, shared,
  superseded, ``valid_until`` (µs), and 64-bit hashes of the agent, the
  user and the kind.

**Kept in step by the change log.** Schema 5's change counter, per-row
stamps and deletion log (:mod:`prefrontal.stores.sqlite.vectors`) say what
changed since the count the files reflect. Before each hybrid search, and
after each write or removal of the store, the process reads the counter
inside its read transaction and applies what changed since, set-wise (one
query for the deletions, one for the changed rows, one assignment of the
arrays): a write by any connection or process shows at the next search,
and a removed row's vector bytes are overwritten with zeros in the files.

**Between processes.** An advisory lock on ``state`` (``flock``): searches
hold it shared, a process applying changes holds it exclusively. It is
taken before the read transaction's first statement, so the files never
reflect a later snapshot than the search's own. The files only grow.

**After a crash.** The changing flag is set before the first byte changes
and cleared after the last: a process killed in between leaves it set (its
writes are in the page cache, the lock is released by the kernel) and the
next process rebuilds the files from the rows. The files are also rebuilt
when the state names another database file (a copy, a restore), another
vector size, or a count the change log no longer covers; and after a
machine restart (the state records the boot), when pages written before it
may not have reached the disk in order.

**Tenancy inside the search.** :meth:`MappedRows.allowed` is the rows of
the agent the tenant may see, live at the query's time, of the kinds asked
for. Agents, users and kinds are compared by 64-bit hash; the rows the
search returns are read back with the tenant's own conditions in SQL.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import sqlite3
import threading
from collections.abc import Collection, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from prefrontal.retrieval.vector_index import FOREVER, SIMSIMD
from prefrontal.retrieval.vectors import FLOAT32
from prefrontal.stores.mapped_arrays import Layout, extend_files, map_files

MAGIC = 0x70726566_76656331
"""``prefvec1``: the first word of a state file."""
VERSION = 1
"""The layout of the files; another layout is rebuilt."""
GROWTH = 4_096
"""Capacity grows to at least the highest row id plus this, and at least doubles."""
COLUMNS = np.dtype(
    [
        ("present", np.uint8),
        ("shared", np.uint8),
        ("dead", np.uint8),
        ("until", np.int64),
        ("agent", np.int64),
        ("user", np.int64),
        ("kind", np.int64),
    ]
)
"""What search filters on, one record per row id."""
_STATE_WORDS = 12
_MAGIC, _VERSION, _SEEN, _CHANGING, _DEVICE, _INODE, _SIZE, _CAPACITY, _END, _BOOT = range(10)
_PRIVATE = 0o600


def code(text: str) -> int:
    """The 64-bit hash standing for an agent, user or kind in the columns."""
    digest = hashlib.blake2b(text.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little", signed=True)


def _boot() -> int:
    """A number naming this boot of the machine (0 when the system does not say)."""
    try:
        text = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return 0
    return code(text)


BOOT = _boot()
"""This boot of the machine, as the state records it."""


class MappedRows:
    """The mapped arrays of one vector size, as :class:`~.vector_index.Similarities` scans them.

    A slot is a row id; ``size`` is the highest row id held plus one.
    """

    def __init__(
        self,
        matrix: np.ndarray,
        half: np.ndarray | None,
        columns: np.ndarray,
        norms: np.ndarray,
        size: int,
    ) -> None:
        self.matrix, self.half, self.columns, self.norms = matrix, half, columns, norms
        self.size = size
        self.dimensions = matrix.shape[1]

    @classmethod
    def of(cls, arrays: Mapping[str, np.ndarray], *, half: bool, size: int) -> MappedRows:
        """The rows of a layout's arrays (``matrix``, ``norms``, ``half``, ``columns``), the
        float16 ones scanned when ``half``."""
        scanned = arrays["half"] if half else None
        return cls(arrays["matrix"], scanned, arrays["columns"], arrays["norms"], size)

    def allowed(self, agent: str, user: str, now: int, kinds: Collection[str] | None) -> np.ndarray:
        """The row ids of ``agent`` that ``user`` may see (shared or their own), live at
        ``now`` (µs), of ``kinds``."""
        columns = self.columns[: self.size]
        mask: np.ndarray = (columns["present"] == 1) & (columns["dead"] == 0)
        mask &= columns["agent"] == code(agent)
        mask &= columns["until"] > now
        mask &= (columns["shared"] == 1) | (columns["user"] == code(user))
        if kinds is not None:
            mask &= np.isin(columns["kind"], [code(kind) for kind in kinds])
        return np.flatnonzero(mask)


class VectorFile:
    """The vector files of one memory table (see the module docstring).

    ``half``: scan float16 unit vectors (the default when ``simsimd`` is
    installed); every file is kept either way. One :attr:`lock` serialises
    this process's users; the file lock orders processes.
    """

    def __init__(self, database: Path, name: str, *, half: bool | None = None) -> None:
        self.directory = Path(f"{database}.vectors") / name
        self.database = database
        self.half = SIMSIMD is not None if half is None else half
        self.lock = threading.Lock()
        items, stats = f"{name}_items", f"{name}_stats"
        self._changes = f"SELECT changes, pruned FROM {stats}"
        self._changed = f"""
            SELECT m.rowid, m.agent_id, m.user_id, m.scope = 'shared', m.kind,
                coalesce(m.valid_until, {FOREVER}), m.superseded_by IS NOT NULL, m.embedding
            FROM {items} AS m WHERE m.changed > :seen ORDER BY m.changed"""
        self._gone = f"SELECT row FROM {name}_gone WHERE changed > :seen"
        self._state: np.ndarray | None = None
        self._state_fd = -1
        self._arrays: dict[str, np.ndarray] = {}
        self._mapped_capacity = -1

    # -- use -------------------------------------------------------------------------------

    @contextlib.contextmanager
    def rows(self, connection: sqlite3.Connection) -> Iterator[MappedRows | None]:
        """The rows at the snapshot of ``connection``'s read transaction, held while inside.

        Call before the transaction's first statement, holding :attr:`lock`.
        ``None`` when no vector is held, or when the files reflect a later
        snapshot than the caller's (another process moved them on after
        the caller's snapshot began): the caller then reads the rows.
        """
        state = self._open_state()
        fcntl.flock(self._state_fd, fcntl.LOCK_SH)
        try:
            changes, pruned = connection.execute(self._changes).fetchone()
            if not self._current(state, changes):
                fcntl.flock(self._state_fd, fcntl.LOCK_EX)
                if not self._bring_to(connection, state, changes, pruned):
                    yield None
                    return
            yield self._mapped(state)
        finally:
            fcntl.flock(self._state_fd, fcntl.LOCK_UN)

    def follow(self, connection: sqlite3.Connection) -> None:
        """Bring the files to ``connection``'s snapshot (a read transaction not yet begun)."""
        with self.lock, self.rows(connection):
            pass

    def close(self) -> None:
        """Unmap the files and close the state file (a later use opens them again)."""
        with self.lock:
            self._arrays.clear()
            self._state = None
            self._mapped_capacity = -1
            if self._state_fd >= 0:
                os.close(self._state_fd)
                self._state_fd = -1

    # -- state -----------------------------------------------------------------------------

    def _open_state(self) -> np.ndarray:
        if self._state is not None:
            return self._state
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        path = self.directory / "state"
        fd = os.open(path, os.O_RDWR | os.O_CREAT, _PRIVATE)
        if os.fstat(fd).st_size < _STATE_WORDS * 8:
            os.ftruncate(fd, _STATE_WORDS * 8)
        self._state_fd = fd
        self._state = np.memmap(path, dtype=np.int64, mode="r+", shape=(_STATE_WORDS,))
        return self._state

    def _identity(self) -> tuple[int, int]:
        info = os.stat(self.database)
        return info.st_dev, info.st_ino

    def _valid(self, state: np.ndarray) -> bool:
        """Whether the files may be followed from the count they reflect."""
        device, inode = self._identity()
        return bool(
            state[_MAGIC] == MAGIC
            and state[_VERSION] == VERSION
            and state[_CHANGING] == 0
            and state[_DEVICE] == device
            and state[_INODE] == inode
            and state[_BOOT] == BOOT
        )

    def _current(self, state: np.ndarray, changes: int) -> bool:
        return bool(state[_SEEN] == changes) and self._valid(state)

    def _bring_to(
        self, connection: sqlite3.Connection, state: np.ndarray, changes: int, pruned: int
    ) -> bool:
        """Apply the changes up to ``changes`` (holding the lock exclusively); ``False`` when
        the files are past it."""
        seen = int(state[_SEEN])
        if self._valid(state) and seen > changes:
            return False
        if self._valid(state) and seen == changes:
            return True
        rebuild = not self._valid(state) or seen < pruned
        state[_CHANGING] = 1
        if rebuild:
            self._clear(state)
            seen = -1
        gone = [row for (row,) in connection.execute(self._gone, {"seen": seen})]
        changed = connection.execute(self._changed, {"seen": seen}).fetchall()
        self._apply(state, gone, changed)
        state[_SEEN] = changes
        state[_CHANGING] = 0
        return True

    def _clear(self, state: np.ndarray) -> None:
        """Zero every byte held and name this database, boot and layout."""
        self._map(state)
        for array in self._arrays.values():
            array[:] = 0
        device, inode = self._identity()
        state[_MAGIC], state[_VERSION] = MAGIC, VERSION
        state[_DEVICE], state[_INODE], state[_BOOT] = device, inode, BOOT
        state[_END] = 0

    # -- changes ---------------------------------------------------------------------------

    def _apply(self, state: np.ndarray, gone: list[int], changed: list[Any]) -> None:
        """Zero the rows deleted, write the rows changed (set-wise)."""
        if state[_SIZE] == 0:
            sizes = [len(r[7]) // 4 for r in changed if r[7] is not None and len(r[7]) % 4 == 0]
            if sizes:
                state[_SIZE] = max(set(sizes), key=sizes.count)
        size = int(state[_SIZE])
        if size == 0:
            return
        top = max([*gone, *(r[0] for r in changed)], default=-1)
        if top >= int(state[_CAPACITY]):
            self._grow(state, max(top + GROWTH, 2 * int(state[_CAPACITY])))
        self._map(state)
        held = [r for r in changed if r[7] is not None and len(r[7]) == 4 * size]
        # a row written below has every array's slot overwritten: only the others are zeroed
        written = {r[0] for r in held}
        dropped = np.asarray(gone + [r[0] for r in changed if r[0] not in written], dtype=np.int64)
        for array in self._arrays.values():
            array[dropped] = 0
        if held:
            self._write(held)
        state[_END] = max(int(state[_END]), top + 1)

    def _write(self, held: list[Any]) -> None:
        """Write the rows ``held`` (each with a vector of the files' size), set-wise."""
        rowids, agents, users, shared, kinds, until, dead, blobs = zip(*held, strict=True)
        at = np.asarray(rowids, dtype=np.int64)
        matrix = np.frombuffer(b"".join(blobs), dtype=FLOAT32).reshape(len(held), -1)
        self._arrays["matrix"][at] = matrix
        norms = np.sqrt(np.einsum("ij,ij->i", matrix, matrix))
        self._arrays["norms"][at] = norms
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            units = matrix / norms[:, None]
        units[~np.isfinite(units)] = 0.0
        self._arrays["half"][at] = units
        columns = np.zeros(len(held), dtype=COLUMNS)
        columns["present"] = 1
        codes: dict[str, int] = {}
        for field, texts in (("agent", agents), ("user", users), ("kind", kinds)):
            columns[field] = [codes.get(t) or codes.setdefault(t, code(t)) for t in texts]
        columns["shared"] = shared
        columns["until"] = until
        columns["dead"] = dead
        self._arrays["columns"][at] = columns

    # -- files -----------------------------------------------------------------------------

    def _layout(self, state: np.ndarray) -> Layout:
        capacity, size = int(state[_CAPACITY]), int(state[_SIZE])
        return {
            "matrix": (np.dtype(FLOAT32), (capacity, size)),
            "norms": (np.dtype(FLOAT32), (capacity,)),
            "half": (np.dtype(np.float16), (capacity, size)),
            "columns": (COLUMNS, (capacity,)),
        }

    def _grow(self, state: np.ndarray, capacity: int) -> None:
        """Extend every file to ``capacity`` rows (zeros; files never shrink)."""
        state[_CAPACITY] = capacity
        extend_files(self.directory, self._layout(state))
        self._mapped_capacity = -1

    def _map(self, state: np.ndarray) -> None:
        """Map the files at the state's capacity, unless mapped so already."""
        capacity = int(state[_CAPACITY])
        if capacity == self._mapped_capacity:
            return
        self._arrays.clear()
        if capacity > 0:
            unscanned = "matrix" if self.half else "half"
            self._arrays.update(map_files(self.directory, self._layout(state), unscanned=unscanned))
        self._mapped_capacity = capacity

    def _mapped(self, state: np.ndarray) -> MappedRows | None:
        self._map(state)
        end = int(state[_END])
        if not self._arrays or end == 0:
            return None
        return MappedRows.of(self._arrays, half=self.half, size=end)
