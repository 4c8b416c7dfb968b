"""The SQL of one memory store (episodic or semantic), built once per table name.

Parameters are positional. Every read that takes a tenant has the agent as
``$1`` and the user as ``$2``; searches have the query time as ``$3`` and
the kinds (a text array, or NULL for every kind) as ``$4``. User text is only
ever a parameter. Reads by term or impact token ask the index for the keys
the tenant may see (:func:`~prefrontal.stores.postgres.visibility.holding`),
so other users' rows are never fetched.
"""

from __future__ import annotations

from prefrontal.retrieval.ranking import K1, B
from prefrontal.stores.postgres import recall_counts
from prefrontal.stores.postgres.visibility import IMPACT, holding


def item_columns(name: str) -> str:
    """The columns of item ``m`` of ``<name>_items`` that
    :func:`prefrontal.stores.postgres.memory._item` reads after its id, in its order (the
    recall counts as :func:`.recall_counts.counted` gives them)."""
    return f"m.body, m.superseded_by, {recall_counts.counted(name)}, m.embedding"


def item(name: str) -> str:
    """The columns :func:`prefrontal.stores.postgres.memory._item` reads, in its order."""
    return f"m.item_id, {item_columns(name)}"


READ_COLUMNS = f"m.body, m.superseded_by, {recall_counts.LOOKED_UP}, m.embedding"
""":func:`item_columns` of an item ``m`` joined with its recall row by
:func:`.recall_counts.looked_up` (one lookup per item instead of one per counter)."""
READ = f"m.item_id, {READ_COLUMNS}"
""":func:`item` of an item ``m`` joined with its recall row by :func:`.recall_counts.looked_up`."""
READ_BYTES = READ.replace("m.body", "convert_to(m.body, 'UTF8')", 1)
""":data:`READ` with the body as its UTF-8 bytes: for reads that send more rows than the caller
keeps (:mod:`.lexical_search`), whose bodies are decoded into text only for the rows kept."""


_VISIBLE = "m.agent_id = $1 AND (m.scope = 'shared' OR m.user_id = $2)"
_VISIBLE_CHECKED = "(m.agent_id || '') = $1 AND (m.scope = 'shared' OR m.user_id = $2)"
""":data:`_VISIBLE` as a check of the rows found, never a read of the primary key: reads by
term find rows through the index of visible keys (which holds the tenant), whatever the
planner's statistics say of the agent's rows (an agent of a few rows a while ago, say)."""
_LIVE = "m.superseded_by IS NULL AND (m.valid_until IS NULL OR m.valid_until > $3)"
_KINDS = "($4::text[] IS NULL OR m.kind = ANY($4::text[]))"
VISIBLE_CHECKED, LIVE, KINDS = _VISIBLE_CHECKED, _LIVE, _KINDS
"""The filters every search applies (:mod:`.lexical_search` builds its statement from them)."""
KEY = "m.item_id || chr(31) || m.user_id"
"""An item's :func:`~prefrontal.stores.memory_search.hit_key`, in SQL."""
_COUNTS = """ARRAY(
    SELECT coalesce(m.counts[array_position(m.terms, q.term)], 0)
    FROM unnest($5::text[]) WITH ORDINALITY AS q(term, n) ORDER BY q.n
)"""
"""An item's count of each term of ``$5``, in its order."""
COUNTS = _COUNTS


def given(items: str, ids: str, columns: str, joined: str = "") -> str:
    """SQL: ``columns`` of the items ``m`` of ids ``ids`` the tenant (``$1``, ``$2``) is given
    (``joined``: joins after ``m``, as :func:`.recall_counts.looked_up`'s).

    :func:`~prefrontal.stores.tenancy.precedence` in SQL: of the visible
    items of one id, its own first, else the shared one whose owner sorts
    first by code point (``COLLATE "C"``). One read of the visible items of
    those ids, the first of each id kept: no lookup per item of the others of
    its id, which a plan made on the statistics of a smaller table turns into
    a read of every item of the agent for each.
    """
    return f"""SELECT DISTINCT ON (m.item_id) {columns} FROM {items} AS m {joined}
            WHERE {_VISIBLE} AND m.item_id = ANY({ids})
            ORDER BY m.item_id, m.user_id <> $2, m.user_id COLLATE "C\""""


