"""The schema and its forward migrations, versioned by ``PRAGMA user_version``.

Each migration runs in its own transaction with the version bump, so a
database is always at exactly one version. A database newer than this code
knows is refused rather than guessed at. To change the schema, append a
:class:`Migration`; never edit one that has shipped.

Layout: every table keeps the columns it filters, orders or updates in place
as columns, and the rest of the record as JSON in ``body``. Times are integer
microseconds since the epoch (UTC). Episodic and semantic memory have a table
each, with an external-content FTS5 index over ``terms`` (the text as
:func:`prefrontal.retrieval.analysis.terms` analyses it, space-separated) and
the BM25 statistics of each agent (since schema 6: its document count and
total length in ``<name>_agent_stats``, and per term its document
frequency, largest frequency, and shortest document holding it once, twice,
and three times or more in ``<name>_terms``), all kept in step by triggers.
The per-term extremes only ever widen: they bound a term's best possible
score, which is all search needs them for. Since schema 8 a contentless
FTS5 index, ``<name>_impacts``, holds each item's distinct terms under their
impact class (:mod:`prefrontal.retrieval.impacts`), for the top-k's reads.
"""

from __future__ import annotations

import re
import sqlite3

from prefrontal.errors import StoreError
from prefrontal.retrieval.impacts import sql_code
from prefrontal.stores.durable import MEMORY_TABLES, Migration, upgrading
from prefrontal.stores.erasures import FIRST_TENANT_TABLES, REFUSED, SESSION_ITEMS_TABLE
from prefrontal.stores.memory_search import stored_terms
from prefrontal.stores.sqlite import visibility
from prefrontal.stores.sqlite.memory_versions import versions_schema
from prefrontal.stores.sqlite.open_traces import OPEN_INDEX
from prefrontal.stores.sqlite.recalls import recalls_schema
from prefrontal.stores.sqlite.vectors import change_insert_trigger, change_log, pruned_change_log
from prefrontal.stores.statistics_owner import owner_sql


def _term_list(terms: str) -> str:
    """SQL turning a space-separated ``terms`` column into a JSON array for ``json_each``.

    Safe because analysed terms are letters and digits only: never a quote,
    a backslash or a space inside a term.
    """
    array = f"""'["' || replace({terms}, ' ', '","') || '"]'"""
    return f"(CASE WHEN {terms} = '' THEN '[]' ELSE {array} END)"


def _least(column: str) -> str:
    """The smaller of the stored and the new value of a nullable column (NULL: none yet)."""
    return f"coalesce(min({column}, excluded.{column}), {column}, excluded.{column})"


def _items_table(table: str, key: str) -> str:
    """A memory store's items table named ``table``, unique on ``key``."""
    return f"""CREATE TABLE {table} (
            rowid INTEGER PRIMARY KEY,
            agent_id TEXT NOT NULL,
            item_id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            scope TEXT NOT NULL,
            kind TEXT NOT NULL,
            importance REAL NOT NULL,
            created_at INTEGER NOT NULL,
            valid_until INTEGER,
            superseded_by TEXT,
            recall_count INTEGER NOT NULL DEFAULT 0,
            last_recalled_at INTEGER,
            thread_id TEXT,
            position INTEGER,
            body TEXT NOT NULL,
            terms TEXT NOT NULL,
            length INTEGER NOT NULL,
            embedding BLOB,
            UNIQUE ({key})
        )"""


def _thread_index(name: str) -> str:
    return f"""CREATE INDEX {name}_thread ON {name}_items (agent_id, thread_id, position)
            WHERE thread_id IS NOT NULL"""


def _memory_schema(name: str) -> tuple[str, ...]:
    items, fts, stats = f"{name}_items", f"{name}_fts", f"{name}_stats"
    return (
        _items_table(items, "agent_id, item_id"),
        _thread_index(name),
        f"""CREATE VIRTUAL TABLE {fts} USING fts5(
            terms, content='{items}', content_rowid='rowid',
            tokenize='unicode61 remove_diacritics 0'
        )""",
        f"""CREATE TABLE {stats} (
            id INTEGER PRIMARY KEY CHECK (id = 0),
            docs INTEGER NOT NULL,
            tokens INTEGER NOT NULL
        )""",
        f"INSERT INTO {stats} (id, docs, tokens) VALUES (0, 0, 0)",
        *_term_statistics(name),
    )


def _term_statistics(name: str) -> tuple[str, ...]:
    """``name``'s per-term statistics table, and the triggers keeping it and the FTS5 index."""
    items, fts, stats, vocab = f"{name}_items", f"{name}_fts", f"{name}_stats", f"{name}_terms"
    index_new = f"""
        INSERT INTO {fts} (rowid, terms) VALUES (new.rowid, new.terms);
        UPDATE {stats} SET docs = docs + 1, tokens = tokens + new.length;
        INSERT INTO {vocab} (term, df, max_tf, min_length, min_length_1, min_length_2,
                min_length_3)
            SELECT value, 1, count(*), new.length,
                CASE count(*) WHEN 1 THEN new.length END,
                CASE count(*) WHEN 2 THEN new.length END,
                CASE WHEN count(*) >= 3 THEN new.length END
            FROM json_each({_term_list("new.terms")})
            WHERE true GROUP BY value
            ON CONFLICT (term) DO UPDATE SET df = df + 1,
                max_tf = max(max_tf, excluded.max_tf),
                min_length = min(min_length, excluded.min_length),
                min_length_1 = {_least("min_length_1")},
                min_length_2 = {_least("min_length_2")},
                min_length_3 = {_least("min_length_3")};"""
    unindex_old = f"""
        INSERT INTO {fts} ({fts}, rowid, terms) VALUES ('delete', old.rowid, old.terms);
        UPDATE {stats} SET docs = docs - 1, tokens = tokens - old.length;
        UPDATE {vocab} SET df = df - 1
            WHERE term IN (SELECT value FROM json_each({_term_list("old.terms")}));"""
    triggers = (
        f"CREATE TRIGGER {name}_index_insert AFTER INSERT ON {items} BEGIN {index_new} END",
        f"CREATE TRIGGER {name}_index_delete AFTER DELETE ON {items} BEGIN {unindex_old} END",
        f"""CREATE TRIGGER {name}_index_update AFTER UPDATE OF terms, length ON {items}
            BEGIN {unindex_old} {index_new} END""",
    )
    return (
        f"""CREATE TABLE {vocab} (
            term TEXT PRIMARY KEY,
            df INTEGER NOT NULL,
            max_tf INTEGER NOT NULL,
            min_length INTEGER NOT NULL,
            min_length_1 INTEGER,
            min_length_2 INTEGER,
            min_length_3 INTEGER
        ) WITHOUT ROWID""",
        *triggers,
    )


