"""PostgreSQL: a memory store's keyset pages and the versions its puts replaced.

``<name>_versions`` holds the record (``body``) of each replaced version,
written by a row trigger when a put changes an item's ``body`` (every field
but those that change in place:
:data:`~prefrontal.stores.memory_pages.IN_PLACE`), and deleted by another
when the item is deleted or erased, in the same transaction. Its ``body``
keeps no planner statistics, as no ``body`` column does
(:mod:`prefrontal.stores.postgres.planner_statistics`). Pages read the index
``<name>_items_listed`` ``(agent_id, item_id, user_id)``, ids compared by
code point (``COLLATE "C"``, as Python compares them), backwards from the
position a page stopped at.
"""

from __future__ import annotations

from prefrontal.stores.postgres.memory_sql import item_columns

_C = 'COLLATE "C"'


def versions_schema(name: str) -> tuple[str, ...]:
    """The table of ``name``'s replaced versions, its triggers, and the index pages read.

    Each statement may run again (a schema taken back for a migration test): the
    triggers name no column, so that an earlier migration may still change one."""
    items, versions = f"{name}_items", f"{name}_versions"
    return (
        f"""CREATE TABLE IF NOT EXISTS {versions} (
            n bigserial PRIMARY KEY,
            agent_id text NOT NULL,
            user_id text NOT NULL,
            item_id text NOT NULL,
            body text NOT NULL)""",
        f"ALTER TABLE {versions} ALTER COLUMN body SET STATISTICS 0",
        f"CREATE INDEX IF NOT EXISTS {versions}_of ON {versions} (agent_id, user_id, item_id, n)",
        f"""CREATE OR REPLACE FUNCTION {versions}_kept() RETURNS trigger
            LANGUAGE plpgsql SET search_path FROM CURRENT AS $body$
            BEGIN
                IF old.body IS DISTINCT FROM new.body THEN
                    INSERT INTO {versions} (agent_id, user_id, item_id, body)
                    VALUES (old.agent_id, old.user_id, old.item_id, old.body);
                END IF;
                RETURN NULL;
            END
            $body$""",
        f"DROP TRIGGER IF EXISTS {versions}_kept ON {items}",
        f"""CREATE TRIGGER {versions}_kept AFTER UPDATE ON {items}
            FOR EACH ROW EXECUTE FUNCTION {versions}_kept()""",
        f"""CREATE OR REPLACE FUNCTION {versions}_dropped() RETURNS trigger
            LANGUAGE plpgsql SET search_path FROM CURRENT AS $body$
            BEGIN
                DELETE FROM {versions} WHERE agent_id = old.agent_id
                    AND user_id = old.user_id AND item_id = old.item_id;
                RETURN NULL;
            END
            $body$""",
        f"DROP TRIGGER IF EXISTS {versions}_dropped ON {items}",
        f"""CREATE TRIGGER {versions}_dropped AFTER DELETE ON {items}
            FOR EACH ROW EXECUTE FUNCTION {versions}_dropped()""",
        f"""CREATE INDEX IF NOT EXISTS {items}_listed
            ON {items} (agent_id, item_id {_C}, user_id {_C})""",
    )


def page_sql(name: str, *, below: bool, inclusive: bool) -> str:
    """A page of the items ``$1``/``$2`` may see, newest id first, at most ``$3``.

    ``$4`` (a text array or NULL) filters the kinds, ``$5`` (or NULL) the scope;
    ``below``: only those under ``($6, $7)`` (or equal, ``inclusive``).
    """
    after = ""
    if below:
        operator = "<=" if inclusive else "<"
        after = f"AND (m.item_id {_C}, m.user_id {_C}) {operator} ($6::text, $7::text)"
    return f"""
        SELECT m.item_id, {item_columns(name)} FROM {name}_items AS m
        WHERE m.agent_id = $1 AND (m.scope = 'shared' OR m.user_id = $2) {after}
          AND ($4::text[] IS NULL OR m.kind = ANY($4::text[]))
          AND ($5::text IS NULL OR m.scope = $5::text)
        ORDER BY m.item_id {_C} DESC, m.user_id {_C} DESC
        LIMIT $3"""


def versions_sql(name: str) -> str:
    """The bodies of ``$1``/``$2``'s item ``$3``'s replaced versions, oldest first."""
    return f"""
        SELECT body FROM {name}_versions
        WHERE agent_id = $1 AND user_id = $2 AND item_id = $3
        ORDER BY n"""
