"""Erase over HTTP while two server workers take a user's writes: nothing of the user stays.

``prefrontal serve http --workers 2`` (two uvicorn processes on one port,
SO_REUSEPORT) over one SQLite file or one PostgreSQL database. Writers on
127.0.0.1 open a new connection for every request (the kernel spreads
them over both workers) and keep writing for ``maya`` and ``sam``: turns
started and ended, memories remembered. Meanwhile ``DELETE /v1/users/maya``
erases her, and the writers go on for a while. Afterwards the database holds
nothing of maya, every write of hers after the erase answered 410 Gone,
sam's writes all landed, and once ``readmit`` lifts the record maya's id
may be written again.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path

import anyio
import asyncpg
import httpx
import pytest

from prefrontal import Stores
from prefrontal.memory import MemoryAPI
from prefrontal.stores import postgres, sqlite
from prefrontal.stores.erasures import TENANT_TABLES
from tests.conftest import fixed_clock
from tests.servers.harness import AGENT_KEY, DEADLINE, free_port, keys_document, server_env
from tests.servers.test_serve_startup import _listeners

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(os.name != "posix", reason="SO_REUSEPORT and /proc"),
]
AGENT, ERASED, STAYS = "atlas", "maya", "sam"
WRITERS = 4
"""Writers at once, each going round both users in a session of its own."""
AFTER_ERASE_S = 1.5
"""How long the writers go on after the erase answered."""
LANDED = {200, 201}


@contextmanager
def two_workers(db: str) -> Iterator[str]:
    """``prefrontal serve http --workers 2`` on ``db`` with the test keys: its URL.

    Without the test clock: each worker would keep one of its own, and both would make
    the same turn ids. Waits up to two minutes for both to listen and answer.
    """
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = server_env(test_clock=False, PREFRONTAL_API_KEYS=keys_document())
    args = ["serve", "http", "--port", str(port), "--db", db, "--workers", "2", *DEADLINE]
    with tempfile.TemporaryFile("w+") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "prefrontal", *args], env=env, stdout=log, stderr=log
        )
        try:
            give_up = time.monotonic() + 120
            while len(_listeners(str(port))) < 2 or not answers(base):
                if process.poll() is not None or time.monotonic() > give_up:
                    log.seek(0)
                    raise AssertionError(f"the server did not start: {log.read()}")
                time.sleep(0.2)
            yield base
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=60)


def answers(base: str) -> bool:
    """True when the server at ``base`` answers ``/healthz``."""
    try:
        return httpx.get(f"{base}/healthz", timeout=2.0).status_code == 200
    except httpx.TransportError:
        return False


Counter = Callable[[str], Awaitable[dict[str, int]]]
"""The rows a user of the agent owns in each table of the database (tables with some)."""


def sqlite_rows(path: Path) -> Counter:
    """Counts a user's rows in every table of the SQLite file at ``path``."""

    async def count(user: str) -> dict[str, int]:
        with closing(sqlite3.connect(path)) as connection:
            found = {
                table: int(
                    connection.execute(
                        f"SELECT count(*) FROM {table} WHERE agent_id = ? AND user_id = ?",
                        (AGENT, user),
                    ).fetchone()[0]
                )
                for table in TENANT_TABLES
            }
        return {table: n for table, n in found.items() if n}

    return count


def postgres_rows(dsn: str) -> Counter:
    """Counts a user's rows in every table of the ``prefrontal`` schema of database ``dsn``."""

    async def count(user: str) -> dict[str, int]:
        connection = await asyncpg.connect(dsn, server_settings={"search_path": "prefrontal"})
        try:
            found = {
                table: int(
                    await connection.fetchval(
                        f"SELECT count(*) FROM {table} WHERE agent_id = $1 AND user_id = $2",
                        AGENT,
                        user,
                    )
                )
                for table in TENANT_TABLES
            }
        finally:
            await connection.close()
        return {table: n for table, n in found.items() if n}

    return count


