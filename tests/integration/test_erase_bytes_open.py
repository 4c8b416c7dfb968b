"""Right after an erase, with the process still open, SQLite's files hold no byte of the user.

The report found, right after erase, one copy of the erased user's shared
note in the main file: a page of the working-memory table written after
the scrub (another user's session, the retrieved copy taken out of it),
whose old image stayed in the main file until a later checkpoint; it
lasted through idle time and five more turns. Now the copies in other
users' sessions are dropped before the scrub, whose checkpoint then
carries every page written by the erase into the main file.

The user works with everything that keeps text in use: an extractor
(facts drawn from each exchange), replies, working-memory sessions and
traces, and its shared note is retrieved into another user's session.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest

from prefrontal import Orchestrator, TurnRequest
from prefrontal.exchange import ExchangeView, Extracted
from prefrontal.stores import Tenant, sqlite
from prefrontal.stores.tenancy import Scope

pytestmark = pytest.mark.anyio
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
ALICE = Tenant(agent_id="atlas", user_id="alice")
BOB = Tenant(agent_id="atlas", user_id="bob")
ERASED = b"alicestalemarkq"
KEPT = b"bobkeptmarkq"


def occurrences(path: Path, needle: bytes) -> int:
    """Copies of ``needle`` in the database's files (main, ``-wal``, ``-shm``)."""
    files = [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")]
    return sum(f.read_bytes().count(needle) for f in files if f.exists())


async def facts(exchange: ExchangeView) -> Sequence[Extracted]:
    """One fact per exchange, holding the user's input."""
    return [Extracted(content=f"fact: {exchange.user_input}")]


def ask(tenant: Tenant, words: str) -> TurnRequest:
    return TurnRequest(
        agent_id=tenant.agent_id, user_id=tenant.user_id, session_id="s1", user_input=words
    )


async def test_the_files_hold_nothing_of_the_erased_user_while_open(tmp_path: Path) -> None:
    """After erase, and after five more turns of another user, 0 copies in any file; still 0
    after close; the other user's words are all there."""
    path = tmp_path / "stores.db"
    marker, kept = ERASED.decode(), KEPT.decode()
    stores = sqlite.open_stores(path)
    async with Orchestrator(stores, clock=lambda: T0, extractor=facts) as orchestrator:
        await orchestrator.memory.remember(
            ALICE, f"xqj{marker} the shared garden plan", scope=Scope.SHARED
        )
        for n in range(4):
            result = await orchestrator.start_turn(ask(ALICE, f"about xqj{marker} turn {n}"))
            await orchestrator.end_turn(result, f"Noted xqj{marker} {n}.")
            seen = await orchestrator.start_turn(ask(BOB, f"zvk{kept} and the garden plan {n}"))
            await orchestrator.end_turn(seen, f"Sure zvk{kept} {n}.")
        await orchestrator.wait_background()
        assert occurrences(path, ERASED) > 0
        report = await orchestrator.memory.erase("atlas", "alice")
        assert report.copies_dropped >= 1  # the shared note was in bob's session
        assert occurrences(path, ERASED) == 0
        for n in range(5):
            result = await orchestrator.start_turn(ask(BOB, f"the garden again {n}"))
            await orchestrator.end_turn(result, f"Garden {n}.")
        await orchestrator.wait_background()
        assert occurrences(path, ERASED) == 0
    assert occurrences(path, ERASED) == 0
    assert occurrences(path, KEPT) > 0
