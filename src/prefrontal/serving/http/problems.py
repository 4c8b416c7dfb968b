"""Errors as RFC 9457 problem details (``application/problem+json``).

Every error the HTTP API returns has the same shape: ``type``, ``title``,
``status``, ``detail`` (a sentence for a person) and, for a request that
failed validation, ``errors``: one entry per wrong field with its location
and what is wrong. The rejected values are never echoed back, and an
unexpected failure says only that it happened: stack traces, SQL and other
tenants' ids stay in the server's log.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import structlog
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse
from starlette.routing import Match

from prefrontal.errors import (
    BudgetBelowFloorError,
    ErasedTenantError,
    ItemRejectedError,
    NotFoundError,
    OverloadedError,
    StoreError,
    TurnConflictError,
)
from prefrontal.serving.echo import bounded
from prefrontal.serving.field_errors import explained
from prefrontal.serving.readiness import StoresUnavailableError

PROBLEM_JSON = "application/problem+json"
_log = structlog.get_logger("prefrontal.serving")
STORE_RETRY_AFTER_S = 1.0
"""The ``Retry-After`` of a 503 for a failed store call."""

TITLES = {
    400: "Bad request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
    410: "Gone",
    413: "Request body too large",
    415: "Unsupported media type",
    422: "Invalid request",
    500: "Internal server error",
    503: "Service unavailable",
}

GENERIC = {404: "There is no such resource.", 405: "The resource does not allow this method."}
"""The routing errors' details (the framework's own are a bare title)."""


def problem(
    status: int,
    detail: str,
    *,
    errors: Sequence[Mapping[str, Any]] = (),
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    """A problem-details response with ``status`` and a sentence saying what went wrong."""
    body: dict[str, Any] = {
        "type": "about:blank",
        "title": TITLES.get(status, "Error"),
        "status": status,
        "detail": bounded(detail),
    }
    if errors:
        body["errors"] = list(errors)
    return JSONResponse(body, status_code=status, media_type=PROBLEM_JSON, headers=headers)


def sentence(message: str) -> str:
    """``message`` as a sentence: a capital first letter and a full stop."""
    text = message.strip() or "Error"
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


def field_errors(error: RequestValidationError) -> tuple[str, list[dict[str, str]]]:
    """A summary sentence and one entry per wrong field, without the rejected values."""
    entries = []
    malformed = False
    for entry in error.errors():
        kind = str(entry.get("type", ""))
        malformed = malformed or kind in {"json_invalid", "model_attributes_type"}
        location = ".".join(str(part) for part in entry.get("loc", ()))
        entries.append({"location": location, "message": explained(entry), "type": kind})
    if malformed:
        return "The request body is not valid JSON of the expected shape.", entries
    where = ", ".join(e["location"] for e in entries[:5])
    return f"The request has invalid or missing fields: {where}.", entries


def invalid_request(request: Request, error: RequestValidationError) -> JSONResponse:
    """400 for a body that is not JSON of the expected shape (naming its content type), else 422."""
    detail, entries = field_errors(error)
    malformed = detail.startswith("The request body is not valid JSON")
    sent_as = request.headers.get("content-type", "")
    if malformed and "json" not in sent_as.lower():
        detail = not_json_detail(sent_as)
    return problem(400 if malformed else 422, detail, errors=entries)


def not_json_detail(content_type: str) -> str:
    """Why a body sent without a JSON content type was not read (FastAPI reads only JSON)."""
    sent = f"it was sent as {content_type!r}" if content_type else "it was sent with none"
    return f"The request body must be sent with 'Content-Type: application/json'; {sent}."


def allowed_methods(request: Request) -> list[str]:
    """Every method some route of the application serves at the request's path.

    The router answers 405 for the first route whose path matches, and names
    only that route's methods; a path served by several routes (``PATCH`` and
    ``DELETE`` of one memory) allows all of theirs. A path a route names
    literally (``/v1/memories/search``) is that route's alone: the routes it
    also fits by a parameter are not counted.
    """
    scope = dict(request.scope) | {"type": "http"}
    matching = [
        route
        for route in request.app.router.routes
        if getattr(route, "methods", None) and route.matches(scope)[0] is not Match.NONE
    ]
    literal = [route for route in matching if "{" not in getattr(route, "path", "{")]
    return sorted({method for route in literal or matching for method in route.methods})


async def below_floor(request: Request, error: Exception) -> JSONResponse:
    """422 for a ``token_budget`` below the agent's floor, naming the floor."""
    assert isinstance(error, BudgetBelowFloorError)
    entry = {
        "location": "body.token_budget",
        "message": f"Input should be at least {error.floor} for this agent (its floor)",
        "type": "below_floor",
    }
    return problem(422, sentence(str(error)), errors=[entry])


SAID_AS_IS: dict[type[Exception], int] = {
    NotFoundError: 404,
    TurnConflictError: 409,
    ErasedTenantError: 410,
    ItemRejectedError: 422,
}
"""Errors answered with their own message, by status (an erased user's writes: 410 Gone)."""


def _as_is(status: int) -> Callable[[Request, Exception], Awaitable[JSONResponse]]:
    """A handler answering ``status`` with the error's own message as the detail."""

    async def handler(request: Request, error: Exception) -> JSONResponse:
        return problem(status, sentence(str(error)))

    return handler


def install(app: FastAPI) -> None:
    """Make every error ``app`` raises a problem-details response."""

    async def on_validation(request: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, RequestValidationError)
        return invalid_request(request, error)

    async def on_http(request: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, HTTPException)
        generic = {
            404: "There is no such resource.",
            405: "The resource does not allow this method.",
        }
        detail = generic.get(error.status_code, error.detail)
        text = detail if isinstance(detail, str) else TITLES.get(error.status_code, "Error")
        headers = error.headers
        if error.status_code == 405:
            headers = {"Allow": ", ".join(allowed_methods(request))}
        return problem(error.status_code, sentence(text), headers=headers)

    async def on_store(request: Request, error: Exception) -> JSONResponse:
        wait = getattr(error, "retry_after_s", STORE_RETRY_AFTER_S)
        if isinstance(error, StoresUnavailableError):
            _log.warning("stores_unavailable", path=request.url.path, error=str(error))
        else:
            _log.error("store_error", path=request.url.path, error=repr(error))
        return problem(
            503,
            "The memory store is unavailable; try again shortly.",
            headers={"Retry-After": str(max(1, round(wait)))},
        )

    async def on_overloaded(request: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, OverloadedError)
        retry_after = str(max(1, round(error.retry_after_s)))
        return problem(
            503,
            "The server is running as many turns as it admits; try again shortly.",
            headers={"Retry-After": retry_after},
        )

    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(HTTPException, on_http)
    for error_type, status in SAID_AS_IS.items():
        app.add_exception_handler(error_type, _as_is(status))
    app.add_exception_handler(BudgetBelowFloorError, below_floor)
    app.add_exception_handler(StoreError, on_store)
    app.add_exception_handler(OverloadedError, on_overloaded)
