"""Erase and forget leave no byte of what they removed in SQLite's files.

Two users write memories and turns holding a marker of their own; one is
erased, and one memory and one turn's two messages of the other forgotten;
the stores are closed. The database, its ``-wal`` and ``-shm`` files then
hold no copy of the erased user's marker, of the forgotten memory's nor of
the forgotten messages', and every word of the other user's is still there (framework
session items included). It holds with ``secure_delete`` forced off at open
(prefrontal sets it itself), and on a database made before term rows at 0
were deleted.

The markers are searched by their tails: the full-text index stores a term
after the prefix it shares with the term before it.
"""

from __future__ import annotations

import os
import stat
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from prefrontal import Orchestrator, TurnRequest
from prefrontal.stores import SessionKey, Tenant, sqlite
from prefrontal.stores.sqlite.driver import sqlite3

pytestmark = pytest.mark.anyio
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
ALICE = Tenant(agent_id="atlas", user_id="alice")
BOB = Tenant(agent_id="atlas", user_id="bob")
ERASED = b"alicemarkq"
FORGOTTEN = b"forgotmarkq"
KEPT = b"bobmarkq"
SAID = b"saidmarkq"


def occurrences(path: Path, needle: bytes) -> int:
    """Copies of ``needle`` in the database's files (main, ``-wal``, ``-shm``)."""
    files = [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")]
    return sum(f.read_bytes().count(needle) for f in files if f.exists())


async def write_both(orchestrator: Orchestrator) -> tuple[str, tuple[str, ...]]:
    """Memories and turns of both users; the id of Bob's memory and the message ids of
    Bob's turn to forget."""
    memory = orchestrator.memory
    for n in range(20):
        await memory.remember(ALICE, f"xqj{ERASED.decode()} note {n} about the garden")
        await memory.remember(BOB, f"zvk{KEPT.decode()} note {n} about the harbour")
    await memory.remember(ALICE, f"xqj{ERASED.decode()} shared plan", store="episodic")
    forgotten = await memory.remember(BOB, f"wpy{FORGOTTEN.decode()} secret code")
    for tenant, marker in ((ALICE, ERASED), (BOB, KEPT)):
        for n in range(3):
            result = await orchestrator.start_turn(
                TurnRequest(
                    agent_id=tenant.agent_id,
                    user_id=tenant.user_id,
                    session_id="s1",
                    user_input=f"Remember xqj{marker.decode()} please, turn {n}",
                )
            )
            await orchestrator.end_turn(result, f"Noted xqj{marker.decode()} {n}.")
        session = SessionKey(agent_id=tenant.agent_id, user_id=tenant.user_id, session_id="s1")
        call = {"type": "function_call", "call_id": "c1", "name": "note", "arguments": "{}"}
        said = {
            "role": "user",
            "content": [{"type": "input_text", "text": f"xqj{marker.decode()}"}],
        }
        await orchestrator.stores.session_items.append(session, [said, call])
    told = await orchestrator.start_turn(
        TurnRequest(
            agent_id="atlas",
            user_id="bob",
            session_id="s1",
            user_input=f"My pin is wpy{SAID.decode()}",
        )
    )
    ended = await orchestrator.end_turn(told, f"Pin wpy{SAID.decode()} noted.")
    after = await orchestrator.start_turn(
        TurnRequest(agent_id="atlas", user_id="bob", session_id="s1", user_input="Thanks.")
    )
    await orchestrator.end_turn(after, "You are welcome.")
    return forgotten.item_id, ended.message_ids


@pytest.mark.parametrize("secure_delete", ["default", "forced_off"])
async def test_erased_and_forgotten_text_leaves_the_files(
    tmp_path: Path, secure_delete: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """0 copies of the erased marker and the forgotten memory; the other user's all there."""
    path = tmp_path / "stores.db"
    if secure_delete == "forced_off":
        real_connect = sqlite3.connect

        def connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
            connection: sqlite3.Connection = real_connect(*args, **kwargs)
            connection.execute("PRAGMA secure_delete = OFF")
            return connection

        monkeypatch.setattr(sqlite3, "connect", connect)
    async with Orchestrator(sqlite.open_stores(path), clock=lambda: T0) as orchestrator:
        forgotten, messages = await write_both(orchestrator)
        await orchestrator.wait_background()
        assert occurrences(path, ERASED) > 0
        assert occurrences(path, FORGOTTEN) > 0
        assert occurrences(path, SAID) > 0
        report = await orchestrator.memory.erase("atlas", "alice")
        assert report.removed["semantic"] == 20
        assert report.removed["session_items"] == 2
        assert await orchestrator.memory.forget(BOB, forgotten)
        for message_id in messages:
            assert await orchestrator.memory.forget(BOB, message_id)
        kept = await orchestrator.memory.recall(BOB, f"zvk{KEPT.decode()}", top_k=100)
        assert len(kept) >= 20
    assert occurrences(path, ERASED) == 0
    assert occurrences(path, FORGOTTEN) == 0
    assert occurrences(path, SAID) == 0
    assert occurrences(path, KEPT) > 0
    with sqlite3.connect(path) as connection:
        empty = "SELECT count(*) FROM semantic_terms WHERE df <= 0"
        assert connection.execute(empty).fetchone() == (0,)
        rows = connection.execute("SELECT count(*) FROM semantic_items").fetchone()[0]
    assert rows == 20


async def test_database_files_are_private(tmp_path: Path) -> None:
    """The database and its logs are readable and writable by their owner only."""
    path = tmp_path / "stores.db"
    stores = sqlite.open_stores(path)
    async with Orchestrator(stores, clock=lambda: T0) as orchestrator:
        await orchestrator.memory.remember(ALICE, "a private note")
        modes = {
            f.name: stat.S_IMODE(os.stat(f).st_mode)
            for f in (path, path.with_name("stores.db-wal"), path.with_name("stores.db-shm"))
        }
    assert modes == dict.fromkeys(modes, 0o600)