def _placeholders(row: int, width: int, dense: str | None) -> str:
    """The ``VALUES`` row ``row`` (from 0) of a many-row upsert, rows of ``width`` values."""
    first = row * width
    values = [f"${first + n}" for n in range(1, 20)]
    if dense:
        values.append(f"${first + 20}::text::{dense}")
    return "(" + ", ".join(values) + ")"


class Statements:
    """Every statement the store runs against ``<name>_items``.

    ``dense``: the type of the table's pgvector column (:mod:`.dense`), which the upsert
    then writes from ``$20`` (the vector as text); ``None`` when there is none.
    """

    def __init__(self, name: str, dense: str | None = None) -> None:
        items = f"{name}_items"
        column = ", dense" if dense else ""
        self._width = 20 if dense else 19
        self._dense_type = dense
        self._values = f"VALUES {_placeholders(0, self._width, dense)}"
        self.upsert = f"""
            INSERT INTO {items} AS m (agent_id, item_id, user_id, scope, kind, importance,
                created_at, valid_until, superseded_by, recall_count, last_recalled_at,
                thread_id, position, body, terms, counts, length, embedding, impacts{column})
            {self._values}
            ON CONFLICT (agent_id, item_id, user_id) DO UPDATE SET
                scope = excluded.scope, kind = excluded.kind,
                importance = excluded.importance, created_at = excluded.created_at,
                valid_until = excluded.valid_until,
                superseded_by = coalesce(excluded.superseded_by, m.superseded_by),
                recall_count = excluded.recall_count,
                last_recalled_at = excluded.last_recalled_at,
                thread_id = excluded.thread_id, position = excluded.position,
                body = excluded.body, terms = excluded.terms, counts = excluded.counts,
                length = excluded.length, embedding = excluded.embedding,
                impacts = excluded.impacts{", dense = excluded.dense" if dense else ""}"""
        self.supersede = f"""
            UPDATE {items} SET superseded_by = $2
            WHERE agent_id = $1 AND item_id = $3 AND user_id = $4 AND item_id <> $2"""
        recall = recall_counts.looked_up(name)
        self.get = given(items, "$3::text[]", READ, recall)
        self.by_keys = f"""
            SELECT {KEY}, {READ_COLUMNS} FROM {items} AS m {recall}
            WHERE {_VISIBLE} AND m.item_id = ANY($3::text[]) AND {KEY} = ANY($4::text[])"""
        self.delete = f"""
            DELETE FROM {items}
            WHERE agent_id = $1 AND user_id = $2 AND item_id = ANY($3::text[])"""
        self.erase = f"""
            DELETE FROM {items}
            WHERE agent_id = $1 AND user_id = $2 AND item_id = ANY (ARRAY(
                SELECT item_id FROM {items} WHERE agent_id = $1 AND user_id = $2 LIMIT $3))"""
        """Up to ``$3`` of tenant (``$1``, ``$2``)'s own items removed, chosen and removed by key:
        a row another transaction updates meanwhile (a recall counted) is removed in its new
        version (a row's place, ``ctid``, would name the old version only, and miss it)."""
        owners = "owner IN ('', $3)"
        self.statistics = f"""
            SELECT sum(s.docs)::bigint, sum(s.tokens)::bigint, ARRAY(
                SELECT coalesce(
                    (SELECT sum(v.df)::bigint FROM {name}_terms AS v
                     WHERE v.agent_id = $2 AND v.{owners} AND v.term = q.term), 0)
                FROM unnest($1::text[]) WITH ORDINALITY AS q(term, n) ORDER BY q.n
            )
            FROM {name}_owner_stats AS s WHERE s.agent_id = $2 AND s.{owners}
            HAVING count(*) > 0"""
        """The statistics of what user ``$3`` of agent ``$2`` may read (its own items and the
        agent's shared ones): their number, their length, and the holders of each term of
        ``$1`` (no row when it may read no item)."""
        visible = f"""(SELECT count(*) FROM (
                SELECT 1 FROM {items} AS m
                WHERE {holding("ARRAY[v.term]", user="$3")} LIMIT $4) AS c)"""
        self.bounds = f"""
            WITH s AS (
                SELECT sum(docs)::bigint AS docs, sum(tokens)::bigint AS tokens
                FROM {name}_owner_stats WHERE agent_id = $1 AND {owners} HAVING count(*) > 0
            ), v AS (
                SELECT term, sum(df)::bigint AS df, max(max_tf) AS max_tf,
                    min(min_length_1) AS min_length_1, min(min_length_2) AS min_length_2,
                    min(min_length_3) AS min_length_3
                FROM {name}_terms
                WHERE agent_id = $1 AND {owners} AND term = ANY($2::text[])
                GROUP BY term
            )
            SELECT s.docs, s.tokens, v.term, v.df, v.max_tf,
                v.min_length_1, v.min_length_2, v.min_length_3, {visible} AS visible
            FROM s LEFT JOIN v ON true"""
        """The statistics of what user ``$3`` of agent ``$1`` may read, with each of its terms
        among ``$2`` (one row per term held, or one with a NULL term; none when it may read
        no item), and how many of those items hold it (``$4`` at most): the top-k plans its
        reads and scores by what the user may read."""
        term = holding("ARRAY[$6::text]")
        classes = holding("$6::text[]", marker=IMPACT)
        self.holders = _holders(items, term, " AND NOT (m.impacts && $9::text[])", first=10)
        """The top-k's reads: the live visible items holding term ``$6`` and none of ``$7``,
        at most ``$8`` terms long (any length when NULL), under none of the impact tokens
        ``$9``, with their counts of ``$5``."""
        self.holders_of_any = _holders(items, holding("$6::text[]"), first=9)
        """The same as :attr:`holders`, for the items holding any of the terms ``$6``."""
        self.class_holders = _holders(items, classes, first=9)
        """The same as :attr:`holders`, for the items under one of the impact tokens ``$6``
        (of one term)."""
        self.class_holders_with_later = _holders(
            items, classes, " AND (m.terms || '{}'::text[]) && $9::text[]", first=10
        )
        """The same, holding one of the terms ``$9`` too: a check of the few rows the impact
        tokens find, never a read of the term index (the terms are common ones, and a cached
        plan would read their postings to intersect them)."""
        self.candidates = f"""
            SELECT {KEY}, m.length, {_COUNTS}
            FROM {items} AS m
            WHERE {holding("$5::text[]")} AND {_VISIBLE_CHECKED} AND {_LIVE} AND {_KINDS}"""
        self.vectors = f"""
            SELECT {KEY}, m.embedding FROM {items} AS m
            WHERE {_VISIBLE} AND {_LIVE} AND {_KINDS} AND m.embedding IS NOT NULL"""
        self.around = f"""
            WITH anchors AS MATERIALIZED (
                SELECT DISTINCT a.thread_id, a.position
                FROM unnest($4::text[]) AS w(item_id) CROSS JOIN LATERAL (
                    SELECT a.thread_id, a.position FROM {items} AS a
                    WHERE a.agent_id = $1 AND a.item_id = w.item_id
                      AND (a.scope = 'shared' OR a.user_id = $2)
                      AND a.thread_id IS NOT NULL AND a.position IS NOT NULL
                    ORDER BY a.user_id OFFSET 0
                ) AS a
            )
            SELECT DISTINCT ON (m.thread_id COLLATE "C", m.position, m.item_id COLLATE "C")
                {READ}
            FROM anchors AS a CROSS JOIN LATERAL (
                SELECT * FROM {items} AS n
                WHERE n.agent_id = $1 AND n.thread_id = a.thread_id AND n.thread_id IS NOT NULL
                  AND n.position BETWEEN a.position - $5 AND a.position + $5
                ORDER BY n.position OFFSET 0
            ) AS m {recall}
            WHERE {_VISIBLE} AND {_LIVE} AND NOT (m.item_id = ANY($4::text[]))
            ORDER BY m.thread_id COLLATE "C", m.position, m.item_id COLLATE "C\""""
        """The live visible items within ``$5`` places of the anchors ``$4`` in their threads.

        Each anchor is read by its key and each anchor's neighbours by the thread index, the
        anchors driving (``OFFSET 0`` keeps each subquery a lookup per anchor): the cost
        follows the anchors, never the table, whatever the planner's statistics say. A plan
        is kept by a connection once made, often while the table was a few rows: each
        lookup asks for its rows in the order of the index meant for it (the key's user
        after the agent and id, the thread's positions), which the agent's other indexes
        give only through a sort, so a plan made on a table of any size reads that index
        instead of every row of the agent."""
        self.record_recall = recall_counts.record(
            name, given(items, "$4::text[]", "m.agent_id, m.item_id, m.user_id, m.recall_count")
        )
        """A recall of the items ``$4`` tenant (``$1``, ``$2``) is given, at ``$3``, counted in
        their recall rows (:mod:`.recall_counts`)."""

    def upsert_of(self, count: int) -> str:
        """:attr:`upsert` of ``count`` rows in one statement, each row's parameters after the
        last's (rows of distinct keys: one statement cannot change a row twice)."""
        rows = ", ".join(_placeholders(n, self._width, self._dense_type) for n in range(count))
        return self.upsert.replace(self._values, f"VALUES {rows}")


