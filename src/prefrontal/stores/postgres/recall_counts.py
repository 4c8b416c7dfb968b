"""PostgreSQL: the recall counts of a memory store's items, kept beside the items.

Every turn counts the items that made it into its context (their
``recall_count`` one up, ``last_recalled_at`` the turn's time): some hundred
rows a turn. Written into ``<name>_items`` each would be a new version of a
wide row (its body, arrays and generated keys, its triggers), often on
another page, with every index entry written again and the dead version left
for the term index to skip. Since schema 19 a recall writes a row of
``<name>_recalls`` instead: the item's key and its two counters, nothing else.

What a read gives for an item is its ``<name>_recalls`` row when it has one,
else the counters of its own row (:data:`COUNTED`): a put writes the
counters it is given into the item's row and drops its ``<name>_recalls``
row (a trigger, in the same statement), a delete or erase drops it too, so
a count is never left for an item that is gone or was given a count anew.
The row holds no text of the user's: ids and two numbers.
"""

from __future__ import annotations

COLUMNS = "recall_count, last_recalled_at"
"""The item's columns a put writes and :data:`COUNTED` reads past."""


def table(name: str) -> str:
    """The recall counts of memory table ``name``."""
    return f"{name}_recalls"


COUNTED = (
    "coalesce(r.recall_count, m.recall_count), coalesce(r.last_recalled_at, m.last_recalled_at)"
)
"""SQL: item ``m``'s ``recall_count, last_recalled_at``, its recall row ``r`` (:func:`joined`)
first."""


def joined(name: str) -> str:
    """SQL: item ``m``'s recall row as ``r`` (all NULL when it has none), to follow the
    ``FROM`` item of ``<name>_items AS m``."""
    return f"""LEFT JOIN {table(name)} AS r
            ON r.agent_id = m.agent_id AND r.item_id = m.item_id AND r.user_id = m.user_id"""


def record(name: str, chosen: str) -> str:
    """The statement counting a recall of the items of ``<name>_items AS m`` that ``chosen``
    (an SQL condition on ``m``) picks, at time ``$3``: each one's recall row one up from what
    a read gives, made when it has none."""
    return f"""
            INSERT INTO {table(name)} AS r (agent_id, item_id, user_id, {COLUMNS})
            SELECT m.agent_id, m.item_id, m.user_id, m.recall_count + 1, $3
            FROM {name}_items AS m WHERE {chosen}
            ON CONFLICT (agent_id, item_id, user_id) DO UPDATE
            SET recall_count = r.recall_count + 1, last_recalled_at = excluded.last_recalled_at"""


def schema(name: str) -> tuple[str, ...]:
    """Schema 19 for memory table ``name``: its recall rows, dropped by a put or a delete.

    The counters an item's row holds stay what a read gives until its first
    recall from now on; nothing is copied. Each statement may run again (a schema
    taken back for a migration test).
    """
    items, recalls = f"{name}_items", table(name)
    key = "agent_id = old.agent_id AND item_id = old.item_id AND user_id = old.user_id"
    return (
        f"""CREATE TABLE IF NOT EXISTS {recalls} (
            agent_id text NOT NULL,
            item_id text NOT NULL,
            user_id text NOT NULL,
            recall_count bigint NOT NULL,
            last_recalled_at timestamptz NOT NULL,
            PRIMARY KEY (agent_id, item_id, user_id)
        ) WITH (fillfactor = 50)""",
        f"""CREATE OR REPLACE FUNCTION {recalls}_dropped() RETURNS trigger
            LANGUAGE plpgsql SET search_path FROM CURRENT AS $body$
            BEGIN
                DELETE FROM {recalls} WHERE {key};
                RETURN NULL;
            END
            $body$""",
        f"DROP TRIGGER IF EXISTS {recalls}_put ON {items}",
        f"""CREATE TRIGGER {recalls}_put AFTER UPDATE OF {COLUMNS} ON {items}
            FOR EACH ROW EXECUTE FUNCTION {recalls}_dropped()""",
        f"DROP TRIGGER IF EXISTS {recalls}_dropped ON {items}",
        f"""CREATE TRIGGER {recalls}_dropped AFTER DELETE ON {items}
            FOR EACH ROW EXECUTE FUNCTION {recalls}_dropped()""",
    )
