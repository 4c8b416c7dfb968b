"""The conformance suite on every backend: in memory, SQLite and PostgreSQL.

Each test gets a fresh, empty set of stores: new in-memory stores, a new
SQLite file, or a new PostgreSQL schema (those runs skip when no server
can be started, see ``tests/postgres_server.py``).
"""

from __future__ import annotations

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
