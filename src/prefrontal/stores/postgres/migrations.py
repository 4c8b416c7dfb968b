"""The schema and its forward migrations, versioned in ``schema_migrations``.

Everything lives in one PostgreSQL schema (``prefrontal`` unless configured),
so a database can hold several deployments side by side. Each migration runs
in its own transaction, under an advisory lock keyed by the schema name, and
records its version there: many processes starting at once migrate once, and
a schema is always at exactly one version. A schema newer than this code
knows is refused rather than guessed at. To change the schema, append a
:class:`Migration`; never edit one that has shipped.

Layout: every table keeps the columns it filters, orders or updates in place
as columns, and the rest of the record as JSON text in ``body``. Times are
``timestamptz``. Episodic and semantic memory have a table each; a row holds
its item's analysed terms (:func:`prefrontal.retrieval.analysis.terms` of
:func:`prefrontal.stores.memory_search.searchable_text`) as a sorted array of
distinct terms with a GIN index, their counts in a parallel array, the
number of terms (``length``) and the embedding as little-endian float32
bytes. The BM25 statistics of each agent (since schema 4:
``<name>_agent_stats``, the number of its items and their total length;
``<name>_terms``, how many of its items hold each term) are kept in step by
a trigger, in the same transaction as the write. Since schema 6 a column,
``impacts``, holds each distinct term under its impact class
(:mod:`prefrontal.retrieval.impacts`), GIN-indexed for the top-k's reads.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from prefrontal.errors import StoreError
from prefrontal.retrieval.impacts import sql_code
from prefrontal.stores.durable import MEMORY_TABLES, Migration, upgrading
from prefrontal.stores.erasures import FIRST_TENANT_TABLES, REFUSED, SESSION_ITEMS_TABLE
from prefrontal.stores.memory_search import stored_terms
from prefrontal.stores.postgres import (
    planner_statistics,
    recall_counts,
    thread_positions,
    vector_log,
    visibility,
)
from prefrontal.stores.postgres.memory_versions import versions_schema
from prefrontal.stores.postgres.term_keys import key
from prefrontal.stores.statistics_owner import owner_sql

BULK_SETTING = "prefrontal.bulk_statistics"
"""The transaction setting under which schema 10's trigger leaves inserts to the bulk writer
(:mod:`prefrontal.stores.postgres.bulk`)."""


def _index_function(name: str) -> str:
    """The trigger function keeping ``<name>_stats`` and ``<name>_terms`` in step with the items.

    Every write to the items locks the one statistics row first, so writers
    of one table take their locks in the same order and never deadlock on
    the vocabulary. ``SET search_path FROM CURRENT`` pins the schema.
    """
    stats, vocab = f"{name}_stats", f"{name}_terms"
    return f"""CREATE FUNCTION {name}_index() RETURNS trigger
        LANGUAGE plpgsql SET search_path FROM CURRENT AS $body$
        BEGIN
            IF TG_OP = 'INSERT' THEN
                UPDATE {stats} SET docs = docs + 1, tokens = tokens + NEW.length;
                INSERT INTO {vocab} AS v (term, df) SELECT t, 1 FROM unnest(NEW.terms) AS t
                    ON CONFLICT (term) DO UPDATE SET df = v.df + 1;
            ELSIF TG_OP = 'UPDATE' THEN
                UPDATE {stats} SET tokens = tokens - OLD.length + NEW.length;
                UPDATE {vocab} SET df = df - 1
                    WHERE term = ANY (OLD.terms) AND NOT (term = ANY (NEW.terms));
                INSERT INTO {vocab} AS v (term, df)
                    SELECT t, 1 FROM unnest(NEW.terms) AS t WHERE NOT (t = ANY (OLD.terms))
                    ON CONFLICT (term) DO UPDATE SET df = v.df + 1;
            ELSE
                UPDATE {stats} SET docs = docs - 1, tokens = tokens - OLD.length;
                UPDATE {vocab} SET df = df - 1 WHERE term = ANY (OLD.terms);
            END IF;
            RETURN NULL;
        END
        $body$"""


def _per_agent_function(
    name: str, on_insert: str, on_update: str, *, drop_empty: bool = False, bulk: bool = False
) -> str:
    """A trigger function keeping ``name``'s per-agent statistics; the vocabulary's upserts given.

    ``on_insert`` and ``on_update`` add the new row's terms to
    ``<name>_terms`` (schema 4: the counts; schema 5: with the bounds). The
    agent's statistics row is locked first on every path. With ``drop_empty``
    (schema 7), a term row whose count reaches 0 is deleted, so no word of a
    removed item stays in the statistics. With ``bulk`` (schema 10), an insert
    made while the transaction setting :data:`BULK_SETTING` is ``on`` is left
    to the bulk writer, which counts its run set-wise.
    """
    agents, vocab = f"{name}_agent_stats", f"{name}_terms"
    skip = f"""IF current_setting('{BULK_SETTING}', true) = 'on' THEN
                    RETURN NULL;
                END IF;"""
    skip = skip if bulk else ""
    drop = f"""DELETE FROM {vocab}
                    WHERE agent_id = OLD.agent_id AND df <= 0 AND term = ANY (OLD.terms);"""
    drop = drop if drop_empty else ""
    return f"""CREATE OR REPLACE FUNCTION {name}_index() RETURNS trigger
        LANGUAGE plpgsql SET search_path FROM CURRENT AS $body$
        BEGIN
            IF TG_OP = 'INSERT' THEN
                {skip}
                INSERT INTO {agents} AS s (agent_id, docs, tokens)
                    VALUES (NEW.agent_id, 1, NEW.length)
                    ON CONFLICT (agent_id) DO UPDATE
                    SET docs = s.docs + 1, tokens = s.tokens + EXCLUDED.tokens;
                {on_insert}
            ELSIF TG_OP = 'UPDATE' THEN
                UPDATE {agents} SET tokens = tokens - OLD.length + NEW.length
                    WHERE agent_id = NEW.agent_id;
                UPDATE {vocab} SET df = df - 1
                    WHERE agent_id = NEW.agent_id
                      AND term = ANY (OLD.terms) AND NOT (term = ANY (NEW.terms));
                {drop}
                {on_update}
            ELSE
                UPDATE {agents} SET docs = docs - 1, tokens = tokens - OLD.length
                    WHERE agent_id = OLD.agent_id;
                UPDATE {vocab} SET df = df - 1
                    WHERE agent_id = OLD.agent_id AND term = ANY (OLD.terms);
                {drop}
            END IF;
            RETURN NULL;
        END
        $body$"""


def _agent_index_function(name: str) -> str:
    """Schema 4's trigger function: ``<name>_agent_stats`` and ``<name>_terms`` kept per agent.

    Every write to an agent's items locks that agent's statistics row
    first (and the store writes a batch's agents in sorted order), so
    writers take their locks in one order and never deadlock on the
    vocabulary; writers of different agents share no row at all. An item's
    agent never changes (it is part of its key).
    """
    vocab = f"{name}_terms"
    on_insert = f"""INSERT INTO {vocab} AS v (agent_id, term, df)
                    SELECT NEW.agent_id, t, 1 FROM unnest(NEW.terms) AS t
                    ON CONFLICT (agent_id, term) DO UPDATE SET df = v.df + 1;"""
    on_update = f"""INSERT INTO {vocab} AS v (agent_id, term, df)
                    SELECT NEW.agent_id, t, 1 FROM unnest(NEW.terms) AS t
                    WHERE NOT (t = ANY (OLD.terms))
                    ON CONFLICT (agent_id, term) DO UPDATE SET df = v.df + 1;"""
    return _per_agent_function(name, on_insert, on_update)


def _agent_statistics(name: str) -> tuple[str, ...]:
    """Schema 4 for memory table ``name``: BM25 statistics per agent, counted from the items."""
    items, agents, vocab = f"{name}_items", f"{name}_agent_stats", f"{name}_terms"
    return (
        f"""CREATE TABLE {agents} (
            agent_id text PRIMARY KEY,
            docs bigint NOT NULL,
            tokens bigint NOT NULL
        )""",
        f"DROP TABLE {vocab}",
        f"""CREATE TABLE {vocab} (
            agent_id text NOT NULL,
            term text NOT NULL,
            df bigint NOT NULL,
            PRIMARY KEY (agent_id, term)
        )""",
        f"""INSERT INTO {agents} (agent_id, docs, tokens)
            SELECT agent_id, count(*), sum(length) FROM {items} GROUP BY agent_id""",
        f"""INSERT INTO {vocab} (agent_id, term, df)
            SELECT agent_id, t, count(*) FROM {items}, unnest(terms) AS t GROUP BY agent_id, t""",
        _agent_index_function(name),
        f"DROP TABLE {name}_stats",
    )


def _bounds_index_function(name: str, *, drop_empty: bool = False, bulk: bool = False) -> str:
    """Schema 5's trigger function: schema 4's, with each agent's per-term bounds kept too.

    ``<name>_terms`` also holds, per agent and term, the largest count of
    the term in one item and the shortest item holding it once, twice, and
    three times or more: what bounds the term's score for the top-k
    (:class:`~prefrontal.retrieval.ranking.BoundedTerm`). They only ever
    widen (a deletion leaves them), so they stay bounds.
    """
    upsert = f"""INSERT INTO {name}_terms AS v (agent_id, term, df, max_tf, min_length_1,
                        min_length_2, min_length_3)
                    SELECT NEW.agent_id, u.t, {{df}}, u.c,
                        CASE u.c WHEN 1 THEN NEW.length END,
                        CASE u.c WHEN 2 THEN NEW.length END,
                        CASE WHEN u.c >= 3 THEN NEW.length END
                    FROM unnest(NEW.terms, NEW.counts) AS u(t, c)
                    ON CONFLICT (agent_id, term) DO UPDATE SET df = v.df + EXCLUDED.df,
                        max_tf = GREATEST(v.max_tf, EXCLUDED.max_tf),
                        min_length_1 = LEAST(v.min_length_1, EXCLUDED.min_length_1),
                        min_length_2 = LEAST(v.min_length_2, EXCLUDED.min_length_2),
                        min_length_3 = LEAST(v.min_length_3, EXCLUDED.min_length_3);"""
    kept = "CASE WHEN u.t = ANY (OLD.terms) THEN 0 ELSE 1 END"
    return _per_agent_function(
        name, upsert.format(df="1"), upsert.format(df=kept), drop_empty=drop_empty, bulk=bulk
    )


def _term_bounds(name: str) -> tuple[str, ...]:
    """Schema 5 for memory table ``name``: per-term bounds, counted from the items."""
    items, vocab = f"{name}_items", f"{name}_terms"
    return (
        f"""ALTER TABLE {vocab} ADD COLUMN max_tf integer NOT NULL DEFAULT 1,
            ADD COLUMN min_length_1 integer, ADD COLUMN min_length_2 integer,
            ADD COLUMN min_length_3 integer""",
        f"""UPDATE {vocab} AS v SET max_tf = b.max_tf, min_length_1 = b.once,
                min_length_2 = b.twice, min_length_3 = b.more
            FROM (
                SELECT m.agent_id, u.t, max(u.c) AS max_tf,
                    min(CASE u.c WHEN 1 THEN m.length END) AS once,
                    min(CASE u.c WHEN 2 THEN m.length END) AS twice,
                    min(CASE WHEN u.c >= 3 THEN m.length END) AS more
                FROM {items} AS m, unnest(m.terms, m.counts) AS u(t, c)
                GROUP BY m.agent_id, u.t
            ) AS b
            WHERE v.agent_id = b.agent_id AND v.term = b.t""",
        _bounds_index_function(name),
    )


def _impact_index(name: str) -> tuple[str, ...]:
    """Schema 6 for memory table ``name``: its items' impact tokens, GIN-indexed.

    The column is filled from each row's terms, counts and length in SQL,
    as :func:`~prefrontal.retrieval.impacts.tokens` writes it for new rows
    (:func:`~prefrontal.retrieval.impacts.sql_code` names every class as
    Python does). The table is analysed again: the planner needs
    the new column's statistics to choose the impact index.
    """
    items = f"{name}_items"
    return (
        f"ALTER TABLE {items} ADD COLUMN impacts text[] NOT NULL DEFAULT '{{}}'",
        f"""UPDATE {items} SET impacts = ARRAY(
            SELECT {sql_code("c", "length")} || t FROM unnest(terms, counts) AS u(t, c))""",
        f"ALTER TABLE {items} ALTER COLUMN impacts DROP DEFAULT",
        f"CREATE INDEX {name}_by_impacts ON {items} USING gin (impacts)",
        f"ANALYZE {items}",
    )


def _visibility_indexed(name: str) -> tuple[str, ...]:
    """Schema 9 for memory table ``name``: its terms and impact tokens GIN-indexed per tenant.

    ``visible`` (generated, stored) holds each of the row's term keys and
    impact tokens behind its :mod:`~prefrontal.stores.postgres.visibility`
    token; one GIN index over it takes the place of the indexes of
    ``terms`` and ``impacts``. The table is analysed again for the planner.
    """
    items = f"{name}_items"
    keys = "memory_visible_keys(agent_id, user_id, scope, terms, impacts)"
    return (
        f"ALTER TABLE {items} ADD COLUMN visible text[] GENERATED ALWAYS AS ({keys}) STORED",
        f"CREATE INDEX {name}_by_visible ON {items} USING gin (visible) WITH (fastupdate = off)",
        f"DROP INDEX IF EXISTS {name}_by_terms",
        f"DROP INDEX IF EXISTS {name}_by_impacts",
        f"ANALYZE {items}",
    )


def _memory_schema(name: str) -> tuple[str, ...]:
    items = f"{name}_items"
    return (
        f"""CREATE TABLE {items} (
            agent_id text NOT NULL,
            item_id text NOT NULL,
            user_id text NOT NULL,
            scope text NOT NULL,
            kind text NOT NULL,
            importance double precision NOT NULL,
            created_at timestamptz NOT NULL,
            valid_until timestamptz,
            superseded_by text,
            recall_count bigint NOT NULL DEFAULT 0,
            last_recalled_at timestamptz,
            thread_id text,
            position bigint,
            body text NOT NULL,
            terms text[] NOT NULL,
            counts integer[] NOT NULL,
            length integer NOT NULL,
            embedding bytea,
            PRIMARY KEY (agent_id, item_id)
        )""",
        f"CREATE INDEX {name}_by_terms ON {items} USING gin (terms)",
        f"""CREATE INDEX {name}_thread ON {items} (agent_id, thread_id, position)
            WHERE thread_id IS NOT NULL""",
        f"""CREATE TABLE {name}_stats (
            id integer PRIMARY KEY CHECK (id = 0),
            docs bigint NOT NULL,
            tokens bigint NOT NULL
        )""",
        f"INSERT INTO {name}_stats (id, docs, tokens) VALUES (0, 0, 0)",
        f"CREATE TABLE {name}_terms (term text PRIMARY KEY, df bigint NOT NULL)",
        _index_function(name),
        f"""CREATE TRIGGER {name}_index
            AFTER INSERT OR DELETE OR UPDATE OF terms, length ON {items}
            FOR EACH ROW EXECUTE FUNCTION {name}_index()""",
    )


def _owner_index_function(name: str) -> str:
    """Schema 12's trigger function: statistics per agent and owner, the agent's row first.

    Every write to an agent's items locks the agent's row of
    ``<name>_agent_stats`` first (its counts are kept too), then its
    owner's row of ``<name>_owner_stats`` and the owner's terms, so writers
    of one agent take their locks in one order. An item whose scope changes
    moves from one owner's counts to the other's. Rows whose counts reach 0
    are deleted. An insert made while :data:`BULK_SETTING` is ``on`` is left
    to the bulk writer.
    """
    agents, owners, vocab = f"{name}_agent_stats", f"{name}_owner_stats", f"{name}_terms"
    new, old = owner_sql("NEW.scope", "NEW.user_id"), owner_sql("OLD.scope", "OLD.user_id")
    upsert = f"""INSERT INTO {vocab} AS v (agent_id, owner, term, df, max_tf, min_length_1,
                        min_length_2, min_length_3)
                    SELECT NEW.agent_id, {new}, u.t, {{df}}, u.c,
                        CASE u.c WHEN 1 THEN NEW.length END,
                        CASE u.c WHEN 2 THEN NEW.length END,
                        CASE WHEN u.c >= 3 THEN NEW.length END
                    FROM unnest(NEW.terms, NEW.counts) AS u(t, c)
                    ON CONFLICT (agent_id, owner, term) DO UPDATE SET df = v.df + EXCLUDED.df,
                        max_tf = GREATEST(v.max_tf, EXCLUDED.max_tf),
                        min_length_1 = LEAST(v.min_length_1, EXCLUDED.min_length_1),
                        min_length_2 = LEAST(v.min_length_2, EXCLUDED.min_length_2),
                        min_length_3 = LEAST(v.min_length_3, EXCLUDED.min_length_3);"""
    add_new = f"""INSERT INTO {owners} AS o (agent_id, owner, docs, tokens)
                    VALUES (NEW.agent_id, {new}, 1, NEW.length)
                    ON CONFLICT (agent_id, owner) DO UPDATE
                    SET docs = o.docs + 1, tokens = o.tokens + EXCLUDED.tokens;
                {upsert.format(df="1")}"""
    remove_old = f"""UPDATE {owners} SET docs = docs - 1, tokens = tokens - OLD.length
                    WHERE agent_id = OLD.agent_id AND owner = {old};
                DELETE FROM {owners} WHERE agent_id = OLD.agent_id AND owner = {old} AND docs <= 0;
                UPDATE {vocab} SET df = df - 1
                    WHERE agent_id = OLD.agent_id AND owner = {old} AND term = ANY (OLD.terms);
                DELETE FROM {vocab}
                    WHERE agent_id = OLD.agent_id AND owner = {old} AND df <= 0
                      AND term = ANY (OLD.terms);"""
    kept = "CASE WHEN u.t = ANY (OLD.terms) THEN 0 ELSE 1 END"
    return f"""CREATE OR REPLACE FUNCTION {name}_index() RETURNS trigger
        LANGUAGE plpgsql SET search_path FROM CURRENT AS $body$
        BEGIN
            IF TG_OP = 'INSERT' THEN
                IF current_setting('{BULK_SETTING}', true) = 'on' THEN
                    RETURN NULL;
                END IF;
                INSERT INTO {agents} AS s (agent_id, docs, tokens)
                    VALUES (NEW.agent_id, 1, NEW.length)
                    ON CONFLICT (agent_id) DO UPDATE
                    SET docs = s.docs + 1, tokens = s.tokens + EXCLUDED.tokens;
                {add_new}
            ELSIF TG_OP = 'UPDATE' THEN
                UPDATE {agents} SET tokens = tokens - OLD.length + NEW.length
                    WHERE agent_id = NEW.agent_id;
                IF {old} IS DISTINCT FROM {new} THEN
                    {remove_old}
                    {add_new}
                ELSE
                    UPDATE {owners} SET tokens = tokens - OLD.length + NEW.length
                        WHERE agent_id = NEW.agent_id AND owner = {new};
                    UPDATE {vocab} SET df = df - 1
                        WHERE agent_id = NEW.agent_id AND owner = {new}
                          AND term = ANY (OLD.terms) AND NOT (term = ANY (NEW.terms));
                    DELETE FROM {vocab}
                        WHERE agent_id = NEW.agent_id AND owner = {new} AND df <= 0
                          AND term = ANY (OLD.terms);
                    {upsert.format(df=kept)}
                END IF;
            ELSE
                UPDATE {agents} SET docs = docs - 1, tokens = tokens - OLD.length
                    WHERE agent_id = OLD.agent_id;
                {remove_old}
            END IF;
            RETURN NULL;
        END
        $body$"""


def _owner_statistics(name: str) -> tuple[str, ...]:
    """Schema 12 for memory table ``name``: BM25 statistics per agent and owner, from the items.

    ``<name>_owner_stats`` holds the number of items and their total length
    of each agent's shared items (owner ``''``) and of each user's private
    ones (owner: the user id); ``<name>_terms`` the same owners' term counts
    and bounds. A search adds up the rows of the owners its user may read
    (:mod:`prefrontal.stores.statistics_owner`): another user's private
    items never move its scores. The trigger also fires on a change of scope.
    """
    items, owners, vocab = f"{name}_items", f"{name}_owner_stats", f"{name}_terms"
    owner = owner_sql("m.scope", "m.user_id")
    return (
        f"""CREATE TABLE {owners} (
            agent_id text NOT NULL,
            owner text NOT NULL,
            docs bigint NOT NULL,
            tokens bigint NOT NULL,
            PRIMARY KEY (agent_id, owner)
        )""",
        f"DROP TABLE {vocab}",
        f"""CREATE TABLE {vocab} (
            agent_id text NOT NULL,
            owner text NOT NULL,
            term text NOT NULL,
            df bigint NOT NULL,
            max_tf integer NOT NULL,
            min_length_1 integer,
            min_length_2 integer,
            min_length_3 integer,
            PRIMARY KEY (agent_id, owner, term)
        )""",
        f"""INSERT INTO {owners} (agent_id, owner, docs, tokens)
            SELECT m.agent_id, {owner}, count(*), sum(m.length) FROM {items} AS m
            GROUP BY m.agent_id, {owner}""",
        f"""INSERT INTO {vocab} (agent_id, owner, term, df, max_tf, min_length_1, min_length_2,
                min_length_3)
            SELECT m.agent_id, {owner}, u.t, count(*), max(u.c),
                min(CASE u.c WHEN 1 THEN m.length END),
                min(CASE u.c WHEN 2 THEN m.length END),
                min(CASE WHEN u.c >= 3 THEN m.length END)
            FROM {items} AS m, unnest(m.terms, m.counts) AS u(t, c)
            GROUP BY m.agent_id, {owner}, u.t""",
        _owner_index_function(name),
        f"DROP TRIGGER {name}_index ON {items}",
        f"""CREATE TRIGGER {name}_index
            AFTER INSERT OR DELETE OR UPDATE OF terms, length, scope ON {items}
            FOR EACH ROW EXECUTE FUNCTION {name}_index()""",
    )


_INITIAL = (
    "CREATE TABLE profiles (agent_id text PRIMARY KEY, body text NOT NULL)",
    """CREATE TABLE frontal_items (
        agent_id text NOT NULL,
        item_id text NOT NULL,
        user_id text NOT NULL,
        scope text NOT NULL,
        kind text NOT NULL,
        status text NOT NULL,
        updated_at timestamptz NOT NULL,
        body text NOT NULL,
        PRIMARY KEY (agent_id, item_id)
    )""",
    "CREATE INDEX frontal_by_update ON frontal_items (agent_id, updated_at)",
    """CREATE TABLE conversation_turns (
        seq bigint GENERATED ALWAYS AS IDENTITY,
        agent_id text NOT NULL,
        item_id text NOT NULL,
        user_id text NOT NULL,
        scope text NOT NULL,
        session_id text NOT NULL,
        created_at timestamptz NOT NULL,
        body text NOT NULL,
        PRIMARY KEY (agent_id, item_id)
    )""",
    "CREATE INDEX conversation_by_time ON conversation_turns (agent_id, created_at, seq)",
    """CREATE TABLE conversation_summaries (
        agent_id text NOT NULL,
        user_id text NOT NULL,
        body text NOT NULL,
        PRIMARY KEY (agent_id, user_id)
    )""",
    """CREATE TABLE scratch_entries (
        agent_id text NOT NULL,
        item_id text NOT NULL,
        user_id text NOT NULL,
        scope text NOT NULL,
        resolved boolean NOT NULL,
        priority double precision NOT NULL,
        created_at timestamptz NOT NULL,
        expires_at timestamptz,
        body text NOT NULL,
        PRIMARY KEY (agent_id, item_id)
    )""",
    "CREATE INDEX scratch_active ON scratch_entries (agent_id, priority) WHERE NOT resolved",
    """CREATE TABLE wm_sessions (
        agent_id text NOT NULL,
        user_id text NOT NULL,
        session_id text NOT NULL,
        version bigint NOT NULL,
        updated_at timestamptz NOT NULL,
        body text NOT NULL,
        PRIMARY KEY (agent_id, user_id, session_id)
    )""",
    "CREATE INDEX wm_by_update ON wm_sessions (agent_id, user_id, updated_at)",
    """CREATE TABLE traces (
        turn_id text PRIMARY KEY,
        parent_turn_id text,
        agent_id text NOT NULL,
        user_id text NOT NULL,
        session_id text NOT NULL,
        status text NOT NULL,
        started_at timestamptz NOT NULL,
        body text NOT NULL
    )""",
    "CREATE INDEX traces_by_start ON traces (started_at)",
    "CREATE INDEX traces_by_owner ON traces (agent_id, user_id, started_at)",
    "CREATE INDEX traces_by_parent ON traces (parent_turn_id) WHERE parent_turn_id IS NOT NULL",
    *(statement for name in MEMORY_TABLES for statement in _memory_schema(name)),
)

_PER_USER_KEY = "agent_id, item_id, user_id"
"""Ids unique per agent and user; the id before the user so look-ups by id use the index."""

_IDS_PER_USER = tuple(
    f"ALTER TABLE {table} DROP CONSTRAINT {table}_pkey, ADD PRIMARY KEY ({_PER_USER_KEY})"
    for table in (
        "frontal_items",
        "conversation_turns",
        "scratch_entries",
        *(f"{name}_items" for name in MEMORY_TABLES),
    )
)

_TRACE_INDEXES = {
    "start": "started_at,",
    "agent": "agent_id, started_at,",
    "owner": "agent_id, user_id, started_at,",
    "session": "session_id, started_at,",
    "status": "agent_id, status, started_at,",
}
"""The traces' indexes since schema 8 (the columns before the turn id each ends in)."""

_TRACE_SEARCH = (
    "ALTER TABLE traces ADD COLUMN IF NOT EXISTS words tsvector",
    """UPDATE traces SET words = to_tsvector('simple',
        coalesce(body::jsonb ->> 'user_input', '') || ' ' ||
        coalesce(body::jsonb -> 'ending' ->> 'reply', '')) WHERE words IS NULL""",
    "CREATE INDEX IF NOT EXISTS traces_by_words ON traces USING gin (words)",
)
"""Schema 15: the words of each trace's message and reply (written with the trace, filled
here for the traces already kept), indexed by GIN for a search."""

LARGE_BODIES = ("traces", "wm_sessions")
"""The tables whose ``body`` is written and read whole every turn, tens of kilobytes of JSON
(a turn's trace, a session's working memory): compressed when stored."""

_LZ4 = " ".join(
    f"ALTER TABLE {table} ALTER COLUMN body SET COMPRESSION lz4;" for table in LARGE_BODIES
)
_FAST_COMPRESSION = f"""DO $do$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_settings
               WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals)) THEN
        {_LZ4}
    END IF;
END
$do$"""
"""Schema 20: the :data:`LARGE_BODIES` compressed by LZ4 rather than PostgreSQL's own pglz
(several times less CPU to compress, less to decompress, for a few percent more bytes),
when the server was built with it; bodies already stored stay as they are until rewritten."""

_BUFFER_COLUMN = (
    "ALTER TABLE wm_sessions ADD COLUMN IF NOT EXISTS buffer text",
    "ALTER TABLE wm_sessions ALTER COLUMN buffer SET STATISTICS 0",
    _FAST_COMPRESSION.replace(
        _LZ4, "ALTER TABLE wm_sessions ALTER COLUMN buffer SET COMPRESSION lz4;"
    ),
)
"""Schema 23: a session's buffer document in a column of its own (:mod:`.working_memory`),
without statistics (as every ``body``: no sample of a user's words kept apart) and
compressed by LZ4 when the server has it (as :data:`LARGE_BODIES`)."""

ERASE_LOCK = "hashtext(current_schema() || ':erase:' || $1 || chr(31) || $2)"
"""The advisory lock key of tenant (agent ``$1``, user ``$2``) in this schema: each insert
of the tenant holds it shared until its transaction ends, the erase's record takes it
exclusive (so it waits for those transactions, and later ones see the record)."""

_ERASURE_RECORDS = (
    """CREATE TABLE IF NOT EXISTS erased_tenants (
        agent_id text NOT NULL,
        user_id text NOT NULL,
        erased_at bigint NOT NULL,
        PRIMARY KEY (agent_id, user_id)
    )""",
    f"""CREATE OR REPLACE FUNCTION refuse_erased() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
        PERFORM pg_advisory_xact_lock_shared(hashtext(
            current_schema() || ':erase:' || new.agent_id || chr(31) || new.user_id));
        IF EXISTS (SELECT 1 FROM erased_tenants
                   WHERE agent_id = new.agent_id AND user_id = new.user_id) THEN
            RAISE EXCEPTION '{REFUSED}' USING ERRCODE = 'PF001';
        END IF;
        RETURN new;
    END
    $fn$""",
    *(f"DROP TRIGGER IF EXISTS {table}_erased ON {table}" for table in FIRST_TENANT_TABLES),
    *(
        f"""CREATE TRIGGER {table}_erased BEFORE INSERT ON {table}
            FOR EACH ROW EXECUTE FUNCTION refuse_erased()"""
        for table in FIRST_TENANT_TABLES
    ),
)

_SESSION_ITEMS = (
    f"""CREATE TABLE IF NOT EXISTS {SESSION_ITEMS_TABLE} (
        seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        agent_id text NOT NULL,
        user_id text NOT NULL,
        session_id text NOT NULL,
        body text NOT NULL
    )""",
    f"ALTER TABLE {SESSION_ITEMS_TABLE} ALTER COLUMN body SET STATISTICS 0",
    f"CREATE INDEX IF NOT EXISTS session_items_by_session ON {SESSION_ITEMS_TABLE}"
    " (agent_id, user_id, session_id, seq)",
    f"DROP TRIGGER IF EXISTS {SESSION_ITEMS_TABLE}_erased ON {SESSION_ITEMS_TABLE}",
    f"""CREATE TRIGGER {SESSION_ITEMS_TABLE}_erased BEFORE INSERT ON {SESSION_ITEMS_TABLE}
        FOR EACH ROW EXECUTE FUNCTION refuse_erased()""",
)
"""Idempotent, like the erasure records: a schema taken back to an older version keeps it."""

FILLFACTOR = 70
"""How full PostgreSQL fills a memory table's pages on insert. An update that finds room on the
row's page is a HOT update, which writes no entry in the table's GIN index of term keys, where a
full page sends the new row version elsewhere and every index (some 50 GIN keys a row) gets it
again. Since schema 19 a turn's recall updates no item row (:mod:`.recall_counts`); a put that
replaces an item's record still does. Pages written before this setting fill up as they were
until the table is rewritten (``VACUUM FULL``)."""

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "every store kind: tables, indexes, GIN term index, BM25 statistics", _INITIAL),
    Migration(
        2,
        "ids unique per agent and user: goals, conversation turns, scratch entries, memory items",
        _IDS_PER_USER,
    ),
    Migration(
        3,
        "memory terms analysed anew where the text is not all ASCII: accents folded, "
        "scripts without spaces indexed by pairs of characters, symbols kept",
        (),
        reanalyse=True,
    ),
    Migration(
        4,
        "memory BM25 statistics kept per agent, counted anew from the items",
        tuple(statement for name in MEMORY_TABLES for statement in _agent_statistics(name)),
    ),
    Migration(
        5,
        "memory term bounds per agent (largest count, shortest holders), for the top-k",
        tuple(statement for name in MEMORY_TABLES for statement in _term_bounds(name)),
    ),
    Migration(
        6,
        "memory terms indexed by impact class (count, length bucket) as well, "
        "so that a top-k search reads only the holders that can reach the k-th score",
        tuple(statement for name in MEMORY_TABLES for statement in _impact_index(name)),
    ),
    Migration(
        7,
        "memory term statistics drop the rows of terms no item holds any more",
        tuple(
            statement
            for name in MEMORY_TABLES
            for statement in (
                _bounds_index_function(name, drop_empty=True),
                f"DELETE FROM {name}_terms WHERE df <= 0",
            )
        ),
    ),
    Migration(
        8,
        "traces indexed for listing newest first by agent, user, session or status, "
        "each index ending in the keyset (started_at, turn_id) a page continues from",
        (
            *(f"DROP INDEX IF EXISTS traces_by_{name}" for name in _TRACE_INDEXES),
            *(
                f'CREATE INDEX traces_by_{name} ON traces ({columns} turn_id COLLATE "C")'
                for name, columns in _TRACE_INDEXES.items()
            ),
        ),
    ),
    Migration(
        9,
        "memory terms and impact tokens indexed by who may see each item, so that a "
        "search's candidates are the tenant's own items and the agent's shared ones only",
        (
            *visibility.FUNCTIONS,
            *(statement for name in MEMORY_TABLES for statement in _visibility_indexed(name)),
        ),
    ),
    Migration(
        10,
        "memory items inserted in a run by the bulk writer have their statistics counted "
        "by it, a statement per table, instead of by the row trigger",
        tuple(_bounds_index_function(name, drop_empty=True, bulk=True) for name in MEMORY_TABLES),
    ),
    Migration(
        11,
        "memory rows numbered by a slot of their own and stamped with the transaction that "
        "last changed what vector search reads, deletions logged: a process's vector cache "
        "applies only what changed since the snapshot it reflects",
        tuple(statement for name in MEMORY_TABLES for statement in vector_log.change_log(name)),
    ),
    Migration(
        12,
        "memory BM25 statistics kept per agent and owner (the agent's shared items, each "
        "user's private ones): a search counts only what its user may read",
        tuple(statement for name in MEMORY_TABLES for statement in _owner_statistics(name)),
    ),
    Migration(
        13,
        "no planner statistics for the record text (body) of any table, and those kept "
        "until now dropped: pg_stats holds no copy of what users wrote",
        planner_statistics.WITHOUT_TEXT,
    ),
    Migration(
        14,
        "erasure records: every table of a user's records refuses an insert for a user "
        "erased in this schema, whichever process writes; an erase waits for the "
        "transactions writing that user to end",
        _ERASURE_RECORDS,
    ),
    Migration(
        15,
        "traces searchable by the words of the user's message and the reply "
        "(a tsvector column generated from the trace, with a GIN index)",
        _TRACE_SEARCH,
    ),
    Migration(
        16,
        "framework sessions' items (the Agents SDK's), in order and as given, per session "
        "of a user (no planner statistics for their text); an erased user's refused like "
        "every other record of theirs",
        _SESSION_ITEMS,
    ),
    Migration(
        17,
        "memory items keep the versions a put replaced (who changed what, when), "
        "deleted with the item; items indexed by id for listing page by page",
        tuple(statement for name in MEMORY_TABLES for statement in versions_schema(name)),
    ),
    Migration(
        18,
        "memory tables leave a third of each page free (fillfactor 70): a recall's update "
        "of an item stays on its page (HOT) and writes no index entry",
        tuple(f"ALTER TABLE {n}_items SET (fillfactor = {FILLFACTOR})" for n in MEMORY_TABLES),
    ),
    Migration(
        19,
        "memory items' recall counts written to a narrow table beside the items (a turn's "
        "recall updates no item row); a put or a delete of the item drops its count there",
        tuple(statement for name in MEMORY_TABLES for statement in recall_counts.schema(name)),
    ),
    Migration(
        20,
        "the bodies of traces and working-memory sessions (tens of kilobytes each, written "
        "and read every turn) compressed by LZ4, when the server has it",
        (_FAST_COMPRESSION,),
    ),
    Migration(
        21,
        "a memory row's visible keys computed by a PL/pgSQL function, whose plans the "
        "server keeps, instead of a SQL function parsed and planned for every row written",
        (visibility.VISIBLE_KEYS_KEPT,),
    ),
    Migration(
        22,
        "a thread's lock and its last position taken by one call of a PL/pgSQL function "
        "per memory table (an exchange's positions in one round trip, not two)",
        thread_positions.SCHEMA,
    ),
    Migration(
        23,
        "a session's buffer document kept in a column of its own beside the rest of its "
        "state, not escaped as a string inside the state's JSON",
        _BUFFER_COLUMN,
    ),
    Migration(
        24,
        "a thread's last position read down the thread index from its highest, whatever "
        "plan the function's session keeps (not every row of the agent)",
        thread_positions.LAST_BY_INDEX,
    ),
)
LATEST = MIGRATIONS[-1].version

