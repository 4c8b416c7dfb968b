"""PostgreSQL: the recall counts of a memory store's items, kept beside the items.

Every turn counts the items that made it into its context (their
``recall_count`` one up, ``last_recalled_at`` the turn's time): some hundred
rows a turn. Written into ``<name>_items`` each would be a new version of a
wide row (its body, arrays and generated keys, its triggers), often on
another page, with every index entry written again and the dead version left
for the term index to skip. Since schema 19 a recall writes a row of
``<name>_recalls`` instead: the item's key and its two counters, nothing else.

What a read gives for an item is its ``<name>_recalls`` row when it has one,
else the counters of its own row (:func:`counted`): a put writes the
counters it is given into the item's row and drops its ``<name>_recalls``
row (a trigger, in the same statement), a delete or erase drops it too, so
a count is never left for an item that is gone or was given a count anew.
A recall that read an item's counters before a put of it committed, and
writes after, counts from what it read (an update of the item's row would
have counted from the put's). The row holds no text of the user's: ids and
two numbers.
"""

from __future__ import annotations

COLUMNS = "recall_count, last_recalled_at"
"""The item's columns a put writes and :func:`counted` reads past."""


def table(name: str) -> str:
    """The recall counts of memory table ``name``."""
    return f"{name}_recalls"


def _of_item(name: str, column: str) -> str:
    return f"""(SELECT r.{column} FROM {table(name)} AS r
            WHERE r.agent_id = m.agent_id AND r.item_id = m.item_id AND r.user_id = m.user_id)"""


def counted(name: str) -> str:
    """SQL: item ``m``'s ``recall_count, last_recalled_at``, its recall row's first.

    Each a lookup of the recall row by its whole key, per item read: its cost
    follows the items read, whatever the planner knows of the recall rows (a
    join may be planned by the agent alone, and read all of its recall rows
    for every item).
    """
    return (
        f"coalesce({_of_item(name, 'recall_count')}, m.recall_count), "
        f"coalesce({_of_item(name, 'last_recalled_at')}, m.last_recalled_at)"
    )


def looked_up(name: str) -> str:
    """SQL: item ``m`` joined with its recall row as ``rc`` (all NULL when it has none), to
    read with :data:`LOOKED_UP`: one lookup of the recall row by its whole key per item, its
    two counters together (:func:`counted` looks the row up once per counter).

    The subquery is never flattened into a join (``OFFSET 0``), so its cost follows the
    items read, whatever the planner knows of the recall rows.
    """
    return f"""LEFT JOIN LATERAL (
            SELECT r.recall_count, r.last_recalled_at FROM {table(name)} AS r
            WHERE r.agent_id = m.agent_id AND r.item_id = m.item_id AND r.user_id = m.user_id
            OFFSET 0) AS rc ON true"""


LOOKED_UP = (
    "coalesce(rc.recall_count, m.recall_count), coalesce(rc.last_recalled_at, m.last_recalled_at)"
)
"""SQL: item ``m``'s ``recall_count, last_recalled_at`` joined by :func:`looked_up`, its recall
row's first: what :func:`counted` gives."""


def record(name: str, given: str) -> str:
    """The statement counting a recall, at time ``$3``, of the items ``given`` reads (a
    query of their ``agent_id, item_id, user_id, recall_count``): each one's recall row
    one up from what a read gives, made when it has none."""
    return f"""
            INSERT INTO {table(name)} AS r (agent_id, item_id, user_id, {COLUMNS})
            SELECT g.agent_id, g.item_id, g.user_id, g.recall_count + 1, $3
            FROM ({given}) AS g
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
