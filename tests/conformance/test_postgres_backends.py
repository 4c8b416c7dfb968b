"""The conformance suite on the PostgreSQL backends, each test in an empty schema of its own."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from prefrontal.stores import postgres as p
from prefrontal.testing import conformance as c


async def _open(dsn: str, schema: str, make: Any) -> AsyncIterator[Any]:
    database = p.PostgresDatabase(dsn, schema=schema, max_size=4)
    yield make(database)
    await database.aclose()


class TestPostgresEpisodic(c.MemoryStoreSuite):
    @pytest.fixture
    async def store(
        self, postgres_dsn: str, postgres_schema: str
    ) -> AsyncIterator[p.PostgresMemoryStore]:
        async for store in _open(
            postgres_dsn, postgres_schema, lambda db: p.PostgresMemoryStore(db, "episodic")
        ):
            yield store


class TestPostgresSemantic(c.MemoryStoreSuite):
    @pytest.fixture
    async def store(
        self, postgres_dsn: str, postgres_schema: str
    ) -> AsyncIterator[p.PostgresMemoryStore]:
        async for store in _open(
            postgres_dsn, postgres_schema, lambda db: p.PostgresMemoryStore(db, "semantic")
        ):
            yield store


class TestPostgresConsciousness(c.ConsciousnessStoreSuite):
    @pytest.fixture
    async def store(
        self, postgres_dsn: str, postgres_schema: str
    ) -> AsyncIterator[p.PostgresConsciousnessStore]:
        async for store in _open(postgres_dsn, postgres_schema, p.PostgresConsciousnessStore):
            yield store


class TestPostgresFrontalCortex(c.FrontalCortexStoreSuite):
    @pytest.fixture
    async def store(
        self, postgres_dsn: str, postgres_schema: str
    ) -> AsyncIterator[p.PostgresFrontalCortexStore]:
        async for store in _open(postgres_dsn, postgres_schema, p.PostgresFrontalCortexStore):
            yield store


class TestPostgresConversation(c.ConversationStoreSuite):
    @pytest.fixture
    async def store(
        self, postgres_dsn: str, postgres_schema: str
    ) -> AsyncIterator[p.PostgresConversationStore]:
        async for store in _open(postgres_dsn, postgres_schema, p.PostgresConversationStore):
            yield store


class TestPostgresScratchPage(c.ScratchPageStoreSuite):
    @pytest.fixture
    async def store(
        self, postgres_dsn: str, postgres_schema: str
    ) -> AsyncIterator[p.PostgresScratchPageStore]:
        async for store in _open(postgres_dsn, postgres_schema, p.PostgresScratchPageStore):
            yield store


class TestPostgresWorkingMemory(c.WorkingMemoryStoreSuite):
    @pytest.fixture
    async def store(
        self, postgres_dsn: str, postgres_schema: str
    ) -> AsyncIterator[p.PostgresWorkingMemoryStore]:
        async for store in _open(postgres_dsn, postgres_schema, p.PostgresWorkingMemoryStore):
            yield store


class TestPostgresTraces(c.TraceStoreSuite):
    @pytest.fixture
    async def store(
        self, postgres_dsn: str, postgres_schema: str
    ) -> AsyncIterator[p.PostgresTraceStore]:
        async for store in _open(postgres_dsn, postgres_schema, p.PostgresTraceStore):
            yield store
