"""The statuses each route of the HTTP API can answer with, for the OpenAPI document.

Each route declares its own: its success with a description (the body's
model comes from the route's return type) and only the problems it can
answer. Every ``/v1/`` route may refuse the caller (401, 403), be unable to
serve (503: a store is unavailable; for the turn routes also the server at
its limit of turns) or fail (500); a route with a JSON body may refuse it
(400 not JSON, 413 too large, 422 invalid fields), one with parameters only
refuse them (422); a route that names a resource may not find it (404); a
versioned change may conflict (409). The health routes answer 200, and
``/readyz`` 503 while the stores do not answer.
"""

from __future__ import annotations

from typing import Any

from prefrontal.serving.http.problems import PROBLEM_JSON

Responses = dict[int | str, dict[str, Any]]
"""The ``responses=`` of one route: status to OpenAPI response object."""


def problem_answer(status: int, description: str) -> Responses:
    """``status`` with ``description`` and a problem-details body."""
    problem_schema = {"$ref": "#/components/schemas/Problem"}
    return {
        status: {"description": description, "content": {PROBLEM_JSON: {"schema": problem_schema}}}
    }


def answers(status: int, description: str, *problems: Responses) -> Responses:
    """One route's responses: its success ``status`` described, then each problem it may answer.

    The success keeps the response model FastAPI derives from the route's
    return type; only its description is set here.
    """
    out: Responses = {status: {"description": description}}
    for one in problems:
        out |= one
    return out


UNAUTHORIZED = problem_answer(401, "No API key, or an unknown one")
FORBIDDEN = problem_answer(403, "The key may not act for this agent or user, or lacks the right")
FAILED = problem_answer(500, "The server failed; the failure is logged")
STORE_DOWN = problem_answer(503, "A store is unavailable (see Retry-After)")
CALLER = UNAUTHORIZED | FORBIDDEN | FAILED | STORE_DOWN
"""What every ``/v1/`` route may answer besides success."""

AT_LIMIT = problem_answer(
    503, "A store is unavailable, or the server runs as many turns as it admits (see Retry-After)"
)
"""503 of the routes that run a turn's phases, which the server admits a limited number of."""

NOT_JSON = problem_answer(400, "The body is not JSON of the expected shape")
TOO_LARGE = problem_answer(413, "The body is over the size limit")
INVALID_BODY = problem_answer(422, "Invalid or missing fields (each named in `errors`)")
WITH_BODY = NOT_JSON | TOO_LARGE | INVALID_BODY
"""What a route with a JSON body may answer when the body is wrong."""

INVALID_PARAMS = problem_answer(422, "Invalid or missing parameters (each named in `errors`)")
"""What a route with path or query parameters only may answer when they are wrong."""

CONFLICT = problem_answer(
    409, "Changed since the version read (`expected_version`), or exists already"
)
"""A versioned change refused: the caller did not read the version it changes."""


def not_found(description: str) -> Responses:
    """404, described for what the route names (a turn, a memory, a goal...)."""
    return problem_answer(404, description)


NOT_READY = problem_answer(503, "The stores are not reachable, or no agent can be ready")
"""``/readyz`` while the stores do not answer, or while no agent a key acts for can be ready."""

PROBLEM_SCHEMA: dict[str, Any] = {
    "title": "Problem",
    "type": "object",
    "description": "An error, as RFC 9457 problem details.",
    "required": ["type", "title", "status", "detail"],
    "properties": {
        "type": {"type": "string"},
        "title": {"type": "string"},
        "status": {"type": "integer"},
        "detail": {"type": "string"},
        "errors": {
            "type": "array",
            "description": "One entry per wrong field: where it is and what is wrong.",
            "items": {
                "type": "object",
                "properties": {
                    "location": {"type": "string"},
                    "message": {"type": "string"},
                    "type": {"type": "string"},
                },
            },
        },
    },
}
"""The schema of every error body."""
