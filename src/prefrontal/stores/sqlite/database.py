"""One SQLite file shared by every store: connections, pragmas, worker threads.

SQLite calls block, so each one runs in an anyio worker thread, but for the
quick reads (a read by key, or of a few rows under a ``LIMIT``: ``quick`` in
:meth:`Database.read`), which run on the event loop's thread when their
connection is free at once, as a hop costs the loop more than they do.
Writes go through one writer connection, one at a time
(SQLite has a single writer anyway; queueing them here instead of in SQLite
keeps ``database is locked`` for other processes). Reads use a bounded pool
of read-only connections; in WAL mode they never wait for the writer and see
every write that has returned. The reads asked for within a couple of passes
of the event loop (a turn's loading phases start together), or later but before the
worker thread has begun them, share one worker-thread hop, each still its own
transaction, result and error (:mod:`~prefrontal.stores.sqlite.gathered`); so do the
writes of a batch.

Any event loop in any thread may use one ``Database``: the limiters that
queue calls are made per running loop (:mod:`~prefrontal.per_loop`),
and the writer is held across loops by a threading lock taken in the worker
thread, in slices like SQLite's own lock waits.

Reads map the file into memory (``mmap_size``, up to SQLite's largest,
2 GB): the pages live once, in the operating system's cache, shared by
every connection, instead of being copied into each connection's page
cache. :meth:`Database.open` enters the pages of every connection's map
into the process's page tables (:mod:`~prefrontal.stores.sqlite.mapped_pages`),
so that a fresh process's first turn pays no fault for a page already in
that cache.

Durability: ``synchronous=FULL`` by default, so a write that returned has been
synced to disk (WAL mode, one fsync per transaction). ``synchronous="NORMAL"``
still survives a killed process but may lose the last writes on power loss.

Writes that belong together can share one transaction (one sync):
``async with database.batch():`` makes every ``write`` of the task and of
the tasks it starts inside the block a savepoint of one transaction,
committed when the block ends without an error and rolled back otherwise.
A write that fails inside the batch is rolled back alone (its savepoint)
and raises as it would outside; the others still commit. The writes
behind a turn use it (:mod:`prefrontal.orchestrator.writes`): one
transaction per turn instead of one per write.

Foreign errors are mapped here, at one boundary: busy or locked is a
:class:`~prefrontal.errors.TransientStoreError`, text that cannot be encoded
as UTF-8 is an :class:`~prefrontal.errors.ItemRejectedError`, anything else
from SQLite a :class:`~prefrontal.errors.StoreError`.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Literal, TypeVar

import anyio
import anyio.lowlevel
import anyio.to_thread

from prefrontal.errors import (
    ConfigurationError,
    ErasedTenantError,
    ItemRejectedError,
    StoreError,
    TransientStoreError,
)
from prefrontal.files import create_private, private_directory
from prefrontal.per_loop import PerLoop
from prefrontal.stores.durable import encodable
from prefrontal.stores.erasures import refused
from prefrontal.stores.sqlite.driver import delete_in_place, deletes_in_place, sqlite3
from prefrontal.stores.sqlite.gathered import Gathered
from prefrontal.stores.sqlite.mapped_pages import populate_maps
from prefrontal.stores.sqlite.migrations import migrate
from prefrontal.stores.tenancy import Tenant

T = TypeVar("T")
Synchronous = Literal["FULL", "NORMAL"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def to_us(value: datetime) -> int:
    """A datetime as integer microseconds since the epoch (naive is read as UTC)."""
    aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    return (aware - _EPOCH) // _MICROSECOND


def from_us(value: int) -> datetime:
    """Integer microseconds since the epoch as an aware UTC datetime."""
    return _EPOCH + timedelta(microseconds=value)


def to_us_or_none(value: datetime | None) -> int | None:
    """:func:`to_us`, passing ``None`` through."""
    return None if value is None else to_us(value)


def from_us_or_none(value: int | None) -> datetime | None:
    """:func:`from_us`, passing ``None`` through."""
    return None if value is None else from_us(value)


@dataclass
class WriteBatch:
    """One transaction on the writer connection, shared by the writes of a block.

    It begins in the worker thread of the block's first write, in the same
    hop (a block that writes nothing never begins one). ``committed`` turns
    true as soon as the transaction has committed (at once for a block that
    wrote nothing).

    Told how many writes the block makes (:meth:`expect_writes`), it commits
    in the worker thread of the last of them to succeed, in that write's hop,
    instead of in a hop of its own once the block ends; the write that
    committed it raises when the commit fails, and so does every later write
    of the block and the block's end. A write of the block made once it has
    committed (a store that wrote twice, a retry) is a transaction of its own,
    committed (synced) when it returns.
    """

    database: Database
    unsynced: bool = False
    """Whether its commit skips the sync (``batch(synced=False)`` on a FULL database)."""
    limiter: anyio.CapacityLimiter = field(default_factory=lambda: anyio.CapacityLimiter(1))
    gathered: Gathered = field(default_factory=Gathered)
    savepoints: int = 0
    committed: bool = False
    connection: sqlite3.Connection | None = None
    """The writer, in the transaction begun (the writer lock held), once a write has begun it."""
    expected: int | None = None
    """How many writes commit it as the last of them succeeds (:meth:`expect_writes`)."""
    succeeded: int = 0
    """Writes of the transaction that succeeded so far (their savepoints released)."""
    failed_commit: BaseException | None = None
    """The error of its commit with its last expected write, when that commit failed."""

    def expect_writes(self, count: int) -> None:
        """Commit with the ``count``-th write to succeed (see the class's text)."""
        self.expected = count


_BATCH: ContextVar[WriteBatch | None] = ContextVar("prefrontal_sqlite_batch", default=None)


MMAP_SIZE = 0x7FFF0000
"""Bytes of the file each connection maps: SQLite's largest ``mmap_size`` (its default build)."""

LOCK_SLICE_MS = 20
"""How long SQLite itself waits for a lock before the wait returns to the event loop."""
LOCK_PAUSE_S = 0.002
"""The pause between two slices, where a deadline or a cancellation can end the wait."""


class Database:
    """A SQLite database file opened lazily on first use, then shared.

    ``pool_size`` bounds the read connections (and so the worker threads
    reading at once); there is always one writer. The file and its parent
    directories are created on first use and the schema migrated forward.
    ``populate``: :meth:`open` enters the pages of the connections' maps of
    the file into the process's page tables (a cost at start-up in
    proportion to the file, up to 2 GB a connection, instead of faults
    during the first turns).
    """

    def __init__(
        self,
        path: str | Path,
        *,
        pool_size: int = 4,
        busy_timeout_ms: int = 5_000,
        synchronous: Synchronous = "FULL",
        populate: bool = True,
    ) -> None:
        if str(path) in ("", ":memory:") or str(path).startswith("file:"):
            raise ConfigurationError(
                "Database needs a file path (an in-memory database is not shared)"
            )
        if pool_size < 1:
            raise ConfigurationError(f"pool_size must be at least 1, not {pool_size}")
        if synchronous not in ("FULL", "NORMAL"):
            raise ConfigurationError(f"synchronous must be FULL or NORMAL, not {synchronous!r}")
        self.path = Path(path)
        self._busy_timeout_ms = busy_timeout_ms
        self._synchronous = synchronous
        self._pool_size = pool_size
        self._populate = populate
        self._readers = PerLoop(partial(anyio.CapacityLimiter, pool_size))
        self._writers = PerLoop(partial(anyio.CapacityLimiter, 1))
        self._gathered = PerLoop(Gathered)
        self._writer_lock = threading.Lock()
        self._open_lock = threading.Lock()
        self._idle: list[sqlite3.Connection] = []
        self._idle_lock = threading.Lock()
        self._writer: sqlite3.Connection | None = None
        self._on_loop: sqlite3.Connection | None = None
        """The read connection of quick reads on the event loop's thread (see ``quick`` in
        :meth:`read`); ``None`` until opened, and after one of its reads raised."""
        self._on_loop_lock = threading.Lock()
        """Held while a quick read uses :attr:`_on_loop` (never waited for on a loop)."""
        self._closed = False

    def __repr__(self) -> str:
        return f"Database({str(self.path)!r})"

    async def open(self) -> None:
        """Open the file now instead of at the first call: the writer (creating the file and
        migrating its schema), then every read connection of the pool, each with the schema
        read, so that no call pays for a connection it opens; then, with ``populate``, the
        pages of their maps of the file entered into the page tables
        (:func:`~prefrontal.stores.sqlite.mapped_pages.populate_maps`).

        A process calls it at start-up (:meth:`~prefrontal.stores.Stores.open`, which
        ``async with Orchestrator(...)`` and the servers use); calling it again opens only
        the read connections missing and populates their maps. Raises :class:`StoreError`
        as a first call would.
        """
        await self._ensure_open("database")
        with self._idle_lock:
            missing = self._pool_size - len(self._idle)
        if missing <= 0 and self._on_loop is not None:
            return
        opened = await anyio.to_thread.run_sync(partial(self._readers_and_loop_opened, missing))
        with self._idle_lock:
            room = 0 if self._closed else max(self._pool_size - len(self._idle), 0)
            self._idle.extend(opened[:room])
        _close_all(opened[room:])
        if self._populate:
            await anyio.to_thread.run_sync(partial(populate_maps, self.path))

    async def read(
        self,
        fn: Callable[[sqlite3.Connection], T],
        *,
        store: str,
        one_statement: bool = False,
        after_write: bool = False,
        quick: bool = False,
    ) -> T:
        """Run ``fn(connection)`` in a read transaction in a worker thread (in one hop with
        the reads asked for meanwhile, one after another: :mod:`.gathered`).

        ``one_statement``: the caller's promise that ``fn`` runs exactly one statement and
        is done with its cursor when it returns (its rows fetched, or the cursor dropped).
        That statement is then its own read transaction, one snapshot as ``BEGIN`` …
        ``COMMIT`` around it would give, without those two statements. A function that
        may run more than one statement must leave it ``False``: its statements then
        share one snapshot.

        ``after_write``: the read follows a write of the caller's (and reads what it wrote).
        It runs on the writer connection when no write holds it (never waiting for it):
        a read connection drops its cache and its map of the file at its first read after
        another connection's commit, the writer keeps them across its own commits. Either
        way the read is a transaction (``BEGIN`` … ``COMMIT``) that sees every commit made
        before it began, and only reads (the caller's promise: ``query_only`` guards the
        read connections, not the writer).

        ``quick``: the caller's promise that ``fn`` is a short read, a point read by key or
        a few rows bounded by a ``LIMIT`` on an index, microseconds in SQLite. It then runs
        at once on the event loop's thread, on a read connection kept for such reads,
        when that connection is free at once (:meth:`_read_on_loop`), and in a worker
        thread as any read otherwise. A worker-thread hop costs the loop's thread more CPU
        than such a read (the hop's bookkeeping, the loop woken back, passes of the loop
        around it); what a read on the loop costs a server is that every other task of the
        loop waits for it: for SQLite's few microseconds of the read and the decoding of
        its rows, and for the pages it reads that are on disk and not in the operating
        system's cache (a few, for a B-tree's descent to a key). The connection never
        waits for a lock (a busy file sends the read to a worker thread, where lock waits
        are sliced) and it is read-only. The read is its own transaction, with the
        caller's context; a caller cancelled before it begins gets its cancellation and
        the read never runs (it is not a point where other tasks run). With ``after_write``
        the read runs on the loop's thread on the writer, when it is free at once
        (:meth:`_read_after_write_on_loop`), and never waits for a lock there either.
        """
        await self._ensure_open(store)
        if quick:
            await anyio.lowlevel.checkpoint_if_cancelled()
            if after_write:
                result = self._read_after_write_on_loop(fn, store)
            else:
                result = self._read_on_loop(fn, store, one_statement)
            if not isinstance(result, _Missed):
                return result
        if after_write:
            call = partial(self._run_read_after_write, fn, store, one_statement)
        elif quick and self._on_loop is None:
            call = partial(self._run_read_opening_on_loop, fn, store, one_statement)
        else:
            call = partial(self._run_read, fn, store, one_statement)
        return await self._waiting_for_locks(call, self._readers.get(), self._gathered.get())

    def _read_on_loop(
        self, fn: Callable[[sqlite3.Connection], T], store: str, one_statement: bool
    ) -> T | _Missed:
        """``fn`` on the connection of quick reads, in the calling (event loop's) thread, if
        it is free at once; else (in use by another loop's read, not open, or the file
        busy) :data:`_MISSED`, having run nothing the caller sees. A read that raised closes
        the connection (as :meth:`_run_read` closes a pooled one): the next quick read that
        finds none opens another in its worker thread."""
        if not self._on_loop_lock.acquire(blocking=False):
            return _MISSED
        try:
            connection = self._on_loop
            if connection is None or self._closed:
                return _MISSED
            try:
                return self._read_in(connection, fn, store, one_statement)
            except BaseException as error:
                self._on_loop = None
                connection.close()
                if isinstance(error, TransientStoreError):
                    return _MISSED
                raise
        finally:
            self._on_loop_lock.release()

    def read_here(
        self, fn: Callable[[sqlite3.Connection], T], *, store: str, one_statement: bool = False
    ) -> T:
        """Run ``fn(connection)`` in a read transaction in the calling thread: a thread of the
        caller's own, never the event loop's (it blocks). ``one_statement`` as for
        :meth:`read`. Raises :class:`StoreError` once the database is closed."""
        self._opened_once(store)
        return self._run_read(fn, store, one_statement)

    async def write(self, fn: Callable[[sqlite3.Connection], T], *, store: str) -> T:
        """Run ``fn(connection)`` in one write transaction; committed when this returns.

        Inside :meth:`batch`, ``fn`` runs in a savepoint of the batch's
        transaction instead, committed when the batch is.
        """
        batch = _BATCH.get()
        if batch is not None and batch.database is self:
            batch.savepoints += 1
            call = partial(self._in_batch, batch, f"w{batch.savepoints}", fn, store)
            if batch.connection is not None:
                return await batch.gathered.run(call, batch.limiter)
            # it may begin the batch: waits for the file's lock as a write outside one does
            return await self._waiting_for_locks(call, batch.limiter, batch.gathered)
        await self._ensure_open(store)
        call = partial(self._holding_writer, partial(self._run_write, fn, store), store)
        return await self._waiting_for_locks(call, self._writers.get())

    async def record_erasure(self, tenant: Tenant, now_us: int) -> None:
        """Record ``tenant`` as erased: every later insert of theirs is refused
        (:mod:`prefrontal.stores.erasures`); committed when this returns."""

        def record(connection: sqlite3.Connection) -> None:
            connection.execute(
                "INSERT INTO erased_tenants (agent_id, user_id, erased_at) VALUES (?, ?, ?)"
                " ON CONFLICT (agent_id, user_id) DO UPDATE SET erased_at = excluded.erased_at",
                (tenant.agent_id, tenant.user_id, now_us),
            )

        await self.write(record, store="database")

    async def readmit(self, tenant: Tenant) -> bool:
        """Remove ``tenant``'s erasure record; ``True`` if there was one."""

        def remove(connection: sqlite3.Connection) -> bool:
            params = (tenant.agent_id, tenant.user_id)
            sql = "DELETE FROM erased_tenants WHERE agent_id = ? AND user_id = ?"
            return connection.execute(sql, params).rowcount > 0

        return await self.write(remove, store="database")

    async def scrub(self, fts_tables: Sequence[str] = (), *, store: str) -> None:
        """Leave no copy of deleted rows on disk: truncate the log (rewriting ``fts_tables``
        first where they keep deleted entries).

        An FTS5 table that deletes in place (``secure-delete``,
        :mod:`~prefrontal.stores.sqlite.driver`) holds no entry of a deleted
        row once its transaction committed, and its freed bytes are zeroed
        (``secure_delete`` is on for every connection), so the scrub costs
        about a write. One that does not (a library older than SQLite 3.44)
        is optimised (its segments merged into one, which drops the
        doclists of deleted rows: a cost in proportion to the whole index,
        holding the writer). Then the write-ahead log, which may still hold
        old images of the pages, is checkpointed into the database and
        truncated to 0 bytes.
        """
        if fts_tables:

            def optimise(connection: sqlite3.Connection) -> None:
                for table in fts_tables:
                    if not deletes_in_place(connection, table):
                        connection.execute(f"INSERT INTO {table} ({table}) VALUES ('optimize')")

            await self.write(optimise, store=store)
        await self._ensure_open(store)

        def checkpoint() -> None:
            writer = self._writer
            if writer is not None:
                _guarded(
                    partial(writer.execute, "PRAGMA wal_checkpoint(TRUNCATE)"), store
                ).fetchall()

        await self._waiting_for_locks(
            partial(self._holding_writer, checkpoint, store), self._writers.get()
        )

    async def vacuum(self, *, store: str) -> None:
        """``VACUUM`` the database (rewritten without free pages), then truncate the log."""
        await self._ensure_open(store)

        def vacuum() -> None:
            writer = self._writer
            if writer is not None:
                _guarded(partial(writer.execute, "VACUUM"), store)

        await self._waiting_for_locks(
            partial(self._holding_writer, vacuum, store), self._writers.get()
        )
        await self.scrub(store=store)

    def in_batch(self) -> bool:
        """Whether the calling task is inside a :meth:`batch` block of this database."""
        joined = _BATCH.get()
        return joined is not None and joined.database is self

    @asynccontextmanager
    async def batch(self, *, synced: bool = True) -> AsyncIterator[WriteBatch]:
        """One write transaction for the writes made inside the block (see the module's text).

        Holds the writer for the whole block. Nested inside another batch of
        this database, it joins that one. Committed only when the block ends
        without an error (the batch's ``committed`` says so at once);
        any exception, cancellation included, rolls the whole batch back.
        A batch told how many writes the block makes
        (:meth:`WriteBatch.expect_writes`) commits with the last of them
        instead, in its worker thread: what comes after is no longer undone.

        ``synced=False`` commits without a sync of its own, as
        ``synchronous=NORMAL`` does: the transaction survives a killed
        process at once, and a power cut once the next synced commit of the
        file (any other write, or a checkpoint) has synced the log, which
        holds it before that commit's own changes. With ``synchronous="NORMAL"``
        every commit is made so.
        """
        if (joined := _BATCH.get()) is not None and joined.database is self:
            yield joined
            return
        await self._ensure_open("database")
        batch = WriteBatch(self, unsynced=not synced and self._synchronous == "FULL")
        async with self._writers.get():
            try:
                token = _BATCH.set(batch)
                try:
                    yield batch
                except BaseException:
                    if batch.connection is not None:
                        undo = partial(_roll_back, batch.connection, batch.unsynced)
                        with anyio.CancelScope(shield=True):
                            await anyio.to_thread.run_sync(undo)
                    raise
                finally:
                    _BATCH.reset(token)
                if batch.failed_commit is not None:
                    message = "the batch's transaction did not commit"
                    raise StoreError(message, store="database") from batch.failed_commit
                if batch.connection is not None:
                    commit = partial(_commit_or_roll_back, batch.connection, batch.unsynced)
                    await anyio.to_thread.run_sync(commit)
                batch.committed = True
            finally:
                if batch.connection is not None:
                    self._writer_lock.release()

    def _in_batch(
        self, batch: WriteBatch, name: str, fn: Callable[[sqlite3.Connection], T], store: str
    ) -> T:
        """``fn`` in savepoint ``name`` of ``batch``, beginning the batch's transaction first
        when no write has (in the worker thread: the begin shares the write's hop), and
        committing it after when it is the last write the batch expects; a transaction of its
        own once the batch has committed so."""
        if batch.failed_commit is not None:
            raise StoreError("the batch's transaction did not commit", store=store)
        if batch.committed:  # it committed with its last expected write: one of its own
            return self._holding_writer(partial(self._run_write, fn, store), store)
        if batch.connection is None:
            batch.connection = self._begun(batch.unsynced)
        result = _in_savepoint(batch.connection, name, fn, store)
        batch.succeeded += 1
        if batch.succeeded == batch.expected:
            self._committed_early(batch)
        return result

    def _committed_early(self, batch: WriteBatch) -> None:
        """Commit ``batch`` now, in the worker thread of its last expected write, and let go
        of the writer; a failed commit rolls back, is kept for the block's end, and raises."""
        connection, batch.connection = batch.connection, None
        try:
            if connection is not None:
                _commit_or_roll_back(connection, batch.unsynced)
            batch.committed = True
        except BaseException as error:
            batch.failed_commit = error
            raise
        finally:
            if connection is not None:
                self._writer_lock.release()

    def _begun(self, unsynced: bool = False) -> sqlite3.Connection:
        """The writer in a transaction begun, the writer lock held (the caller releases it);
        ``unsynced``: its commit is not synced (the safety level is set for it here, as SQLite
        does not change it inside a transaction, and set back once it ends)."""
        self._take_writer_lock("database")
        try:
            connection = self._writer
            if connection is None:
                raise StoreError(f"{self!r} is closed", store="database")
            if unsynced:
                _guarded(partial(connection.execute, _UNSYNCED), "database")
            try:
                _guarded(partial(connection.execute, "BEGIN IMMEDIATE"), "database")
            except BaseException:
                if unsynced:
                    connection.execute(_SYNCED)
                raise
        except BaseException:
            self._writer_lock.release()
            raise
        return connection

    def _take_writer_lock(self, store: str) -> None:
        """Take the writer from any loop's calls, waiting a slice at most (then busy)."""
        if not self._writer_lock.acquire(timeout=LOCK_SLICE_MS / 1_000):
            raise TransientStoreError(f"{self!r}: the writer is in use", store=store)

    def _holding_writer(self, call: Callable[[], T], store: str) -> T:
        """``call()`` with the writer lock held (:meth:`_take_writer_lock`)."""
        self._take_writer_lock(store)
        try:
            return call()
        finally:
            self._writer_lock.release()

    async def _waiting_for_locks(
        self,
        call: Callable[[], T],
        limiter: anyio.CapacityLimiter,
        gathered: Gathered | None = None,
    ) -> T:
        """``call()`` in a worker thread, tried again while another connection holds the lock;
        with ``gathered``, in one hop with the calls made meanwhile (:mod:`.gathered`).

        A worker thread cannot be cancelled, so SQLite waits for a lock in
        slices of ``LOCK_SLICE_MS`` only; between slices this coroutine sleeps,
        where a caller's deadline or cancellation ends the wait at once. The
        whole wait is bounded by ``busy_timeout_ms``, after which the
        :class:`TransientStoreError` of the last slice is raised.
        """
        give_up = anyio.current_time() + self._busy_timeout_ms / 1_000
        while True:
            try:
                if gathered is not None:
                    return await gathered.run(call, limiter)
                return await anyio.to_thread.run_sync(call, limiter=limiter)
            except TransientStoreError:
                if anyio.current_time() >= give_up:
                    raise
            await anyio.sleep(LOCK_PAUSE_S)

    async def aclose(self) -> None:
        """Close every connection once the writes in flight are done.

        Further calls raise :class:`StoreError`; a read in flight closes its
        connection when it returns.
        """
        with self._open_lock:
            self._closed = True
        async with self._writers.get():
            while True:
                try:
                    writer = await anyio.to_thread.run_sync(
                        partial(self._holding_writer, self._writer_taken, "database")
                    )
                    break
                except TransientStoreError:
                    await anyio.sleep(LOCK_PAUSE_S)
        with self._idle_lock:
            idle, self._idle = self._idle, []
        with self._on_loop_lock:  # held for a quick read's microseconds at most
            on_loop, self._on_loop = self._on_loop, None
        if on_loop is not None:
            idle.append(on_loop)
        if writer is not None:
            idle.append(writer)
        await anyio.to_thread.run_sync(partial(_close_all, idle))

    def _writer_taken(self) -> sqlite3.Connection | None:
        writer, self._writer = self._writer, None
        return writer

    async def _ensure_open(self, store: str) -> None:
        if self._writer is not None:
            return
        await anyio.to_thread.run_sync(partial(self._opened_once, store))

    def _opened_once(self, store: str) -> None:
        """Open the writer unless a call of any loop has (or the database is closed)."""
        with self._open_lock:
            if self._closed:
                raise StoreError(f"{self!r} is closed", store=store)
            if self._writer is None:
                self._writer = _guarded(self._open_writer, store)

    def _open_writer(self) -> sqlite3.Connection:
        if str(self.path) != ":memory:":
            private_directory(self.path.parent)
            # created 0600 (SQLite gives its -wal and -shm the same mode); SQLite says why
            # it cannot open a file this could not create
            with contextlib.suppress(OSError):
                create_private(self.path)
        connection = self._connect()
        mode = connection.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise StoreError(f"{self!r} could not enter WAL mode (got {mode!r})", store="database")
        migrate(connection)
        connection.execute("BEGIN IMMEDIATE")
        try:
            delete_in_place(connection)
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        connection.execute("COMMIT")
        return connection

    def _connect(self, busy_timeout_ms: int | None = None) -> sqlite3.Connection:
        """A connection to the file with the database's pragmas; SQLite's own lock wait is
        ``busy_timeout_ms``, a slice (:data:`LOCK_SLICE_MS`) at most, unless told."""
        if busy_timeout_ms is None:
            busy_timeout_ms = self._lock_slice_ms()
        connection = sqlite3.connect(
            self.path, isolation_level=None, check_same_thread=False, cached_statements=256
        )
        for pragma in (
            f"busy_timeout = {busy_timeout_ms}",
            f"synchronous = {self._synchronous}",
            "foreign_keys = ON",
            "temp_store = MEMORY",
            "cache_size = -16000",
            f"mmap_size = {MMAP_SIZE}",
            "secure_delete = ON",
        ):
            connection.execute(f"PRAGMA {pragma}")
        return connection

    def _run_read(
        self, fn: Callable[[sqlite3.Connection], T], store: str, one_statement: bool = False
    ) -> T:
        """``fn`` on a pooled read connection: in ``BEGIN`` … ``COMMIT``, or alone when it runs
        ``one_statement``. A one-statement read that raised may have left its statement
        unfinished (its cursor held by the traceback), keeping its snapshot open: its
        connection is closed, never pooled, so no later read begins in that snapshot."""
        connection = self._checkout(store)
        pooled = False
        try:
            result = self._read_in(connection, fn, store, one_statement)
            pooled = True
            return result
        finally:
            with self._idle_lock:
                keep = not self._closed and len(self._idle) < self._pool_size
                if keep and (pooled or not one_statement):
                    self._idle.append(connection)
                else:
                    connection.close()

    def _read_after_write_on_loop(
        self, fn: Callable[[sqlite3.Connection], T], store: str
    ) -> T | _Missed:
        """``fn`` in ``BEGIN`` … ``COMMIT`` on the writer, in the calling (event loop's)
        thread, when no write holds it and the file is not busy; else :data:`_MISSED`. SQLite's
        lock wait is off for it (two pragmas, microseconds) and back on after."""
        if not self._writer_lock.acquire(blocking=False):
            return _MISSED
        try:
            writer = self._writer
            if writer is None or writer.in_transaction:
                return _MISSED
            writer.execute(_NO_LOCK_WAIT)
            try:
                return _guarded(partial(_in_transaction, writer, "BEGIN", fn), store)
            except TransientStoreError:
                return _MISSED
            finally:
                writer.execute(f"PRAGMA busy_timeout = {self._lock_slice_ms()}")
        finally:
            self._writer_lock.release()

    def _lock_slice_ms(self) -> int:
        """SQLite's own lock wait on the database's connections: a slice at most."""
        return min(int(self._busy_timeout_ms), LOCK_SLICE_MS)

    def _run_read_opening_on_loop(
        self, fn: Callable[[sqlite3.Connection], T], store: str, one_statement: bool
    ) -> T:
        """:meth:`_run_read`, then (in the same worker thread) the connection of quick reads
        opened when there is none."""
        try:
            return self._run_read(fn, store, one_statement)
        finally:
            if self._on_loop is None and not self._closed:
                self._loop_reader_opened()

    def _loop_reader_opened(self) -> None:
        """Open the connection of quick reads unless there is one (in a worker thread): a read
        connection that never waits for a lock, the schema read."""
        if self._on_loop is not None:
            return
        (connection,) = self._readers_opened(1, busy_timeout_ms=0)
        with self._on_loop_lock:
            if self._on_loop is None and not self._closed:
                self._on_loop = connection
                return
        connection.close()

    def _readers_and_loop_opened(self, count: int) -> list[sqlite3.Connection]:
        """:meth:`_readers_opened`, and the connection of quick reads when it is missing."""
        opened = self._readers_opened(count)
        try:
            self._loop_reader_opened()
        except BaseException:
            _close_all(opened)
            raise
        return opened

    def _read_in(
        self,
        connection: sqlite3.Connection,
        fn: Callable[[sqlite3.Connection], T],
        store: str,
        one_statement: bool,
    ) -> T:
        """``fn`` on read connection ``connection``: alone when it runs ``one_statement``, else
        in ``BEGIN`` … ``COMMIT``; SQLite's errors mapped."""
        if one_statement:
            return _guarded(partial(fn, connection), store)
        return _guarded(partial(_in_transaction, connection, "BEGIN", fn), store)

    def _run_read_after_write(
        self, fn: Callable[[sqlite3.Connection], T], store: str, one_statement: bool
    ) -> T:
        """``fn`` in ``BEGIN`` … ``COMMIT`` on the writer when its lock is free at once,
        else as :meth:`_run_read` (see ``after_write`` in :meth:`read`)."""
        if self._writer_lock.acquire(blocking=False):
            try:
                writer = self._writer
                if writer is not None and not writer.in_transaction:
                    return _guarded(partial(_in_transaction, writer, "BEGIN", fn), store)
            finally:
                self._writer_lock.release()
        return self._run_read(fn, store, one_statement)

    def _run_write(self, fn: Callable[[sqlite3.Connection], T], store: str) -> T:
        if self._writer is None:
            raise StoreError(f"{self!r} is closed", store=store)
        return _guarded(partial(_in_transaction, self._writer, "BEGIN IMMEDIATE", fn), store)

    def _checkout(self, store: str) -> sqlite3.Connection:
        with self._idle_lock:
            if self._closed:
                raise StoreError(f"{self!r} is closed", store=store)
            if self._idle:
                return self._idle.pop()
        return _guarded(self._reader, store)

    def _reader(self, busy_timeout_ms: int | None = None) -> sqlite3.Connection:
        connection = self._connect(busy_timeout_ms)
        connection.execute("PRAGMA query_only = ON")
        return connection

    def _readers_opened(
        self, count: int, busy_timeout_ms: int | None = None
    ) -> list[sqlite3.Connection]:
        """``count`` read connections, each having read the schema (its first statement's cost)."""
        opened: list[sqlite3.Connection] = []
        try:
            for _ in range(count):
                opened.append(_guarded(partial(self._reader, busy_timeout_ms), "database"))
                _guarded(partial(opened[-1].execute, _SCHEMA_READ), "database").fetchall()
        except BaseException:
            _close_all(opened)
            raise
        return opened


_NO_LOCK_WAIT = "PRAGMA busy_timeout = 0"
"""SQLite's lock wait off, for a read on the event loop's thread: busy, it returns at once."""


class _Missed:
    """What :meth:`Database._read_on_loop` returns when it ran no read."""


_MISSED = _Missed()

_SCHEMA_READ = "SELECT count(*) FROM sqlite_master"
"""A statement that makes a new connection read and parse the schema."""


def _in_transaction(
    connection: sqlite3.Connection, begin: str, fn: Callable[[sqlite3.Connection], T]
) -> T:
    connection.execute(begin)
    try:
        result = fn(connection)
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")
    return result


def _in_savepoint(
    connection: sqlite3.Connection, name: str, fn: Callable[[sqlite3.Connection], T], store: str
) -> T:
    """``fn(connection)`` in savepoint ``name``: kept on success, undone alone on failure."""

    def run() -> T:
        connection.execute(f"SAVEPOINT {name}")
        try:
            result = fn(connection)
        except BaseException:
            connection.execute(f"ROLLBACK TO {name}")
            connection.execute(f"RELEASE {name}")
            raise
        connection.execute(f"RELEASE {name}")
        return result

    return _guarded(run, store)


_UNSYNCED = "PRAGMA synchronous = NORMAL"
"""The safety level of a batch committed unsynced: in WAL mode a commit does not sync the log
(the next synced commit does, this one's frames with it: they come first in the log)."""
_SYNCED = "PRAGMA synchronous = FULL"
"""The writer's level back once an unsynced batch has ended (only FULL databases set it)."""


def _roll_back(connection: sqlite3.Connection, unsynced: bool = False) -> None:
    try:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
    finally:
        if unsynced:
            connection.execute(_SYNCED)


def _commit_or_roll_back(connection: sqlite3.Connection, unsynced: bool = False) -> None:
    """Commit the open transaction; if the commit fails, roll back and raise (mapped);
    ``unsynced``: then set the writer's safety level back (see :data:`_UNSYNCED`)."""
    try:
        _guarded(partial(connection.execute, "COMMIT"), "database")
    except BaseException:
        _roll_back(connection)
        raise
    finally:
        if unsynced:
            connection.execute(_SYNCED)


def _guarded(fn: Callable[[], T], store: str) -> T:
    """Call ``fn`` and map SQLite's and the codec's errors to prefrontal's."""
    try:
        return fn()
    except (UnicodeEncodeError, OverflowError) as error:
        raise ItemRejectedError(f"cannot store a value: {error}", store=store) from error
    except sqlite3.IntegrityError as error:
        if refused(str(error)):
            raise ErasedTenantError(
                "this user was erased from the database; Memory.readmit lets the id be used again",
                store=store,
            ) from error
        raise StoreError(f"sqlite: {error}", store=store) from error
    except sqlite3.OperationalError as error:
        message = str(error)
        if "locked" in message or "busy" in message:
            raise TransientStoreError(f"database busy: {message}", store=store) from error
        raise StoreError(f"sqlite: {message}", store=store) from error
    except sqlite3.Error as error:
        raise StoreError(f"sqlite: {error}", store=store) from error


def _close_all(connections: list[sqlite3.Connection]) -> None:
    for connection in connections:
        connection.close()


VISIBLE = "agent_id = :agent AND (scope = 'shared' OR user_id = :user)"
"""The tenancy filter, in SQL: the agent's shared items and the user's own."""

OWNED = "agent_id = :agent AND user_id = :user"
"""The tenant's own rows, in SQL: what ``erase`` removes."""


def erase(connection: sqlite3.Connection, table: str, tenant: Tenant) -> int:
    """Delete the tenant's own rows of ``table``; how many there were."""
    params = {"agent": tenant.agent_id, "user": tenant.user_id}
    return connection.execute(f"DELETE FROM {table} WHERE {OWNED}", params).rowcount


def id_list(item_ids: list[str]) -> str:
    """``item_ids`` as a JSON array for ``json_each``, leaving out ids that cannot exist."""
    return json.dumps([item_id for item_id in item_ids if encodable(item_id)])
