"""SQLite working-memory store: one versioned buffer state per session.

A state's body is written and read as its UTF-8 bytes (bound as a blob and
cast to text, read cast to a blob): the column holds the same text, and a
state of tens of kilobytes, which quotes the user's words, is neither
decoded into a Python string nor encoded back (as text, a single character
beyond Latin-1 makes it two bytes a character to decode, hash and encode).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import datetime
from functools import partial

from pydantic_core import PydanticSerializationError

from prefrontal.errors import ConflictError, ItemRejectedError
from prefrontal.stores.durable import SharesDatabase, read_one, readable
from prefrontal.stores.sqlite import decoded
from prefrontal.stores.sqlite.database import Database, erase, to_us
from prefrontal.stores.tenancy import Tenant
from prefrontal.stores.working_memory import SessionKey, SessionState

_STORE = "working_memory"
_KEY = "agent_id = ? AND user_id = ? AND session_id = ?"


def load_in(connection: sqlite3.Connection, key: SessionKey) -> SessionState | None:
    """The saved state of ``key``, read inside the caller's transaction."""
    row = connection.execute(_LOAD, _key(key)).fetchone()
    if row is None:
        return None
    return read_one(row[0], partial(decoded.session_states, _key(key)), store=_STORE)


def save_in(connection: sqlite3.Connection, state: SessionState) -> SessionState:
    """Save ``state`` inside the caller's transaction if its version is the stored one.

    Returns the state with its new version; raises :class:`ConflictError`
    (having written nothing) when another save came first.
    """
    saved = state.model_copy(update={"version": state.version + 1})
    body = _encoded(saved)
    row = connection.execute(
        f"SELECT version FROM wm_sessions WHERE {_KEY}", _key(state.key)
    ).fetchone()
    stored = 0 if row is None else int(row[0])
    if stored != state.version:
        raise ConflictError(
            f"session {state.key.session_id!r} is at version {stored}, "
            f"not {state.version}: reload and retry",
            store=_STORE,
        )
    connection.execute(_SAVE, (*_key(state.key), saved.version, to_us(saved.updated_at), body))
    return decoded.session_states.remember(_key(state.key), body, saved)


class SqliteWorkingMemoryStore(SharesDatabase[Database]):
    """States in ``wm_sessions``; the version check and the write share one transaction."""

    async def load(self, key: SessionKey) -> SessionState | None:
        return await self.database.read(lambda c: load_in(c, key), store=_STORE, one_statement=True)

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
                "SELECT CAST(body AS BLOB) FROM wm_sessions WHERE agent_id = ? AND user_id = ?"
                " AND updated_at >= ? ORDER BY updated_at DESC, session_id DESC LIMIT ?",
                params,
            ).fetchall()
            return readable((b for (b,) in rows), SessionState.model_validate_json, store=_STORE)

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
                " OR EXISTS (SELECT 1 FROM json_each(?3) WHERE instr(body, value) > 0))",
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


_LOAD = f"SELECT CAST(body AS BLOB) FROM wm_sessions WHERE {_KEY}"
"""A session's body as its UTF-8 bytes (the module docstring)."""
_SAVE = (
    "INSERT OR REPLACE INTO wm_sessions (agent_id, user_id, session_id, version, updated_at,"
    " body) VALUES (?, ?, ?, ?, ?, CAST(? AS TEXT))"
)
"""A session's state written, its body bound as UTF-8 bytes and stored as text."""


def _encoded(state: SessionState) -> bytes:
    """``state`` as the UTF-8 of ``state.model_dump_json()``; text that is not valid UTF-8 is an
    :class:`ItemRejectedError`, as every store's."""
    try:
        return state.__pydantic_serializer__.to_json(state)
    except PydanticSerializationError as error:
        raise ItemRejectedError(f"cannot store SessionState: {error}", store=_STORE) from error
