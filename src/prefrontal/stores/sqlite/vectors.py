"""The change log vector search follows on SQLite: a counter, per-row stamps, deletions.

Schema 5 gives each memory table a change counter (in ``<name>_stats``),
stamps every item with the count of its last change of anything vector
search reads (owner, scope, kind, expiry, supersession, the vector) and logs
each deletion in ``<name>_gone``; since schema 7 the log keeps about the
last :data:`KEPT_DELETIONS` changes' deletions. The vector files
(:mod:`prefrontal.stores.sqlite.vector_file`) apply, before each search,
only the rows stamped and the deletions logged since the count they
reflect, and are rebuilt from every row when that count is older than what
the log holds.
"""

from __future__ import annotations

KEPT_DELETIONS = 10_000
"""The deletion log keeps the deletions of about the last this many changes."""


def pruned_change_log(name: str) -> tuple[str, ...]:
    """Schema 7 for memory table ``name``: the deletion log pruned as it grows.

    Each deletion also drops the log's entries older than
    :data:`KEPT_DELETIONS` changes, and records that horizon in
    ``<name>_stats.pruned``: a process whose vectors are older than the
    horizon reads them all again (:class:`~.vector_file.VectorFile`) instead of
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
