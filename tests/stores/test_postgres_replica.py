"""Searches on a real streaming replica (``pg_basebackup`` from the tests' pgvector primary).

A process's own writes are always in its searches (the replica is used
once it has replayed them, else the primary answers); another process's
writes and erasures reach the replica's searches within the staleness
bound; a replica never shows one user another's private items; a replica
that cannot be reached hands the search to the primary; the trace's
episodic phase names the server that answered.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Iterator

import anyio
import pytest

from prefrontal.demo import seed
from prefrontal.retrieval.embedder import HashingEmbedder
from prefrontal.stores import MemoryItem, MemoryQuery, Scope, Stores, postgres
from prefrontal.stores.postgres.database import PostgresDatabase
from prefrontal.stores.read_source import LAST_READ
from prefrontal.testing.conformance.base import at
from prefrontal.traces.models import TurnStatus
from tests.conftest import FIXED_NOW, demo_request, orchestrator
from tests.postgres_server import Server, running_replica
from tests.stores.vector_corpus import ALICE, BOB

pytestmark = pytest.mark.anyio

_SCHEMAS = itertools.count(1)


@pytest.fixture(scope="module")
def replica(pgvector_server: Server, pgvector_dsn: str) -> Iterator[Server]:
    """A hot standby of the pgvector server for the module (its database created first).

    Its replay waits at most a second for a search it conflicts with (PostgreSQL's default:
    30 s), then cancels the search, which the store has the primary answer: with the
    default, one such wait on a loaded machine outlasts the tests' 10-second bound.
    """
    with running_replica(pgvector_server, ("max_standby_streaming_delay=1s",)) as standby:
        yield standby


def _replica_dsn(replica: Server, primary_dsn: str) -> str:
    """``primary_dsn``'s database on the replica's socket."""
    database = primary_dsn.split("/", 3)[3].split("?", 1)[0]
    return replica.dsn(database)


@pytest.fixture
async def pair(pgvector_dsn: str, replica: Server) -> AsyncIterator[tuple[Stores, Stores]]:
    """Two processes' stores on one schema: a writer on the primary alone, and a reader whose
    searches go to the replica (each with its own pools)."""
    schema = f"replicated_{next(_SCHEMAS)}"
    embedder = HashingEmbedder(32)
    writer = postgres.open_stores(pgvector_dsn, schema=schema, embedder=embedder, max_size=4)
    reader = postgres.open_stores(
        pgvector_dsn,
        schema=schema,
        embedder=embedder,
        max_size=4,
        read_dsns=[_replica_dsn(replica, pgvector_dsn)],
    )
    await writer.open()
    await reader.open()
    yield writer, reader
    await reader.aclose()
    await writer.aclose()


def _item(item_id: str, user: str, text: str, scope: Scope = Scope.PRIVATE) -> MemoryItem:
    return MemoryItem(
        item_id=item_id, agent_id=ALICE.agent_id, user_id=user, scope=scope, content=text,
        created_at=at(0),
    )  # fmt: skip


def _database(stores: Stores) -> PostgresDatabase:
    database = getattr(stores.episodic, "database", None)
    assert isinstance(database, PostgresDatabase)
    return database


async def _ids(stores: Stores, tenant: object, text: str) -> list[str]:
    query = MemoryQuery(text=text, limit=10, now=FIXED_NOW)
    return [hit.item.item_id for hit in await stores.episodic.search(tenant, query)]  # type: ignore[arg-type]


def _on_replica() -> bool:
    """Whether the task's last search was answered by the replica."""
    source = LAST_READ.get()
    return source is not None and source.server == "replica 1"


async def _until(check: object, seconds: float = 10.0) -> float:
    """Poll the async ``check`` until it answers true; the seconds it took."""
    started = anyio.current_time()
    while not await check():  # type: ignore[operator]
        assert anyio.current_time() - started < seconds, "not within the bound"
        await anyio.sleep(0.01)
    return anyio.current_time() - started


