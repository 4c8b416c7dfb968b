"""The SQLite library the stores run on: a recent one bundled with sqlean.py when installed.

The stores need FTS5's ``secure-delete`` option (SQLite 3.44 and later): a
row removed from a full-text index is removed from the index's pages in
place, its terms and row id gone from the file once the transaction has
committed (the freed bytes zeroed by ``PRAGMA secure_delete``), at the cost
of a write. The SQLite that Python was built with is often older (Debian 12
ships 3.40), so :data:`sqlite3` is ``sqlean.dbapi2`` (the standard module's
code over a bundled, current SQLite, a dependency of prefrontal) when it can
be imported and the standard module otherwise. Every connection of the
stores is made from it, and every SQLite error they raise is one of its
classes: code that catches them uses this module, never ``import sqlite3``.

:data:`DELETES_IN_PLACE` says whether the library has the option; without
it, a removal is scrubbed by rewriting the whole index
(:meth:`~prefrontal.stores.sqlite.database.Database.scrub`).

Importing this module registers, with the module's own adapters, one for
``bytes`` and one for ``None`` that bind each value as it is
(:func:`bind_as_they_are`): the module adapts every parameter that is not an
``int``, ``float``, ``str`` or ``bytearray``, and sqlean's code, finding no
adapter for a type, asks the value and the protocol for ``__adapt__`` and
``__conform__``, raising and clearing an ``AttributeError`` for each: about
a microsecond for every ``None`` and every blob bound (a vector, a column
left empty), a bulk load's many.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlite3
else:
    try:
        from sqlean import dbapi2 as sqlite3
    except ImportError:  # no wheel for this platform: the standard library's SQLite
        import sqlite3

__all__ = [
    "DELETES_IN_PLACE",
    "SECURE_DELETE_SINCE",
    "bind_as_they_are",
    "delete_in_place",
    "deletes_in_place",
    "fts5_tables",
    "sqlite3",
]

SECURE_DELETE_SINCE = (3, 44, 0)
"""The first SQLite whose FTS5 deletes in place (its ``secure-delete`` option)."""

DELETES_IN_PLACE = sqlite3.sqlite_version_info >= SECURE_DELETE_SINCE
"""Whether the library's FTS5 indexes can remove a row's entries in place."""

_AS_THEY_ARE: dict[type, object] = {bytes: bytes, type(None): {}.get}
"""Adapters binding each value as it is, by type: ``bytes(value)`` is ``value`` itself for
``bytes``, and an empty dictionary's ``get`` returns ``None`` for ``None`` (both C calls)."""


def bind_as_they_are() -> None:
    """Register :data:`_AS_THEY_ARE` with the driver's adapters, for each type that has none.

    The same values are bound (a blob, ``NULL``), without the failed attribute look-ups the
    module's search for an adapter makes; an adapter registered before for the type (by the
    application) is kept.
    """
    for kind, adapter in _AS_THEY_ARE.items():
        if (kind, sqlite3.PrepareProtocol) not in sqlite3.adapters:
            sqlite3.register_adapter(kind, adapter)  # type: ignore[arg-type]


bind_as_they_are()


def fts5_tables(connection: sqlite3.Connection) -> list[str]:
    """The names of the FTS5 tables of the connection's main database, in creation order."""
    rows = connection.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table'"
        " AND sql LIKE 'CREATE VIRTUAL TABLE%USING fts5%' ORDER BY rowid"
    )
    return [str(name) for (name,) in rows]


def delete_in_place(connection: sqlite3.Connection) -> None:
    """Turn FTS5's ``secure-delete`` on for every FTS5 table that lacks it (a no-op without it).

    The option is kept in each table's ``_config`` shadow table, so it is set
    once per file; a library older than 3.44 cannot read the tables after
    (the dependency on sqlean.py keeps every process of prefrontal on one
    that can). Runs in the caller's transaction, if any.
    """
    if not DELETES_IN_PLACE:
        return
    for table in fts5_tables(connection):
        if not deletes_in_place(connection, table):
            setting = f'INSERT INTO "{table}" ("{table}", rank) VALUES (?, 1)'
            connection.execute(setting, (_OPTION,))


def deletes_in_place(connection: sqlite3.Connection, table: str) -> bool:
    """Whether FTS5 table ``table`` removes deleted rows' entries in place."""
    if not DELETES_IN_PLACE:
        return False
    config = f'SELECT v FROM "{table}_config" WHERE k = ?'
    row = connection.execute(config, (_OPTION,)).fetchone()
    return row is not None and bool(row[0])


_OPTION = "secure-delete"
"""FTS5's name for deleting in place."""