_LEDGER = """CREATE TABLE IF NOT EXISTS schema_migrations (
    version integer PRIMARY KEY,
    description text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
)"""


async def _reanalyse(connection: Any, items: str) -> None:
    """Analyse anew the terms of every row of ``items`` whose body is not all ASCII.

    The index trigger moves the term statistics with each row.
    """
    rows = await connection.fetch(f"SELECT ctid, body FROM {items} WHERE body ~ '[^[:ascii:]]'")
    updates = []
    for row in rows:
        analysed = stored_terms(row["body"])
        if analysed is not None:
            counts = sorted(Counter(key(term) for term in analysed).items())
            updates.append(
                (
                    [term for term, _ in counts],
                    [count for _, count in counts],
                    sum(count for _, count in counts),
                    row["ctid"],
                )
            )
    await connection.executemany(
        f"UPDATE {items} SET terms = $1, counts = $2, length = $3 WHERE ctid = $4", updates
    )


async def schema_version(connection: Any) -> int:
    """The version recorded in the connection's schema (0 when none was applied)."""
    exists = await connection.fetchval("SELECT to_regclass('schema_migrations') IS NOT NULL")
    if not exists:
        return 0
    return int(await connection.fetchval("SELECT coalesce(max(version), 0) FROM schema_migrations"))