def _index_triggers(name: str) -> tuple[str, ...]:
    """The triggers that keep ``name``'s FTS5 index and term statistics in step with its items."""
    return _term_statistics(name)[1:]


def _rebuilt_term_statistics(name: str) -> tuple[str, ...]:
    """``name``'s term statistics and triggers dropped, made anew and counted from its items.

    Version 1 databases hold one of two layouts of the term table: the first
    knew only each term's shortest document, the later one also the shortest
    holding it once, twice and three times or more. Rebuilding brings either
    to the current layout, with exact counts (which also tightens bounds that
    deletions had left wide).
    """
    items, stats, vocab = f"{name}_items", f"{name}_stats", f"{name}_terms"
    return (
        f"DROP TRIGGER IF EXISTS {name}_index_insert",
        f"DROP TRIGGER IF EXISTS {name}_index_delete",
        f"DROP TRIGGER IF EXISTS {name}_index_update",
        f"DROP TABLE IF EXISTS {vocab}",
        *_term_statistics(name),
        f"""INSERT INTO {vocab} (term, df, max_tf, min_length, min_length_1, min_length_2,
                min_length_3)
            SELECT term, count(*), max(tf), min(length),
                min(CASE tf WHEN 1 THEN length END),
                min(CASE tf WHEN 2 THEN length END),
                min(CASE WHEN tf >= 3 THEN length END)
            FROM (
                SELECT i.rowid, j.value AS term, count(*) AS tf, i.length AS length
                FROM {items} AS i, json_each({_term_list("i.terms")}) AS j
                GROUP BY i.rowid, j.value
            )
            GROUP BY term""",
        f"""UPDATE {stats} SET docs = (SELECT count(*) FROM {items}),
            tokens = (SELECT coalesce(sum(length), 0) FROM {items})""",
    )


def _agent_term_statistics(name: str) -> tuple[str, ...]:
    """Schema 6: ``name``'s BM25 statistics per agent, their triggers, counted from its items.

    ``<name>_agent_stats`` holds each agent's number of items and their total
    length, and ``<name>_terms`` each agent's count of items holding a term
    with the bounds the top-k reads (the shortest item holding it once,
    twice, three times or more, and the largest frequency). A search by one
    agent reads that agent's rows only, so another agent's items never
    move its scores. ``<name>_stats`` keeps only the change counter.
    """
    items, stats = f"{name}_items", f"{name}_stats"
    agents, vocab = f"{name}_agent_stats", f"{name}_terms"
    index_new = _agent_index_new(name)
    unindex_old = _agent_unindex(name)
    return (
        f"DROP TRIGGER IF EXISTS {name}_index_insert",
        f"DROP TRIGGER IF EXISTS {name}_index_delete",
        f"DROP TRIGGER IF EXISTS {name}_index_update",
        f"DROP TABLE IF EXISTS {vocab}",
        f"""CREATE TABLE {agents} (
            agent_id TEXT PRIMARY KEY,
            docs INTEGER NOT NULL,
            tokens INTEGER NOT NULL
        ) WITHOUT ROWID""",
        f"""CREATE TABLE {vocab} (
            agent_id TEXT NOT NULL,
            term TEXT NOT NULL,
            df INTEGER NOT NULL,
            max_tf INTEGER NOT NULL,
            min_length_1 INTEGER,
            min_length_2 INTEGER,
            min_length_3 INTEGER,
            PRIMARY KEY (agent_id, term)
        ) WITHOUT ROWID""",
        _index_insert_trigger(name),
        f"CREATE TRIGGER {name}_index_delete AFTER DELETE ON {items} BEGIN {unindex_old} END",
        f"""CREATE TRIGGER {name}_index_update AFTER UPDATE OF agent_id, terms, length ON {items}
            BEGIN {unindex_old} {index_new} END""",
        f"""INSERT INTO {vocab} (agent_id, term, df, max_tf, min_length_1, min_length_2,
                min_length_3)
            SELECT agent_id, term, count(*), max(tf),
                min(CASE tf WHEN 1 THEN length END),
                min(CASE tf WHEN 2 THEN length END),
                min(CASE WHEN tf >= 3 THEN length END)
            FROM (
                SELECT i.agent_id AS agent_id, j.value AS term, count(*) AS tf,
                    i.length AS length
                FROM {items} AS i, json_each({_term_list("i.terms")}) AS j
                GROUP BY i.rowid, j.value
            )
            GROUP BY agent_id, term""",
        f"""INSERT INTO {agents} (agent_id, docs, tokens)
            SELECT agent_id, count(*), sum(length) FROM {items} GROUP BY agent_id""",
        f"ALTER TABLE {stats} DROP COLUMN docs",
        f"ALTER TABLE {stats} DROP COLUMN tokens",
    )


