"""Two ``prefrontal serve http`` processes over one PostgreSQL database act as one memory."""

from __future__ import annotations

import anyio
import httpx

from prefrontal.demo import DEMO_USER, seed
from prefrontal.stores import postgres
from tests.servers.harness import AGENT_KEY, http_server

AUTH = {"Authorization": f"Bearer {AGENT_KEY}"}


async def seeded_postgres(dsn: str) -> None:
    """The demo agent in the database at ``dsn``."""
    stores = postgres.open_stores(dsn)
    try:
        await seed(stores)
    finally:
        await stores.aclose()


def test_two_servers_over_one_database_share_turns_sessions_and_memories(postgres_dsn: str) -> None:
    """What one process writes (memories, turns, a session's buffer) the other reads at once."""
    anyio.run(seeded_postgres, postgres_dsn)
    with (
        http_server(postgres_dsn, test_clock=False) as (first, _),
        http_server(postgres_dsn, test_clock=False) as (second, _),
        httpx.Client(base_url=first, headers=AUTH, timeout=30) as a,
        httpx.Client(base_url=second, headers=AUTH, timeout=30) as b,
    ):
        memory = a.post(
            "/v1/memories",
            json={"user_id": DEMO_USER, "content": "The offsite budget is 4,000 EUR"},
        ).json()
        found = b.post(
            "/v1/memories/search", json={"user_id": DEMO_USER, "query": "offsite budget"}
        ).json()
        assert memory["item_id"] in [m["item_id"] for m in found["memories"]]

        turn = a.post(
            "/v1/turns",
            json={"user_id": DEMO_USER, "session_id": "s-pg", "user_input": "Offsite budget?"},
        ).json()
        trace = b.get(f"/v1/turns/{turn['turn_id']}/trace", params={"user_id": DEMO_USER})
        assert trace.status_code == 200 and trace.json()["session_id"] == "s-pg"

        # The turn on the first process filled the session's buffer; the second one searches.
        search = {"user_id": DEMO_USER, "query": "offsite budget", "session_id": "s-pg"}
        searched = b.post("/v1/memories/search", json=search).json()
        assert (searched["mode"], searched["reason"]) == ("search", "explicit")
        assert memory["item_id"] in [m["item_id"] for m in searched["memories"]]

        forgotten = b.delete(f"/v1/memories/{memory['item_id']}", params={"user_id": DEMO_USER})
        assert forgotten.json()["forgotten"] is True
        again = a.post(
            "/v1/memories/search", json={"user_id": DEMO_USER, "query": "offsite budget"}
        ).json()
        assert memory["item_id"] not in [m["item_id"] for m in again["memories"]]
