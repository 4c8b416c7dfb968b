"""The vectors of one PostgreSQL memory table, cached in the process (optionally in files).

The rows of ``<name>_items`` are the truth; the cache holds what vector
search reads of them, so a hybrid search scans a matrix in the process
instead of fetching every vector from the server on every turn.

**Layout.** Arrays by position (a row's place in the cache, given when its
slot is first seen; :mod:`.vector_log` gives each row a slot): each vector as
float32 (``matrix``), its length (``norms``), scaled to unit length as
float16 (``half``, scanned with ``simsimd`` when installed), what search
filters on (``columns``: the layout of
:data:`prefrontal.stores.sqlite.vector_file.COLUMNS`, agents, users and kinds
by 64-bit hash) and the row's slot (``slots``). A removed row's position is
zeroed in every array; positions are not reused until the cache is
compacted.

**Compacted.** When the dead positions outnumber :data:`COMPACT_SHARE` of
the positions used (and at least :data:`COMPACT_LEAST`), after the changes
that made them so are applied, or when :meth:`VectorCache.compact` is
called, the live positions are copied, in order, into new arrays (the live
count plus :data:`GROWTH`); with files, into the files of the next file
generation beside the current ones, switched to in the state under the
changing flag (every process remaps at the next change of the state's
generation, under its shared lock), the old files then unlinked. Nothing is
read from the server. A rebuild also starts a new file generation, holding
only the live rows.

**Kept in step by the change log.** The cache records the snapshot
(``pg_current_snapshot()``) it reflects. A hybrid search's first statement
reads its own snapshot; when the cache reflects an earlier one, it applies,
set-wise and inside the search's transaction, the rows and deletions
stamped at or above the earlier snapshot's ``xmin`` (:mod:`.vector_log` says
why that misses nothing): a write by any process shows at the next search,
and a removed row's vector bytes are overwritten with zeros. When the cache
reflects a later snapshot than the search's (another process moved shared
files on), the search reads the rows instead (``None``).

**Rebuilt on any doubt**: when the cache names another server, database,
table or relation file (a ``TRUNCATE``), another layout or boot of the
machine, a change left half done (a flag set while changing, cleared
after), or a snapshot the deletion log no longer covers (older than its
horizon).

**Files** (``directory`` given): ``<directory>/<system id>-<database
oid>-<table oid>/`` (``0700``; each file ``0600``, :mod:`prefrontal.files`)
holds the arrays (``matrix.<g>`` and so on, ``g`` the file generation), a
``state`` of 64-bit words and the ``snapshot`` text,
memory-mapped and shared: a fresh process, or a second worker on the
machine, maps them instead of reading every vector, and the processes
share their pages through the operating system's cache. A search holds a
shared ``flock`` on ``state``; a process applying changes holds it
exclusively. Without a directory the arrays are the process's own.

**Finished once begun.** Bringing the cache up to date is shielded from
cancellation: a turn cut at its deadline while the cache is being built
(the first search of a process without files reads every vector) waits
for the build to finish and is then cancelled, so the next turn finds it
built instead of starting it again.

One process-wide lock per cache serialises this process's hybrid searches
of the table: they are taken before the search's transaction begins, so a
search never finds the cache moved past its own snapshot by another search
of the same process.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import numpy as np

from prefrontal.files import private_directory, write_private
from prefrontal.retrieval.vector_index import FOREVER, SIMSIMD, grown_to
from prefrontal.retrieval.vectors import FLOAT32
from prefrontal.stores.mapped_arrays import Layout, extend_files, map_files, state_file
from prefrontal.stores.sqlite.vector_file import (
    BOOT,
    COLUMNS,
    COMPACT_LEAST,
    MappedRows,
    by_array,
    code,
    copy_slots,
    live_slots,
    map_generation,
    rows_up_to,
    unlink_generations,
    usual_size,
    vector_layout,
    wasteful,
)

MAGIC = 0x70726566_70677631
"""``prefpgv1``: the first word of a state."""
VERSION = 2
"""The layout of the arrays; another layout is rebuilt."""
GROWTH = 4_096
"""Capacity grows to at least the positions held plus this, and at least doubles."""
COMPACT_SHARE = 0.5
"""The share of the positions used that may be dead before the cache is compacted."""
ARRAYS = ("matrix", "norms", "half", "columns", "slots")
"""The arrays of the cache, each in a file ``<array>.<file generation>``."""
_WORDS = 12
_MAGIC, _VERSION, _GENERATION, _CHANGING, _SIZE, _CAPACITY, _END, _BOOT = range(8)
_IDENTITY, _FILENODE, _LIVE, _FILES = 8, 9, 10, 11
_POLL = 0.002
"""Seconds between attempts at a file lock another process holds."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A PostgreSQL snapshot, ``xmin:xmax:xip,...`` as ``pg_current_snapshot()`` writes it."""

    xmin: int
    xmax: int
    running: frozenset[int]

    @classmethod
    def parse(cls, text: str) -> Snapshot:
        xmin, xmax, running = text.split(":")
        return cls(int(xmin), int(xmax), frozenset(int(x) for x in running.split(",") if x))

    def __str__(self) -> str:
        return f"{self.xmin}:{self.xmax}:{','.join(str(x) for x in sorted(self.running))}"

    def within(self, later: Snapshot) -> bool:
        """Whether every transaction this snapshot sees, ``later`` sees too."""
        if self.xmax > later.xmax:
            return False
        return all(x in self.running for x in later.running if x < self.xmax)


