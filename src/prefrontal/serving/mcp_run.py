"""Running the MCP server: over stdio, or over streamable HTTP behind an API key.

Over HTTP, when keys are configured every request needs one whose grant
covers the server's agent and user (401 without a valid key, 403 for a key
of another agent or user), and each tool checks the grant's rights
(:mod:`prefrontal.serving.mcp_rights`); without keys the server only listens on the
loopback address. The orchestrator is entered while the server runs, and
its stores closed when it stops.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from starlette.types import ASGIApp, Receive, Scope, Send

from prefrontal.errors import ConfigurationError
from prefrontal.serving.keys import KeyRing
from prefrontal.serving.mcp_rights import GRANT
from prefrontal.serving.mcp_tools import build_mcp
from prefrontal.serving.runner import bind, serve
from prefrontal.serving.service import Service
from prefrontal.stores.tenancy import Tenant

LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
MCP_PATH = "/mcp"


class KeyGate:
    """ASGI middleware: only requests with a key that may act for ``tenant`` pass."""

    def __init__(self, app: ASGIApp, keys: KeyRing, tenant: Tenant) -> None:
        self.app = app
        self.keys = keys
        self.tenant = tenant

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        key = _bearer(scope)
        grant = self.keys.authenticate(key) if key else None
        if grant is None:
            detail = "The API key is not valid." if key else "An API key is required."
            await _problem(send, 401, "Unauthorized", detail)
            return
        if not grant.may_act_for(self.tenant.agent_id, self.tenant.user_id):
            await _problem(send, 403, "Forbidden", "This API key may not act for this server.")
            return
        scope[GRANT] = grant
        await self.app(scope, receive, send)


async def run_stdio(service: Service, tenant: Tenant) -> None:
    """Serve the tools over stdin/stdout until the client closes them."""
    async with service.orchestrator:
        await build_mcp(service, tenant).run_stdio_async()


async def run_http(
    service: Service,
    tenant: Tenant,
    *,
    host: str,
    port: int,
    keys: KeyRing,
    on_ready: Callable[[str], object] | None = None,
) -> None:
    """Serve the tools over streamable HTTP at ``http://host:port/mcp``.

    The port is bound before the stores are opened (ConfigurationError when
    it cannot be); ``on_ready`` is called with the bound URL once the server
    accepts connections.
    """
    if not len(keys) and host not in LOOPBACK:
        raise ConfigurationError(
            f"refusing to serve MCP on {host} without API keys: configure keys "
            "(--keys-file or PREFRONTAL_API_KEYS) or listen on 127.0.0.1"
        )
    app: ASGIApp = build_mcp(service, tenant).streamable_http_app(
        streamable_http_path=MCP_PATH, host=host
    )
    if len(keys):
        app = KeyGate(app, keys, tenant)
    sock = bind(host, port)
    async with service.orchestrator:
        await service.check_ready()
        await serve(app, host=host, port=port, sock=sock, on_ready=on_ready)


def _bearer(scope: Scope) -> str | None:
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            scheme, _, key = value.decode("latin-1").partition(" ")
            return key.strip() or None if scheme.lower() == "bearer" else None
    return None


async def _problem(send: Send, status: int, title: str, detail: str) -> None:
    body = json.dumps({"type": "about:blank", "title": title, "status": status, "detail": detail})
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/problem+json"),
                (b"www-authenticate", b'Bearer realm="prefrontal"'),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body.encode()})
