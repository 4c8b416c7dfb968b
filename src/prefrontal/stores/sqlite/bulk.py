"""New memory items written set-wise: a statement per table, not the triggers' statements per row.

An insert into ``<name>_items`` fires the triggers of
:func:`~prefrontal.stores.sqlite.migrations.insert_triggers`: the change
stamp, the FTS5 index, the item counts and term statistics of the agent,
and the impact index. Row by row that is about a dozen statements per item.
:class:`BulkWriter` writes a run of new items the way those triggers would
have left them, one row after another, but with a statement per table:

- the rows in one ``executemany``, each with the row id and change stamp
  the triggers would have given it (the largest row id plus one, the next
  change count);
- their FTS5 entries in one statement, and their impact tokens
  (:func:`~prefrontal.retrieval.impacts.token`, in the order the trigger's
  SQL writes them: terms by code point) in one ``executemany`` of values,
  each entry with its :mod:`~prefrontal.stores.sqlite.visibility` token
  (computed here as the items' generated ``tenant`` column does: reading it
  back row by row costs ten times the insert);
- the term statistics counted in Python over the whole run from each
  row's analysed terms (``words``), one upsert per distinct term of each
  agent and owner (:mod:`~prefrontal.stores.statistics_owner`), one per
  agent and owner for their counts and one per agent for its own.

The insert triggers are dropped for the run and created again from the text
``sqlite_master`` held, inside the caller's transaction: no other connection
ever sees the table without them, and a rollback restores them with the
rest. Only items whose key is not in the table yet, not met earlier in the
batch, and that supersede nothing are written so; the others go through
``one_by_one`` (the store's upsert, triggers and all) in their place in the
batch, so the result is the one item-by-item writes leave. A database whose
insert triggers are not exactly those this module knows (a newer schema)
is written row by row.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from itertools import chain, groupby
from operator import itemgetter
from typing import Any

from prefrontal.retrieval.impacts import length_bucket
from prefrontal.stores.erasures import REFUSED
from prefrontal.stores.sqlite.driver import sqlite3
from prefrontal.stores.sqlite.migrations import insert_triggers
from prefrontal.stores.statistics_owner import SHARED

Row = dict[str, Any]
"""One item as :func:`prefrontal.stores.sqlite.memory._row` binds it, with ``words``: its
analysed terms, in order (``terms`` joined by spaces)."""

AT_LEAST = 64
"""Runs of fewer new items are written row by row (dropping triggers costs a schema change)."""

_ERASED = """SELECT 1 FROM erased_tenants AS e JOIN json_each(?) AS t
    ON e.agent_id = json_extract(t.value, '$[0]') AND e.user_id = json_extract(t.value, '$[1]')
    LIMIT 1"""
"""Whether any tenant of a JSON list of ``[agent, user]`` pairs has an erasure record."""
_INSERTS = re.compile(r"\b(?:BEFORE|AFTER|INSTEAD\s+OF)\s+INSERT\b", re.IGNORECASE)
_COLUMNS = (
    "agent_id, item_id, user_id, scope, kind, importance, created_at, valid_until,"
    " superseded_by, recall_count, last_recalled_at, thread_id, position, body, terms,"
    " length, embedding"
)
_FIELDS = (
    "agent",
    "item",
    "user",
    "scope",
    "kind",
    "importance",
    "created_at",
    "valid_until",
    "superseded_by",
    "recall_count",
    "last_recalled_at",
    "thread_id",
    "position",
    "body",
    "terms",
    "length",
    "embedding",
)


_values = itemgetter(*_FIELDS)
"""A row's values in the order of :data:`_COLUMNS`."""


def _tenant(row: Row) -> str:
    """The row's visibility token as the items table's generated ``tenant`` column holds it."""
    agent = row["agent"].encode().hex().upper()
    if row["scope"] == "shared":
        return f"s{agent}"
    return f"p{agent}x{row['user'].encode().hex().upper()}"


def _tenants(rows: Sequence[Row]) -> list[str]:
    """:func:`_tenant` of each of ``rows``, worked out once per agent, user and scope."""
    known: dict[tuple[str, str, str], str] = {}
    out = []
    for row in rows:
        key = (row["agent"], row["user"], row["scope"])
        token = known.get(key)
        if token is None:
            token = known[key] = _tenant(row)
        out.append(token)
    return out


def _owner(row: Row) -> tuple[str, str]:
    """The agent and owner whose statistics the row counts in."""
    return row["agent"], SHARED if row["scope"] == "shared" else row["user"]


def _least(column: str) -> str:
    return f"coalesce(min({column}, excluded.{column}), {column}, excluded.{column})"