def _impacts_of(terms: str, length: str) -> str:
    """SQL: the impact tokens of a row, one per distinct term, space-separated.

    Each is the term's :func:`~prefrontal.retrieval.impacts.code` (its
    frequency class, then the bucket of ``length``) followed by the term,
    as :func:`~prefrontal.retrieval.impacts.token` writes it.
    """
    return f"""(SELECT coalesce(group_concat({sql_code("n", length)} || value, ' '), '')
        FROM (SELECT value, count(*) AS n FROM json_each({_term_list(terms)})
              WHERE true GROUP BY value))"""


def _index_insert_trigger(name: str, *, tenant: bool = False) -> str:
    """Since schema 6: the trigger putting a new item of ``name`` in FTS5 and the statistics.

    ``tenant``: as schema 11 has it, the FTS5 index with the ``tenant`` column.
    """
    return (
        f"CREATE TRIGGER {name}_index_insert AFTER INSERT ON {name}_items"
        f" BEGIN {_agent_index_new(name, tenant=tenant)} END"
    )


def _impacts_insert_trigger(name: str, *, tenant: bool = False) -> str:
    """Since schema 8: the trigger putting a new item of ``name`` in its impact index.

    ``tenant``: as schema 11 has it, the impact index with the ``tenant`` column.
    """
    add = (
        f"""INSERT INTO {name}_impacts (rowid, impacts, tenant)
        VALUES (new.rowid, {_impacts_of("new.terms", "new.length")}, new.tenant);"""
        if tenant
        else f"""INSERT INTO {name}_impacts (rowid, impacts)
        VALUES (new.rowid, {_impacts_of("new.terms", "new.length")});"""
    )
    return f"CREATE TRIGGER {name}_impacts_insert AFTER INSERT ON {name}_items BEGIN {add} END"


def erased_trigger(table: str) -> str:
    """The trigger refusing an insert into ``table`` for a tenant with an erasure record."""
    return f"""CREATE TRIGGER {table}_erased BEFORE INSERT ON {table}
        WHEN EXISTS (SELECT 1 FROM erased_tenants
                     WHERE agent_id = new.agent_id AND user_id = new.user_id)
        BEGIN SELECT RAISE(ABORT, '{REFUSED}'); END"""


_ERASURE_RECORDS = (
    """CREATE TABLE IF NOT EXISTS erased_tenants (
        agent_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        erased_at INTEGER NOT NULL,
        PRIMARY KEY (agent_id, user_id)
    ) WITHOUT ROWID""",
    *(f"DROP TRIGGER IF EXISTS {table}_erased" for table in FIRST_TENANT_TABLES),
    *(erased_trigger(table) for table in FIRST_TENANT_TABLES),
)
"""Idempotent: a file taken back to an older schema by a test keeps the table."""

_SESSION_ITEMS = (
    f"""CREATE TABLE IF NOT EXISTS {SESSION_ITEMS_TABLE} (
        seq INTEGER PRIMARY KEY,
        agent_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        body TEXT NOT NULL
    )""",
    f"CREATE INDEX IF NOT EXISTS session_items_by_session ON {SESSION_ITEMS_TABLE}"
    " (agent_id, user_id, session_id, seq)",
    f"DROP TRIGGER IF EXISTS {SESSION_ITEMS_TABLE}_erased",
    erased_trigger(SESSION_ITEMS_TABLE),
)
"""Idempotent, like the erasure records: a file taken back to an older schema keeps it."""


def insert_triggers(name: str) -> dict[str, str]:
    """The triggers the latest schema runs on an insert into ``<name>_items``, by name.

    Each as the ``CREATE TRIGGER`` statement ``sqlite_master`` holds for it.
    A migration that adds or changes one of them changes this too (and
    :mod:`prefrontal.stores.sqlite.bulk`, which does their work set-wise).
    """
    return {
        f"{name}_items_erased": erased_trigger(f"{name}_items"),
        f"{name}_change_insert": change_insert_trigger(name),
        f"{name}_index_insert": _owner_insert_trigger(name),
        f"{name}_impacts_insert": _impacts_insert_trigger(name, tenant=True),
    }


def _agent_index_new(name: str, *, tenant: bool = False) -> str:
    """The statements that put ``new`` into ``name``'s FTS5 index and per-agent statistics.

    ``tenant``: the index has the ``tenant`` column (schema 11 on).
    """
    fts, agents, vocab = f"{name}_fts", f"{name}_agent_stats", f"{name}_terms"
    entry = (
        f"INSERT INTO {fts} (rowid, terms, tenant) VALUES (new.rowid, new.terms, new.tenant);"
        if tenant
        else f"INSERT INTO {fts} (rowid, terms) VALUES (new.rowid, new.terms);"
    )
    return f"""
        {entry}
        INSERT INTO {agents} (agent_id, docs, tokens) VALUES (new.agent_id, 1, new.length)
            ON CONFLICT (agent_id) DO UPDATE SET docs = docs + 1,
                tokens = tokens + excluded.tokens;
        INSERT INTO {vocab} (agent_id, term, df, max_tf, min_length_1, min_length_2,
                min_length_3)
            SELECT new.agent_id, value, 1, count(*),
                CASE count(*) WHEN 1 THEN new.length END,
                CASE count(*) WHEN 2 THEN new.length END,
                CASE WHEN count(*) >= 3 THEN new.length END
            FROM json_each({_term_list("new.terms")})
            WHERE true GROUP BY value
            ON CONFLICT (agent_id, term) DO UPDATE SET df = df + 1,
                max_tf = max(max_tf, excluded.max_tf),
                min_length_1 = {_least("min_length_1")},
                min_length_2 = {_least("min_length_2")},
                min_length_3 = {_least("min_length_3")};"""


