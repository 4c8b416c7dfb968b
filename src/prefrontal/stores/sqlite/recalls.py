"""SQLite: a memory store's recalls, counted in a narrow table beside the items.

A turn records the recall of every item its context showed
(:meth:`~prefrontal.stores.long_term.MemoryStore.record_recall`): some
sixty items, each on a page of its own in ``<name>_items`` (an item's row
holds its record and terms, a kilobyte or so). Counting them in the items'
rows rewrote each of those pages at every turn: about sixty pages more in
the write-ahead log a turn, and the readers of the next turns reading them
back from the log instead of the mapped file.

``<name>_recalls`` holds, per item row (``item_row``, the item's row id),
the recalls counted since the item was last put (``added``) and the time
of the last one (``at``): a dozen bytes a row, a few hundred rows a page.
What an item reads is its row's ``recall_count`` plus ``added``, and
``at`` when the item was recalled since it was put, its row's
``last_recalled_at`` otherwise (:func:`item_columns`): what counting in
the row gives. A put that sets the item's counters (every put does) and a
delete (forget, erase, a store's delete) drop its recall row in the same
statement, by trigger, so a row id used again never inherits one.
"""

from __future__ import annotations


def recalls_schema(name: str) -> tuple[str, ...]:
    """``name``'s recalls table and the two triggers that drop a row with its item's counters
    (each statement may run again: a file taken back to an older schema in a migration test)."""
    items, recalls = f"{name}_items", f"{name}_recalls"
    return (
        f"""CREATE TABLE IF NOT EXISTS {recalls} (
            item_row INTEGER PRIMARY KEY,
            added INTEGER NOT NULL,
            at INTEGER NOT NULL)""",
        f"DROP TRIGGER IF EXISTS {recalls}_reset",
        f"""CREATE TRIGGER {recalls}_reset
            AFTER UPDATE OF recall_count, last_recalled_at ON {items} BEGIN
                DELETE FROM {recalls} WHERE item_row = new.rowid;
            END""",
        f"DROP TRIGGER IF EXISTS {recalls}_dropped",
        f"""CREATE TRIGGER {recalls}_dropped AFTER DELETE ON {items} BEGIN
                DELETE FROM {recalls} WHERE item_row = old.rowid;
            END""",
    )


def item_columns(name: str) -> str:
    """SQL of the columns :func:`prefrontal.stores.sqlite.memory._item` reads, in its order
    (``body, superseded_by, recall_count, last_recalled_at, embedding``), of item ``m`` of
    ``name``'s items, its recalls counted in."""
    recalled = f"SELECT {{}} FROM {name}_recalls AS r WHERE r.item_row = m.rowid"
    return (
        "m.body, m.superseded_by,"
        f" m.recall_count + coalesce(({recalled.format('r.added')}), 0),"
        f" coalesce(({recalled.format('r.at')}), m.last_recalled_at), m.embedding"
    )


def record_sql(name: str, chosen: str) -> str:
    """SQL: one more recall, at ``:at``, of each item ``m`` of ``name``'s items that
    ``chosen`` (an SQL condition on ``m``) selects."""
    return f"""
        INSERT INTO {name}_recalls (item_row, added, at)
        SELECT m.rowid, 1, :at FROM {name}_items AS m WHERE {chosen}
        ON CONFLICT (item_row) DO UPDATE SET added = added + 1, at = excluded.at"""