class BulkWriter:
    """The set-wise insert of new items into memory table ``name`` (see the module docstring)."""

    def __init__(self, name: str) -> None:
        items, stats = f"{name}_items", f"{name}_stats"
        self.table = items
        self.triggers = insert_triggers(name)
        self._triggers = (
            "SELECT name, sql FROM sqlite_master"
            " WHERE type = 'trigger' AND tbl_name = ? ORDER BY rowid"
        )
        self._existing = f"""
            SELECT item_id FROM {items}
            WHERE agent_id = :agent AND user_id = :user
              AND item_id IN (SELECT value FROM json_each(:ids))"""
        self._last_row = f"SELECT coalesce(max(rowid), 0) FROM {items}"
        self._changes = f"SELECT changes FROM {stats}"
        marks = ", ".join("?" * (len(_FIELDS) + 2))
        self._insert = f"INSERT INTO {items} (rowid, {_COLUMNS}, changed) VALUES ({marks})"
        self._fts = f"""INSERT INTO {name}_fts (rowid, terms, tenant)
            SELECT rowid, terms, tenant FROM {items} WHERE rowid > ?"""
        self._impacts = f"INSERT INTO {name}_impacts (rowid, impacts, tenant) VALUES (?, ?, ?)"
        self._agents = f"""
            INSERT INTO {name}_agent_stats (agent_id, docs, tokens) VALUES (?, ?, ?)
            ON CONFLICT (agent_id) DO UPDATE SET docs = docs + excluded.docs,
                tokens = tokens + excluded.tokens"""
        self._owners = f"""
            INSERT INTO {name}_owner_stats (agent_id, owner, docs, tokens) VALUES (?, ?, ?, ?)
            ON CONFLICT (agent_id, owner) DO UPDATE SET docs = docs + excluded.docs,
                tokens = tokens + excluded.tokens"""
        self._terms = f"""
            INSERT INTO {name}_terms (agent_id, owner, term, df, max_tf, min_length_1,
                min_length_2, min_length_3)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (agent_id, owner, term) DO UPDATE SET df = df + excluded.df,
                max_tf = max(max_tf, excluded.max_tf),
                min_length_1 = {_least("min_length_1")},
                min_length_2 = {_least("min_length_2")},
                min_length_3 = {_least("min_length_3")}"""
        self._stamp = f"UPDATE {stats} SET changes = changes + ?"

    def ready(self, connection: sqlite3.Connection) -> list[tuple[str, str]] | None:
        """The table's insert triggers in creation order, or ``None`` if they are not all known."""
        found = [
            (str(name), str(sql))
            for name, sql in connection.execute(self._triggers, (self.table,))
            if _INSERTS.search(str(sql).split(" BEGIN ", 1)[0])
        ]
        known = dict(found) == self.triggers and len(found) == len(self.triggers)
        return found if known else None

    def put(
        self,
        connection: sqlite3.Connection,
        rows: Sequence[Row],
        one_by_one: Callable[[sqlite3.Connection, Row], None],
    ) -> None:
        """Write ``rows`` in order inside the caller's transaction, new ones set-wise."""
        triggers = self.ready(connection) if len(rows) >= AT_LEAST else None
        if triggers is None:
            for row in rows:
                one_by_one(connection, row)
            return
        taken = self._taken(connection, rows)
        fresh: list[bool] = []
        for row in rows:
            key = (row["agent"], row["item"], row["user"])
            fresh.append(key not in taken and row["supersedes"] is None)
            taken.add(key)
        at = 0
        for new, run in groupby(fresh):
            size = len(list(run))
            part = rows[at : at + size]
            at += size
            if new and size >= AT_LEAST:
                self._write_new(connection, part, triggers)
            else:
                for row in part:
                    one_by_one(connection, row)

    def _taken(self, connection: sqlite3.Connection, rows: Sequence[Row]) -> set[tuple[str, ...]]:
        """The keys (agent, item, user) of ``rows`` already in the table."""
        ids: dict[tuple[str, str], list[str]] = {}
        for row in rows:
            ids.setdefault((row["agent"], row["user"]), []).append(row["item"])
        taken: set[tuple[str, ...]] = set()
        for (agent, user), items in ids.items():
            params = {"agent": agent, "user": user, "ids": json.dumps(items)}
            found = connection.execute(self._existing, params)
            taken.update((agent, item, user) for (item,) in found)
        return taken

    def _write_new(
        self, connection: sqlite3.Connection, rows: Sequence[Row], triggers: list[tuple[str, str]]
    ) -> None:
        """Insert ``rows`` (new keys, superseding nothing) with the insert triggers' work done.

        Refuses the run, as the erasure trigger would, when a row's tenant has
        an erasure record (:mod:`prefrontal.stores.erasures`).
        """
        tenants = json.dumps(sorted({(row["agent"], row["user"]) for row in rows}))
        if connection.execute(_ERASED, (tenants,)).fetchone() is not None:
            raise sqlite3.IntegrityError(REFUSED)
        for name, _ in triggers:
            connection.execute(f'DROP TRIGGER "{name}"')
        try:
            self._insert_rows(connection, rows)
        finally:
            for _, sql in triggers:
                connection.execute(sql)

    def _insert_rows(self, connection: sqlite3.Connection, rows: Sequence[Row]) -> None:
        last = int(connection.execute(self._last_row).fetchone()[0])
        changes = int(connection.execute(self._changes).fetchone()[0])
        connection.executemany(
            self._insert,
            ((last + n, *_values(row), changes + n) for n, row in enumerate(rows, start=1)),
        )
        connection.execute(self._fts, (last,))
        statistics = _Statistics()
        tokens = statistics.count(rows)
        rowids = range(last + 1, last + 1 + len(rows))
        connection.executemany(self._impacts, zip(rowids, tokens, _tenants(rows), strict=True))
        connection.executemany(self._agents, statistics.agent_rows())
        connection.executemany(self._owners, statistics.owner_rows())
        connection.executemany(self._terms, statistics.term_rows())
        connection.execute(self._stamp, (len(rows),))


