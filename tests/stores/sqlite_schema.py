"""Taking a SQLite file built by this prefrontal back to an older schema, for migration tests."""

from __future__ import annotations

import sqlite3

from prefrontal.stores.durable import MEMORY_TABLES
from prefrontal.stores.sqlite.migrations import (
    _agent_index_new,
    _agent_term_statistics,
    _empty_terms_dropped,
    _impact_index,
    _memory_schema,
    _rebuilt_term_statistics,
    _visibility_indexed,
)
from prefrontal.stores.sqlite.vectors import change_log


def to_schema_11(connection: sqlite3.Connection) -> None:
    """Undo schema 12: term statistics per agent again (schema 11's triggers), from the items."""
    for name in MEMORY_TABLES:
        vocab = f"{name}_terms"
        for trigger in ("insert", "delete", "update"):
            connection.execute(f"DROP TRIGGER {name}_index_{trigger}")
        connection.execute(f"DROP TABLE {name}_owner_stats")
        connection.execute(f"DROP TABLE {vocab}")
        for statement in _agent_term_statistics(name):
            if statement.startswith((f"CREATE TABLE {vocab}", f"INSERT INTO {vocab}")):
                connection.execute(statement)
        for statement in _visibility_indexed(name):
            if statement.startswith(f"CREATE TRIGGER {name}_index_"):
                connection.execute(statement)


def to_schema_10(connection: sqlite3.Connection) -> None:
    """Undo schemas 12 and 11: full-text indexes without the ``tenant`` column, nor it on the
    items."""
    to_schema_11(connection)
    for name in MEMORY_TABLES:
        items, fts = f"{name}_items", f"{name}_fts"
        for kind in ("index", "impacts"):
            for trigger in ("insert", "delete", "update"):
                connection.execute(f"DROP TRIGGER {name}_{kind}_{trigger}")
        connection.execute(f"DROP TABLE {fts}")
        connection.execute(f"DROP TABLE {name}_impacts")
        connection.execute(f"ALTER TABLE {items} DROP COLUMN tenant")
        (create,) = [s for s in _memory_schema(name) if f"CREATE VIRTUAL TABLE {fts}" in s]
        connection.execute(create)
        connection.execute(f"INSERT INTO {fts} ({fts}) VALUES ('rebuild')")
        connection.execute(
            f"CREATE TRIGGER {name}_index_insert AFTER INSERT ON {items}"
            f" BEGIN {_agent_index_new(name)} END"
        )
        for statement in (*_empty_terms_dropped(name), *_impact_index(name)):
            connection.execute(statement)


def to_schema_7(connection: sqlite3.Connection) -> None:
    """Undo schemas 11 to 8: no impact index, nor its triggers."""
    to_schema_10(connection)
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
