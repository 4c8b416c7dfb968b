"""New memory items written set-wise on PostgreSQL: a statement per table, not a trigger per row.

An insert into ``<name>_items`` fires the row trigger ``<name>_index``
(:mod:`~prefrontal.stores.postgres.migrations`): it upserts the agent's
counts and, term by term, the agent's term statistics (count of holders,
largest count, shortest holders by count class). Row by row that is a
plpgsql call and two upserts per item, and one ``INSERT`` per item.
:class:`BulkWriter` writes a run of new items with three statements:

- the agent's counts (``<name>_agent_stats``), one upsert for every agent
  of the run, in agent order (so writers take the agents' locks first, in
  one order), then the counts of each agent and owner
  (``<name>_owner_stats``, :mod:`~prefrontal.stores.statistics_owner`);
- the rows, one ``INSERT ... SELECT FROM unnest(...)`` of column arrays
  (the arrays of terms, counts and impact tokens passed as space-separated
  text: no term key nor impact token holds a space), with the setting
  :data:`SETTING` on for that statement only, which the trigger reads to
  leave the new rows' statistics to the writer (schema 10);
- the term statistics per agent, owner and term, counted in Python over the
  whole run, one upsert.

The result is what one upsert after another leaves: the upserts add counts
and widen bounds, which does not depend on their order. Only items whose
key is not in the table yet, not met earlier in the batch, and that
supersede nothing are written so; the others go through ``one_by_one`` (the
store's upsert, trigger and all) in their place in the batch. A row another
transaction inserts between the look-up and the insert is skipped by the
insert (``ON CONFLICT DO NOTHING``), taken out of the counts, and upserted
one by one after the run.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from itertools import groupby
from typing import Any

from prefrontal.stores.postgres.database import Connection
from prefrontal.stores.postgres.migrations import BULK_SETTING
from prefrontal.stores.statistics_owner import SHARED

Row = tuple[Any, ...]
"""One item as :func:`prefrontal.stores.postgres.memory._row` binds it (``$1..$19``)."""

AT_LEAST = 64
"""Runs of fewer new items are written row by row."""

SETTING = BULK_SETTING
"""The transaction setting that, ``on``, has the row trigger skip inserted rows' statistics."""

_AGENT, _ITEM, _USER, _SCOPE, _TERMS, _COUNTS, _LENGTH, _IMPACTS = 0, 1, 2, 3, 14, 15, 16, 18
_TYPES = (
    "text", "text", "text", "text", "text", "double precision", "timestamptz", "timestamptz",
    "text", "bigint", "timestamptz", "text", "bigint", "text", "text", "text", "integer",
    "bytea", "text",
)  # fmt: skip
"""The SQL type of each column array of the insert, in ``$1..$19`` order."""


