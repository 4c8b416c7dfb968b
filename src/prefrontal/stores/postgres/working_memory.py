"""PostgreSQL working-memory store: one versioned buffer state per session.

Optimistic concurrency across processes: a save is one conditional
statement (an insert that does nothing when the session exists, or an
update whose ``WHERE`` names the version the caller loaded). PostgreSQL
re-checks that condition against the newest row when two saves race, so of
any number of workers saving from the same version exactly one succeeds and
the others get a :class:`~prefrontal.errors.ConflictError`.

A state is stored in two parts (:func:`~prefrontal.stores.working_memory.stored_parts`):
``body``, its JSON without the buffer document, and ``buffer``, the document itself (tens
of kilobytes of JSON), so that the document is never escaped as a string inside the
state's JSON nor unescaped at a load. A row whose ``buffer`` is null (every row written
before schema 23) holds the whole state in ``body``. Both parts cross the socket as their
UTF-8 bytes (``bytea``, converted to and from the ``text`` columns by the server): a
document often holds a character beyond Latin-1, and as a Python string it would be
decoded and encoded again for the driver on each save and each load. A state read as the
parts this process last saved or read of its session is not decoded again
(:mod:`.session_states`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from prefrontal.errors import ConflictError
from prefrontal.stores.durable import SharesDatabase, read_one, readable
from prefrontal.stores.postgres.database import Connection, PostgresDatabase, erase_statement
from prefrontal.stores.postgres.session_states import SESSION_STATES, Stored
from prefrontal.stores.postgres.turn_reads import StateRead, TurnKey
from prefrontal.stores.tenancy import Tenant
from prefrontal.stores.working_memory import SessionKey, SessionState, joined, stored_parts

_STORE = "working_memory"
_KEY = "agent_id = $1 AND user_id = $2 AND session_id = $3"
PARTS = "convert_to(body, 'UTF8'), convert_to(buffer, 'UTF8')"
"""A row's stored parts as their UTF-8 bytes (what :func:`joined` reads): every read of a
state selects these (of a row ``w``: :func:`parts_of`)."""
_LOAD = StateRead(PARTS, f"FROM wm_sessions WHERE {_KEY}")

_CREATE = """
INSERT INTO wm_sessions (agent_id, user_id, session_id, version, updated_at, body, buffer)
VALUES ($1, $2, $3, $4, $5, convert_from($6::bytea, 'UTF8'), convert_from($7::bytea, 'UTF8'))
ON CONFLICT (agent_id, user_id, session_id) DO NOTHING
RETURNING version
"""

_UPDATE = f"""
UPDATE wm_sessions SET version = $4, updated_at = $5, body = convert_from($6::bytea, 'UTF8'),
    buffer = convert_from($7::bytea, 'UTF8')