def _agent_unindex(name: str, *, drop_empty: bool = False, tenant: bool = False) -> str:
    """The statements that take ``old`` out of ``name``'s FTS5 index and per-agent statistics.

    With ``drop_empty``, a term row whose count reaches 0 is deleted, so no
    word of a removed item stays in the statistics. ``tenant``: the index
    has the ``tenant`` column (schema 11 on).
    """
    fts, agents, vocab = f"{name}_fts", f"{name}_agent_stats", f"{name}_terms"
    old_terms = f"(SELECT value FROM json_each({_term_list('old.terms')}))"
    drop = f"""
        DELETE FROM {vocab}
            WHERE agent_id = old.agent_id AND df <= 0 AND term IN {old_terms};"""
    entry = (
        f"""INSERT INTO {fts} ({fts}, rowid, terms, tenant)
            VALUES ('delete', old.rowid, old.terms, old.tenant);"""
        if tenant
        else f"INSERT INTO {fts} ({fts}, rowid, terms) VALUES ('delete', old.rowid, old.terms);"
    )
    return f"""
        {entry}
        UPDATE {agents} SET docs = docs - 1, tokens = tokens - old.length
            WHERE agent_id = old.agent_id;
        UPDATE {vocab} SET df = df - 1
            WHERE agent_id = old.agent_id AND term IN {old_terms};{drop if drop_empty else ""}"""


def _empty_terms_dropped(name: str) -> tuple[str, ...]:
    """Schema 9: term rows at a count of 0 deleted, and deleted from now on as they reach it.

    The delete trigger and the update trigger (which takes the old terms out
    before it adds the new ones) drop the rows their decrement empties.
    """
    items, vocab = f"{name}_items", f"{name}_terms"
    return (
        f"DROP TRIGGER IF EXISTS {name}_index_delete",
        f"DROP TRIGGER IF EXISTS {name}_index_update",
        f"""CREATE TRIGGER {name}_index_delete AFTER DELETE ON {items}
            BEGIN {_agent_unindex(name, drop_empty=True)} END""",
        f"""CREATE TRIGGER {name}_index_update AFTER UPDATE OF agent_id, terms, length ON {items}
            BEGIN {_agent_unindex(name, drop_empty=True)} {_agent_index_new(name)} END""",
        f"DELETE FROM {vocab} WHERE df <= 0",
    )


def _impact_index(name: str) -> tuple[str, ...]:
    """Schema 8: ``<name>_impacts``, every item's terms by impact class, kept by triggers.

    A contentless FTS5 index (its text is computed from ``terms`` and
    ``length``, never stored) over :func:`_impacts_of` each row, filled
    from the items there are.
    """
    items, impacts = f"{name}_items", f"{name}_impacts"
    add = f"""INSERT INTO {impacts} (rowid, impacts)
        VALUES (new.rowid, {_impacts_of("new.terms", "new.length")});"""
    remove = f"""INSERT INTO {impacts} ({impacts}, rowid, impacts)
        VALUES ('delete', old.rowid, {_impacts_of("old.terms", "old.length")});"""
    return (
        f"""CREATE VIRTUAL TABLE {impacts} USING fts5(
            impacts, content='', columnsize=0, tokenize='unicode61 remove_diacritics 0'
        )""",
        _impacts_insert_trigger(name),
        f"CREATE TRIGGER {name}_impacts_delete AFTER DELETE ON {items} BEGIN {remove} END",
        f"""CREATE TRIGGER {name}_impacts_update AFTER UPDATE OF terms, length ON {items}
            BEGIN {remove} {add} END""",
        f"""INSERT INTO {impacts} (rowid, impacts)
            SELECT rowid, {_impacts_of("terms", "length")} FROM {items}""",
    )


