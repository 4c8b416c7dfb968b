"""SQLite working-memory store: one versioned buffer state per session.

A state is stored in two parts (:func:`~prefrontal.stores.working_memory.stored_parts`):
``body``, its JSON without the buffer document, and ``buffer``, the document itself (tens
of kilobytes of JSON), so that the document is never escaped as a string inside the
state's JSON nor unescaped at a load. A row whose ``buffer`` is null (every row written
before schema 20) holds the whole state in ``body``. Both are written and read as their
UTF-8 bytes (bound as blobs and cast to text, read cast to blobs): the columns hold text,
and a state, which quotes the user's words, is not decoded into a Python string at a read
that finds it held (:mod:`.decoded`; as text, a single character beyond Latin-1 makes it
two bytes a character to decode, hash and encode).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import datetime
from functools import partial

from prefrontal.errors import ConflictError
from prefrontal.stores.durable import SharesDatabase, read_one, readable
from prefrontal.stores.sqlite import decoded
from prefrontal.stores.sqlite.database import Database, erase, to_us
from prefrontal.stores.tenancy import Tenant
from prefrontal.stores.working_memory import SessionKey, SessionState, joined, stored_parts

_STORE = "working_memory"
QUICK_BYTES = 256 * 1024
"""The largest state held decoded whose load runs on the event loop's thread: its bytes are
copied out of SQLite and compared with the state held, about a microsecond a few kilobytes."""
_KEY = "agent_id = ? AND user_id = ? AND session_id = ?"


def load_in(connection: sqlite3.Connection, key: SessionKey) -> SessionState | None:
    """The saved state of ``key``, read inside the caller's transaction."""
    row = connection.execute(_LOAD, _key(key)).fetchone()
    if row is None:
        return None
    return read_one(row, partial(decoded.session_states, _key(key)), store=_STORE)


def _saved(key: SessionKey, connection: sqlite3.Connection) -> bool:
    """Whether ``key`` has a saved state (one lookup by key, nothing decoded)."""
    return connection.execute(_SAVED, _key(key)).fetchone() is not None


def loads_quickly(key: SessionKey) -> bool:
    """Whether a read of ``key``'s state may be a quick read (:meth:`Database.read`): its state
    is held decoded and at most :data:`QUICK_BYTES`."""
    held = decoded.session_states.held_bytes(_key(key))
    return held is not None and held <= QUICK_BYTES


def save_in(connection: sqlite3.Connection, state: SessionState) -> SessionState:
    """Save ``state`` inside the caller's transaction if its version is the stored one.

    Returns the state with its new version; raises :class:`ConflictError`
    (having written nothing) when another save came first.
    """
    saved = state.model_copy(update={"version": state.version + 1})
    stored = stored_parts(saved, store=_STORE)
    row = connection.execute(
        f"SELECT version FROM wm_sessions WHERE {_KEY}", _key(state.key)
    ).fetchone()
    version = 0 if row is None else int(row[0])
    if version != state.version:
        raise ConflictError(
            f"session {state.key.session_id!r} is at version {version}, "
            f"not {state.version}: reload and retry",
            store=_STORE,
        )
    row_values = (*_key(state.key), saved.version, to_us(saved.updated_at), *stored)
    connection.execute(_SAVE, row_values)
    return decoded.session_states.remember(_key(state.key), stored, saved)


class SqliteWorkingMemoryStore(SharesDatabase[Database]):
    """States in ``wm_sessions``; the version check and the write share one transaction."""

    async def load(self, key: SessionKey) -> SessionState | None:
        """The saved state of ``key``: a quick read while :func:`loads_quickly` says so (a read
        that finds the state held compares its bytes), a read in a worker thread otherwise (a
        state's decoding, or the copy of a large one, holds the thread for milliseconds).
        Before that read in a worker thread, a quick read by key asks whether the session
        has a state at all: a new session's (none) costs no worker-thread hop."""
        quick = loads_quickly(key)
        if not quick and not await self.database.read(
            partial(_saved, key), store=_STORE, one_statement=True, quick=True
        ):
            return None
        return await self.database.read(
            lambda c: load_in(c, key), store=_STORE, one_statement=True, quick=quick
        )

    async def save(self, state: SessionState) -> SessionState:
        return await self.database.write(lambda c: save_in(c, state), store=_STORE)

    async def recent_sessions(
        self, tenant: Tenant, *, since: datetime, limit: int
    ) -> list[SessionState]:
        if limit <= 0:
            return []
        params = (tenant.agent_id, tenant.user_id, to_us(since), limit)

        def run(connection: sqlite3.Connection) -> list[SessionState]:
            rows = connection.execute(
                f"SELECT {_PARTS} FROM wm_sessions WHERE agent_id = ? AND user_id = ?"
                " AND updated_at >= ? ORDER BY updated_at DESC, session_id DESC LIMIT ?",
                params,
            ).fetchall()
            return readable(rows, _joined, store=_STORE)

        return await self.database.read(run, store=_STORE, one_statement=True)

    async def sessions(
        self, agent_id: str, *, user_id: str | None = None, containing: Sequence[str] = ()
    ) -> list[SessionKey]:
        params = (agent_id, user_id, json.dumps(list(containing)))

        def run(connection: sqlite3.Connection) -> list[SessionKey]:
            rows = connection.execute(
                "SELECT agent_id, user_id, session_id FROM wm_sessions"
                " WHERE agent_id = ?1 AND (?2 IS NULL OR user_id = ?2)"
                " AND (json_array_length(?3) = 0"
                " OR EXISTS (SELECT 1 FROM json_each(?3)"
                " WHERE instr(body, value) > 0 OR instr(buffer, value) > 0))",
                params,
            ).fetchall()
            return [SessionKey(agent_id=a, user_id=u, session_id=s) for a, u, s in rows]

        return await self.database.read(run, store=_STORE, one_statement=True)

    async def erase(self, tenant: Tenant) -> int:
        return await self.database.write(
            lambda connection: erase(connection, "wm_sessions", tenant), store=_STORE
        )


def _key(key: SessionKey) -> tuple[str, str, str]:
    return (key.agent_id, key.user_id, key.session_id)


_PARTS = "CAST(body AS BLOB), CAST(buffer AS BLOB)"
"""A session's stored parts as their UTF-8 bytes (the module docstring)."""
_LOAD = f"SELECT {_PARTS} FROM wm_sessions WHERE {_KEY}"
_SAVED = f"SELECT 1 FROM wm_sessions WHERE {_KEY}"
_SAVE = (
    "INSERT OR REPLACE INTO wm_sessions (agent_id, user_id, session_id, version, updated_at,"
    " body, buffer) VALUES (?, ?, ?, ?, ?, CAST(? AS TEXT), CAST(? AS TEXT))"
)
"""A session's state written, its parts bound as UTF-8 bytes and stored as text (a null
document stays null)."""


def _joined(row: decoded.Stored) -> SessionState:
    return joined(*row)
