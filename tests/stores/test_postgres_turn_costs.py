"""What a turn's statements lean on to spend less of the server's CPU, checked against what
they replace: the search keys written out in the statement (the schema's function), a row's
visible keys in PL/pgSQL (schema 9's SQL function), the check of an open trace (the body's
last characters), LZ4 for the large bodies."""

from __future__ import annotations

from typing import Any

import pytest

from prefrontal.stores import Stores
from prefrontal.stores.postgres import visibility
from prefrontal.stores.postgres.migrations import LARGE_BODIES
from prefrontal.stores.postgres.traces import open_trace
from prefrontal.stores.postgres.visibility import IMPACT, TERM, search_keys
from prefrontal.stores.traces import OPEN_SUFFIX

pytestmark = pytest.mark.anyio

READERS = [
    ("agent-1", "alice", TERM, ["payment", "review"]),
    ("agent-1", "", TERM, []),
    ("ägent\u00e9", "bob o'neil", IMPACT, ["100foo", "3bar"]),
    ("a", "b", TERM, ["~" + "0" * 64, "x"]),
]


async def database_of(stores: Stores) -> Any:
    database = stores.traces.database  # type: ignore[attr-defined]
    await database.read(lambda c: c.fetchval("SELECT 1"), store="test")  # migrated
    return database


async def test_search_keys_written_out_are_the_schema_functions(postgres_stores: Stores) -> None:
    database = await database_of(postgres_stores)

    async def both(connection: Any) -> list[tuple[list[str], list[str]]]:
        found = []
        for agent, reader, marker, keys in READERS:
            called = await connection.fetchval(
                f"SELECT memory_search_keys($1, $2, '{marker}', $3::text[])", agent, reader, keys
            )
            written = await connection.fetchval(
                f"SELECT {search_keys('$1', '$2', marker, '$3::text[]')}", agent, reader, keys
            )
            found.append((list(called), list(written)))
        return found

    for called, written in await database.read(both, store="test"):
        assert written == called


BODIES = [
    '{"turn_id":"t1"' + OPEN_SUFFIX,
    '{"turn_id":"t2","ending":{"reply":"ok"}}',
    '{"turn_id":"t3","user_input":"é€😀"' + OPEN_SUFFIX,
    '{"user_input":"' + OPEN_SUFFIX + '","ending":{"reply":"x"}}',
    '{"user_input":",\\"ending\\":null}","ending":null}',
    '{"ending":null}',
    OPEN_SUFFIX,
    OPEN_SUFFIX[1:],
    "null}",
    "",
    "}",
    ',"ending":null} ',
    ',"ending":,"ending":null}',
    ',"ending":null},"ending":null}',
    ',"ending":null}x,"ending":null}',
    ',"ending":"null}"',
    '"ending":null}',
    ',"ending": null}',
]


async def test_the_open_check_is_whether_the_body_ends_with_the_suffix(
    postgres_stores: Stores,
) -> None:
    database = await database_of(postgres_stores)
    check = open_trace("t")

    async def run(connection: Any) -> list[bool]:
        rows = await connection.fetch(
            f"SELECT {check} FROM unnest($1::text[]) WITH ORDINALITY AS t(body, n) ORDER BY t.n",
            BODIES,
        )
        return [row[0] for row in rows]

    found = await database.read(run, store="test")
    assert found == [body.endswith(OPEN_SUFFIX) for body in BODIES]
    assert any(found) and not all(found)


async def test_large_bodies_are_compressed_by_lz4_when_the_server_has_it(
    postgres_stores: Stores,
) -> None:
    database = await database_of(postgres_stores)

    async def run(connection: Any) -> tuple[bool, list[str]]:
        offered = await connection.fetchval(
            "SELECT 'lz4' = ANY (enumvals) FROM pg_settings"
            " WHERE name = 'default_toast_compression'"
        )
        methods = [
            await connection.fetchval(
                "SELECT attcompression::text FROM pg_attribute"
                " WHERE attrelid = $1::regclass AND attname = 'body'",
                table,
            )
            for table in LARGE_BODIES
        ]
        return bool(offered), methods

    offered, methods = await database.read(run, store="test")
    assert methods == [("l" if offered else "")] * len(LARGE_BODIES)


ROWS = [
    ("agent-1", "alice", "private", ["payment", "review"], ["100payment", "200review"]),
    ("agent-1", "alice", "shared", ["payment"], []),
    ("ägent\u00e9", "bob o'neil", "private", [], ["3bar"]),
    ("a", "", "shared", [], []),
]


async def test_visible_keys_in_plpgsql_are_schema_9s(postgres_stores: Stores) -> None:
    database = await database_of(postgres_stores)
    sql_function = visibility.FUNCTIONS[0].replace(
        "memory_visible_keys(", "memory_visible_keys_of_schema_9(", 1
    )

    async def both(connection: Any) -> list[tuple[str, list[str], list[str]]]:
        await connection.execute(sql_function)
        found = []
        for row in ROWS:
            kept = await connection.fetchval(
                "SELECT memory_visible_keys($1, $2, $3, $4::text[], $5::text[])", *row
            )
            planned = await connection.fetchval(
                "SELECT memory_visible_keys_of_schema_9($1, $2, $3, $4::text[], $5::text[])", *row
            )
            language = await connection.fetchval(
                "SELECT l.lanname FROM pg_proc AS p JOIN pg_language AS l ON l.oid = p.prolang"
                " WHERE p.proname = 'memory_visible_keys'"
            )
            found.append((language, list(kept), list(planned)))
        return found

    for language, kept, planned in await database.write(both, store="test"):
        assert language == "plpgsql"
        assert kept == planned
