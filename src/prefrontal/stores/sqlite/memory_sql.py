"""The SQL of one memory store (episodic or semantic), built once per table name."""

from __future__ import annotations

from prefrontal.stores.sqlite.recalls import item_columns, record_sql

_VISIBLE = "m.agent_id = :agent AND (m.scope = 'shared' OR m.user_id = :user)"
_LIVE = "m.superseded_by IS NULL AND (m.valid_until IS NULL OR m.valid_until > :now)"
_KINDS = "(:kinds IS NULL OR m.kind IN (SELECT value FROM json_each(:kinds)))"
_IDS = "(SELECT value FROM json_each(:ids))"
_IDS_TABLE = "(SELECT DISTINCT value FROM json_each(:ids))"
_TWICE = """instr(substr(' ' || m.terms || ' ', instr(' ' || m.terms || ' ', :needle) + 1),
    :needle) > 0"""
"""The item holds the visited term (``:needle``, padded) at least twice."""
KEY = "m.item_id || char(31) || m.user_id"
"""An item's :func:`~prefrontal.stores.memory_search.hit_key`, in SQL."""


def first_of_its_id(items: str) -> str:
    """SQL: ``m`` is the item of its id the tenant is given (its own, else the first owner's).

    :func:`~prefrontal.stores.tenancy.precedence` in SQL: no other visible
    item of the same id precedes ``m``. Text compares by code point, as in Python.
    """
    return f"""NOT EXISTS (
        SELECT 1 FROM {items} AS o
        WHERE o.agent_id = m.agent_id AND o.item_id = m.item_id AND o.user_id != m.user_id
          AND (o.scope = 'shared' OR o.user_id = :user)
          AND (o.user_id = :user OR (m.user_id != :user AND o.user_id < m.user_id)))"""