def _visibility_indexed(name: str) -> tuple[str, ...]:
    """Schema 11: both full-text indexes of ``name`` also index who may see each item.

    ``<name>_items`` gains ``tenant``, a generated (virtual, never stored)
    column: the item's :mod:`~prefrontal.stores.sqlite.visibility` token.
    ``<name>_fts`` and ``<name>_impacts`` are made anew with a ``tenant``
    column, filled from the items, and the triggers that keep them now also
    move an item's entries when its scope (or owner) changes.
    """
    items, fts, impacts = f"{name}_items", f"{name}_fts", f"{name}_impacts"
    token = visibility.token_sql("agent_id", "user_id", "scope")
    moved = "agent_id, user_id, scope, terms, length"
    add = f"""INSERT INTO {impacts} (rowid, impacts, tenant)
        VALUES (new.rowid, {_impacts_of("new.terms", "new.length")}, new.tenant);"""
    remove = f"""INSERT INTO {impacts} ({impacts}, rowid, impacts, tenant)
        VALUES ('delete', old.rowid, {_impacts_of("old.terms", "old.length")}, old.tenant);"""
    index_new = _agent_index_new(name, tenant=True)
    unindex_old = _agent_unindex(name, drop_empty=True, tenant=True)
    return (
        *(
            f"DROP TRIGGER IF EXISTS {name}_{kind}_{event}"
            for kind in ("index", "impacts")
            for event in ("insert", "delete", "update")
        ),
        f"DROP TABLE {fts}",
        f"DROP TABLE {impacts}",
        f"ALTER TABLE {items} ADD COLUMN tenant TEXT GENERATED ALWAYS AS ({token}) VIRTUAL",
        f"""CREATE VIRTUAL TABLE {fts} USING fts5(
            terms, tenant, content='{items}', content_rowid='rowid',
            tokenize='unicode61 remove_diacritics 0'
        )""",
        f"""CREATE VIRTUAL TABLE {impacts} USING fts5(
            impacts, tenant, content='', columnsize=0, tokenize='unicode61 remove_diacritics 0'
        )""",
        _index_insert_trigger(name, tenant=True),
        f"CREATE TRIGGER {name}_index_delete AFTER DELETE ON {items} BEGIN {unindex_old} END",
        f"""CREATE TRIGGER {name}_index_update AFTER UPDATE OF {moved} ON {items}
            BEGIN {unindex_old} {index_new} END""",
        _impacts_insert_trigger(name, tenant=True),
        f"CREATE TRIGGER {name}_impacts_delete AFTER DELETE ON {items} BEGIN {remove} END",
        f"""CREATE TRIGGER {name}_impacts_update AFTER UPDATE OF {moved} ON {items}
            BEGIN {remove} {add} END""",
        f"INSERT INTO {fts} ({fts}) VALUES ('rebuild')",
        f"""INSERT INTO {impacts} (rowid, impacts, tenant)
            SELECT rowid, {_impacts_of("terms", "length")}, tenant FROM {items}""",
    )


_MOVED = "agent_id, user_id, scope, terms, length"
"""The columns whose change moves an item in the indexes and the statistics (schema 11 on)."""


def _owner_index_new(name: str) -> str:
    """Since schema 12: the statements putting ``new`` into FTS5 and its owner's statistics.

    The agent's counts (``<name>_agent_stats``) are kept too; the counts a
    search reads are its owner's (``<name>_owner_stats``, ``<name>_terms``).
    """
    fts, agents, owners = f"{name}_fts", f"{name}_agent_stats", f"{name}_owner_stats"
    vocab, owner = f"{name}_terms", owner_sql("new.scope", "new.user_id")
    return f"""
        INSERT INTO {fts} (rowid, terms, tenant) VALUES (new.rowid, new.terms, new.tenant);
        INSERT INTO {agents} (agent_id, docs, tokens) VALUES (new.agent_id, 1, new.length)
            ON CONFLICT (agent_id) DO UPDATE SET docs = docs + 1,
                tokens = tokens + excluded.tokens;
        INSERT INTO {owners} (agent_id, owner, docs, tokens)
            VALUES (new.agent_id, {owner}, 1, new.length)
            ON CONFLICT (agent_id, owner) DO UPDATE SET docs = docs + 1,
                tokens = tokens + excluded.tokens;
        INSERT INTO {vocab} (agent_id, owner, term, df, max_tf, min_length_1, min_length_2,
                min_length_3)
            SELECT new.agent_id, {owner}, value, 1, count(*),
                CASE count(*) WHEN 1 THEN new.length END,
                CASE count(*) WHEN 2 THEN new.length END,
                CASE WHEN count(*) >= 3 THEN new.length END
            FROM json_each({_term_list("new.terms")})
            WHERE true GROUP BY value
            ON CONFLICT (agent_id, owner, term) DO UPDATE SET df = df + 1,
                max_tf = max(max_tf, excluded.max_tf),
                min_length_1 = {_least("min_length_1")},
                min_length_2 = {_least("min_length_2")},
                min_length_3 = {_least("min_length_3")};"""


def _owner_unindex(name: str) -> str:
    """Since schema 12: the statements taking ``old`` out of FTS5 and its owner's statistics.

    Rows whose counts reach 0 are deleted: no word, and no count, of a
    removed item stays in the statistics.
    """
    fts, agents, owners = f"{name}_fts", f"{name}_agent_stats", f"{name}_owner_stats"
    vocab, owner = f"{name}_terms", owner_sql("old.scope", "old.user_id")
    old_terms = f"(SELECT value FROM json_each({_term_list('old.terms')}))"
    return f"""
        INSERT INTO {fts} ({fts}, rowid, terms, tenant)
            VALUES ('delete', old.rowid, old.terms, old.tenant);
        UPDATE {agents} SET docs = docs - 1, tokens = tokens - old.length
            WHERE agent_id = old.agent_id;
        UPDATE {owners} SET docs = docs - 1, tokens = tokens - old.length
            WHERE agent_id = old.agent_id AND owner = {owner};
        DELETE FROM {owners} WHERE agent_id = old.agent_id AND owner = {owner} AND docs <= 0;
        UPDATE {vocab} SET df = df - 1
            WHERE agent_id = old.agent_id AND owner = {owner} AND term IN {old_terms};
        DELETE FROM {vocab}
            WHERE agent_id = old.agent_id AND owner = {owner} AND df <= 0
              AND term IN {old_terms};"""


def _owner_insert_trigger(name: str) -> str:
    """Since schema 12: the trigger putting a new item of ``name`` in FTS5 and the statistics."""
    return (
        f"CREATE TRIGGER {name}_index_insert AFTER INSERT ON {name}_items"
        f" BEGIN {_owner_index_new(name)} END"
    )


