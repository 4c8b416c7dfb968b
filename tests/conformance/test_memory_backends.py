"""The conformance suite on the in-memory reference backends."""

from __future__ import annotations

import pytest

from prefrontal.stores import memory as m
from prefrontal.testing import conformance as c


class TestInMemoryEpisodic(c.MemoryStoreSuite):
    @pytest.fixture
    def store(self) -> m.InMemoryMemoryStore:
        return m.InMemoryMemoryStore("episodic")


class TestInMemoryConsciousness(c.ConsciousnessStoreSuite):
    @pytest.fixture
    def store(self) -> m.InMemoryConsciousnessStore:
        return m.InMemoryConsciousnessStore()


class TestInMemoryFrontalCortex(c.FrontalCortexStoreSuite):
    @pytest.fixture
    def store(self) -> m.InMemoryFrontalCortexStore:
        return m.InMemoryFrontalCortexStore()


class TestInMemoryConversation(c.ConversationStoreSuite):
    @pytest.fixture
    def store(self) -> m.InMemoryConversationStore:
        return m.InMemoryConversationStore()


class TestInMemoryScratchPage(c.ScratchPageStoreSuite):
    @pytest.fixture
    def store(self) -> m.InMemoryScratchPageStore:
        return m.InMemoryScratchPageStore()


class TestInMemoryWorkingMemory(c.WorkingMemoryStoreSuite):
    @pytest.fixture
    def store(self) -> m.InMemoryWorkingMemoryStore:
        return m.InMemoryWorkingMemoryStore()


class TestInMemoryTraces(c.TraceStoreSuite):
    @pytest.fixture
    def store(self) -> m.InMemoryTraceStore:
        return m.InMemoryTraceStore()
