"""An unexpected failure answers 500, is logged once in a line, and the connection lives on."""

from __future__ import annotations

import logging

import anyio
import httpx
import pytest
import uvicorn
from structlog.testing import capture_logs

from prefrontal.demo import DEMO_AGENT, DEMO_USER
from prefrontal.serving.http import create_app
from prefrontal.serving.keys import KeyGrant, KeyRing, hash_key
from prefrontal.serving.service import Service
from prefrontal.stores.set import Stores
from tests.servers.harness import free_port

pytestmark = pytest.mark.anyio
KEY = "pf_test_unexpected"


class Broken(Exception):
    """What the failing operation raises."""


async def _started(server: uvicorn.Server) -> None:
    for _ in range(1_000):
        if server.started:
            return
        await anyio.sleep(0.01)


async def test_a_500_is_logged_once_and_keeps_the_connection(
    caplog: pytest.LogCaptureFixture,
) -> None:
    service = Service.build(Stores.in_memory())

    async def failing(*args: object, **kwargs: object) -> None:
        raise Broken("the store returned nonsense " + "x" * 5_000)

    service.remember = failing  # type: ignore[assignment,method-assign]
    grant = KeyGrant(name="t", sha256=hash_key(KEY), agent_id=DEMO_AGENT, users=("*",))
    app = create_app(service, KeyRing([grant]))
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    )
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    with capture_logs() as logged, caplog.at_level(logging.ERROR):
        async with anyio.create_task_group() as group:
            group.start_soon(server.serve)
            with anyio.fail_after(10):
                await _started(server)
            async with httpx.AsyncClient(
                base_url=f"http://127.0.0.1:{port}",
                headers={"Authorization": f"Bearer {KEY}"},
                limits=limits,
            ) as client:
                failed = await client.post(
                    "/v1/memories", json={"user_id": DEMO_USER, "content": "x"}
                )
                after = await client.get("/healthz")
            server.should_exit = True
    assert failed.status_code == 500
    assert failed.headers["content-type"] == "application/problem+json"
    assert "nonsense" not in failed.text
    assert after.status_code == 200
    assert failed.extensions["network_stream"] is after.extensions["network_stream"]
    errors = [entry for entry in logged if entry["log_level"] == "error"]
    assert [entry["event"] for entry in errors] == ["unexpected_error"]
    assert errors[0]["error"].startswith("Broken: the store returned nonsense")
    assert len(str(errors[0])) < 1_000
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
