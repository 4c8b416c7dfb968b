"""A write that returned survives SIGKILL of its process, and the file stays sound."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from prefrontal.stores.sqlite.driver import sqlite3

pytestmark = pytest.mark.slow

WRITER = textwrap.dedent(
    """
    import sys, anyio
    from prefrontal.stores import ConversationTurn, MemoryItem, Role, sqlite

    async def main(path, start):
        stores = sqlite.open_stores(path)
        n = start
        while True:
            batch = [
                MemoryItem(item_id=f"m{n}-{k}", agent_id="a", user_id="u",
                           content=f"memory {n} part {k} about durable writes and kiwis")
                for k in range(1 + n % 5)
            ]
            await stores.episodic.put_many(batch)
            await stores.conversation.append(ConversationTurn(
                item_id=f"t{n}", agent_id="a", user_id="u", session_id="s",
                role=Role.USER, content=f"turn {n}"))
            print(n, len(batch), flush=True)
            n += 1

    anyio.run(main, sys.argv[1], int(sys.argv[2]))
    """
)


def run_and_kill(path: Path, start: int, acknowledged: int, writer: str = WRITER) -> dict[int, int]:
    """Start a writer, read its acknowledgements, SIGKILL it mid-stream; return what it acked."""
    acked: dict[int, int] = {}
    command = [sys.executable, "-c", writer, str(path), str(start)]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as child:
        assert child.stdout is not None
        deadline = time.monotonic() + 60
        while len(acked) < acknowledged and time.monotonic() < deadline:
            line = child.stdout.readline()
            if not line:
                break
            n, size = map(int, line.split())
            acked[n] = size
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    assert child.returncode == -signal.SIGKILL
    return acked


def check(path: Path, acked: dict[int, int]) -> None:
    """Every acknowledged write is present and the database and its index are sound."""
    connection = sqlite3.connect(path)
    try:
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        connection.execute("INSERT INTO episodic_fts (episodic_fts) VALUES ('integrity-check')")
        items = {row[0] for row in connection.execute("SELECT item_id FROM episodic_items")}
        turns = {row[0] for row in connection.execute("SELECT item_id FROM conversation_turns")}
        for n, size in acked.items():
            assert {f"m{n}-{k}" for k in range(size)} <= items
            assert f"t{n}" in turns
        stats = connection.execute("SELECT agent_id, docs, tokens FROM episodic_agent_stats")
        assert (
            stats.fetchall()
            == connection.execute(
                "SELECT agent_id, count(*), sum(length) FROM episodic_items GROUP BY agent_id"
            ).fetchall()
        )
    finally:
        connection.close()


def test_sigkill_mid_stream_loses_no_acknowledged_write(tmp_path: Path) -> None:
    """Three writers killed in turn leave every acknowledged write and an intact database."""
    path = tmp_path / "durable.db"
    start, seen = 0, dict[int, int]()
    for acknowledged in (150, 40, 300):
        acked = run_and_kill(path, start, acknowledged)
        assert acked, "the writer acknowledged nothing"
        seen |= acked
        check(path, seen)
        start = max(acked) + 1


UNSYNCED_WRITER = textwrap.dedent(
    """
    import sys, anyio
    from prefrontal.stores import ConversationTurn, MemoryItem, Role, sqlite

    async def main(path, start):
        stores = sqlite.open_stores(path)
        database = stores.episodic.database
        n = start
        while True:
            async with database.batch(synced=False):  # as a turn's writes behind it
                await stores.episodic.put_many([
                    MemoryItem(item_id=f"m{n}-0", agent_id="a", user_id="u",
                               content=f"memory {n} written unsynced, kiwis")
                ])
                await stores.conversation.append(ConversationTurn(
                    item_id=f"t{n}", agent_id="a", user_id="u", session_id="s",
                    role=Role.USER, content=f"turn {n}"))
            print(n, 1, flush=True)
            n += 1

    anyio.run(main, sys.argv[1], int(sys.argv[2]))
    """
)


def test_sigkill_loses_no_batch_committed_unsynced(tmp_path: Path) -> None:
    """A batch committed without a sync (a turn's writes behind it) survives a killed
    process: the log is written at each commit, only its sync is left to the next."""
    path = tmp_path / "unsynced.db"
    start, seen = 0, dict[int, int]()
    for acknowledged in (120, 30):
        acked = run_and_kill(path, start, acknowledged, UNSYNCED_WRITER)
        assert acked, "the writer acknowledged nothing"
        seen |= acked
        check(path, seen)
        start = max(acked) + 1
