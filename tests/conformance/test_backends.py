"""The conformance suite on every backend: in memory, SQLite and PostgreSQL.

Each test gets a fresh, empty set of stores: new in-memory stores, a new
SQLite file, or a new PostgreSQL schema (those runs skip when no server
can be started, see ``tests/postgres_server.py``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from prefrontal.stores import (
    ConsciousnessStore,
    ConversationStore,
    FrontalCortexStore,
    MemoryStore,
    ScratchPageStore,
    Stores,
    TraceStore,
    WorkingMemoryStore,
)
from prefrontal.testing import conformance as c


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def stores(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Stores]:
    """A fresh, empty set of stores of one backend."""
    if request.param == "memory":
        opened = Stores.in_memory()
    elif request.param == "sqlite":
        opened = Stores.sqlite(tmp_path / "conformance.db")
    else:
        dsn: str = request.getfixturevalue("postgres_dsn")
        schema: str = request.getfixturevalue("postgres_schema")
        opened = Stores.postgres(dsn, schema=schema, max_size=4)
    yield opened
    await opened.aclose()


class TestEpisodic(c.MemoryStoreSuite):
    @pytest.fixture
    def store(self, stores: Stores) -> MemoryStore:
        return stores.episodic


class TestSemantic(c.MemoryStoreSuite):
    @pytest.fixture
    def store(self, stores: Stores) -> MemoryStore:
        return stores.semantic


class TestConsciousness(c.ConsciousnessStoreSuite):
    @pytest.fixture
    def store(self, stores: Stores) -> ConsciousnessStore:
        return stores.consciousness


class TestFrontalCortex(c.FrontalCortexStoreSuite):
    @pytest.fixture
    def store(self, stores: Stores) -> FrontalCortexStore:
        return stores.frontal_cortex


class TestConversation(c.ConversationStoreSuite):
    @pytest.fixture
    def store(self, stores: Stores) -> ConversationStore:
        return stores.conversation


class TestScratchPage(c.ScratchPageStoreSuite):
    @pytest.fixture
    def store(self, stores: Stores) -> ScratchPageStore:
        return stores.scratch_page


class TestWorkingMemory(c.WorkingMemoryStoreSuite):
    @pytest.fixture
    def store(self, stores: Stores) -> WorkingMemoryStore:
        return stores.working_memory


class TestTraces(c.TraceStoreSuite):
    @pytest.fixture
    def store(self, stores: Stores) -> TraceStore:
        return stores.traces
