"""Running an ASGI server (the HTTP API, MCP over HTTP) on uvicorn, with a graceful shutdown.

:func:`bind` opens the listening socket first, so that a port in use is one
line (:class:`~prefrontal.errors.ConfigurationError`) rather than a
traceback, and so that the address printed is the one bound (``--port 0``
shows the port the system chose). With ``reuse_port`` several processes
listen on one port and the kernel spreads connections among them
(``serve http --workers N``).

On SIGTERM or SIGINT uvicorn stops accepting connections, lets the requests
in flight finish (turns included) for up to ``graceful_s`` seconds, then runs
the application's shutdown, which closes the stores.
"""

from __future__ import annotations

import socket
from collections.abc import Callable

import anyio
import uvicorn
from starlette.types import ASGIApp

from prefrontal.errors import ConfigurationError

DEFAULT_GRACEFUL_S = 30.0
READY_POLL_S = 0.02


def bind(host: str, port: int, *, reuse_port: bool = False) -> socket.socket:
    """A TCP socket bound to ``host:port``, not yet listening (else ConfigurationError)."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        family, kind, proto, _, address = found[0]
    except socket.gaierror as error:
        raise ConfigurationError(f"--host {host}: {error.strerror}") from None
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuse_port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        sock.bind(address)
    except OSError as error:
        sock.close()
        reason = "the address is in use" if error.errno == 98 else error.strerror
        raise ConfigurationError(f"cannot listen on {host}:{port}: {reason}") from None
    sock.set_inheritable(True)
    return sock


def bound_url(sock: socket.socket, host: str) -> str:
    """``http://host:port`` of ``sock``, with the port it is really bound to."""
    port = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


async def serve(
    app: ASGIApp,
    *,
    host: str,
    port: int,
    graceful_s: float = DEFAULT_GRACEFUL_S,
    access_log: bool = False,
    sock: socket.socket | None = None,
    on_ready: Callable[[str], object] | None = None,
) -> None:
    """Serve ``app`` on ``sock`` (else ``host:port``) until a signal asks the server to stop.

    ``on_ready`` is called with the bound URL once the server accepts
    connections (its start-up, the stores' included, has finished).
    """
    listening = sock if sock is not None else bind(host, port)
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
    server = uvicorn.Server(config)
    ended = anyio.Event()

    async def run() -> None:
        try:
            await server.serve(sockets=[listening])
        finally:
            ended.set()

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        if await _started(server, ended) and on_ready is not None:
            on_ready(bound_url(listening, host))


async def _started(server: uvicorn.Server, ended: anyio.Event) -> bool:
    """Whether ``server`` came to accept connections (False: it ended before it did)."""
    while not ended.is_set():
        if server.started:
            return True
        await anyio.sleep(READY_POLL_S)
    return False
