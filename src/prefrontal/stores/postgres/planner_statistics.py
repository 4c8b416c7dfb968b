"""What PostgreSQL's planner statistics may hold of a user's records, and how erase clears them.

``ANALYZE`` (run by autovacuum as tables change) samples rows and keeps, per
column, its most common values and a histogram of the rest in
``pg_statistic`` (readable as ``pg_stats``): a copy of the sampled text that
deleting the rows does not remove. Two rules keep the users' text out of it:

- the ``body`` column of every table (the record as JSON: every text a
  person or a model wrote) keeps no statistics at all (schema 13,
  :data:`WITHOUT_TEXT`): nothing filters on it, so the planner loses
  nothing;
- an erase ends by analysing every table again (:data:`ANALYZE`), so the
  columns that do keep statistics (ids, analysed terms, which plan the
  searches) count only the rows that are left.

A forget leaves those columns' statistics as they are until the next
``ANALYZE`` (autovacuum's, or an erase's): a forgotten memory's analysed
terms may stay among a column's most common elements until then.
"""

from __future__ import annotations

from prefrontal.stores.durable import MEMORY_TABLES

TABLES = (
    "profiles",
    "frontal_items",
    "conversation_turns",
    "conversation_summaries",
    "scratch_entries",
    "wm_sessions",
    "traces",
    *(f"{name}_items" for name in MEMORY_TABLES),
    *(f"{name}_terms" for name in MEMORY_TABLES),
    *(f"{name}_owner_stats" for name in MEMORY_TABLES),
    "session_items",
    *(f"{name}_versions" for name in MEMORY_TABLES),
    *(f"{name}_recalls" for name in MEMORY_TABLES),
)
"""Every table holding records of users, or terms and ids drawn from them."""

_WITH_BODY = TABLES[: 7 + len(MEMORY_TABLES)]

WITHOUT_TEXT = tuple(
    statement
    for table in _WITH_BODY
    for statement in (
        f"ALTER TABLE {table} ALTER COLUMN body SET STATISTICS 0",
        f"ALTER TABLE {table} ALTER COLUMN body TYPE text",
    )
)
"""Schema 13: no statistics for any ``body`` column from now on, and those kept until now
dropped (a change of a column's type drops its statistics; to ``text`` from ``text`` it
rewrites nothing)."""

ANALYZE = f"ANALYZE {', '.join(TABLES)}"
"""Every table analysed again: what an erase runs last."""
