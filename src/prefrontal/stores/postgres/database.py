"""One PostgreSQL schema shared by every store: the asyncpg pool and the error boundary.

:class:`PostgresDatabase` opens an asyncpg connection pool lazily, on first
use, and migrates its schema forward then (:mod:`.migrations`). Every
connection's ``search_path`` is that schema, so the SQL of the stores names
tables without it and one database can hold several independent schemas.

Round trips are what a turn pays for, so none is spent on ceremony:

- reads at ``read committed`` run statement by statement with no
  ``BEGIN``/``COMMIT`` around them (in read committed each statement takes
  its own snapshot anyway, so an explicit transaction adds two round trips
  and nothing else); reads that need one snapshot (``repeatable read``) run
  in a read-only transaction of that level;
- writes run in one read-committed transaction, committed when the call
  returns; a write of one statement (:meth:`PostgresDatabase.write_one`)
  runs alone, atomic by itself;
- a connection goes back to the pool with no reset query: the stores keep
  no session state (settings are ``SET LOCAL``/``set_config(..., true)``,
  advisory locks are transaction-scoped), and an open transaction is still
  rolled back by the pool.

Foreign errors are mapped here, at one boundary: lost connections (and the
client's protocol errors a connection closed by the server leaves behind),
serialisation failures, deadlocks and "too many connections" are a
:class:`~prefrontal.errors.TransientStoreError`; text PostgreSQL cannot hold
(lone surrogates, NUL characters) or numbers out of range an
:class:`~prefrontal.errors.ItemRejectedError`; anything else from asyncpg a
:class:`~prefrontal.errors.StoreError`. Cancellation is never caught.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import Any, Literal, TypeVar

import anyio
import asyncpg

from prefrontal.errors import (
    ConfigurationError,
    ErasedTenantError,
    ItemRejectedError,
    StoreError,
    TransientStoreError,
)
from prefrontal.stores.durable import encodable
from prefrontal.stores.erasures import refused
from prefrontal.stores.postgres import planner_statistics
from prefrontal.stores.postgres.coalesced import Coalescer
from prefrontal.stores.postgres.migrations import ERASE_LOCK, migrate
from prefrontal.stores.postgres.replicas import MAX_STALENESS, Replicas
from prefrontal.stores.postgres.turn_reads import StateRead, TurnKey, TurnReads
from prefrontal.stores.tenancy import Tenant

T = TypeVar("T")
Connection = Any
"""An ``asyncpg.Connection`` (asyncpg ships no type information)."""

Isolation = Literal["read_committed", "repeatable_read"]

SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")
"""A schema name: lower-case letters, digits and underscores (quoted in SQL, so keywords work)."""

_TRANSIENT = (
    asyncpg.PostgresConnectionError,
    asyncpg.ConnectionDoesNotExistError,
    asyncpg.exceptions.SerializationError,
    asyncpg.exceptions.DeadlockDetectedError,
    asyncpg.exceptions.TooManyConnectionsError,
    asyncpg.exceptions.CannotConnectNowError,
    asyncpg.exceptions.AdminShutdownError,
    asyncpg.exceptions.LockNotAvailableError,
    asyncpg.exceptions.InternalClientError,
    ConnectionError,
    TimeoutError,
)
_REJECTED = (
    UnicodeEncodeError,
    OverflowError,
    asyncpg.DataError,
    asyncpg.exceptions.CharacterNotInRepertoireError,
    asyncpg.exceptions.UntranslatableCharacterError,
    asyncpg.exceptions.NumericValueOutOfRangeError,
    asyncpg.exceptions.StringDataRightTruncationError,
)


class PostgresDatabase:
    """A connection pool to one schema of one PostgreSQL database, opened on first use.

    ``dsn`` is anything asyncpg accepts (``postgresql://user@host/db``, or
    ``postgresql://user@/db?host=/run/postgresql`` for a Unix socket).
    ``schema`` (default ``prefrontal``) is created if missing and migrated
    forward; it must be a plain lower-case identifier. ``min_size`` and
    ``max_size`` bound the pool's connections. No timeouts of its own:
    deadlines are applied from outside and cancel the query on the server.

    ``read_dsns``: streaming replicas of this database, which answer the reads
    offered to them (``read(..., replica=True)``) within ``max_staleness``
    seconds and never behind this process's own writes (:mod:`.replicas`).
    """

    def __init__(
        self,
        dsn: str,
        *,
        schema: str = "prefrontal",
        min_size: int = 1,
        max_size: int = 10,
        read_dsns: Sequence[str] = (),
        max_staleness: float = MAX_STALENESS,
    ) -> None:
        if not SCHEMA_NAME.fullmatch(schema):
            raise ConfigurationError(
                f"schema must be a lower-case identifier ([a-z_][a-z0-9_]*), not {schema!r}"
            )
        if min_size < 0 or max_size < 1 or min_size > max_size:
            raise ConfigurationError(
                f"pool sizes must satisfy 0 <= min_size <= max_size, max_size >= 1 "
                f"(got {min_size}, {max_size})"
            )
        self.dsn = dsn
        self.schema = schema
        self._min_size, self._max_size = min_size, max_size
        self._pool: Any = None
        self._open_lock = anyio.Lock()
        self._closed = False
        self.replicas = (
            Replicas(read_dsns, schema=schema, max_size=max_size, max_staleness=max_staleness)
            if read_dsns
            else None
        )
        """The read replicas (``None`` without ``read_dsns``)."""
        self._coalescer = Coalescer()
        self.turn_reads = TurnReads()
        """The turns' state reads, prefetched together (:mod:`.turn_reads`)."""

    def __repr__(self) -> str:
        return f"PostgresDatabase(schema={self.schema!r})"

    async def read(
        self,
        fn: Callable[[Connection], Awaitable[T]],
        *,
        store: str,
        isolation: Isolation = "read_committed",
        replica: bool = False,
    ) -> T:
        """Run ``await fn(connection)``, which only reads; with ``replica``, on a read replica
        when one may answer (:mod:`.replicas`), else on the primary.

        ``fn`` sees one snapshot only with ``repeatable_read`` (a read-only transaction of
        that level); at ``read_committed`` its statements run one by one, each on its own
        snapshot, with no transaction around them."""
        if replica and self.replicas is not None:
            await self._ensure_open(store)  # the schema is migrated on the primary first
            with mapped_errors(store):
                found = await self.replicas.run(fn, isolation=isolation)
            if found is not None:
                return found[0]
        return await self._run(fn, store, isolation=isolation, readonly=True)

    async def state_rows(self, read: StateRead, *args: Any, store: str) -> Sequence[Any]:
        """The rows of ``read`` (a read of a turn's state, at read committed, on the primary),
        each a tuple of its columns: prefetched with the turn's other reads when the turn
        began in this context (:mod:`.turn_reads`), else read now."""
        asked = tuple(tuple(a) if isinstance(a, list) else a for a in args)

        async def run(connection: Connection) -> Sequence[Any]:
            found: Sequence[Any] = await connection.fetch(read.statement, *asked)
            return found

        async def fetch() -> Sequence[Any]:
            return await self.read(run, store=store)

        return await self.turn_reads.rows(read, asked, fetch)

    async def prefetch_turn(self, key: TurnKey, seconds: float) -> int:
        """Read together, within ``seconds``, the state ``key``'s turn will read (what the
        tenant's last turn read: :meth:`TurnReads.prefetch`); how many reads were. A read
        that fails or is late here is made again when the turn asks for it."""

        async def fetch(statement: str, args: tuple[Any, ...]) -> Any:
            return await self.read(lambda c: c.fetchrow(statement, *args), store="database")

        with anyio.move_on_after(seconds):
            try:
                return await self.turn_reads.prefetch(key, seconds, fetch)
            except StoreError:
                return 0
        return 0

    async def write(self, fn: Callable[[Connection], Awaitable[T]], *, store: str) -> T:
        """Run ``await fn(connection)`` in one transaction; committed when this returns."""
        return await self._run(fn, store, isolation="read_committed", readonly=False)

    async def write_one(self, fn: Callable[[Connection], Awaitable[T]], *, store: str) -> T:
        """Run ``await fn(connection)``, which sends exactly one statement that writes: alone,
        with no ``BEGIN``/``COMMIT`` around it (one statement is atomic by itself)."""
        pool = await self._ensure_open(store)
        self.turn_reads.wrote()
        with mapped_errors(store):
            async with pool.acquire() as connection:
                found = await fn(connection)
                if self.replicas is not None:
                    self.replicas.wrote(await connection.fetchval(_WAL_POSITION))
                return found

    async def execute(self, statement: str, *args: object, store: str) -> None:
        """Run one statement with ``args`` (:meth:`write_one`): with the other writes of one
        statement begun in the same pass of the event loop, as one (:mod:`.coalesced`)."""

        async def send(sql: str, values: Sequence[Any]) -> None:
            async def run(connection: Connection) -> None:
                await connection.execute(sql, *values)

            await self.write_one(run, store=store)

        await self._coalescer.execute(statement, args, send)

    async def forget_statistics(self) -> None:
        """Analyse every table again, so the planner's statistics count only the rows left
        (an erase's last step: :mod:`.planner_statistics`)."""
        await self.execute(planner_statistics.ANALYZE, store="database")

    async def record_erasure(self, tenant: Tenant, now_us: int) -> None:
        """Record ``tenant`` as erased once every transaction inserting a row of theirs has
        ended (the exclusive side of :data:`~.migrations.ERASE_LOCK`); every later insert
        of theirs is refused (:mod:`prefrontal.stores.erasures`)."""

        async def record(connection: Connection) -> None:
            args = (tenant.agent_id, tenant.user_id)
            await connection.execute(f"SELECT pg_advisory_xact_lock({ERASE_LOCK})", *args)
            await connection.execute(
                "INSERT INTO erased_tenants (agent_id, user_id, erased_at) VALUES ($1, $2, $3)"
                " ON CONFLICT (agent_id, user_id) DO UPDATE SET erased_at = excluded.erased_at",
                *args,
                now_us,
            )

        await self.write(record, store="database")

    async def readmit(self, tenant: Tenant) -> bool:
        """Remove ``tenant``'s erasure record; ``True`` if there was one."""
        removed = await self.count(
            "DELETE FROM erased_tenants WHERE agent_id = $1 AND user_id = $2",
            tenant.agent_id,
            tenant.user_id,
            store="database",
        )
        return removed > 0

    async def count(self, statement: str, *args: object, store: str) -> int:
        """Run one ``DELETE`` or ``UPDATE``, alone (:meth:`write_one`); the rows it touched."""

        async def run(connection: Connection) -> int:
            status: str = await connection.execute(statement, *args)
            return int(status.rsplit(" ", 1)[-1])

        return await self.write_one(run, store=store)

    async def aclose(self) -> None:
        """Close the pool once the calls in flight are done; later calls raise StoreError."""
        async with self._open_lock:
            self._closed = True
            pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()
        if self.replicas is not None:
            await self.replicas.aclose()

    async def vacuum(self, *, store: str) -> None:
        """``VACUUM FULL`` of every table of the schema, then ``CHECKPOINT``: rows leave the files.

        Each table is locked while it is rewritten (run it in a maintenance
        window); the text stays in WAL segments until they are recycled, and
        in archives and backups (see docs/privacy.md).
        """
        pool = await self._ensure_open(store)
        with mapped_errors(store):
            async with pool.acquire() as connection:
                tables = await connection.fetch(
                    "SELECT tablename FROM pg_tables WHERE schemaname = $1", self.schema
                )
                for row in tables:
                    await connection.execute(f'VACUUM FULL "{self.schema}"."{row[0]}"')
                await connection.execute("CHECKPOINT")

    async def _run(
        self,
        fn: Callable[[Connection], Awaitable[T]],
        store: str,
        *,
        isolation: Isolation,
        readonly: bool,
    ) -> T:
        pool = await self._ensure_open(store)
        with mapped_errors(store):
            async with pool.acquire() as connection:
                if readonly and isolation == "read_committed":
                    return await fn(connection)
                if not readonly:
                    self.turn_reads.wrote()
                transaction = connection.transaction(isolation=isolation, readonly=readonly)
                wrote = False
                async with transaction:
                    found = await fn(connection)
                    if not readonly and self.replicas is not None:
                        wrote = await connection.fetchval(_WROTE)
                if wrote and self.replicas is not None:
                    self.replicas.wrote(await connection.fetchval(_WAL_POSITION))
                return found

    async def _ensure_open(self, store: str) -> Any:
        pool = self._pool
        if pool is not None:
            return pool
        async with self._open_lock:
            if self._closed:
                raise StoreError(f"{self!r} is closed", store=store)
            if self._pool is None:
                with mapped_errors(store):
                    self._pool = await self._open()
            return self._pool

    async def _open(self) -> Any:
        pool = await asyncpg.create_pool(
            self.dsn,
            min_size=self._min_size,
            max_size=self._max_size,
            server_settings={"search_path": f'"{self.schema}"', "application_name": "prefrontal"},
            reset=keep_session,
        )
        try:
            async with pool.acquire() as connection:
                await migrate(connection, self.schema)
        except BaseException:
            pool.terminate()  # at once, with no await: this may be a cancellation
            raise
        return pool


async def keep_session(connection: Connection) -> None:
    """A pool's reset of a released connection: nothing to send (the stores leave no session
    state behind; the pool rolls back an open transaction before this)."""


@contextlib.contextmanager
def mapped_errors(store: str) -> Iterator[None]:
    """Raise asyncpg's and the codec's errors in the block as prefrontal's (never cancellation)."""
    try:
        yield
    except (StoreError, ConfigurationError):
        raise
    except _REJECTED as error:
        raise ItemRejectedError(f"cannot store a value: {error}", store=store) from error
    except _TRANSIENT as error:
        raise TransientStoreError(f"postgres: {error}", store=store) from error
    except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError) as error:
        if refused(str(error)):
            raise ErasedTenantError(
                "this user was erased from the database; Memory.readmit lets the id be used again",
                store=store,
            ) from error
        raise StoreError(f"postgres: {error}", store=store) from error


_WROTE = "SELECT pg_current_xact_id_if_assigned() IS NOT NULL"
"""Whether the transaction wrote anything (has a transaction id): only then is there a
commit for the replicas to replay."""
_WAL_POSITION = "SELECT pg_current_wal_insert_lsn()::text"
"""The primary's WAL position, read after a commit: at or past its commit record."""

VISIBLE = "agent_id = $1 AND (scope = 'shared' OR user_id = $2)"
"""The tenancy filter, in SQL, with the agent as ``$1`` and the user as ``$2``."""


def erase_statement(table: str) -> str:
    """SQL deleting the tenant's own rows of ``table`` (agent ``$1``, user ``$2``)."""
    return f"DELETE FROM {table} WHERE agent_id = $1 AND user_id = $2"


def storable(text: str) -> bool:
    """True when PostgreSQL can hold ``text``: valid UTF-8 and no NUL character."""
    return "\x00" not in text and encodable(text)


def storable_ids(item_ids: list[str]) -> list[str]:
    """``item_ids`` without those that cannot exist in the database."""
    return [item_id for item_id in item_ids if storable(item_id)]
