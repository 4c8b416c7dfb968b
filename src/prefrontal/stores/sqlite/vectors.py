"""The vectors of one SQLite memory table held in memory, kept in step through a change log.

Schema version 5 gives each memory table a change counter (in
``<name>_stats``), stamps every item with the count of its last change of
anything vector search reads (owner, scope, kind, expiry, supersession,
the vector) and logs each deletion in ``<name>_gone``; since schema 7 the
log keeps about the last :data:`KEPT_DELETIONS` changes' deletions, and a
process whose vectors are older than what it holds reads them all again. Before each search,
:meth:`SqliteVectors.follow` reads the counter inside the search's read
transaction and, when it moved, only the rows stamped since and the
deletions logged since: writes from any connection or process show at the
next search, and a process that opens a file reads every vector once, at
its first search.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from prefrontal.retrieval.vector_index import FOREVER, Guarded, StoredVector


class SqliteVectors(Guarded):
    """Every stored vector of one memory table, by agent and size (see the module docstring)."""

    def __init__(self, name: str, key: str, *, half: bool | None = None) -> None:
        super().__init__(half=half)
        items, stats = f"{name}_items", f"{name}_stats"
        self._changes = f"SELECT changes, pruned FROM {stats}"
        self._changed = f"""
            SELECT m.rowid, {key}, m.agent_id, m.user_id, m.scope, m.kind, m.valid_until,
                m.superseded_by IS NOT NULL, m.embedding
            FROM {items} AS m WHERE m.changed > :seen ORDER BY m.rowid"""
        self._gone = f"SELECT row FROM {name}_gone WHERE changed > :seen"
        self._seen = -1

    def follow(self, connection: sqlite3.Connection) -> bool:
        """Bring the vectors to the caller's snapshot; ``False`` if it is older than they are.

        The caller holds :attr:`lock` and is inside a read transaction.
        """
        changes, pruned = connection.execute(self._changes).fetchone()
        if changes == self._seen:
            return True
        if changes < self._seen:
            return False
        if self._seen < pruned:  # deletions it has not seen may be gone from the log
            self.clear()
            self._seen = -1
        for (rowid,) in connection.execute(self._gone, {"seen": self._seen}):
            self.drop(rowid)
        by_agent: dict[str, list[StoredVector]] = {}
        for row in connection.execute(self._changed, {"seen": self._seen}):
            self.drop(row[0])
            if row[8] is not None:
                by_agent.setdefault(row[2], []).append(_stored(row))
        for agent, vectors in by_agent.items():
            self.put(agent, vectors)
        self._seen = changes
        return True


def _stored(row: Sequence[Any]) -> StoredVector:
    rowid, key, _, user, scope, kind, until, superseded, blob = row
    return StoredVector(
        row=rowid,
        key=key,
        user=user,
        shared=scope == "shared",
        superseded=bool(superseded),
        until=FOREVER if until is None else int(until),
        kind=kind,
        vector=bytes(blob),
    )


KEPT_DELETIONS = 10_000
"""The deletion log keeps the deletions of about the last this many changes."""


def pruned_change_log(name: str) -> tuple[str, ...]:
    """Schema 7 for memory table ``name``: the deletion log pruned as it grows.

    Each deletion also drops the log's entries older than
    :data:`KEPT_DELETIONS` changes, and records that horizon in
    ``<name>_stats.pruned``: a process whose vectors are older than the
    horizon reads them all again (:meth:`SqliteVectors.follow`) instead of
    missing a deletion the log no longer holds. Existing logs are pruned at
    once.
    """
    stats, gone = f"{name}_stats", f"{name}_gone"
    horizon = f"(SELECT changes FROM {stats}) - {KEPT_DELETIONS}"
    return (
        f"ALTER TABLE {stats} ADD COLUMN pruned INTEGER NOT NULL DEFAULT -1",
        f"DROP TRIGGER {name}_change_delete",
        f"""CREATE TRIGGER {name}_change_delete AFTER DELETE ON {name}_items BEGIN
            UPDATE {stats} SET changes = changes + 1;
            INSERT INTO {gone} (changed, row) VALUES ((SELECT changes FROM {stats}), old.rowid);
            UPDATE {stats} SET pruned = {horizon} WHERE pruned < {horizon};
            DELETE FROM {gone} WHERE changed <= (SELECT pruned FROM {stats});
        END""",
        f"UPDATE {stats} SET pruned = max(pruned, {horizon})",
        f"DELETE FROM {gone} WHERE changed <= (SELECT pruned FROM {stats})",
    )


def change_log(name: str) -> tuple[str, ...]:
    """Schema 5 for memory table ``name``: the change counter, the stamps and the deletion log.

    A write of any column vector search filters on, or of the vector,
    stamps the row with the next count; a deletion logs the row id under
    the next count. Existing rows start stamped 0, so a process's first
    search reads them all.
    """
    items, stats = f"{name}_items", f"{name}_stats"
    stamp = f"""UPDATE {stats} SET changes = changes + 1;
        UPDATE {items} SET changed = (SELECT changes FROM {stats}) WHERE rowid = new.rowid;"""
    return (
        f"ALTER TABLE {stats} ADD COLUMN changes INTEGER NOT NULL DEFAULT 0",
        f"ALTER TABLE {items} ADD COLUMN changed INTEGER NOT NULL DEFAULT 0",
        f"CREATE INDEX {name}_by_change ON {items} (changed)",
        f"CREATE TABLE {name}_gone (changed INTEGER PRIMARY KEY, row INTEGER NOT NULL)",
        change_insert_trigger(name),
        f"""CREATE TRIGGER {name}_change_update AFTER UPDATE OF agent_id, user_id, scope, kind,
            valid_until, superseded_by, embedding ON {items} BEGIN {stamp} END""",
        f"""CREATE TRIGGER {name}_change_delete AFTER DELETE ON {items} BEGIN
            UPDATE {stats} SET changes = changes + 1;
            INSERT INTO {name}_gone (changed, row)
                VALUES ((SELECT changes FROM {stats}), old.rowid);
        END""",
    )


def change_insert_trigger(name: str) -> str:
    """Since schema 5: the trigger stamping a new item of ``name`` with the next change count."""
    items, stats = f"{name}_items", f"{name}_stats"
    stamp = f"""UPDATE {stats} SET changes = changes + 1;
        UPDATE {items} SET changed = (SELECT changes FROM {stats}) WHERE rowid = new.rowid;"""
    return f"CREATE TRIGGER {name}_change_insert AFTER INSERT ON {items} BEGIN {stamp} END"
