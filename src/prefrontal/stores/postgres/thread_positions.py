"""A thread's last position taken under the thread's lock: one call of a PL/pgSQL function.

An exchange's messages take the positions after the last one in their
thread. Two writers to one thread take them one after the other: each
holds the thread's advisory lock (a transaction-scoped lock on a key of the
table, tenant and thread) while it reads the last position and writes after
it. The lock and the read are one call of ``<name>_thread_last`` (schema
22): the function takes the lock, then reads; PostgreSQL gives each
statement of a volatile function a snapshot of its own under read
committed, so the read sees every row committed by a writer that held the
lock before, as a read sent after the lock would.
"""

from __future__ import annotations

from prefrontal.stores.durable import MEMORY_TABLES


def schema(name: str) -> str:
    """``<name>_thread_last(p_lock, p_agent, p_thread, p_user)``: the advisory lock of key
    ``p_lock`` taken (until the transaction ends), then the highest position in tenant
    (``p_agent``, ``p_user``)'s ``p_thread`` of ``<name>_items``, -1 when it is empty."""
    return f"""CREATE OR REPLACE FUNCTION {name}_thread_last(
            p_lock text, p_agent text, p_thread text, p_user text)
        RETURNS integer LANGUAGE plpgsql VOLATILE AS $$
        BEGIN
            PERFORM pg_advisory_xact_lock(hashtextextended(p_lock, 0));
            RETURN coalesce((SELECT max(m.position) FROM {name}_items AS m
                WHERE m.agent_id = p_agent AND m.thread_id = p_thread AND m.user_id = p_user),
                -1);
        END
        $$"""


SCHEMA = tuple(schema(name) for name in MEMORY_TABLES)
"""What schema 22 creates: the function of each memory table."""


def call(name: str, first: int) -> str:
    """SQL calling ``<name>_thread_last`` with parameters ``$first`` on (the lock's key, the
    agent, the thread, the user)."""
    lock, agent, thread, owner = (f"${first + n}" for n in range(4))
    return f"{name}_thread_last({lock}::text, {agent}::text, {thread}::text, {owner}::text)"