class Statements:
    """Every statement the store runs against ``<name>_items`` and ``<name>_fts``."""

    def __init__(self, name: str) -> None:
        items, fts = f"{name}_items", f"{name}_fts"
        columns = item_columns(name)
        self.upsert = f"""
            INSERT INTO {items} (agent_id, item_id, user_id, scope, kind, importance,
                created_at, valid_until, superseded_by, recall_count, last_recalled_at,
                thread_id, position, body, terms, length, embedding)
            VALUES (:agent, :item, :user, :scope, :kind, :importance, :created_at,
                :valid_until, :superseded_by, :recall_count, :last_recalled_at,
                :thread_id, :position, :body, :terms, :length, :embedding)
            ON CONFLICT (agent_id, item_id, user_id) DO UPDATE SET
                scope = excluded.scope, kind = excluded.kind,
                importance = excluded.importance, created_at = excluded.created_at,
                valid_until = excluded.valid_until,
                superseded_by = coalesce(excluded.superseded_by, {items}.superseded_by),
                recall_count = excluded.recall_count,
                last_recalled_at = excluded.last_recalled_at,
                thread_id = excluded.thread_id, position = excluded.position,
                body = excluded.body, terms = excluded.terms, length = excluded.length,
                embedding = excluded.embedding"""
        self.supersede = f"""
            UPDATE {items} SET superseded_by = :item
            WHERE agent_id = :agent AND item_id = :supersedes AND user_id = :user
              AND item_id != :item"""
        self.get = f"""
            SELECT m.item_id, {columns} FROM {items} AS m
            WHERE {_VISIBLE} AND m.item_id IN {_IDS} AND {first_of_its_id(items)}"""
        self.by_rowids = f"""
            SELECT m.rowid, {KEY}, {columns} FROM json_each(:rowids) AS r
            CROSS JOIN {items} AS m ON m.rowid = r.value
            WHERE {_VISIBLE}"""
        self.keys_by_rowids = f"""
            SELECT m.rowid, {KEY} FROM json_each(:rowids) AS r
            CROSS JOIN {items} AS m ON m.rowid = r.value
            WHERE {_VISIBLE}"""
        """:attr:`by_rowids` without the record: the keys that rank rows tied on a score."""
        self.by_keys = f"""
            SELECT {KEY}, {columns} FROM {items} AS m
            WHERE {_VISIBLE} AND m.item_id IN {_IDS}
              AND {KEY} IN (SELECT value FROM json_each(:keys))"""
        self.delete = f"""
            DELETE FROM {items}
            WHERE agent_id = :agent AND user_id = :user AND item_id IN {_IDS}"""
        self.erase = f"DELETE FROM {items} WHERE agent_id = :agent AND user_id = :user"
        self.stats = f"""
            SELECT sum(docs), sum(tokens) FROM {name}_owner_stats
            WHERE agent_id = :agent AND owner IN ('', :user)"""
        """The collection the tenant searches: its own items and the agent's shared ones."""
        self.term_stats = f"""
            SELECT term, sum(df), max(max_tf), min(min_length_1), min(min_length_2),
                min(min_length_3)
            FROM {name}_terms
            WHERE agent_id = :agent AND owner IN ('', :user)
              AND term IN (SELECT value FROM json_each(:terms))
            GROUP BY term"""
        """Each of ``:terms`` the tenant's collection holds: its holders and bounds."""
        self.postings = f"""
            SELECT count(*), group_concat(id), group_concat(length),
                group_concat(' ' || terms || ' ', char(10))
            FROM (
                SELECT {fts}.rowid AS id, m.length AS length, m.terms AS terms
                FROM {fts} CROSS JOIN {items} AS m ON m.rowid = {fts}.rowid
                WHERE {fts} MATCH :match AND {fts}.rowid > :after
                  AND (:longest IS NULL OR m.length <= :alone_once OR (m.length <= :longest
                    AND ((m.length <= :alone AND {_TWICE})
                      OR ((:later IS NULL OR EXISTS (SELECT 1 FROM json_each(:later) AS l
                            WHERE instr(' ' || m.terms || ' ', l.value) > 0))
                        AND (m.length <= :once OR {_TWICE})))))
                  AND {_VISIBLE} AND {_LIVE} AND {_KINDS}
                ORDER BY {fts}.rowid LIMIT :chunk)"""
        """One chunk of postings as one row (one step of SQLite, the GIL released once):
        how many items, their rowids and lengths (comma-separated) and their terms, a
        space either side, a line each."""
        self.impact_postings = f"""
            SELECT count(*), group_concat(id), group_concat(length),
                group_concat(' ' || terms || ' ', char(10))
            FROM (
                SELECT i.rowid AS id, m.length AS length, m.terms AS terms
                FROM {name}_impacts AS i CROSS JOIN {items} AS m ON m.rowid = i.rowid
                WHERE {name}_impacts MATCH :match AND i.rowid > :after
                  AND {_VISIBLE} AND {_LIVE} AND {_KINDS}
                ORDER BY i.rowid LIMIT :chunk)"""
        """One chunk of the items holding a term in one of the impact classes of
        ``:match``, as :attr:`postings` hands them over."""
        self.item_ids = f"""
            SELECT m.rowid, {KEY} FROM {items} AS m
            WHERE m.rowid IN (SELECT value FROM json_each(:rowids))"""
        self.terms_of = f"""
            SELECT m.rowid, ' ' || m.terms || ' ', m.length FROM {items} AS m
            WHERE m.rowid IN (SELECT value FROM json_each(:rowids))"""
        self.vectors = f"""
            SELECT {KEY}, m.embedding FROM {items} AS m
            WHERE {_VISIBLE} AND {_LIVE} AND {_KINDS} AND m.embedding IS NOT NULL"""
        self.around = f"""
            WITH anchors AS MATERIALIZED (
                SELECT DISTINCT a.thread_id, a.position
                FROM {_IDS_TABLE} AS i CROSS JOIN {items} AS a
                WHERE a.agent_id = :agent AND a.item_id = i.value
                  AND (a.scope = 'shared' OR a.user_id = :user)
                  AND +a.thread_id IS NOT NULL AND +a.position IS NOT NULL
            ), near AS MATERIALIZED (
                SELECT DISTINCT n.rowid AS id
                FROM anchors AS a CROSS JOIN {items} AS n
                WHERE n.agent_id = :agent AND n.thread_id = a.thread_id
                  AND n.thread_id IS NOT NULL
                  AND n.position BETWEEN a.position - :radius AND a.position + :radius
            )
            SELECT {columns} FROM near CROSS JOIN {items} AS m ON m.rowid = near.id
            WHERE {_VISIBLE} AND {_LIVE} AND m.item_id NOT IN {_IDS}
            ORDER BY m.thread_id, m.position, m.item_id"""
        """The live items near each of ``:ids`` in its thread. The anchors are found by
        their key (agent, item id): the unary ``+`` keeps the thread conditions off the
        index, which SQLite 3.50's planner would otherwise scan from ``thread_id > NULL``
        on (every threaded item of the agent)."""
        self.record_recall = record_sql(
            name, f"{_VISIBLE} AND m.item_id IN {_IDS} AND {first_of_its_id(items)}"
        )
        """One more recall of each item of ``:ids`` the tenant is given, counted beside the
        items (:mod:`~prefrontal.stores.sqlite.recalls`)."""