REACH_SLOTS = 8
"""How many terms a top-k read scores in SQL to leave out the items that cannot reach."""


def _holders(items: str, held: str, more: str = "", *, first: int) -> str:
    """A top-k read of the live visible items matching ``held`` and ``more``.

    None of them holds a term of ``$7``, none is longer than ``$8`` (when not
    NULL); each comes with its counts of the query's terms ``$5``. From
    ``$<first>`` on, the bound of :func:`_reaching` leaves out the items that
    cannot reach the k-th score, before their counts are gathered.
    """
    return f"""
        SELECT {KEY}, m.length, {_COUNTS}
        FROM {items} AS m
        WHERE {held} AND NOT (m.terms && $7::text[])
          AND ($8::integer IS NULL OR m.length <= $8::integer){more}
          AND {_VISIBLE_CHECKED} AND {_LIVE} AND {_KINDS}
          AND {_reaching(first)}"""


def _reaching(first: int) -> str:
    """SQL: the item's BM25 score on up to :data:`REACH_SLOTS` terms reaches a need.

    Parameters from ``$<first>``: the terms (a text array, NULL past the
    last), each one's IDF times ``k1 + 1`` (a float array), the collection's
    mean length, and the score needed (NULL: every item passes). A term the
    item does not hold adds nothing. ``w * tf / (tf + norm)`` is written
    ``w - w * norm / (tf + norm)`` so that the count is read once; the need
    allows for the rounding this differs by.
    """
    terms, weights, average, need = (f"${first + n}" for n in range(4))
    k1, b = f"{K1!r}::float8", f"{B!r}::float8"
    norm = f"({k1} * (1::float8 - {b} + {b} * m.length / {average}::float8))"
    parts = " + ".join(
        f"coalesce(({weights}::float8[])[{i}] - ({weights}::float8[])[{i}] * {norm}"
        f" / (m.counts[array_position(m.terms, ({terms}::text[])[{i}])] + {norm}), 0)"
        for i in range(1, REACH_SLOTS + 1)
    )
    return f"({need}::float8 IS NULL OR {parts} >= {need}::float8)"
