"""The vectors of one SQLite memory table in memory-mapped files beside the database.

The rows of ``<name>_items`` are the truth; the files are a cache of what
vector search reads, laid out by slot in row id order (slot ``i`` holds the
row ``rowids[i]``; the row ids held only increase with the slot), so a
process that opens the database maps them instead of reading every vector,
and every process on the machine shares their pages through the operating
system's cache.

``<database>.vectors/<name>/`` (a directory readable by its owner only,
each file created ``0600``) holds:

- ``state``: :data:`MAGIC`, :data:`VERSION`, the change count the files
  reflect (``<name>_stats.changes``), a flag set while they are being
  changed, the database file's device and inode, the vector size, the
  capacity, the slots used, the boot, the generation and the slots live;
- for the state's generation ``g``, one file per array:
- ``matrix.g``: each vector as float32, ``capacity x size``;
- ``norms.g``: each vector's length (float32);
- ``half.g``: each vector scaled to unit length as float16 (scanned
  instead of ``matrix`` with ``simsimd``);
- ``columns.g``: what search filters on, per slot: present, shared,
  superseded, ``valid_until`` (µs), and 64-bit hashes of the agent, the
  user and the kind;
- ``rowids.g``: the row id held at each slot.

**Compacted.** A deleted row's slot is zeroed and stays until the files
are compacted: when the dead slots outnumber :attr:`VectorFile.compact_share`
of the slots used (and at least :data:`COMPACT_LEAST`), after the changes
that made them so are applied, or when :meth:`VectorFile.compact` is called,
the live slots are copied, in order, into the files of the next generation
(beside the current ones, at the live count plus :data:`GROWTH`), the state
is switched to that generation under the changing flag, and the old
generation's files are unlinked. Every reader checks the generation under
the shared lock before it reads, and remaps; a process that still maps
the old files keeps them (unlinked) until it remaps, and never reads them
again. A process killed during the copy leaves the old generation in use
(the next compaction or rebuild removes the new files it left).

A row written again keeps its slot. A new row takes the slot after the
last: SQLite gives it the highest live row id plus one, above every live
slot's; when dead slots at the end hold higher row ids (the newest rows
were deleted), they are given up first; when a live slot does (a row id
given explicitly), the files are rebuilt from the rows.

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
reflect a later snapshot than the search's own. Compaction holds it
exclusively too.

**After a crash.** The changing flag is set before the first byte changes
and cleared after the last: a process killed in between leaves it set (its
writes are in the page cache, the lock is released by the kernel) and the
next process rebuilds the files from the rows (into a new generation,
the others' files unlinked). The files are also rebuilt
when the state names another database file (a copy, a restore), another
vector size, or a count the change log no longer covers; and after a
machine restart (the state records the boot), when pages written before it
may not have reached the disk in order.

**Tenancy inside the search.** :meth:`MappedRows.allowed` is the slots of
the rows of the agent the tenant may see, live at the query's time, of the kinds asked
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
from collections.abc import Collection, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from prefrontal.retrieval.vector_index import FOREVER, SIMSIMD
from prefrontal.retrieval.vectors import FLOAT32
from prefrontal.stores.mapped_arrays import Layout, extend_files, map_files, state_file

MAGIC = 0x70726566_76656331
"""``prefvec1``: the first word of a state file."""
VERSION = 2
"""The layout of the files; another layout is rebuilt."""
GROWTH = 4_096
"""Capacity grows to at least the slots used plus this, and at least doubles."""
COMPACT_SHARE = 0.5
"""The share of the slots used that may be dead before the files are compacted."""
COMPACT_LEAST = 4_096
"""The dead slots below which the files are never compacted on their own."""
COPIED = 16_384
"""Slots copied at once by a compaction (bounds the memory it takes)."""
WRITTEN = 4_096
"""Rows written at once to the files (bounds the memory a rebuild takes beside them)."""
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
"""What search filters on, one record per slot."""
VISIBLE_KEPT = 16
"""Tenants whose visible slots :meth:`MappedRows.allowed` keeps while the rows do not change."""
ARRAYS = ("matrix", "norms", "half", "columns", "rowids")
"""The arrays of a generation, each in a file ``<array>.<generation>``."""
_STATE_WORDS = 12
(
    _MAGIC,
    _VERSION,
    _SEEN,
    _CHANGING,
    _DEVICE,
    _INODE,
    _SIZE,
    _CAPACITY,
    _END,
    _BOOT,
    _GENERATION,
    _LIVE,
) = range(_STATE_WORDS)


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

    ``size`` is the slots used. ``rowids``: the row id held at each slot,
    increasing (SQLite's files); ``None`` when a slot is its own key (the
    PostgreSQL cache, which maps positions to slots itself).
    """

    def __init__(
        self,
        matrix: np.ndarray,
        half: np.ndarray | None,
        columns: np.ndarray,
        norms: np.ndarray,
        size: int,
        rowids: np.ndarray | None = None,
    ) -> None:
        self.matrix, self.half, self.columns, self.norms = matrix, half, columns, norms
        self.size = size
        self.dimensions = matrix.shape[1]
        self.rowids = None if rowids is None else rowids[:size]
        self.visible: dict[Any, tuple[np.ndarray, np.ndarray]] | None = None
        """The slots each tenant and kinds may see whatever the time, with their expiry, kept
        for the rows as they are (:meth:`allowed`): set by an owner that empties it when
        the rows change; ``None``: found again at each call."""

    @classmethod
    def of(cls, arrays: Mapping[str, np.ndarray], *, half: bool, size: int) -> MappedRows:
        """The rows of a layout's arrays (``matrix``, ``norms``, ``half``, ``columns``, and
        ``rowids`` when held), the float16 ones scanned when ``half``."""
        scanned = arrays["half"] if half else None
        rowids = arrays.get("rowids")
        return cls(arrays["matrix"], scanned, arrays["columns"], arrays["norms"], size, rowids)

    def allowed(self, agent: str, user: str, now: int, kinds: Collection[str] | None) -> np.ndarray:
        """The slots of ``agent`` that ``user`` may see (shared or their own), live at
        ``now`` (µs), of ``kinds``, in increasing order."""
        visible, key = self.visible, (agent, user, None if kinds is None else frozenset(kinds))
        found = None if visible is None else visible.get(key)
        if found is None:
            found = self._visible(agent, user, kinds)
            if visible is not None:
                if len(visible) >= VISIBLE_KEPT:
                    visible.clear()
                visible[key] = found
        slots, until = found
        return slots[until > now]

    def _visible(
        self, agent: str, user: str, kinds: Collection[str] | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The slots of :meth:`allowed` at any time, in increasing order, and their expiry."""
        columns = self.columns[: self.size]
        mask: np.ndarray = (columns["present"] == 1) & (columns["dead"] == 0)
        mask &= columns["agent"] == code(agent)
        mask &= (columns["shared"] == 1) | (columns["user"] == code(user))
        if kinds is not None:
            mask &= np.isin(columns["kind"], [code(kind) for kind in kinds])
        slots = np.flatnonzero(mask)
        return slots, columns["until"][slots]

    def keys(self, slots: np.ndarray) -> np.ndarray:
        """The row id held at each of ``slots`` (in the same order)."""
        slots = np.asarray(slots, dtype=np.int64)
        return slots if self.rowids is None else self.rowids[slots]

    def slots(self, keys: np.ndarray) -> np.ndarray:
        """The slot holding each of row ids ``keys`` (-1 where none does)."""
        keys = np.asarray(keys, dtype=np.int64)
        if self.rowids is None:
            return np.where((keys >= 0) & (keys < self.size), keys, -1)
        return slots_of(self.rowids, keys)

    def by_key(self, by_slot: Mapping[int, float]) -> dict[int, float]:
        """``by_slot`` keyed by the row id held at each slot instead (in the same order)."""
        if self.rowids is None:
            return dict(by_slot)
        keys = self.keys(np.fromiter(by_slot, dtype=np.int64, count=len(by_slot))).tolist()
        return dict(zip(keys, by_slot.values(), strict=True))


def slots_of(rowids: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """The position of each of ``keys`` in the increasing ``rowids`` (-1 where absent)."""
    at = np.searchsorted(rowids, keys)
    inside = at < len(rowids)
    found = np.zeros(len(keys), dtype=bool)
    found[inside] = rowids[at[inside]] == keys[inside]
    return np.where(found, at, -1).astype(np.int64)


class VectorFile:
    """The vector files of one memory table (see the module docstring).

    ``half``: scan float16 unit vectors (the default when ``simsimd`` is
    installed); every file is kept either way. ``compact_share``: compact
    once more than this share of the slots used is dead (``None``: only
    when :meth:`compact` is called). One :attr:`lock` serialises this
    process's users; the file lock orders processes.
    """

    def __init__(
        self,
        database: Path,
        name: str,
        *,
        half: bool | None = None,
        compact_share: float | None = COMPACT_SHARE,
    ) -> None:
        self.directory = Path(f"{database}.vectors") / name
        self.database = database
        self.half = SIMSIMD is not None if half is None else half
        self.compact_share = compact_share
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
        self._mapped_as: tuple[int, int] = (-1, -1)
        self.compactions = 0
        """How many times this process compacted the files."""
        self._visible: dict[Any, tuple[np.ndarray, np.ndarray]] = {}
        """:attr:`MappedRows.visible` while the files hold :attr:`_visible_at` (generation,
        slots used, change count): the files do not change while a search holds them."""
        self._visible_at: tuple[int, int, int] = (-1, -1, -1)

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

    def compact(self, share: float = 0.0) -> bool:
        """Compact the files now when more than ``share`` of the slots used is dead (any dead
        slot by default); ``False`` when they were not (nothing dead, or no valid files: none
        is created).

        Waits for the searches of every process to leave the files; the
        change count the files reflect is kept (the changes since are
        applied at the next search, as ever).
        """
        with self.lock:
            if self._state is None and not (self.directory / "state").exists():
                return False
            state = self._open_state()
            fcntl.flock(self._state_fd, fcntl.LOCK_EX)
            try:
                if not self._valid(state) or not self._wasteful(state, share, least=1):
                    return False
                self._compact(state)
                return True
            finally:
                fcntl.flock(self._state_fd, fcntl.LOCK_UN)

    def usage(self) -> tuple[int, int]:
        """The slots used and the slots live, as the state says (0, 0 before any)."""
        with self.lock:
            if self._state is None and not (self.directory / "state").exists():
                return 0, 0
            state = self._open_state()
            fcntl.flock(self._state_fd, fcntl.LOCK_SH)
            try:
                return int(state[_END]), int(state[_LIVE])
            finally:
                fcntl.flock(self._state_fd, fcntl.LOCK_UN)

    def close(self) -> None:
        """Unmap the files and close the state file (a later use opens them again)."""
        with self.lock:
            self._arrays.clear()
            self._visible.clear()
            self._visible_at = (-1, -1, -1)
            self._state = None
            self._mapped_as = (-1, -1)
            if self._state_fd >= 0:
                os.close(self._state_fd)
                self._state_fd = -1

    # -- state -----------------------------------------------------------------------------

    def _open_state(self) -> np.ndarray:
        if self._state is not None:
            return self._state
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._state_fd, self._state = state_file(self.directory / "state", _STATE_WORDS)
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
        """Apply the changes up to ``changes`` (holding the lock exclusively), then compact
        when too many slots are dead; ``False`` when the files are past ``changes``."""
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
        if not self._apply(state, gone, changed):  # a row id below a live slot's: rebuild
            self._clear(state)
            self._apply(state, [], connection.execute(self._changed, {"seen": -1}).fetchall())
        state[_SEEN] = changes
        state[_CHANGING] = 0
        if self.compact_share is not None and self._wasteful(state, self.compact_share):
            self._compact(state)
        return True

    def _clear(self, state: np.ndarray) -> None:
        """Start a new generation holding nothing, naming this database, boot and layout;
        unlink every array file (none of their bytes is kept)."""
        generation = int(state[_GENERATION]) + 1 if state[_MAGIC] == MAGIC else 0
        device, inode = self._identity()
        state[_MAGIC], state[_VERSION] = MAGIC, VERSION
        state[_DEVICE], state[_INODE], state[_BOOT] = device, inode, BOOT
        state[_GENERATION], state[_CAPACITY], state[_SIZE] = generation, 0, 0
        state[_END] = state[_LIVE] = 0
        self._arrays.clear()
        self._mapped_as = (-1, -1)
        self._unlink(but=None)

    # -- changes ---------------------------------------------------------------------------

    def _apply(self, state: np.ndarray, gone: list[int], changed: list[Any]) -> bool:
        """Zero the rows deleted, write the rows changed (set-wise); ``False`` (nothing
        written) when a new row's id is below a live slot's."""
        if state[_SIZE] == 0:
            state[_SIZE] = usual_size(changed)
        size = int(state[_SIZE])
        if size == 0:
            return True
        self._map(state)
        end = int(state[_END])
        rowids = self._arrays["rowids"][:end] if self._arrays else np.zeros(0, dtype=np.int64)
        held = [r for r in changed if r[7] is not None and len(r[7]) == 4 * size]
        written = {r[0] for r in held}
        dropped = np.asarray(gone + [r[0] for r in changed if r[0] not in written], dtype=np.int64)
        ids = np.asarray([r[0] for r in held], dtype=np.int64)
        at = slots_of(rowids, ids)
        placed = self._place(state, rowids, ids, at, slots_of(rowids, dropped))
        if placed is None:
            return False
        if held:
            self._write(placed, held)
        columns = self._arrays.get("columns")
        end = int(state[_END])
        state[_LIVE] = 0 if columns is None else int(np.count_nonzero(columns["present"][:end]))
        return True

    def _place(
        self,
        state: np.ndarray,
        rowids: np.ndarray,
        ids: np.ndarray,
        at: np.ndarray,
        dropped: np.ndarray,
    ) -> np.ndarray | None:
        """The slot each row of ``ids`` is written to (``at``: its slot now, -1 if none), the
        slots ``dropped`` zeroed (but their row ids), the files grown for the new rows.

        New rows take the slots after the last, by row id; the dead slots
        holding a higher row id than a new row are given up first. ``None``
        (nothing changed) when a live slot holds one.
        """
        end = int(state[_END])
        new = at < 0
        start = end
        if new.any():
            start = int(np.searchsorted(rowids, ids[new].min()))
            tail = at >= start
            kept = np.ones(end - start, dtype=bool)
            kept[dropped[dropped >= start] - start] = False
            kept[at[tail] - start] = False
            if self._arrays and self._arrays["columns"]["present"][start:end][kept].any():
                return None
            new |= tail
        dropped = dropped[(dropped >= 0) & (dropped < start)]
        for name, array in self._arrays.items():
            if name != "rowids":
                array[dropped] = 0
            array[start:end] = 0
        order = np.argsort(ids[new], kind="stable")
        placed = at.copy()
        placed[np.flatnonzero(new)[order]] = np.arange(start, start + int(new.sum()))
        top = start + int(new.sum())
        if top > int(state[_CAPACITY]):
            self._grow(state, max(top + GROWTH, 2 * int(state[_CAPACITY])))
        state[_END] = top
        self._map(state)
        return placed

    def _write(self, at: np.ndarray, held: list[Any]) -> None:
        """Write the rows ``held`` (each with a vector of the files' size) at slots ``at``,
        set-wise, :data:`WRITTEN` rows at a time (what a rebuild holds beside the files stays
        small, and in the processor's caches)."""
        for first in range(0, len(held), WRITTEN):
            self._write_part(at[first : first + WRITTEN], held[first : first + WRITTEN])

    def _write_part(self, at: np.ndarray, held: list[Any]) -> None:
        rowids, agents, users, shared, kinds, until, dead, blobs = zip(*held, strict=True)
        matrix = np.frombuffer(b"".join(blobs), dtype=FLOAT32).reshape(len(held), -1)
        self._arrays["matrix"][at] = matrix
        norms = np.sqrt(np.einsum("ij,ij->i", matrix, matrix))
        self._arrays["norms"][at] = norms
        self._arrays["half"][at] = unit_rows(matrix, norms)
        columns = np.zeros(len(held), dtype=COLUMNS)
        columns["present"] = 1
        codes: dict[str, int] = {}
        for field, texts in (("agent", agents), ("user", users), ("kind", kinds)):
            columns[field] = [codes.get(t) or codes.setdefault(t, code(t)) for t in texts]
        columns["shared"] = shared
        columns["until"] = until
        columns["dead"] = dead
        self._arrays["columns"][at] = columns
        self._arrays["rowids"][at] = rowids

    # -- compaction ------------------------------------------------------------------------

    def _wasteful(self, state: np.ndarray, share: float, least: int | None = None) -> bool:
        least = COMPACT_LEAST if least is None else least  # read at the call: tests lower it
        return wasteful(int(state[_END]), int(state[_LIVE]), share, least)

    def _compact(self, state: np.ndarray) -> None:
        """Copy the live slots, in order, into the next generation's files; switch the state
        to it under the changing flag; unlink the old files (holding the lock exclusively)."""
        self._map(state)
        live = live_slots(self._arrays, int(state[_END]))
        count, generation = len(live), int(state[_GENERATION]) + 1
        capacity, size = count + GROWTH, int(state[_SIZE])
        layout = vector_layout(generation, capacity, size, keys="rowids")
        for name in layout:
            (self.directory / name).unlink(missing_ok=True)  # left by a compaction cut short
        fresh = by_array(map_files(self.directory, layout, unscanned=""))
        copy_slots(self._arrays, fresh, live)
        state[_CHANGING] = 1
        state[_GENERATION], state[_CAPACITY] = generation, capacity
        state[_END] = state[_LIVE] = count
        state[_CHANGING] = 0
        del fresh
        self._arrays = {}
        self._mapped_as = (-1, -1)
        self._map(state)  # as a search maps them (the unscanned array read a row at a time)
        self._unlink(but=generation)
        self.compactions += 1

    def _unlink(self, *, but: int | None) -> None:
        """Unlink the array files of every generation but ``but`` (every one when ``None``)."""
        unlink_generations(self.directory, ARRAYS, but=but, kept=("state",))

    # -- files -----------------------------------------------------------------------------

    def _state_layout(self, state: np.ndarray) -> Layout:
        return vector_layout(
            int(state[_GENERATION]), int(state[_CAPACITY]), int(state[_SIZE]), keys="rowids"
        )

    def _grow(self, state: np.ndarray, capacity: int) -> None:
        """Extend every file of the generation to ``capacity`` slots (zeros)."""
        state[_CAPACITY] = capacity
        extend_files(self.directory, self._state_layout(state))
        self._mapped_as = (-1, -1)

    def _map(self, state: np.ndarray) -> None:
        """Map the files of the state's generation at its capacity, unless mapped so already."""
        generation, capacity = int(state[_GENERATION]), int(state[_CAPACITY])
        if (generation, capacity) == self._mapped_as:
            return
        self._arrays.clear()
        if capacity > 0:
            layout = self._state_layout(state)
            self._arrays.update(map_generation(self.directory, layout, generation, self.half))
        self._mapped_as = (generation, capacity)

    def _mapped(self, state: np.ndarray) -> MappedRows | None:
        self._map(state)
        rows = rows_up_to(self._arrays, int(state[_END]), half=self.half)
        if rows is not None:
            version = (int(state[_GENERATION]), int(state[_END]), int(state[_SEEN]))
            if version != self._visible_at:
                self._visible.clear()
                self._visible_at = version
            rows.visible = self._visible
        return rows


def unit_rows(matrix: np.ndarray, norms: np.ndarray) -> np.ndarray:
    """Each row of ``matrix`` divided by its length ``norms``, a value that is not finite
    (a row of length 0, or of a length that is not finite) as 0.

    Only the rows whose length is 0 or not finite are searched for such
    values: dividing a finite row by a finite positive length of it gives
    finite values.
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        units: np.ndarray = matrix / norms[:, None]
    odd = ~(np.isfinite(norms) & (norms > 0))
    if odd.any():
        rows = units[odd]
        rows[~np.isfinite(rows)] = 0.0
        units[odd] = rows
    return units


def vector_layout(generation: int, capacity: int, size: int, *, keys: str) -> Layout:
    """The arrays of one generation of vector files, each in a file named
    ``<array>.<generation>``: float32 rows of ``size`` and their norms, float16 rows, the
    filter columns, and ``keys`` (int64: what each slot holds), ``capacity`` slots each.

    The SQLite vector files (``keys="rowids"``) and the PostgreSQL vector cache
    (``keys="slots"``) lay their files out by it.
    """
    arrays: Layout = {
        "matrix": (np.dtype(FLOAT32), (capacity, size)),
        "norms": (np.dtype(FLOAT32), (capacity,)),
        "half": (np.dtype(np.float16), (capacity, size)),
        "columns": (COLUMNS, (capacity,)),
        keys: (np.dtype(np.int64), (capacity,)),
    }
    return {f"{name}.{generation}": shape for name, shape in arrays.items()}


def wasteful(end: int, live: int, share: float, least: int) -> bool:
    """Whether more than ``share`` of the ``end`` slots used, and at least ``least``, are
    dead (``end - live``): when vector files or a vector cache compact."""
    return end - live >= max(least, 1) and end - live > share * end


def live_slots(arrays: Mapping[str, np.ndarray], end: int) -> np.ndarray:
    """The slots below ``end`` that hold a row, in order (none before any array exists)."""
    columns = arrays.get("columns")
    return np.zeros(0, np.int64) if columns is None else np.flatnonzero(columns["present"][:end])


def copy_slots(
    source: Mapping[str, np.ndarray], target: Mapping[str, np.ndarray], slots: np.ndarray
) -> None:
    """Copy ``slots`` of each array of ``target`` from ``source`` into its first positions,
    :data:`COPIED` at a time (the memory a compaction takes beyond the arrays)."""
    for first in range(0, len(slots), COPIED):
        taken = slots[first : first + COPIED]
        for name, array in target.items():
            array[first : first + len(taken)] = source[name][taken]


def map_generation(
    directory: Path, layout: Layout, generation: int, half: bool
) -> dict[str, np.ndarray]:
    """The arrays of ``layout`` (generation ``generation``) mapped from ``directory``, by
    array name; the array a search reads a row at a time is the float32 one when ``half``
    (the float16 rows are scanned), else the float16 one."""
    unscanned = f"matrix.{generation}" if half else f"half.{generation}"
    return by_array(map_files(directory, layout, unscanned=unscanned))


def rows_up_to(arrays: Mapping[str, np.ndarray], end: int, *, half: bool) -> MappedRows | None:
    """The rows of the first ``end`` slots of ``arrays``; ``None`` when there are none."""
    if not arrays or end == 0:
        return None
    return MappedRows.of(arrays, half=half, size=end)


def unlink_generations(
    directory: Path, arrays: Collection[str], *, but: int | None, kept: Collection[str]
) -> None:
    """Unlink every file of ``directory`` but those named in ``kept`` and the files of
    ``arrays`` of generation ``but`` (every generation's when ``None``)."""
    spared = set(kept) | (set() if but is None else {f"{name}.{but}" for name in arrays})
    for path in directory.iterdir():
        if path.name not in spared:
            path.unlink(missing_ok=True)


def usual_size(changed: Sequence[Any]) -> int:
    """The most common vector size among ``changed`` rows (float32 bytes at index 7), the
    size the files take on when they have none yet; 0 when no row has a vector."""
    sizes = [len(r[7]) // 4 for r in changed if r[7] is not None and len(r[7]) % 4 == 0]
    return max(set(sizes), key=sizes.count) if sizes else 0


def by_array(arrays: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``arrays`` keyed by array name, without their generation (``matrix.3`` as ``matrix``)."""
    return {name.rsplit(".", 1)[0]: array for name, array in arrays.items()}
