"""A thread's last position taken under the thread's lock: one call of a PL/pgSQL function.

An exchange's messages take the positions after the last one in their
thread. Two writers to one thread take them one after the other: each
holds the thread's advisory lock (a transaction-scoped lock on a key of the
table, tenant and thread) while it reads the last position and writes after
it. The lock and the read are one call of ``<name>_thread_last`` (schema
22): the function takes the lock, then reads; PostgreSQL gives each
statement of a volatile function a snapshot of its own under read
committed, so the read sees every row committed by a writer that held the
lock before, as a read sent after the lock would. Since schema 24 the read
walks the thread index down from the highest position (:func:`last_read`).
"""

from __future__ import annotations

from prefrontal.stores.durable import MEMORY_TABLES


def schema(name: str, last: str | None = None) -> str:
    """``<name>_thread_last(p_lock, p_agent, p_thread, p_user)``: the advisory lock of key
    ``p_lock`` taken (until the transaction ends), then the highest position in tenant
    (``p_agent``, ``p_user``)'s ``p_thread`` of ``<name>_items``, -1 when it is empty
    (``last``: the SQL of that position, or NULL; :func:`last_read` unless given)."""
    read = last_read(name) if last is None else last
    return f"""CREATE OR REPLACE FUNCTION {name}_thread_last(
            p_lock text, p_agent text, p_thread text, p_user text)
        RETURNS integer LANGUAGE plpgsql VOLATILE AS $$
        BEGIN
            PERFORM pg_advisory_xact_lock(hashtextextended(p_lock, 0));
            RETURN coalesce(({read}), -1);
        END
        $$"""


def last_read(name: str) -> str:
    """SQL: the highest position of the tenant's thread, NULL when it has none.

    The thread's positions read from the highest down by the thread index, to the first
    of the tenant's: the function keeps its plan once made, often while the table was a
    few rows, and only the thread index gives the positions in that order (any other
    index of the agent's rows would be read whole, then sorted), so the plan reads it
    whatever the table's size and the planner's statistics.
    """
    return f"""SELECT m.position FROM {name}_items AS m
                WHERE m.agent_id = p_agent AND m.thread_id = p_thread AND m.user_id = p_user
                  AND m.position IS NOT NULL
                ORDER BY m.position DESC LIMIT 1"""


def _max_read(name: str) -> str:
    """Schema 22's read of the last position: the highest of the thread's, as an aggregate."""
    return f"""SELECT max(m.position) FROM {name}_items AS m
                WHERE m.agent_id = p_agent AND m.thread_id = p_thread AND m.user_id = p_user"""


SCHEMA = tuple(schema(name, _max_read(name)) for name in MEMORY_TABLES)
"""What schema 22 creates: the function of each memory table."""

LAST_BY_INDEX = tuple(schema(name) for name in MEMORY_TABLES)
"""Schema 24: each function's read of the last position by the thread index
(:func:`last_read`)."""


def call(name: str, first: int) -> str:
    """SQL calling ``<name>_thread_last`` with parameters ``$first`` on (the lock's key, the
    agent, the thread, the user)."""
    lock, agent, thread, owner = (f"${first + n}" for n in range(4))
    return f"{name}_thread_last({lock}::text, {agent}::text, {thread}::text, {owner}::text)"
