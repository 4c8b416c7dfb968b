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

import traceback

import structlog
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from prefrontal.serving.http.problems import problem

_log = structlog.get_logger("prefrontal.serving")
MAX_MESSAGE_CHARS = 300


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
            log_unexpected(error, scope.get("method", ""), scope.get("path", ""))
            if not started:
                response = problem(
                    500, "The server failed to handle the request; it has been logged."
                )
                await response(scope, receive, send)


def log_unexpected(error: BaseException, method: str, path: str) -> None:
    """Log ``error`` once: a line at ``error``, its traceback at ``debug``."""
    frames = traceback.extract_tb(error.__traceback__)
    where = f"{frames[-1].filename}:{frames[-1].lineno}" if frames else "unknown"
    message = " ".join(str(error).split())[:MAX_MESSAGE_CHARS]
    _log.error(
        "unexpected_error",
        method=method,
        path=path,
        error=f"{type(error).__name__}: {message}",
        raised_at=where,
    )
    _log.debug(
        "unexpected_error_traceback",
        traceback="".join(traceback.format_exception(error)),
    )
