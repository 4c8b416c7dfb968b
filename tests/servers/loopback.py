"""The HTTP API and the MCP server served in this process on 127.0.0.1, over any stores.

:func:`http_app_served` and :func:`mcp_served` run the real applications
(:func:`~prefrontal.serving.http.app.create_app`, and
:func:`~prefrontal.serving.mcp_tools.build_mcp` behind its key gate) under
uvicorn on a free loopback port, so that tests drive them with real clients
over real sockets on every backend, the in-memory one included, and read
or seed the same stores directly.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import uvicorn
from starlette.types import ASGIApp

from prefrontal.serving.http.app import create_app
from prefrontal.serving.keys import KeyRing
from prefrontal.serving.mcp_run import MCP_PATH, KeyGate
from prefrontal.serving.mcp_tools import build_mcp
from prefrontal.serving.runner import bind, bound_url
from prefrontal.serving.service import Service
from prefrontal.stores.tenancy import Tenant

HOST = "127.0.0.1"


@asynccontextmanager
async def served(app: ASGIApp) -> AsyncIterator[str]:
    """``app`` under uvicorn on a free port of 127.0.0.1 until the block ends: its base URL."""
    sock = bind(HOST, 0)
    config = uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False)
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as group:
        group.start_soon(server.serve, [sock])
        with anyio.fail_after(30):
            while not server.started:  # noqa: ASYNC110 - uvicorn sets only a flag
                await anyio.sleep(0.01)
        try:
            yield bound_url(sock, HOST)
        finally:
            server.should_exit = True
    sock.close()


@asynccontextmanager
async def http_app_served(service: Service, keys: KeyRing) -> AsyncIterator[str]:
    """The HTTP API over ``service`` with ``keys``: its base URL."""
    async with served(create_app(service, keys)) as base:
        yield base


@asynccontextmanager
async def mcp_served(service: Service, tenant: Tenant, keys: KeyRing) -> AsyncIterator[str]:
    """The MCP server for ``tenant`` over streamable HTTP with ``keys``: its MCP URL."""
    app = build_mcp(service, tenant).streamable_http_app(streamable_http_path=MCP_PATH, host=HOST)
    async with service.orchestrator, served(KeyGate(app, keys, tenant)) as base:
        yield base + MCP_PATH
