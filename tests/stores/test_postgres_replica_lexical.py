"""Lexical searches on a streaming replica of the plain PostgreSQL server, and the servers' way
to name replicas (``PREFRONTAL_READ_DSNS``).

Stores with no embedder read no vector cache, so their searches go to the
replica like pgvector's; the command line's stores take the replicas'
URLs from the environment.
"""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import pytest

from prefrontal.cli.stores import READ_DSNS_ENV, build
from prefrontal.demo import DEMO_AGENT, DEMO_USER, seed
from prefrontal.stores import MemoryQuery, Tenant, postgres
from prefrontal.stores.postgres.database import PostgresDatabase
from prefrontal.stores.read_source import LAST_READ
from tests.conftest import FIXED_NOW
from tests.postgres_server import Server, running_replica

pytestmark = pytest.mark.anyio
DEMO = Tenant(agent_id=DEMO_AGENT, user_id=DEMO_USER)


@pytest.fixture(scope="module")
def standby(postgres_server: Server, postgres_dsn: str) -> Iterator[Server]:
    """A hot standby of the plain test server (the module's database created first)."""
    with running_replica(postgres_server) as replica:
        yield replica


async def test_a_lexical_search_is_answered_by_the_replica(
    postgres_dsn: str, postgres_schema: str, standby: Server
) -> None:
    """With no embedder (no vector cache read), a search goes to the replica once it has
    replayed the process's writes, and finds what the primary would."""
    database = postgres_dsn.split("/", 3)[3].split("?", 1)[0]
    stores = postgres.open_stores(
        postgres_dsn, schema=postgres_schema, read_dsns=[standby.dsn(database)]
    )
    try:
        await seed(stores)
        query = MemoryQuery(text="payments migration", limit=5, now=FIXED_NOW)
        expected = [h.item.item_id for h in await stores.episodic.search(DEMO, query)]
        assert expected
        with anyio.fail_after(10):
            while True:
                hits = await stores.episodic.search(DEMO, query)
                source = LAST_READ.get()
                if source is not None and source.server == "replica 1":
                    break
                await anyio.sleep(0.02)
        assert [h.item.item_id for h in hits] == expected
    finally:
        await stores.aclose()


def test_the_command_line_names_replicas_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``PREFRONTAL_READ_DSNS`` (space-separated) becomes the PostgreSQL stores' read DSNs."""
    urls = ["postgresql://app@replica-1/prefrontal", "postgresql://app@replica-2/prefrontal"]
    monkeypatch.setenv(READ_DSNS_ENV, " ".join(urls))
    stores = build("postgresql://app@primary/prefrontal")
    database = getattr(stores.episodic, "database", None)
    assert isinstance(database, PostgresDatabase)
    assert database.replicas is not None
    assert database.replicas.dsns == urls
    monkeypatch.delenv(READ_DSNS_ENV)
    alone = getattr(build("postgresql://app@primary/prefrontal").episodic, "database", None)
    assert isinstance(alone, PostgresDatabase)
    assert alone.replicas is None
