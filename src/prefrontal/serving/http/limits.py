"""A limit on request bodies, enforced before the application reads them.

A body announced larger than the limit (``Content-Length``) is refused at
once; a body sent without a length (chunked) is read up to the limit and
refused as soon as it goes over, so a client can never make the server hold
more than ``max_bytes`` of one request.
"""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from prefrontal.serving.http.problems import PROBLEM_JSON, TITLES

DEFAULT_MAX_BODY_BYTES = 1_048_576


BODYLESS = frozenset({"GET", "HEAD", "DELETE", "OPTIONS"})
"""Methods whose routes read no body: a body sent with them is never read, so never refused."""


class BodyLimit:
    """ASGI middleware: refuse request bodies over ``max_bytes`` with a 413 problem.

    Requests of the :data:`BODYLESS` methods pass untouched: no route of
    theirs reads a body, so none answers 413.
    """

    def __init__(self, app: ASGIApp, max_bytes: int = DEFAULT_MAX_BODY_BYTES) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in BODYLESS:
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.max_bytes:
            await self._refuse(send)
            return
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                await self.app(scope, _replay([message]), send)
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await self._refuse(send)
                return
            chunks.append(chunk)
            more = bool(message.get("more_body", False))
        body = b"".join(chunks)
        await self.app(scope, _replay([{"type": "http.request", "body": body}], receive), send)

    async def _refuse(self, send: Send) -> None:
        body = json.dumps(
            {
                "type": "about:blank",
                "title": TITLES[413],
                "status": 413,
                "detail": f"The request body is larger than the limit of {self.max_bytes} bytes.",
            }
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", PROBLEM_JSON.encode()),
                    (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def _replay(messages: list[Message], then: Receive | None = None) -> Receive:
    """A ``receive`` that yields ``messages`` first, then defers to ``then`` (disconnects)."""
    pending = list(messages)

    async def receive() -> Message:
        if pending:
            return pending.pop(0)
        if then is not None:
            return await then()
        return {"type": "http.disconnect"}

    return receive
