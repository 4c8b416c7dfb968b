"""Erasure records: the durable backends keep who was erased, and refuse their writes.

``memory.erase`` records ``(agent_id, user_id)`` in the database's
``erased_tenants`` table before it removes anything. A trigger on every
table that holds a user's records refuses an insert for a recorded user,
in the inserting statement's own transaction, whatever process or
service runs it: so work in flight elsewhere (another worker of
``serve http --workers N``, another service on the same database) cannot
write an erased user back once the erase has returned. The refusal is an
:class:`~prefrontal.errors.ErasedTenantError`.

The record stays until ``memory.readmit(agent_id, user_id)`` removes it:
an erased id is used again only when someone says so, after every old
worker's work is over.
"""

from __future__ import annotations

from prefrontal.stores.durable import MEMORY_TABLES

REFUSED = "prefrontal: erased tenant"
"""The message the triggers raise; the error mapping knows a refusal by it."""

FIRST_TENANT_TABLES = (
    "frontal_items",
    "conversation_turns",
    "conversation_summaries",
    "scratch_entries",
    "wm_sessions",
    "traces",
    *(f"{name}_items" for name in MEMORY_TABLES),
)
"""The tables holding rows owned by one user when erasure records came (their triggers made
then, by one step of each backend's schema)."""

SESSION_ITEMS_TABLE = "session_items"
"""The framework sessions' items: a user's rows too, in a table (and trigger) of a later step."""

TENANT_TABLES = (*FIRST_TENANT_TABLES, SESSION_ITEMS_TABLE)
"""Every table holding rows owned by one user (by ``agent_id`` and ``user_id``)."""


def refused(message: str) -> bool:
    """True when a database error's ``message`` is an erasure record's refusal."""
    return REFUSED in message
