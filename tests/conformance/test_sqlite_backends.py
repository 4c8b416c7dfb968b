"""The conformance suite on the SQLite backends, each on a fresh database file."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from prefrontal.stores import sqlite as s
from prefrontal.testing import conformance as c


async def _open(tmp_path: Path, make: Any) -> AsyncIterator[Any]:
    database = s.Database(tmp_path / "conformance.db")
    yield make(database)
    await database.aclose()


class TestSqliteEpisodic(c.MemoryStoreSuite):
    @pytest.fixture
    async def store(self, tmp_path: Path) -> AsyncIterator[s.SqliteMemoryStore]:
        async for store in _open(tmp_path, lambda db: s.SqliteMemoryStore(db, "episodic")):
            yield store


class TestSqliteSemantic(c.MemoryStoreSuite):
    @pytest.fixture
    async def store(self, tmp_path: Path) -> AsyncIterator[s.SqliteMemoryStore]:
        async for store in _open(tmp_path, lambda db: s.SqliteMemoryStore(db, "semantic")):
            yield store


class TestSqliteConsciousness(c.ConsciousnessStoreSuite):
    @pytest.fixture
    async def store(self, tmp_path: Path) -> AsyncIterator[s.SqliteConsciousnessStore]:
        async for store in _open(tmp_path, s.SqliteConsciousnessStore):
            yield store


class TestSqliteFrontalCortex(c.FrontalCortexStoreSuite):
    @pytest.fixture
    async def store(self, tmp_path: Path) -> AsyncIterator[s.SqliteFrontalCortexStore]:
        async for store in _open(tmp_path, s.SqliteFrontalCortexStore):
            yield store


class TestSqliteConversation(c.ConversationStoreSuite):
    @pytest.fixture
    async def store(self, tmp_path: Path) -> AsyncIterator[s.SqliteConversationStore]:
        async for store in _open(tmp_path, s.SqliteConversationStore):
            yield store


class TestSqliteScratchPage(c.ScratchPageStoreSuite):
    @pytest.fixture
    async def store(self, tmp_path: Path) -> AsyncIterator[s.SqliteScratchPageStore]:
        async for store in _open(tmp_path, s.SqliteScratchPageStore):
            yield store


class TestSqliteWorkingMemory(c.WorkingMemoryStoreSuite):
    @pytest.fixture
    async def store(self, tmp_path: Path) -> AsyncIterator[s.SqliteWorkingMemoryStore]:
        async for store in _open(tmp_path, s.SqliteWorkingMemoryStore):
            yield store


class TestSqliteTraces(c.TraceStoreSuite):
    @pytest.fixture
    async def store(self, tmp_path: Path) -> AsyncIterator[s.SqliteTraceStore]:
        async for store in _open(tmp_path, s.SqliteTraceStore):
            yield store