def _owner_statistics(name: str) -> tuple[str, ...]:
    """Schema 12: ``name``'s BM25 statistics per agent and owner, counted from its items.

    ``<name>_owner_stats`` holds the number of items and their total length
    of each agent's shared items (owner ``''``) and of each user's private
    ones (owner: the user id); ``<name>_terms`` the same owners' term counts
    and bounds. A search adds up the rows of the owners its user may read
    (:mod:`prefrontal.stores.statistics_owner`): another user's private
    items never move its scores. The triggers also move an item's counts
    when its scope changes.
    """
    items, owners, vocab = f"{name}_items", f"{name}_owner_stats", f"{name}_terms"
    owner = owner_sql("i.scope", "i.user_id")
    unindex_old, index_new = _owner_unindex(name), _owner_index_new(name)
    return (
        *(f"DROP TRIGGER IF EXISTS {name}_index_{kind}" for kind in ("insert", "delete", "update")),
        f"DROP TABLE {vocab}",
        f"""CREATE TABLE {owners} (
            agent_id TEXT NOT NULL,
            owner TEXT NOT NULL,
            docs INTEGER NOT NULL,
            tokens INTEGER NOT NULL,
            PRIMARY KEY (agent_id, owner)
        ) WITHOUT ROWID""",
        f"""CREATE TABLE {vocab} (
            agent_id TEXT NOT NULL,
            owner TEXT NOT NULL,
            term TEXT NOT NULL,
            df INTEGER NOT NULL,
            max_tf INTEGER NOT NULL,
            min_length_1 INTEGER,
            min_length_2 INTEGER,
            min_length_3 INTEGER,
            PRIMARY KEY (agent_id, owner, term)
        ) WITHOUT ROWID""",
        _owner_insert_trigger(name),
        f"CREATE TRIGGER {name}_index_delete AFTER DELETE ON {items} BEGIN {unindex_old} END",
        f"""CREATE TRIGGER {name}_index_update AFTER UPDATE OF {_MOVED} ON {items}
            BEGIN {unindex_old} {index_new} END""",
        f"""INSERT INTO {vocab} (agent_id, owner, term, df, max_tf, min_length_1, min_length_2,
                min_length_3)
            SELECT agent_id, owner, term, count(*), max(tf),
                min(CASE tf WHEN 1 THEN length END),
                min(CASE tf WHEN 2 THEN length END),
                min(CASE WHEN tf >= 3 THEN length END)
            FROM (
                SELECT i.agent_id AS agent_id, {owner} AS owner, j.value AS term,
                    count(*) AS tf, i.length AS length
                FROM {items} AS i, json_each({_term_list("i.terms")}) AS j
                GROUP BY i.rowid, j.value
            )
            GROUP BY agent_id, owner, term""",
        f"""INSERT INTO {owners} (agent_id, owner, docs, tokens)
            SELECT i.agent_id, {owner}, count(*), sum(i.length) FROM {items} AS i
            GROUP BY i.agent_id, {owner}""",
    )


def _frontal_table(table: str, key: str) -> str:
    return f"""CREATE TABLE {table} (
        agent_id TEXT NOT NULL,
        item_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        scope TEXT NOT NULL,
        kind TEXT NOT NULL,
        status TEXT NOT NULL,
        updated_at INTEGER NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY ({key})
    )"""


def _conversation_table(table: str, key: str) -> str:
    return f"""CREATE TABLE {table} (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        agent_id TEXT NOT NULL,
        item_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        scope TEXT NOT NULL,
        session_id TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        body TEXT NOT NULL,
        UNIQUE ({key})
    )"""


def _scratch_table(table: str, key: str) -> str:
    return f"""CREATE TABLE {table} (
        agent_id TEXT NOT NULL,
        item_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        scope TEXT NOT NULL,
        resolved INTEGER NOT NULL,
        priority REAL NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER,
        body TEXT NOT NULL,
        PRIMARY KEY ({key})
    )"""


_FRONTAL_INDEX = "CREATE INDEX frontal_by_update ON frontal_items (agent_id, updated_at)"
_CONVERSATION_INDEX = (
    "CREATE INDEX conversation_by_time ON conversation_turns (agent_id, created_at, seq)"
)
_SCRATCH_INDEX = "CREATE INDEX scratch_active ON scratch_entries (agent_id, resolved, priority)"

_INITIAL = (
    "CREATE TABLE profiles (agent_id TEXT PRIMARY KEY, body TEXT NOT NULL)",
    _frontal_table("frontal_items", "agent_id, item_id"),
    _FRONTAL_INDEX,
    _conversation_table("conversation_turns", "agent_id, item_id"),
    "CREATE INDEX conversation_by_time ON conversation_turns (agent_id, created_at, seq)",
    """CREATE TABLE conversation_summaries (
        agent_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (agent_id, user_id)
    )""",
    _scratch_table("scratch_entries", "agent_id, item_id"),
    _SCRATCH_INDEX,
    """CREATE TABLE wm_sessions (
        agent_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        version INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (agent_id, user_id, session_id)
    )""",
    "CREATE INDEX wm_by_update ON wm_sessions (agent_id, user_id, updated_at)",
    """CREATE TABLE traces (
        turn_id TEXT PRIMARY KEY,
        parent_turn_id TEXT,
        agent_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        status TEXT NOT NULL,
        started_at INTEGER NOT NULL,
        body TEXT NOT NULL
    )""",
    "CREATE INDEX traces_by_start ON traces (started_at)",
    "CREATE INDEX traces_by_owner ON traces (agent_id, user_id, started_at)",
    "CREATE INDEX traces_by_parent ON traces (parent_turn_id) WHERE parent_turn_id IS NOT NULL",
    *(statement for name in MEMORY_TABLES for statement in _memory_schema(name)),
)

