"""Taking a SQLite file built by this prefrontal back to an older schema, for migration tests."""

from __future__ import annotations

import sqlite3

from prefrontal.stores.durable import MEMORY_TABLES
from prefrontal.stores.sqlite.migrations import _rebuilt_term_statistics
from prefrontal.stores.sqlite.vectors import change_log


def to_schema_7(connection: sqlite3.Connection) -> None:
    """Undo schema 8: no impact index, nor its triggers."""
    for name in MEMORY_TABLES:
        for trigger in ("insert", "delete", "update"):
            connection.execute(f"DROP TRIGGER {name}_impacts_{trigger}")
        connection.execute(f"DROP TABLE {name}_impacts")


def to_schema_6(connection: sqlite3.Connection) -> None:
    """Undo schemas 8 and 7: the deletion log unpruned again (schema 5's deletion trigger)."""
    to_schema_7(connection)
    for name in MEMORY_TABLES:
        connection.execute(f"DROP TRIGGER {name}_change_delete")
        (deletion,) = [s for s in change_log(name) if f"{name}_change_delete" in s]
        connection.execute(deletion)
        connection.execute(f"ALTER TABLE {name}_stats DROP COLUMN pruned")


def to_schema_5(connection: sqlite3.Connection) -> None:
    """Undo schemas 8 to 6: the memory tables' BM25 statistics global again, from the items.

    Set ``user_version`` to 5 (or lower, after :func:`to_schema_4`) and
    migrating forward runs migrations 6 to 8 again.
    """
    to_schema_6(connection)
    for name in MEMORY_TABLES:
        connection.execute(f"DROP TABLE {name}_agent_stats")
        connection.execute(f"ALTER TABLE {name}_stats ADD COLUMN docs INTEGER NOT NULL DEFAULT 0")
        connection.execute(f"ALTER TABLE {name}_stats ADD COLUMN tokens INTEGER NOT NULL DEFAULT 0")
        for statement in _rebuilt_term_statistics(name):
            connection.execute(statement)


def to_schema_4(connection: sqlite3.Connection) -> None:
    """Undo schemas 8 to 5 (the last: the change counter, stamps and deletion log).

    A file built now and then set to an older ``user_version`` is then that
    version's layout again, so migrating it forward runs migrations 5 to 8.
    """
    to_schema_5(connection)
    for name in MEMORY_TABLES:
        for trigger in ("insert", "update", "delete"):
            connection.execute(f"DROP TRIGGER IF EXISTS {name}_change_{trigger}")
        connection.execute(f"DROP INDEX IF EXISTS {name}_by_change")
        connection.execute(f"DROP TABLE IF EXISTS {name}_gone")
        connection.execute(f"ALTER TABLE {name}_items DROP COLUMN changed")
        connection.execute(f"ALTER TABLE {name}_stats DROP COLUMN changes")
