"""Running an ASGI server (the HTTP API, MCP over HTTP) on uvicorn, with a graceful shutdown.

On SIGTERM or SIGINT uvicorn stops accepting connections, lets the requests
in flight finish (turns included) for up to ``graceful_s`` seconds, then runs
the application's shutdown, which closes the stores.
"""

from __future__ import annotations

import uvicorn
from starlette.types import ASGIApp

DEFAULT_GRACEFUL_S = 30.0


async def serve(
    app: ASGIApp,
    *,
    host: str,
    port: int,
    graceful_s: float = DEFAULT_GRACEFUL_S,
    access_log: bool = False,
) -> None:
    """Serve ``app`` on ``host:port`` until a signal asks the server to stop."""
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        access_log=access_log,
        timeout_graceful_shutdown=int(graceful_s),
        lifespan="on",
        server_header=False,
        proxy_headers=False,
    )
    await uvicorn.Server(config).serve()