class BulkWriter:
    """The set-wise insert of new items into memory table ``name`` (see the module docstring)."""

    def __init__(self, name: str, dense: str | None = None) -> None:
        """``dense``: the type of the table's pgvector column, written from each row's
        twentieth value (the vector as text); ``None`` when there is none."""
        items = f"{name}_items"
        types = (*_TYPES, "text") if dense else _TYPES
        column, value = (", dense", f", c20::{dense}") if dense else ("", "")
        named = ", c20" if dense else ""
        self._existing = f"""
            SELECT m.agent_id, m.item_id, m.user_id FROM {items} AS m
            JOIN unnest($1::text[], $2::text[], $3::text[]) AS k(agent_id, item_id, user_id)
              USING (agent_id, item_id, user_id)"""
        arrays = ", ".join(f"${n}::{kind}[]" for n, kind in enumerate(types, start=1))
        self._insert = f"""
            INSERT INTO {items} (agent_id, item_id, user_id, scope, kind, importance,
                created_at, valid_until, superseded_by, recall_count, last_recalled_at,
                thread_id, position, body, terms, counts, length, embedding, impacts{column})
            SELECT c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14,
                string_to_array(c15, ' '), string_to_array(c16, ' ')::integer[], c17, c18,
                string_to_array(c19, ' '){value}
            FROM unnest({arrays}) WITH ORDINALITY
                AS r(c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15, c16, c17,
                     c18, c19{named}, n)
            ORDER BY n
            ON CONFLICT (agent_id, item_id, user_id) DO NOTHING
            RETURNING agent_id, item_id, user_id"""
        self._agents = f"""
            INSERT INTO {name}_agent_stats AS s (agent_id, docs, tokens)
            SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[]) ORDER BY 1
            ON CONFLICT (agent_id) DO UPDATE
            SET docs = s.docs + EXCLUDED.docs, tokens = s.tokens + EXCLUDED.tokens"""
        self._owners = f"""
            INSERT INTO {name}_owner_stats AS s (agent_id, owner, docs, tokens)
            SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[])
            ORDER BY 1, 2
            ON CONFLICT (agent_id, owner) DO UPDATE
            SET docs = s.docs + EXCLUDED.docs, tokens = s.tokens + EXCLUDED.tokens"""
        self._terms = f"""
            INSERT INTO {name}_terms AS v (agent_id, owner, term, df, max_tf, min_length_1,
                min_length_2, min_length_3)
            SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[],
                $5::integer[], $6::integer[], $7::integer[], $8::integer[]) ORDER BY 1, 2, 3
            ON CONFLICT (agent_id, owner, term) DO UPDATE SET df = v.df + EXCLUDED.df,
                max_tf = GREATEST(v.max_tf, EXCLUDED.max_tf),
                min_length_1 = LEAST(v.min_length_1, EXCLUDED.min_length_1),
                min_length_2 = LEAST(v.min_length_2, EXCLUDED.min_length_2),
                min_length_3 = LEAST(v.min_length_3, EXCLUDED.min_length_3)"""
        self._setting = "SELECT set_config($1, $2, true)"

    async def put(
        self,
        connection: Connection,
        rows: Sequence[Row],
        supersedes: Sequence[bool],
        others: Callable[[Connection, list[int]], Awaitable[None]],
    ) -> None:
        """Write ``rows`` in order inside the caller's transaction, new ones set-wise.

        ``supersedes[i]``: row ``i``'s item supersedes another; ``others(connection, at)``
        writes the rows ``at`` (in order) the store's way.
        """
        if len(rows) < AT_LEAST:
            await others(connection, list(range(len(rows))))
            return
        taken = await self._taken(connection, rows)
        fresh: list[bool] = []
        for row, superseding in zip(rows, supersedes, strict=True):
            key = _key(row)
            fresh.append(key not in taken and not superseding)
            taken.add(key)
        at = 0
        for new, run in groupby(fresh):
            size = len(list(run))
            if new and size >= AT_LEAST:
                await self._write_new(connection, rows, at, size, others)
            else:
                await others(connection, list(range(at, at + size)))
            at += size

    async def _taken(self, connection: Connection, rows: Sequence[Row]) -> set[tuple[str, ...]]:
        """The keys (agent, item, user) of ``rows`` already in the table."""
        keys = [[row[n] for row in rows] for n in (_AGENT, _ITEM, _USER)]
        found = await connection.fetch(self._existing, *keys)
        return {(r[0], r[1], r[2]) for r in found}

    async def _write_new(
        self,
        connection: Connection,
        rows: Sequence[Row],
        start: int,
        size: int,
        others: Callable[[Connection, list[int]], Awaitable[None]],
    ) -> None:
        """Insert ``size`` rows from ``start`` (new keys, superseding nothing) with the
        trigger's work done."""
        part = rows[start : start + size]
        await connection.execute(self._agents, *_agent_columns(part))
        await connection.execute(self._owners, *_owner_columns(part))
        columns: list[list[Any]] = [list(column) for column in zip(*part, strict=True)]
        for n in (_TERMS, _COUNTS, _IMPACTS):
            columns[n] = [" ".join(map(str, values)) for values in columns[n]]
        await connection.execute(self._setting, SETTING, "on")
        try:
            written = await connection.fetch(self._insert, *columns)
        finally:
            await connection.execute(self._setting, SETTING, "off")
        inserted = {(r[0], r[1], r[2]) for r in written}
        missed = [row for row in part if _key(row) not in inserted]
        if missed:  # inserted meanwhile by another transaction: counted by the trigger instead
            agents, docs, tokens = _agent_columns(missed)
            await connection.execute(self._agents, agents, [-n for n in docs], [-n for n in tokens])
            agents, owners, docs, tokens = _owner_columns(missed)
            await connection.execute(
                self._owners, agents, owners, [-n for n in docs], [-n for n in tokens]
            )
        counted = [row for row in part if _key(row) in inserted]
        await connection.execute(self._terms, *_term_columns(counted))
        if missed:
            late = [start + n for n, row in enumerate(part) if _key(row) not in inserted]
            await others(connection, late)


def _key(row: Row) -> tuple[str, str, str]:
    return row[_AGENT], row[_ITEM], row[_USER]


def _agent_columns(rows: Sequence[Row]) -> tuple[list[str], list[int], list[int]]:
    """Per agent of ``rows`` (in agent order): the agent, its items and their total length."""
    counts: dict[str, list[int]] = {}
    for row in rows:
        held = counts.setdefault(row[_AGENT], [0, 0])
        held[0] += 1
        held[1] += row[_LENGTH]
    agents = sorted(counts)
    return agents, [counts[a][0] for a in agents], [counts[a][1] for a in agents]


def _owner(row: Row) -> str:
    """The owner whose statistics the row counts in."""
    return SHARED if row[_SCOPE] == "shared" else str(row[_USER])


def _owner_columns(rows: Sequence[Row]) -> tuple[list[str], list[str], list[int], list[int]]:
    """Per agent and owner of ``rows`` (in that order): both, the items and their length."""
    counts: dict[tuple[str, str], list[int]] = {}
    for row in rows:
        held = counts.setdefault((row[_AGENT], _owner(row)), [0, 0])
        held[0] += 1
        held[1] += row[_LENGTH]
    keys = sorted(counts)
    return (
        [agent for agent, _ in keys],
        [owner for _, owner in keys],
        [counts[k][0] for k in keys],
        [counts[k][1] for k in keys],
    )


def _term_columns(rows: Sequence[Row]) -> tuple[list[Any], ...]:
    """``agent, owner, term, df, max_tf, min_length_1, min_length_2, min_length_3`` arrays, a
    row per agent, owner and term key of ``rows``: what their inserts add to the term
    statistics."""
    found: dict[tuple[str, str, str], list[Any]] = {}
    for row in rows:
        agent, owner, length = row[_AGENT], _owner(row), row[_LENGTH]
        for term, tf in zip(row[_TERMS], row[_COUNTS], strict=True):
            entry = found.get((agent, owner, term))
            if entry is None:
                entry = found[(agent, owner, term)] = [0, 0, None, None, None]
            entry[0] += 1
            entry[1] = max(entry[1], tf)
            at = 2 + min(tf, 3) - 1
            if entry[at] is None or length < entry[at]:
                entry[at] = length
    keys = sorted(found)
    values = [found[k] for k in keys]
    return (
        [agent for agent, _, _ in keys],
        [owner for _, owner, _ in keys],
        [term for _, _, term in keys],
        *([entry[n] for entry in values] for n in range(5)),
    )