@dataclass(frozen=True, slots=True)
class Head:
    """What a search reads first: its snapshot, the log's horizon, the table's relation file."""

    snapshot: Snapshot
    horizon: int
    filenode: int


class VectorCache:
    """The cached vectors of memory table ``name`` (see the module docstring).

    ``directory``: keep them in memory-mapped files there; ``None``: in the
    process only. ``half``: scan float16 unit vectors (the default when
    ``simsimd`` is installed). :attr:`compact_share`: compact once more than
    this share of the positions used is dead (``None``: only when
    :meth:`compact` is called).
    """

    def __init__(self, name: str, directory: Path | None = None, *, half: bool | None = None):
        self.name = name
        self.root = directory
        self.half = SIMSIMD is not None if half is None else half
        self.compact_share: float | None = COMPACT_SHARE
        self.lock = anyio.Lock()
        items, gone = f"{name}_items", f"{name}_gone"
        self.head = f"""SELECT pg_current_snapshot()::text,
            (SELECT horizon::text FROM {gone}_horizon ORDER BY horizon DESC LIMIT 1),
            pg_relation_filenode('{items}')"""
        self.identity = f"""SELECT
            (SELECT system_identifier FROM pg_control_system()),
            (SELECT oid FROM pg_database WHERE datname = current_database()),
            '{items}'::regclass::oid, current_schema()"""
        columns = f"""m.slot, m.agent_id, m.user_id, m.scope = 'shared', m.kind,
            coalesce((extract(epoch FROM m.valid_until) * 1000000)::bigint, {FOREVER}),
            m.superseded_by IS NOT NULL, m.embedding"""
        self.every = f"SELECT {columns} FROM {items} AS m WHERE m.embedding IS NOT NULL"
        self.changed = f"SELECT {columns} FROM {items} AS m WHERE m.changed >= $1::text::xid8"
        self.gone = f"SELECT slot FROM {gone} WHERE changed >= $1::text::xid8"
        self.directory: Path | None = None
        self._key = ""
        self._state: np.ndarray | None = None
        self._fd = -1
        self._arrays: dict[str, np.ndarray] = {}
        self._mapped_capacity = -1
        self._snapshot: Snapshot | None = None
        self._generation = -1
        self._index: dict[int, int] = {}
        self.rebuilds = 0
        """How many times this process read every vector to rebuild the cache."""
        self.updates = 0
        """How many times it applied only what changed."""
        self.compactions = 0
        """How many times it compacted the cache."""

    # -- use -------------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def held(self) -> AsyncIterator[None]:
        """Hold the cache for one search: enter before the search's transaction begins."""
        async with self.lock:
            try:
                yield
            finally:
                if self._fd >= 0:
                    fcntl.flock(self._fd, fcntl.LOCK_UN)

    @property
    def started(self) -> bool:
        """Whether there may be vectors to follow: in files, or held by this process."""
        return self.root is not None or self._state is not None

    async def rows(self, connection: Any, *, create: bool = True) -> MappedRows | None:
        """The rows at the snapshot of ``connection``'s transaction; call it first in it.

        Holding :meth:`held`. ``None`` when no vector is held, or when the cache
        reflects a later snapshot than the transaction's. ``create``: build the
        files when there are none (else leave them absent).
        """
        found = await connection.fetchrow(self.head)
        head = Head(Snapshot.parse(found[0]), int(found[1] or 0), int(found[2] or 0))
        if self._fd < 0 and self.root is not None:
            if not await self._open_files(connection, create=create):
                return None
        elif self._state is None:
            self._state = _fresh_state()
        state = self._state
        assert state is not None
        if self._fd >= 0:
            await _flock(self._fd, fcntl.LOCK_SH)
        self._follow_others(state)
        if not (self._valid(state, head) and self._snapshot == head.snapshot):
            if self._fd >= 0:
                await _flock(self._fd, fcntl.LOCK_EX)
                self._follow_others(state)
            with anyio.CancelScope(shield=True):  # finished even past a turn's deadline
                ready = await self._bring_to(connection, state, head)
            if self._fd >= 0:
                await _flock(self._fd, fcntl.LOCK_SH)
            if not ready:
                return None
        return self._mapped(state)

    async def compact(self, share: float = 0.0) -> bool:
        """Compact the cache now when more than ``share`` of the positions used is dead (any
        dead position by default); ``False`` when it was not (nothing dead, nothing held).

        Holding :meth:`held` (and waiting for every process's searches to leave
        the files); the snapshot the cache reflects is kept.
        """
        async with self.held():
            state = self._state
            if state is None:
                return False
            if self._fd >= 0:
                await _flock(self._fd, fcntl.LOCK_EX)
                self._follow_others(state)
            if not self._wasteful(state, share, least=1):
                return False
            if state[_MAGIC] != MAGIC or state[_VERSION] != VERSION or state[_CHANGING] != 0:
                return False
            state[_CHANGING] = 1
            self._compact(state)
            state[_GENERATION] += 1
            self._generation = int(state[_GENERATION])
            state[_CHANGING] = 0
            return True

    def usage(self) -> tuple[int, int]:
        """The positions used and the positions live (0, 0 before any)."""
        state = self._state
        return (0, 0) if state is None else (int(state[_END]), int(state[_LIVE]))

    def positions(self, slots: Sequence[int]) -> list[int]:
        """The position of each of ``slots`` (-1 where none is held)."""
        index = self._index
        return [index.get(slot, -1) for slot in slots]

    def slots(self, positions: np.ndarray) -> list[int]:
        """The slot held at each of ``positions``."""
        found: list[int] = self._arrays["slots"][positions].tolist()
        return found

    def close(self) -> None:
        """Drop the arrays and close the state file (a later use opens them again)."""
        self._arrays.clear()
        self._index.clear()
        self._state, self._snapshot = None, None
        self._mapped_capacity, self._generation = -1, -1
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    # -- state -----------------------------------------------------------------------------

    async def _open_files(self, connection: Any, *, create: bool) -> bool:
        """Name the directory after the server, database and table; map its state.

        ``False`` (nothing opened) when there are no files and ``create`` is not set.
        """
        system, database, table, schema = await connection.fetchrow(self.identity)
        assert self.root is not None
        self.directory = self.root / f"{system}-{database}-{table}"
        self._key = f"{system}/{database}/{table}/{schema}.{self.name}"
        if not create and not (self.directory / "state").exists():
            return False
        private_directory(self.directory)
        self._fd, self._state = state_file(self.directory / "state", _WORDS)
        return True

    def _follow_others(self, state: np.ndarray) -> None:
        """Take up what another process wrote to the files since this one last looked."""
        if self._fd < 0 or int(state[_GENERATION]) == self._generation:
            return
        self._generation = int(state[_GENERATION])
        self._mapped_capacity = -1
        self._snapshot = None
        assert self.directory is not None
        with contextlib.suppress(OSError, ValueError):
            self._snapshot = Snapshot.parse((self.directory / "snapshot").read_text())
        self._map(state)
        self._index = {}
        if self._arrays:
            end = int(state[_END])
            held = np.flatnonzero(self._arrays["columns"]["present"][:end])
            self._index = dict(
                zip(self._arrays["slots"][held].tolist(), held.tolist(), strict=True)
            )

    def _valid(self, state: np.ndarray, head: Head) -> bool:
        """Whether the cache may be followed from the snapshot it reflects."""
        return bool(
            state[_MAGIC] == MAGIC
            and state[_VERSION] == VERSION
            and state[_CHANGING] == 0
            and state[_BOOT] == BOOT
            and state[_IDENTITY] == (code(self._key) if self._key else 0)
            and state[_FILENODE] == head.filenode
            and self._snapshot is not None
        )

    async def _bring_to(self, connection: Any, state: np.ndarray, head: Head) -> bool:
        """Apply what changed up to ``head``'s snapshot (holding the cache exclusively);
        ``False`` when the cache reflects a snapshot ``head``'s does not include."""
        seen = self._snapshot
        if self._valid(state, head) and seen is not None:
            if seen == head.snapshot:
                return True
            if not seen.within(head.snapshot):
                return False
        rebuild = not self._valid(state, head) or seen is None or seen.xmin <= head.horizon
        state[_CHANGING] = 1
        if rebuild:
            self.rebuilds += 1
            self._clear(state, head)
            gone: list[int] = []
            changed = await connection.fetch(self.every)
        else:
            assert seen is not None
            self.updates += 1
            since = str(seen.xmin)
            gone = [row[0] for row in await connection.fetch(self.gone, since)]
            changed = await connection.fetch(self.changed, since)
        self._apply(state, gone, changed)
        if self.compact_share is not None and self._wasteful(state, self.compact_share):
            self._compact(state)
        self._snapshot = head.snapshot
        if self.directory is not None:
            write_private(self.directory / "snapshot", str(head.snapshot))
        state[_GENERATION] += 1
        self._generation = int(state[_GENERATION])
        state[_CHANGING] = 0
        return True

    def _clear(self, state: np.ndarray, head: Head) -> None:
        """Hold nothing (a new file generation, every array file unlinked: none of their
        bytes is kept) and name this table, boot and layout."""
        self._arrays.clear()
        self._index = {}
        files = int(state[_FILES]) + 1 if state[_MAGIC] == MAGIC else 0
        state[_MAGIC], state[_VERSION], state[_BOOT] = MAGIC, VERSION, BOOT
        state[_IDENTITY] = code(self._key) if self._key else 0
        state[_FILENODE] = head.filenode
        state[_FILES], state[_CAPACITY], state[_SIZE] = files, 0, 0
        state[_END] = state[_LIVE] = 0
        self._mapped_capacity = -1
        self._unlink(but=None)

    # -- changes ---------------------------------------------------------------------------

    def _apply(self, state: np.ndarray, gone: list[int], changed: Sequence[Any]) -> None:
        """Zero the rows removed, write the rows changed (set-wise)."""
        if state[_SIZE] == 0:
            state[_SIZE] = usual_size(changed)
        size = int(state[_SIZE])
        if size == 0:
            return
        index = self._index
        held = [r for r in changed if r[7] is not None and len(r[7]) == 4 * size]
        kept = {r[0] for r in held}
        dropped = [
            index.pop(s) for s in [*gone, *(r[0] for r in changed)] if s not in kept and s in index
        ]
        end = int(state[_END])
        at: list[int] = []
        for r in held:
            position = index.get(r[0])
            if position is None:
                position = index[r[0]] = end
                end += 1
            at.append(position)
        if end > int(state[_CAPACITY]):
            self._grow(state, max(end + GROWTH, 2 * int(state[_CAPACITY])))
        self._map(state)
        if dropped:
            zeroed = np.asarray(dropped, dtype=np.int64)
            for array in self._arrays.values():
                array[zeroed] = 0
        if held:
            self._write(np.asarray(at, dtype=np.int64), held)
        state[_END] = end
        state[_LIVE] = len(index)

    def _write(self, at: np.ndarray, held: list[Any]) -> None:
        matrix = np.frombuffer(b"".join(r[7] for r in held), dtype=FLOAT32)
        matrix = matrix.reshape(len(held), -1)
        arrays = self._arrays
        arrays["matrix"][at] = matrix
        norms = np.sqrt(np.einsum("ij,ij->i", matrix, matrix))
        arrays["norms"][at] = norms
        with np.errstate(divide="ignore", invalid="ignore"):
            units = np.nan_to_num(matrix / norms[:, None], nan=0.0, posinf=0.0, neginf=0.0)
        arrays["half"][at] = units.astype(np.float16)
        columns = np.zeros(len(held), dtype=COLUMNS)
        columns["present"] = 1
        columns["agent"] = [code(r[1]) for r in held]
        columns["user"] = [code(r[2]) for r in held]
        columns["shared"] = [r[3] for r in held]
        columns["kind"] = [code(r[4]) for r in held]
        columns["until"] = [r[5] for r in held]
        columns["dead"] = [r[6] for r in held]
        arrays["columns"][at] = columns
        arrays["slots"][at] = [r[0] for r in held]

    # -- compaction ------------------------------------------------------------------------

    def _wasteful(self, state: np.ndarray, share: float, least: int | None = None) -> bool:
        least = COMPACT_LEAST if least is None else least  # read at the call: tests lower it
        return wasteful(int(state[_END]), int(state[_LIVE]), share, least)

    def _compact(self, state: np.ndarray) -> None:
        """Copy the live positions, in order, into new arrays (with files: the next file
        generation's), switch to them and unlink the old files (the changing flag set and
        the cache held exclusively by the caller)."""
        self._map(state)
        live = live_slots(self._arrays, int(state[_END]))
        count, capacity = len(live), len(live) + GROWTH
        files = int(state[_FILES]) + 1 if self.directory is not None else int(state[_FILES])
        layout = vector_layout(files, capacity, int(state[_SIZE]), keys="slots")
        if self.directory is None:
            fresh = by_array({name: np.zeros(s, dtype=d) for name, (d, s) in layout.items()})
        else:
            for name in layout:
                (self.directory / name).unlink(missing_ok=True)  # left by a compaction cut short
            fresh = by_array(map_files(self.directory, layout, unscanned=""))
        copy_slots(self._arrays, fresh, live)
        state[_FILES], state[_CAPACITY] = files, capacity
        state[_END] = state[_LIVE] = count
        self._index = dict(zip(fresh["slots"][:count].tolist(), range(count), strict=True))
        if self.directory is None:
            self._arrays, self._mapped_capacity = fresh, capacity
        else:
            del fresh
            self._arrays, self._mapped_capacity = {}, -1
            self._map(state)  # as a search maps them (the unscanned array read a row at a time)
            self._unlink(but=files)
        self.compactions += 1

    def _unlink(self, *, but: int | None) -> None:
        """Unlink the array files of every file generation but ``but`` (all when ``None``)."""
        if self.directory is not None:
            unlink_generations(self.directory, ARRAYS, but=but, kept=("state", "snapshot"))

    # -- arrays ----------------------------------------------------------------------------

    def _layout(self, state: np.ndarray) -> Layout:
        return vector_layout(
            int(state[_FILES]), int(state[_CAPACITY]), int(state[_SIZE]), keys="slots"
        )

    def _grow(self, state: np.ndarray, capacity: int) -> None:
        """Extend every array to ``capacity`` positions (zeros)."""
        state[_CAPACITY] = capacity
        if self.directory is None:
            for named, (dtype, shape) in self._layout(state).items():
                name = named.rsplit(".", 1)[0]  # the array's name, as by_array keys it
                old = self._arrays.get(name)
                self._arrays[name] = (
                    np.zeros(shape, dtype=dtype) if old is None else grown_to(old, capacity)
                )
            self._mapped_capacity = capacity
            return
        extend_files(self.directory, self._layout(state))
        self._mapped_capacity = -1

    def _map(self, state: np.ndarray) -> None:
        """Map the files at the state's capacity, unless mapped so already."""
        capacity = int(state[_CAPACITY])
        if capacity == self._mapped_capacity or self.directory is None:
            return
        self._arrays.clear()
        if capacity > 0:
            layout, files = self._layout(state), int(state[_FILES])
            self._arrays.update(map_generation(self.directory, layout, files, self.half))
        self._mapped_capacity = capacity

    def _mapped(self, state: np.ndarray) -> MappedRows | None:
        self._map(state)
        return rows_up_to(self._arrays, int(state[_END]), half=self.half)


def _fresh_state() -> np.ndarray:
    return np.zeros(_WORDS, dtype=np.int64)


async def _flock(fd: int, operation: int) -> None:
    """Take ``flock`` ``operation`` on ``fd``, waiting without blocking the event loop."""
    while True:
        try:
            fcntl.flock(fd, operation | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            await anyio.sleep(_POLL)