_PER_USER_KEY = "agent_id, item_id, user_id"
"""Ids unique per agent and user; the id before the user so look-ups by id use the index."""


def _rebuilt(table: str, create: str, *after: str) -> tuple[str, ...]:
    """``table`` made anew by ``create`` (of ``<table>_next``), rows and row ids kept.

    Dropping the old table drops its indexes and triggers without firing
    them; ``after`` recreates them on the renamed table.
    """
    return (
        create,
        f"INSERT INTO {table}_next SELECT * FROM {table}",
        f"DROP TABLE {table}",
        f"ALTER TABLE {table}_next RENAME TO {table}",
        *after,
    )


_IDS_PER_USER = (
    *_rebuilt("frontal_items", _frontal_table("frontal_items_next", _PER_USER_KEY), _FRONTAL_INDEX),
    *_rebuilt(
        "conversation_turns",
        _conversation_table("conversation_turns_next", _PER_USER_KEY),
        _CONVERSATION_INDEX,
    ),
    *_rebuilt(
        "scratch_entries", _scratch_table("scratch_entries_next", _PER_USER_KEY), _SCRATCH_INDEX
    ),
    *(
        statement
        for name in MEMORY_TABLES
        for statement in _rebuilt(
            f"{name}_items",
            _items_table(f"{name}_items_next", _PER_USER_KEY),
            _thread_index(name),
            *_index_triggers(name),
        )
    ),
)

_TRACE_INDEXES = {
    "start": "started_at,",
    "agent": "agent_id, started_at,",
    "owner": "agent_id, user_id, started_at,",
    "session": "session_id, started_at,",
    "status": "agent_id, status, started_at,",
}
"""The traces' indexes since schema 10 (the columns before the turn id each ends in)."""


def _trace_words(row: str) -> str:
    """SQL for the text of trace ``row`` (``new`` or ``old``) a search reads: message and reply."""
    return (
        f"coalesce(json_extract({row}.body, '$.user_input'), '') || ' ' || "
        f"coalesce(json_extract({row}.body, '$.ending.reply'), '')"
    )


_TRACE_SEARCH = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS traces_fts USING fts5("
    "words, tokenize = 'unicode61 remove_diacritics 2')",
    *(f"DROP TRIGGER IF EXISTS traces_words_{kind}" for kind in ("insert", "delete", "update")),
    f"""CREATE TRIGGER traces_words_insert AFTER INSERT ON traces BEGIN
        INSERT INTO traces_fts (rowid, words) VALUES (new.rowid, {_trace_words("new")}); END""",
    """CREATE TRIGGER traces_words_delete AFTER DELETE ON traces BEGIN
        DELETE FROM traces_fts WHERE rowid = old.rowid; END""",
    f"""CREATE TRIGGER traces_words_update AFTER UPDATE ON traces BEGIN
        DELETE FROM traces_fts WHERE rowid = old.rowid;
        INSERT INTO traces_fts (rowid, words) VALUES (new.rowid, {_trace_words("new")}); END""",
    "DELETE FROM traces_fts",
    f"INSERT INTO traces_fts (rowid, words) SELECT rowid, {_trace_words('traces')} FROM traces",
)
"""Schema 14: each trace's message and reply in an FTS5 index of its own, kept by triggers
(a trace is saved by an upsert, so its row id, the index's key, stays). Idempotent."""