async def test_own_writes_are_always_in_the_process_searches(
    pair: tuple[Stores, Stores],
) -> None:
    """Right after a write, the writing process's search finds it: from a replica that has
    replayed it, else from the primary (never a lost write)."""
    _, reader = pair
    for n in range(20):
        await reader.episodic.put(_item(f"own-{n}", "alice", f"lantern festival number{n}"))
        assert f"own-{n}" in await _ids(reader, ALICE, f"lantern festival number{n}")
        source = LAST_READ.get()
        assert source is not None
        assert source.server == "replica 1" or "behind this process's writes" in source.reason
    replicas = _database(reader).replicas
    assert replicas is not None
    assert replicas.served[0] + replicas.declined >= 20


async def test_other_writes_and_erasures_reach_the_replica_within_the_bound(
    pair: tuple[Stores, Stores],
) -> None:
    """Another process's write, then its erase of the user, reach the replica's searches
    within the staleness bound, served by the replica."""
    writer, reader = pair
    await writer.episodic.put_many(
        [_item(f"bob-{n}", "bob", f"harbour crane inspection {n}") for n in range(30)]
    )

    async def found() -> bool:
        return len(await _ids(reader, BOB, "harbour crane inspection")) == 10 and _on_replica()

    await _until(found)
    source = LAST_READ.get()
    assert source is not None
    assert source.server == "replica 1"
    assert source.staleness_ms <= 5_000
    assert await writer.episodic.erase(BOB) == 30

    async def gone() -> bool:
        return await _ids(reader, BOB, "harbour crane inspection") == [] and _on_replica()

    await _until(gone)
    source = LAST_READ.get()
    assert source is not None
    assert source.server == "replica 1"


async def test_replica_never_shows_another_users_private_items(
    pair: tuple[Stores, Stores],
) -> None:
    """On the replica, Bob finds the shared item and his own, never Alice's private one."""
    writer, reader = pair
    await writer.episodic.put_many(
        [
            _item("alice-secret", "alice", "orchid passport renewal"),
            _item("shared", "alice", "orchid passport office hours", Scope.SHARED),
            _item("bobs", "bob", "orchid passport photo"),
        ]
    )

    async def replayed() -> bool:
        return "alice-secret" in await _ids(reader, ALICE, "orchid passport") and _on_replica()

    await _until(replayed)
    assert sorted(await _ids(reader, BOB, "orchid passport renewal")) == ["bobs", "shared"]
    source = LAST_READ.get()
    assert source is not None
    assert source.server == "replica 1"


async def test_unreachable_replica_hands_the_search_to_the_primary(
    pgvector_dsn: str, tmp_path: object
) -> None:
    """With a replica that cannot be reached, searches are answered by the primary and the
    trace's source says why."""
    stores = postgres.open_stores(
        pgvector_dsn,
        schema=f"replicated_{next(_SCHEMAS)}",
        embedder=HashingEmbedder(32),
        max_size=2,
        read_dsns=[f"postgresql://postgres@/none?host={tmp_path}"],
    )
    try:
        await stores.open()
        await stores.episodic.put(_item("here", "alice", "weather balloon launch"))
        assert await _ids(stores, ALICE, "weather balloon") == ["here"]
        source = LAST_READ.get()
        assert source is not None
        assert source.server == "primary"
        assert "replica 1 unavailable" in source.reason
    finally:
        await stores.aclose()


async def test_turn_trace_names_the_server_that_answered(pair: tuple[Stores, Stores]) -> None:
    """A turn on stores with a replica records, in its episodic phase, which server answered."""
    _, reader = pair
    await seed(reader)
    got = await orchestrator(reader, deadline_ms=10_000).start_turn(demo_request())
    assert got.trace.status is TurnStatus.OK, got.warnings
    (phase,) = [p for p in got.trace.phases if p.name == "episodic"]
    assert phase.detail["read_from"] in {"primary", "replica 1"}
