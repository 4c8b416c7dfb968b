"""Taking a SQLite file built by this prefrontal back to an older schema, for migration tests."""

from __future__ import annotations

import sqlite3

from prefrontal.stores.durable import MEMORY_TABLES


def without_change_log(connection: sqlite3.Connection) -> None:
    """Drop what schema 5 added (the memory tables' change counter, stamps and deletion log).

    A file built now and then set to an older ``user_version`` is then that
    version's layout again, so migrating it forward runs migration 5 too.
    """
    for name in MEMORY_TABLES:
        for trigger in ("insert", "update", "delete"):
            connection.execute(f"DROP TRIGGER IF EXISTS {name}_change_{trigger}")
        connection.execute(f"DROP INDEX IF EXISTS {name}_by_change")
        connection.execute(f"DROP TABLE IF EXISTS {name}_gone")
        connection.execute(f"ALTER TABLE {name}_items DROP COLUMN changed")
        connection.execute(f"ALTER TABLE {name}_stats DROP COLUMN changes")