_TRACE_WORDS_WRITTEN = tuple(
    f"DROP TRIGGER IF EXISTS traces_words_{kind}" for kind in ("insert", "update")
)
"""Schema 19: a trace's words are indexed by the store's put (:mod:`.traces`), which knows
them, instead of by triggers reading them out of the JSON body (tens of kilobytes parsed at
every write); a deletion still takes them out by trigger."""

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "every store kind: tables, indexes, FTS5 and its triggers", _INITIAL),
    Migration(
        2,
        "memory term statistics rebuilt in the current layout, from the items",
        tuple(statement for name in MEMORY_TABLES for statement in _rebuilt_term_statistics(name)),
    ),
    Migration(
        3,
        "ids unique per agent and user: goals, conversation turns, scratch entries, memory items",
        _IDS_PER_USER,
    ),
    Migration(
        4,
        "memory terms analysed anew where the text is not all ASCII: accents folded, "
        "scripts without spaces indexed by pairs of characters, symbols kept",
        (),
        reanalyse=True,
    ),
    Migration(
        5,
        "memory item change counter and deletion log, for vector search kept in memory",
        tuple(statement for name in MEMORY_TABLES for statement in change_log(name)),
    ),
    Migration(
        6,
        "memory BM25 statistics kept per agent, counted anew from the items",
        tuple(statement for name in MEMORY_TABLES for statement in _agent_term_statistics(name)),
    ),
    Migration(
        7,
        "memory deletion log pruned as it grows, past a horizon readers check",
        tuple(statement for name in MEMORY_TABLES for statement in pruned_change_log(name)),
    ),
    Migration(
        8,
        "memory terms indexed by impact class (frequency and length bucket) as well, "
        "so that a top-k search reads only the holders that can reach the k-th score",
        tuple(statement for name in MEMORY_TABLES for statement in _impact_index(name)),
    ),
    Migration(
        9,
        "memory term statistics drop the rows of terms no item holds any more",
        tuple(statement for name in MEMORY_TABLES for statement in _empty_terms_dropped(name)),
    ),
    Migration(
        10,
        "traces indexed for listing newest first by agent, user, session or status, "
        "each index ending in the keyset (started_at, turn_id) a page continues from",
        (
            *(f"DROP INDEX IF EXISTS traces_by_{name}" for name in _TRACE_INDEXES),
            *(
                f"CREATE INDEX traces_by_{name} ON traces ({columns} turn_id)"
                for name, columns in _TRACE_INDEXES.items()
            ),
        ),
    ),
    Migration(
        11,
        "memory full-text indexes hold who may see each item, so that a search's "
        "candidates are the tenant's own items and the agent's shared ones only",
        tuple(statement for name in MEMORY_TABLES for statement in _visibility_indexed(name)),
    ),
    Migration(
        12,
        "memory BM25 statistics kept per agent and owner (the agent's shared items, each "
        "user's private ones): a search counts only what its user may read",
        tuple(statement for name in MEMORY_TABLES for statement in _owner_statistics(name)),
    ),
    Migration(
        13,
        "erasure records: every table of a user's records refuses an insert for a user "
        "erased in this database, whichever process writes",
        _ERASURE_RECORDS,
    ),
    Migration(
        14,
        "traces searchable by the words of the user's message and the reply, "
        "in a full-text index of their own that erase and forget empty with the trace",
        _TRACE_SEARCH,
    ),
    Migration(
        15,
        "framework sessions' items (the Agents SDK's), in order and as given, per session "
        "of a user; an erased user's refused like every other record of theirs",
        _SESSION_ITEMS,
    ),
    Migration(
        16,
        "memory items keep the versions a put replaced (who changed what, when), "
        "deleted with the item",
        tuple(statement for name in MEMORY_TABLES for statement in versions_schema(name)),
    ),
    Migration(
        17,
        "memory recalls counted in a narrow table beside the items, so that recording a "
        "turn's recalls rewrites a page or two instead of a page per item recalled",
        tuple(statement for name in MEMORY_TABLES for statement in recalls_schema(name)),
    ),
    Migration(
        18,
        "traces indexed by whether each is open, so that a turn's end learns its trace has "
        "not ended without reading the trace",
        (OPEN_INDEX,),
    ),
    Migration(
        19,
        "traces' words indexed by the store as it writes each trace, instead of by triggers "
        "that parse its JSON body",
        _TRACE_WORDS_WRITTEN,
    ),
    Migration(
        20,
        "a session's buffer document kept in a column of its own beside the rest of its "
        "state, not escaped as a string inside the state's JSON",
        ("ALTER TABLE wm_sessions ADD COLUMN buffer TEXT",),
    ),
)
LATEST = MIGRATIONS[-1].version


def _reanalyse(connection: sqlite3.Connection, items: str) -> None:
    """Analyse anew the terms of every row of ``items`` whose body is not all ASCII.

    The update trigger moves each row's FTS5 entry and term statistics with it.
    """
    rows = connection.execute(f"SELECT rowid, body FROM {items} WHERE body GLOB '*[^ -~]*'")
    updates = []
    for rowid, body in rows.fetchall():
        analysed = stored_terms(body)
        if analysed is not None:
            updates.append((" ".join(analysed), len(analysed), rowid))
    connection.executemany(f"UPDATE {items} SET terms = ?, length = ? WHERE rowid = ?", updates)


def schema_version(connection: sqlite3.Connection) -> int:
    """The version recorded in the database (0 for a new file)."""
    return int(connection.execute("PRAGMA user_version").fetchone()[0])


def migrate(connection: sqlite3.Connection, migrations: tuple[Migration, ...] = MIGRATIONS) -> int:
    """Apply every migration above the database's version; return the new version.

    Safe when several processes open the same file at once: each step
    re-reads the version inside its write transaction.
    """
    upgraded = _file_of(connection) if schema_version(connection) > 0 else None
    for migration in migrations:
        _apply(connection, migration, latest=migrations[-1].version, upgraded=upgraded)
    return schema_version(connection)


def _apply(
    connection: sqlite3.Connection, migration: Migration, *, latest: int, upgraded: str | None
) -> None:
    """One step, in its own write transaction; ``upgraded`` names an existing file (logged)."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        current = schema_version(connection)
        if current > latest:
            raise StoreError(
                f"database schema version {current} is newer than this prefrontal knows "
                f"({latest}): upgrade prefrontal",
                store="database",
            )
        if current < migration.version:
            with upgrading(upgraded, current, migration):
                for statement in migration.statements:
                    _execute(connection, statement)
                if migration.reanalyse:
                    for name in MEMORY_TABLES:
                        _reanalyse(connection, f"{name}_items")
            connection.execute(f"PRAGMA user_version = {int(migration.version)}")
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")


_ADD_COLUMN = re.compile(r"ALTER TABLE (\w+) ADD COLUMN (\w+) ")


def _execute(connection: sqlite3.Connection, statement: str) -> None:
    """Run ``statement``; an ``ALTER TABLE ... ADD COLUMN`` of a column the table has is
    skipped (SQLite has no ``IF NOT EXISTS`` for it): a step runs again, as every other is
    written to, on a file whose recorded version was set back."""
    added = _ADD_COLUMN.match(statement)
    if added is not None:
        table, column = added.groups()
        columns = connection.execute(f"SELECT name FROM pragma_table_info('{table}')").fetchall()
        if (column,) in columns:
            return
    connection.execute(statement)


def _file_of(connection: sqlite3.Connection) -> str:
    """The path of the connection's main database file (empty for one in memory)."""
    row = connection.execute("PRAGMA database_list").fetchone()
    return str(row[2]) if row is not None else ""
