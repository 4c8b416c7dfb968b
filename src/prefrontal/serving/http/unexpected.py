"""An unexpected failure of a request: one concise log line and a 500, and the connection lives.

Starlette's outermost error handler answers a failure and then re-raises
it, so the ASGI server logs it a second time (with its whole traceback) and
closes the keep-alive connection: the client's next request on it fails.
:class:`CatchUnexpected` sits inside that handler and ends the failure
itself: it logs one line at ``error`` (the exception's type, message and the
place it was raised), the traceback only at ``debug``, and answers 500 with
a problem body when no response has started. Cancellation is never caught.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from prefrontal.serving.failures import log_unexpected
from prefrontal.serving.http.problems import problem


class CatchUnexpected:
    """ASGI middleware: any exception of a request becomes a logged 500 (see the module)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracking)
        except Exception as error:
            log_unexpected(error, method=scope.get("method", ""), path=scope.get("path", ""))
            if not started:
                response = problem(
                    500, "The server failed to handle the request; it has been logged."
                )
                await response(scope, receive, send)