async def hammer_and_erase(base: str) -> dict[str, list[int]]:
    """Write for both users through fresh connections, erase maya meanwhile, write on a while.

    The statuses each user's calls got, maya's split at the erase's answer:
    ``maya_before``, ``maya_after`` (the ends of turns and the memories sent after the
    erase answered; a turn started then answers, but only its end would write), ``sam``.
    """
    auth = {"Authorization": f"Bearer {AGENT_KEY}"}
    seen: dict[str, list[int]] = {"maya_before": [], "maya_after": [], "sam": []}
    erased, stop, landed = anyio.Event(), anyio.Event(), anyio.Event()
    fresh = httpx.Limits(max_keepalive_connections=0)

    async def round_of(client: httpx.AsyncClient, user: str, w: int, n: int) -> None:
        label = STAYS if user == STAYS else ("maya_after" if erased.is_set() else "maya_before")
        turn = await client.post(
            "/v1/turns",
            json={"user_id": user, "session_id": f"s{w}", "user_input": f"marker {n}"},
        )
        if label != "maya_after":
            seen[label].append(turn.status_code)
        if turn.status_code in LANDED:
            ended = await client.post(
                f"/v1/turns/{turn.json()['turn_id']}/end",
                json={"user_id": user, "reply": f"marker reply {n}"},
            )
            seen[label].append(ended.status_code)
        kept = await client.post(
            "/v1/memories", json={"user_id": user, "content": f"marker kept {n}"}
        )
        seen[label].append(kept.status_code)
        if user == ERASED and kept.status_code in LANDED:
            landed.set()

    async def writer(w: int) -> None:
        async with httpx.AsyncClient(
            base_url=base, headers=auth, timeout=120, limits=fresh
        ) as client:
            for n in range(10_000):
                if stop.is_set():
                    return
                await round_of(client, ERASED, w, n)
                await round_of(client, STAYS, w, n)

    async with anyio.create_task_group() as group:
        for w in range(WRITERS):
            group.start_soon(writer, w)
        with anyio.fail_after(120):
            await landed.wait()
        async with httpx.AsyncClient(base_url=base, headers=auth, timeout=120) as client:
            answer = await client.delete(f"/v1/users/{ERASED}")
        assert answer.status_code == 200, answer.text
        assert sum(answer.json()["removed"].values()) > 0
        erased.set()
        await anyio.sleep(AFTER_ERASE_S)
        stop.set()
    return seen


async def erased_across_workers(
    base: str, open_stores: Callable[[], Stores], rows: Counter
) -> None:
    """The whole check, on the two workers at ``base``, with their stores and rows at hand."""
    seen = await hammer_and_erase(base)
    assert len(_listeners(base.rsplit(":", 1)[1])) == 2
    assert set(seen["sam"]) == LANDED
    # maya's calls in flight when the erase came: done first, refused, or cancelled (503)
    assert set(seen["maya_before"]) <= LANDED | {404, 410, 503}
    assert seen["maya_after"] and set(seen["maya_after"]) <= {404, 410}
    assert 410 in seen["maya_after"]
    assert await rows(ERASED) == {}
    assert {"episodic_items", "conversation_turns", "traces", "wm_sessions"} <= set(
        await rows(STAYS)
    )
    stores = open_stores()
    try:
        assert await MemoryAPI(stores, clock=fixed_clock).readmit(AGENT, ERASED)
    finally:
        await stores.aclose()
    auth = {"Authorization": f"Bearer {AGENT_KEY}"}
    async with httpx.AsyncClient(base_url=base, headers=auth, timeout=60) as client:
        again = await client.post(
            "/v1/memories", json={"user_id": ERASED, "content": "marker welcome back"}
        )
    assert again.status_code == 201, again.text
    assert sum((await rows(ERASED)).values()) == 1


async def test_sqlite_two_workers_never_write_an_erased_user_back(tmp_path: Path) -> None:
    """Over one SQLite file, two workers' writes of a user erased meanwhile are refused."""
    db = tmp_path / "stores.db"
    with two_workers(str(db)) as base:
        await erased_across_workers(base, lambda: sqlite.open_stores(db), sqlite_rows(db))


async def test_postgres_two_workers_never_write_an_erased_user_back(postgres_dsn: str) -> None:
    """Over one PostgreSQL database, two workers' writes of a user erased meanwhile are refused."""
    with two_workers(postgres_dsn) as base:
        await erased_across_workers(
            base, lambda: postgres.open_stores(postgres_dsn), postgres_rows(postgres_dsn)
        )
