"""Erase across processes: a writer in another process never writes an erased user back.

A second process (``erase_writer.py``) writes for ``alice`` and ``bob`` on
every write path in a loop over the same SQLite file or PostgreSQL schema.
This process erases ``alice`` while that goes on, lets the writer go on for a
while, stops it, and then no store holds anything of ``alice``: the
database's erasure record refused the writer's later writes. ``bob`` goes on
being written throughout; ``readmit`` lets ``alice``'s id be written again.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import pytest

from prefrontal import Stores
from prefrontal.memory import MemoryAPI
from prefrontal.stores import (
    FrontalQuery,
    MemoryQuery,
    SessionKey,
    Tenant,
    TraceQuery,
    postgres,
    sqlite,
)
from tests.conftest import fixed_clock

pytestmark = pytest.mark.anyio
WRITER = Path(__file__).with_name("erase_writer.py")
ALICE, BOB = Tenant(agent_id="atlas", user_id="alice"), Tenant(agent_id="atlas", user_id="bob")
AFTER_ERASE_S = 1.5
"""How long the writer goes on writing after the erase returned."""


async def held(stores: Stores, tenant: Tenant) -> dict[str, int]:
    """How many records of ``tenant`` each store kind holds (only kinds with some)."""
    now = datetime(2026, 3, 3, tzinfo=UTC) + timedelta(days=1)
    query = MemoryQuery(text="marker", limit=1000, now=now)
    key = SessionKey(agent_id=tenant.agent_id, user_id=tenant.user_id, session_id="s1")
    traces = TraceQuery(agent_id=tenant.agent_id, user_id=tenant.user_id)
    counts = {
        "episodic": len(await stores.episodic.search(tenant, query)),
        "semantic": len(await stores.semantic.search(tenant, query)),
        "conversation": len(await stores.conversation.recent(tenant, limit=1000)),
        "summary": int(await stores.conversation.get_summary(tenant) is not None),
        "frontal_cortex": len(await stores.frontal_cortex.query(tenant, FrontalQuery())),
        "scratch_page": len(await stores.scratch_page.active(tenant, now=now, limit=1000)),
        "session": int(await stores.working_memory.load(key) is not None),
        "traces": len(await stores.traces.list(traces)),
    }
    return {kind: n for kind, n in counts.items() if n}


async def erase_beside_a_writer(
    open_stores: object, args: list[str], tmp_path: Path
) -> tuple[dict[str, object], Stores]:
    """Start the writer, erase ``alice`` once it wrote, let it write on, stop it; its report."""
    stop, out = tmp_path / "stop", tmp_path / "out.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    command = [sys.executable, str(WRITER), *args, str(stop), str(out)]
    ready = anyio.Event()

    async def drain(stream: AsyncIterable[bytes]) -> None:
        """Read the writer's output to the end (its logs too), noting its ``ready``."""
        seen = b""
        async for chunk in stream:
            seen = (seen + chunk)[-64:]
            if b"ready\n" in seen:
                ready.set()

    async with (
        await anyio.open_process(command, env=env, stderr=None) as writer,
        anyio.create_task_group() as group,
    ):
        assert writer.stdout is not None
        group.start_soon(drain, writer.stdout)
        with anyio.fail_after(120):
            await ready.wait()
        stores: Stores = open_stores()  # type: ignore[operator]
        report = await MemoryAPI(stores, clock=fixed_clock).erase("atlas", "alice")
        assert report.total > 0
        await anyio.sleep(AFTER_ERASE_S)
        await anyio.Path(stop).touch()
        with anyio.fail_after(120):
            assert await writer.wait() == 0
    return json.loads(await anyio.Path(out).read_text()), stores


async def check(result: dict[str, object], stores: Stores) -> None:
    """Nothing of alice is left, her writes after the erase were refused, bob's all landed."""
    try:
        assert result["errors"] == []
        assert await held(stores, ALICE) == {}
        assert int(str(result["refused"])) >= 1
        assert int(str(result["bob_rounds"])) >= 2
        assert {"episodic", "frontal_cortex", "traces"} <= set(await held(stores, BOB))
        memory = MemoryAPI(stores, clock=fixed_clock)
        assert await memory.readmit("atlas", "alice")
        await memory.remember(ALICE, "marker welcome back")
        assert await held(stores, ALICE) == {"semantic": 1}
    finally:
        await stores.aclose()


async def test_sqlite_writer_in_another_process_cannot_write_an_erased_user_back(
    tmp_path: Path,
) -> None:
    """On one SQLite file, another process's writes of an erased user are refused."""
    path = tmp_path / "stores.db"
    await sqlite.open_stores(path).aclose()
    result, stores = await erase_beside_a_writer(
        lambda: sqlite.open_stores(path), ["sqlite", str(path), "-"], tmp_path
    )
    await check(result, stores)


async def test_postgres_writer_in_another_process_cannot_write_an_erased_user_back(
    postgres_dsn: str, postgres_schema: str, tmp_path: Path
) -> None:
    """On one PostgreSQL schema, another process's writes of an erased user are refused."""
    await postgres.open_stores(postgres_dsn, schema=postgres_schema, max_size=2).aclose()
    result, stores = await erase_beside_a_writer(
        lambda: postgres.open_stores(postgres_dsn, schema=postgres_schema, max_size=4),
        ["postgres", postgres_dsn, postgres_schema],
        tmp_path,
    )
    await check(result, stores)