async def migrate(
    connection: Any, schema: str, migrations: tuple[Migration, ...] = MIGRATIONS
) -> int:
    """Create ``schema`` if needed and apply every migration above its version.

    ``connection``'s ``search_path`` must be ``schema``, which must be a
    plain identifier (the caller checks). Returns the new version.
    """
    existing = await schema_version(connection) > 0
    upgraded = f"postgresql schema {schema}" if existing else None
    for migration in migrations:
        await _apply(
            connection, schema, migration, latest=migrations[-1].version, upgraded=upgraded
        )
    return await schema_version(connection)


async def _apply(
    connection: Any, schema: str, migration: Migration, *, latest: int, upgraded: str | None
) -> None:
    """One step, in its own transaction; ``upgraded`` names an existing schema (logged)."""
    async with connection.transaction():
        await connection.execute(
            "SELECT pg_advisory_xact_lock(hashtext($1))", f"prefrontal-migrate:{schema}"
        )
        await connection.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
        await connection.execute(_LEDGER)
        current = await schema_version(connection)
        if current > latest:
            raise StoreError(
                f"database schema {schema!r} is at version {current}, newer than this "
                f"prefrontal knows ({latest}): upgrade prefrontal",
                store="database",
            )
        if current < migration.version:
            with upgrading(upgraded, current, migration):
                for statement in migration.statements:
                    await connection.execute(statement)
                if migration.reanalyse:
                    for name in MEMORY_TABLES:
                        await _reanalyse(connection, f"{name}_items")
            await connection.execute(
                "INSERT INTO schema_migrations (version, description) VALUES ($1, $2)",
                migration.version,
                migration.description,
            )
