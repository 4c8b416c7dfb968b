"""SQLite: a memory store's keyset pages and the versions its puts replaced.

``<name>_versions`` holds the record (``body``) of each replaced version,
written by a trigger when a put changes an item's ``body`` (every field but
those that change in place:
:data:`~prefrontal.stores.memory_pages.IN_PLACE`), and deleted by another
when the item is deleted or erased, in the same transaction. Pages read the
items' unique index ``(agent_id, item_id, user_id)`` backwards from the
position a page stopped at (a row-value comparison the index answers).
"""

from __future__ import annotations

from prefrontal.stores.sqlite.recalls import item_columns


def versions_schema(name: str) -> tuple[str, ...]:
    """The table of ``name``'s replaced versions and the two triggers that keep it (each
    statement may run again: a file taken back to an older schema in a migration test)."""
    items, versions = f"{name}_items", f"{name}_versions"
    return (
        f"""CREATE TABLE IF NOT EXISTS {versions} (
            rowid INTEGER PRIMARY KEY,
            agent_id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            item_id TEXT NOT NULL,
            body TEXT NOT NULL)""",
        f"""CREATE INDEX IF NOT EXISTS {versions}_of
            ON {versions} (agent_id, user_id, item_id, rowid)""",
        f"DROP TRIGGER IF EXISTS {versions}_kept",
        f"""CREATE TRIGGER {versions}_kept AFTER UPDATE OF body ON {items}
            WHEN old.body IS NOT new.body BEGIN
                INSERT INTO {versions} (agent_id, user_id, item_id, body)
                VALUES (old.agent_id, old.user_id, old.item_id, old.body);
            END""",
        f"DROP TRIGGER IF EXISTS {versions}_dropped",
        f"""CREATE TRIGGER {versions}_dropped AFTER DELETE ON {items} BEGIN
                DELETE FROM {versions} WHERE agent_id = old.agent_id
                    AND user_id = old.user_id AND item_id = old.item_id;
            END""",
    )


def page_sql(name: str, *, below: bool, inclusive: bool) -> str:
    """A page of the items ``:agent``/``:user`` may see, newest id first, at most ``:limit``.

    ``below``: only those under ``(:below_id, :below_user)`` (or equal, ``inclusive``);
    ``:kinds`` (a JSON array or NULL) and ``:scope`` (or NULL) filter.
    """
    after = ""
    if below:
        operator = "<=" if inclusive else "<"
        after = f"AND (m.item_id, m.user_id) {operator} (:below_id, :below_user)"
    return f"""
        SELECT {item_columns(name)} FROM {name}_items AS m
        WHERE m.agent_id = :agent AND (m.scope = 'shared' OR m.user_id = :user) {after}
          AND (:kinds IS NULL OR m.kind IN (SELECT value FROM json_each(:kinds)))
          AND (:scope IS NULL OR m.scope = :scope)
        ORDER BY m.item_id DESC, m.user_id DESC
        LIMIT :limit"""


def versions_sql(name: str) -> str:
    """The bodies of ``:agent``/``:user``'s item ``:item``'s replaced versions, oldest first."""
    return f"""
        SELECT body FROM {name}_versions
        WHERE agent_id = :agent AND user_id = :user AND item_id = :item
        ORDER BY rowid"""
