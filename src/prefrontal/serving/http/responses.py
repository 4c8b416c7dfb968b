"""The statuses each route of the HTTP API can answer with, for the OpenAPI document.

Every ``/v1/`` route may refuse the caller (401, 403), refuse a request
(400 malformed JSON, 413 too large, 422 invalid fields), be unable to serve
it (503: a store is unavailable, or the server runs as many turns as it
admits) or fail (500); routes that name a resource may not find it (404).
The health routes answer 200, and ``/readyz`` 503 while the stores do not.
"""

from __future__ import annotations

from typing import Any

from prefrontal.serving.http.problems import PROBLEM_JSON


def _problems(*pairs: tuple[int, str]) -> dict[int | str, dict[str, Any]]:
    problem_schema = {"$ref": "#/components/schemas/Problem"}
    return {
        status: {"description": description, "content": {PROBLEM_JSON: {"schema": problem_schema}}}
        for status, description in pairs
    }


CALLER = _problems(
    (401, "No API key, or an unknown one"),
    (403, "The key may not act for this agent or user"),
    (500, "The server failed; the failure is logged"),
    (503, "A store is unavailable, or the server is at its limit of turns (see Retry-After)"),
)
"""What any ``/v1/`` route may answer besides success."""

WITH_BODY = CALLER | _problems(
    (400, "The body is not JSON of the expected shape"),
    (413, "The body is over the size limit"),
    (422, "Invalid or missing fields"),
)
"""What a ``/v1/`` route with a JSON body may answer besides success."""

WITH_QUERY = CALLER | _problems((422, "Invalid or missing parameters"))
"""What a ``/v1/`` route with path or query parameters only may answer besides success."""

NOT_FOUND = _problems((404, "Nothing of this user by that id"))
"""What a route naming a turn or a memory may answer when the user has none by that id."""

NOT_READY = _problems((503, "The stores are not reachable"))
"""``/readyz`` while the stores do not answer."""

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
