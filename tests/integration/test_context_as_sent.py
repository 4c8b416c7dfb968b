"""The context as sent, kept in a turn's trace when asked for, and gone with the user.

With ``record_context`` the trace holds the bundle's chat messages exactly as
``to_messages()`` produced them and each dropped fragment's text; without it,
neither. Erasing the user leaves no byte of it in SQLite's files; forgetting
one of the turn's own messages empties the turn's ``sent``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from prefrontal import Orchestrator, TurnRequest
from prefrontal.stores import Tenant, sqlite
from prefrontal.turn import OrchestratorConfig

pytestmark = pytest.mark.anyio
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
ALICE = Tenant(agent_id="atlas", user_id="alice")
MARKER = b"ctxsentmarkq"
RECORDING = OrchestratorConfig(deadline_ms=60_000, total_token_budget=300, record_context=True)


def occurrences(path: Path, needle: bytes) -> int:
    """Copies of ``needle`` in the database's files (main, ``-wal``, ``-shm``)."""
    files = [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")]
    return sum(f.read_bytes().count(needle) for f in files if f.exists())


def request(text: str) -> TurnRequest:
    return TurnRequest(agent_id="atlas", user_id="alice", session_id="s1", user_input=text)


async def remember_many(orchestrator: Orchestrator) -> None:
    for n in range(30):
        text = f"{MARKER.decode()} note {n} about the garden plan and the harvest"
        await orchestrator.memory.remember(ALICE, text)


async def test_the_trace_holds_the_messages_as_sent_and_the_dropped_text(tmp_path: Path) -> None:
    """``sent`` equals ``bundle.to_messages(user_input)``; dropped records carry their text."""
    async with Orchestrator(
        sqlite.open_stores(tmp_path / "s.db"), RECORDING, clock=lambda: T0
    ) as orchestrator:
        await remember_many(orchestrator)
        turn = await orchestrator.start_turn(request("What about the garden plan?"))
    expected = turn.bundle.to_messages("What about the garden plan?")
    assert [(m.role, m.content) for m in turn.trace.sent] == [
        (m["role"], m["content"]) for m in expected
    ]
    assert turn.trace.sent[-1].content.endswith("What about the garden plan?")
    assert turn.trace.dropped, "a 300-token budget drops some of thirty notes"
    assert all(d.text for d in turn.trace.dropped)
    assert any(MARKER.decode() in d.text for d in turn.trace.dropped)


async def test_without_record_context_the_trace_holds_no_context_text(tmp_path: Path) -> None:
    """Off (the default), ``sent`` is empty and no dropped record carries text."""
    config = RECORDING.model_copy(update={"record_context": False})
    async with Orchestrator(
        sqlite.open_stores(tmp_path / "s.db"), config, clock=lambda: T0
    ) as orchestrator:
        await remember_many(orchestrator)
        turn = await orchestrator.start_turn(request("What about the garden plan?"))
    assert turn.trace.sent == ()
    assert turn.trace.dropped and all(d.text == "" for d in turn.trace.dropped)


async def test_erasing_the_user_leaves_no_byte_of_the_recorded_context(tmp_path: Path) -> None:
    """The recorded messages and dropped text live in the trace row: erase takes every copy."""
    path = tmp_path / "s.db"
    async with Orchestrator(sqlite.open_stores(path), RECORDING, clock=lambda: T0) as orchestrator:
        await remember_many(orchestrator)
        for n in range(3):
            turn = await orchestrator.start_turn(request(f"The garden plan, part {n}?"))
            await orchestrator.end_turn(turn, "Noted.")
        await orchestrator.wait_background()
        stored = await orchestrator.stores.traces.get(ALICE, turn.trace.turn_id)
        assert stored is not None and any(MARKER.decode() in m.content for m in stored.sent)
        await orchestrator.memory.erase("atlas", "alice")
        assert await orchestrator.stores.traces.get(ALICE, turn.trace.turn_id) is None
    assert occurrences(path, MARKER) == 0


async def test_forgetting_the_turns_message_empties_its_context_as_sent(tmp_path: Path) -> None:
    """The user's message is the last message sent: forgetting it empties ``sent`` too."""
    async with Orchestrator(
        sqlite.open_stores(tmp_path / "s.db"), RECORDING, clock=lambda: T0
    ) as orchestrator:
        turn = await orchestrator.start_turn(request("My locker code is 4417."))
        ended = await orchestrator.end_turn(turn, "Noted.")
        await orchestrator.wait_background()
        user_message = next(i for i in ended.message_ids if i.endswith(":user"))
        assert await orchestrator.memory.forget(ALICE, user_message)
        stored = await orchestrator.stores.traces.get(ALICE, turn.trace.turn_id)
    assert stored is not None and stored.user_input is None
    assert stored.sent == ()