WHERE {_KEY} AND version = $8
RETURNING version
"""


def parts_of(row: str) -> str:
    """:data:`PARTS` of the ``wm_sessions`` row named ``row``, as one composite value."""
    return f"ROW(convert_to({row}.body, 'UTF8'), convert_to({row}.buffer, 'UTF8'))"


def read_parts(key: SessionKey, parts: Sequence[bytes | None]) -> SessionState:
    """The state of ``key`` stored as ``parts`` (a row of :data:`PARTS`): the one held when
    they are the parts last saved or read of ``key`` (:mod:`.session_states`); a stored
    record that cannot be read is a :class:`~prefrontal.errors.StoreError`."""
    body, document = parts
    assert body is not None  # the column is not null
    return read_one(
        (body, document), lambda stored: SESSION_STATES.read(key, stored, _joined), store=_STORE
    )


def saved_as(stored: Stored, state: SessionState) -> SessionState:
    """``state``, saved as its parts ``stored`` (:func:`save_write`'s): held as what they read
    as (:mod:`.session_states`)."""
    return SESSION_STATES.remember(stored, state)


def _joined(parts: Sequence[bytes | None]) -> SessionState:
    body, document = parts
    assert body is not None  # the column is not null
    return joined(body, document)


async def load_in(connection: Connection, key: SessionKey) -> SessionState | None:
    """The saved state of ``key``, read inside the caller's transaction."""
    parts = await connection.fetchrow(_LOAD.statement, *_key(key))
    return None if parts is None else read_parts(key, parts)


Saving = tuple[tuple[str, tuple[object, ...]], SessionState, Stored]


def save_write(state: SessionState) -> Saving:
    """What :func:`save_in` sends for ``state`` (its statement, which returns a row when the
    state was saved, and parameters), the state it saves and that state's stored parts (for
    :func:`saved_as` once the statement saved it)."""
    saved = state.model_copy(update={"version": state.version + 1})
    stored = stored_parts(saved, store=_STORE)
    row = (*_key(state.key), saved.version, saved.updated_at, *stored)
    if state.version == 0:
        return (_CREATE, row), saved, stored
    return (_UPDATE, (*row, state.version)), saved, stored


async def save_in(connection: Connection, state: SessionState) -> SessionState | None:
    """Save ``state`` inside the caller's transaction if its version is the stored one.

    One conditional statement (:func:`save_write`); returns the state with its new version,
    or ``None`` (nothing written) when another save came first.
    """
    (statement, args), saved, stored = save_write(state)
    written = await connection.fetchval(statement, *args)
    return None if written is None else saved_as(stored, saved)


class PostgresWorkingMemoryStore(SharesDatabase[PostgresDatabase]):
    """States in ``wm_sessions``; the version check and the write are one statement."""

    async def load(self, key: SessionKey) -> SessionState | None:
        rows = await self.database.state_rows(_LOAD, *_key(key), store=_STORE)
        if not rows:
            return None
        return read_parts(key, rows[0])

    async def prefetch_turn(
        self, key: SessionKey, *, parent_turn_id: str | None, now: datetime, seconds: float
    ) -> int:
        """Read in one round trip, within ``seconds``, the state the turn of ``key`` will read:
        what the tenant's last turn read (:mod:`.turn_reads`); how many reads were. The turn's
        reads in this context are then served from it, once each, while nothing is written."""
        turn = TurnKey(key.agent_id, key.user_id, key.session_id, parent_turn_id, now)
        return await self.database.prefetch_turn(turn, seconds)

    async def save(self, state: SessionState) -> SessionState:
        async def run(connection: Connection) -> SessionState:
            saved = await save_in(connection, state)
            if saved is None:
                stored = await connection.fetchval(
                    f"SELECT version FROM wm_sessions WHERE {_KEY}", *_key(state.key)
                )
                raise ConflictError(
                    f"session {state.key.session_id!r} is at version {stored or 0}, "
                    f"not {state.version}: reload and retry",
                    store=_STORE,
                )
            return saved

        return await self.database.write_one(run, store=_STORE)  # the conflict's read: no write

    async def recent_sessions(
        self, tenant: Tenant, *, since: datetime, limit: int
    ) -> list[SessionState]:
        if limit <= 0:
            return []

        async def run(connection: Connection) -> list[SessionState]:
            rows = await connection.fetch(
                f"SELECT {PARTS} FROM wm_sessions WHERE agent_id = $1 AND user_id = $2"
                ' AND updated_at >= $3 ORDER BY updated_at DESC, session_id COLLATE "C" DESC'
                " LIMIT $4",
                tenant.agent_id,
                tenant.user_id,
                since,
                limit,
            )
            return readable(rows, _joined, store=_STORE)

        return await self.database.read(run, store=_STORE)

    async def sessions(
        self, agent_id: str, *, user_id: str | None = None, containing: Sequence[str] = ()
    ) -> list[SessionKey]:
        async def run(connection: Connection) -> list[SessionKey]:
            rows = await connection.fetch(
                "SELECT agent_id, user_id, session_id FROM wm_sessions"
                " WHERE agent_id = $1 AND ($2::text IS NULL OR user_id = $2)"
                " AND (cardinality($3::text[]) = 0"
                " OR EXISTS (SELECT 1 FROM unnest($3::text[]) AS t(mark)"
                " WHERE strpos(body, t.mark) > 0 OR strpos(buffer, t.mark) > 0))",
                agent_id,
                user_id,
                list(containing),
            )
            return [SessionKey(agent_id=r[0], user_id=r[1], session_id=r[2]) for r in rows]

        return await self.database.read(run, store=_STORE)

    async def erase(self, tenant: Tenant) -> int:
        return await self.database.count(
            erase_statement("wm_sessions"), tenant.agent_id, tenant.user_id, store=_STORE
        )


def _key(key: SessionKey) -> tuple[str, str, str]:
    return (key.agent_id, key.user_id, key.session_id)
