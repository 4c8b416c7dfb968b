"""``prefrontal serve http`` in a subprocess on 127.0.0.1, driven with httpx."""

from __future__ import annotations

import re
import signal
from pathlib import Path

import anyio
import httpx
import pytest

from prefrontal.demo import DEMO_USER, SAMPLE_INPUT
from prefrontal.stores import sqlite
from tests.servers.conftest import seeded
from tests.servers.harness import (
    AGENT_KEY,
    free_port,
    http_server,
    run_session,
)
from tests.servers.sessions import HttpSession, LocalSession

pytestmark = pytest.mark.anyio
AUTH = {"Authorization": f"Bearer {AGENT_KEY}"}


async def test_ten_turns_over_http_give_the_bundles_of_the_same_calls_in_process(
    demo_db: Path, tmp_path: Path
) -> None:
    """A ten-turn session through the HTTP API sees what the same calls see in-process."""
    with http_server(demo_db) as (base, _):
        async with httpx.AsyncClient(base_url=base, headers=AUTH, timeout=30) as client:
            remote = await run_session(HttpSession(client))
    stores = sqlite.open_stores(await seeded(tmp_path / "local.db"))
    try:
        local = await run_session(LocalSession(stores))
    finally:
        await stores.aclose()
    assert len(remote) == len(local) > 40
    for n, (seen, expected) in enumerate(zip(remote, local, strict=True)):
        assert seen == expected, f"call {n} differs"
    modes = {entry["recall"]["mode"] for entry in remote if "recall" in entry}
    assert modes == {"search"}  # an explicit search always searches


async def test_a_turn_and_its_trace_over_http(demo_db: Path) -> None:
    """POST /v1/turns returns the context within budget; its trace lists the eleven phases."""
    with http_server(demo_db) as (base, _):
        async with httpx.AsyncClient(base_url=base, headers=AUTH, timeout=30) as client:
            body = {
                "user_id": DEMO_USER,
                "session_id": "s-1",
                "user_input": SAMPLE_INPUT,
                "token_budget": 800,
            }
            turn = (await client.post("/v1/turns", json=body)).json()
            trace = await client.get(
                f"/v1/turns/{turn['turn_id']}/trace", params={"user_id": DEMO_USER}
            )
    assert turn["total_tokens"] <= 800 == turn["budget"]
    assert "You are Atlas" in turn["text"]
    assert turn["fragments"] and turn["status"] in ("ok", "degraded")  # degraded: a slow machine
    assert trace.status_code == 200
    phases = trace.json()["phases"]
    assert [p["index"] for p in phases] == list(range(1, 12))
    assert phases[0]["name"] == "turn_context"
    assert all(p["status"] and p["duration_ms"] >= 0 for p in phases)


async def test_openapi_health_readiness_and_metrics(demo_db: Path) -> None:
    """/openapi.json lists every resource; /healthz, /readyz and /metrics answer without a key."""
    with http_server(demo_db) as (base, _):
        async with httpx.AsyncClient(base_url=base, timeout=30) as client:
            openapi = (await client.get("/openapi.json")).json()
            health = await client.get("/healthz")
            ready = await client.get("/readyz")
            await client.post(
                "/v1/turns",
                headers=AUTH,
                json={"user_id": DEMO_USER, "session_id": "s", "user_input": "Launch?"},
            )
            metrics = await client.get("/metrics")
    paths = openapi["paths"]
    assert set(paths) >= {
        "/v1/turns",
        "/v1/turns/{turn_id}/end",
        "/v1/turns/{turn_id}/trace",
        "/v1/memories",
        "/v1/memories/search",
        "/v1/memories/{item_id}",
        "/v1/users/{user_id}",
        "/healthz",
        "/readyz",
    }
    assert set(paths["/v1/memories/{item_id}"]) == {"patch", "delete"}
    assert "StartTurnBody" in openapi["components"]["schemas"]
    assert health.json() == {"status": "ok"}
    assert ready.status_code == 200
    assert set(ready.json()["vector_search"]) == {"episodic", "semantic"}
    assert re.search(r'^prefrontal_turns_total\{status="(ok|degraded)"\} 1\.0$', metrics.text, re.M)


async def test_readiness_fails_while_the_stores_are_unreachable() -> None:
    """/readyz answers 503 (problem JSON) while no database listens; /healthz still answers 200."""
    nowhere = f"postgresql://prefrontal@127.0.0.1:{free_port()}/prefrontal"
    with http_server(nowhere) as (base, _):
        async with httpx.AsyncClient(base_url=base, timeout=30) as client:
            ready = await client.get("/readyz")
            health = await client.get("/healthz")
    assert ready.status_code == 503
    assert ready.headers["content-type"] == "application/problem+json"
    assert ready.json()["detail"] == "The memory stores are not reachable."
    assert health.status_code == 200


async def test_sigterm_lets_turns_in_flight_finish(demo_db: Path) -> None:
    """Turns in flight when the server gets SIGTERM complete with 200 before it exits."""
    with http_server(demo_db, PREFRONTAL_SERVE_TEST_DELAY_MS="400") as (base, process):
        results: list[int] = []
        async with httpx.AsyncClient(base_url=base, headers=AUTH, timeout=30) as client:

            async def one(n: int) -> None:
                body = {"user_id": DEMO_USER, "session_id": f"s-{n}", "user_input": SAMPLE_INPUT}
                results.append((await client.post("/v1/turns", json=body)).status_code)

            async with anyio.create_task_group() as group:
                for n in range(5):
                    group.start_soon(one, n)
                await anyio.sleep(0.2)
                process.send_signal(signal.SIGTERM)
        code = await anyio.to_thread.run_sync(lambda: process.wait(timeout=30))
    assert results == [200] * 5
    assert code in (0, -signal.SIGTERM)  # uvicorn re-raises the signal once it has shut down
