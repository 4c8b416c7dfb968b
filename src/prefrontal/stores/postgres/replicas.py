"""Searches on read replicas: bounded staleness, this process's own writes always seen.

:class:`Replicas` holds a pool per read DSN (streaming replicas of the
primary; the schema comes from the primary, never migrated here). A read
offered to them (:meth:`PostgresDatabase.read` with ``replica=True``: the
memory searches of the read phases) runs on the next replica in turn, in a
read-only transaction whose first statement checks two things:

- **this process's writes are there**: the replica has replayed the WAL up
  to the primary's position after this process's last write
  (:meth:`Replicas.wrote`), so a turn never misses what its own process
  wrote, an erase included;
- **the staleness is bounded**: 0 when the replica has replayed all it has
  received, else the time since the last transaction it replayed; more
  than ``max_staleness`` seconds and the primary answers.

Otherwise, or when the replica cannot be reached or lacks the schema yet,
the primary answers (:meth:`Replicas.run` returns ``None``). Each
read records where it was served in :data:`~prefrontal.stores.read_source.LAST_READ`,
which the phases copy into the trace. Writes in another process reach a
replica's searches within the staleness bound: an erase included (the
window is measured in docs/postgres.md).
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import asyncpg

from prefrontal.stores.read_source import LAST_READ, ReadSource

T = TypeVar("T")

MAX_STALENESS = 5.0
"""Seconds a replica may lag behind what it received before the primary answers instead."""

_CHECK = """
    SELECT coalesce(pg_last_wal_replay_lsn() >= $1::pg_lsn, false),
           CASE WHEN pg_last_wal_receive_lsn() IS NOT DISTINCT FROM pg_last_wal_replay_lsn()
                THEN 0::float8
                ELSE 1000 * extract(epoch FROM clock_timestamp()
                                    - pg_last_xact_replay_timestamp())::float8 END"""
"""Whether the replica has replayed up to ``$1``, and its staleness in milliseconds."""

_UNSERVED = (
    asyncpg.PostgresConnectionError,
    asyncpg.ConnectionDoesNotExistError,
    asyncpg.exceptions.CannotConnectNowError,
    asyncpg.exceptions.UndefinedTableError,
    asyncpg.exceptions.UndefinedColumnError,
    asyncpg.exceptions.InvalidSchemaNameError,
    asyncpg.exceptions.UndefinedObjectError,
    asyncpg.exceptions.UndefinedFunctionError,
    asyncpg.exceptions.SerializationError,
    ConnectionError,
    OSError,
)
"""Errors after which the primary answers: the replica is down, has not got the schema, or
cancelled the search for a conflict with recovery (replayed changes it had to apply)."""


def lsn(text: str) -> int:
    """A WAL position (``16/B374D848``) as a number."""
    high, _, low = text.partition("/")
    return (int(high, 16) << 32) | int(low, 16)


class Replicas:
    """Pools to the read replicas ``dsns`` of one schema, opened on first use."""

    def __init__(
        self,
        dsns: Sequence[str],
        *,
        schema: str,
        max_size: int,
        max_staleness: float = MAX_STALENESS,
    ) -> None:
        self.dsns = list(dsns)
        self.schema, self.max_size, self.max_staleness = schema, max_size, max_staleness
        self._pools: list[Any] = [None] * len(self.dsns)
        self._turn = itertools.count()
        self.written = 0
        """The primary's WAL position after this process's latest write (:func:`lsn`)."""
        self.served = [0] * len(self.dsns)
        """Reads each replica answered."""
        self.declined = 0
        """Reads offered to a replica that the primary answered."""

    def wrote(self, position: str) -> None:
        """Record the primary's WAL position after a write of this process."""
        self.written = max(self.written, lsn(position))

    async def run(self, fn: Callable[[Any], Awaitable[T]], *, isolation: str) -> tuple[T] | None:
        """``(await fn(connection),)`` on a replica in a read-only transaction, or ``None``
        when the primary must answer (the reason in ``LAST_READ``)."""
        at = next(self._turn) % len(self.dsns)
        server = f"replica {at + 1}"
        try:
            pool = await self._pool(at)
            async with (
                pool.acquire() as connection,
                connection.transaction(isolation=isolation, readonly=True),
            ):
                caught_up, staleness = await connection.fetchrow(_CHECK, self.written)
                if not caught_up:
                    self._decline(f"{server} behind this process's writes")
                    return None
                if staleness > 1000 * self.max_staleness:
                    self._decline(f"{server} {staleness:.0f} ms stale")
                    return None
                found = await fn(connection)
        except _UNSERVED as error:
            self._decline(f"{server} unavailable: {type(error).__name__}")
            return None
        self.served[at] += 1
        LAST_READ.set(ReadSource(server, float(staleness)))
        return (found,)

    def _decline(self, reason: str) -> None:
        self.declined += 1
        LAST_READ.set(ReadSource("primary", reason=reason))

    async def _pool(self, at: int) -> Any:
        pool = self._pools[at]
        if pool is None:
            pool = await asyncpg.create_pool(
                self.dsns[at],
                min_size=0,
                max_size=self.max_size,
                server_settings={
                    "search_path": f'"{self.schema}"',
                    "application_name": "prefrontal",
                },
            )
            if self._pools[at] is None:
                self._pools[at] = pool
            else:
                await pool.close()
        return self._pools[at]

    async def aclose(self) -> None:
        """Close every replica pool."""
        pools, self._pools = self._pools, [None] * len(self.dsns)
        for pool in pools:
            if pool is not None:
                await pool.close()