class _Statistics:
    """Item counts per agent and owner, term statistics per agent, owner and term, as the
    triggers keep them.

    Most items hold each of their terms once: those terms are counted, and
    their shortest lengths found, by C-level ``Counter``, ``dict`` and
    ``itertools`` calls over the whole run, not a Python step per term.
    """

    def __init__(self) -> None:
        self.owners: dict[tuple[str, str], list[int]] = {}
        """Per agent and owner: items, total length."""
        self.once: dict[tuple[str, str], dict[int, list[str]]] = {}
        """Per agent, owner and item length, the terms held once by each item of that length,
        one list per length (no container per item outlives its step: fewer for the
        collector)."""
        self.more: dict[tuple[str, str], list[tuple[int, dict[str, int]]]] = {}
        """Per agent and owner, the length and the terms held more than once of each item that
        has some."""
        self.codes: dict[int, tuple[str, str, str, str]] = {}
        """Per item length: :meth:`_codes`."""

    def count(self, rows: Sequence[Row]) -> list[str]:
        """Count ``rows``; return the impact tokens of each, as the impact trigger writes them."""
        tokens: list[str] = []
        add = tokens.append
        last: tuple[str, str] | None = None
        counts: list[int] = [0, 0]
        once: dict[int, list[str]] = {}
        more: list[tuple[int, dict[str, int]]] = []
        for row in rows:
            owner, words, length = _owner(row), row["words"], row["length"]
            if owner != last:
                last = owner
                counts = self.owners.setdefault(owner, [0, 0])
                once = self.once.setdefault(owner, {})
                more = self.more.setdefault(owner, [])
            counts[0] += 1
            counts[1] += length
            distinct = sorted(set(words))
            codes = self.codes.get(length) or self._codes(length)
            held_once = once.get(length)
            if held_once is None:
                held_once = once[length] = []
            if len(distinct) == len(words):
                held_once.extend(distinct)
                add(codes[1] + codes[0].join(distinct) if distinct else "")
                continue
            held = dict.fromkeys(distinct, 0)  # by code point, as the tokens are written
            for word in words:
                held[word] += 1
            held_once.extend([term for term, tf in held.items() if tf == 1])
            more.append((length, {term: tf for term, tf in held.items() if tf > 1}))
            add(" ".join([codes[tf if tf < 3 else 3] + term for term, tf in held.items()]))
        return tokens

    def _codes(self, length: int) -> tuple[str, str, str, str]:
        """The impact codes of an item of ``length`` terms by frequency class (0: the joint)."""
        bucket = length_bucket(length)
        once, twice, more = (f"{klass}{bucket:02d}" for klass in (1, 2, 3))
        codes = self.codes[length] = (f" {once}", once, twice, more)
        return codes

    def agent_rows(self) -> list[tuple[str, int, int]]:
        """``(agent, items, total length)`` for each agent counted."""
        agents: dict[str, list[int]] = {}
        for (agent, _), (docs, tokens) in self.owners.items():
            counts = agents.setdefault(agent, [0, 0])
            counts[0] += docs
            counts[1] += tokens
        return [(agent, docs, tokens) for agent, (docs, tokens) in agents.items()]

    def owner_rows(self) -> list[tuple[str, str, int, int]]:
        """``(agent, owner, items, total length)`` for each agent and owner counted."""
        return [(*owner, docs, tokens) for owner, (docs, tokens) in self.owners.items()]

    def term_rows(self) -> list[tuple[Any, ...]]:
        """``(agent, owner, term, df, max_tf, min_length_1, min_length_2, min_length_3)`` per
        term."""
        rows: list[tuple[Any, ...]] = []
        for owner in self.owners:
            once = self.once[owner]
            df = Counter(chain.from_iterable(once.values()))
            first: dict[str, int] = {}
            for length in sorted(once, reverse=True):  # a later (shorter) length overwrites
                first.update(dict.fromkeys(once[length], length))
            largest: dict[str, int] = {}
            shortest: tuple[dict[str, int], dict[str, int]] = ({}, {})
            for length, more in sorted(self.more[owner], key=_length, reverse=True):  # likewise
                df.update(more.keys())
                for term, tf in more.items():
                    largest[term] = max(largest.get(term, 0), tf)
                    shortest[min(tf, 3) - 2][term] = length
            second, third = shortest
            rows.extend(
                (
                    *owner,
                    term,
                    n,
                    largest.get(term, 1),
                    first.get(term),
                    second.get(term),
                    third.get(term),
                )
                for term, n in df.items()
            )
        return rows


_length = itemgetter(0)
"""An ``(length, ...)`` entry's length."""
