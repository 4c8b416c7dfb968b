"""Each route of the HTTP API declares its response body and only the statuses it can answer.

The OpenAPI document is the application's own; the reference page is what
the docs hook renders from it (``<!-- prefrontal:openapi -->``).
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

import httpx
import pytest
from docs.hooks.reference import _openapi_markdown

from prefrontal.serving.http import create_app
from prefrontal.serving.http.limits import DEFAULT_MAX_BODY_BYTES
from prefrontal.serving.keys import KeyRing
from prefrontal.serving.service import Service
from prefrontal.stores.set import Stores

pytestmark = pytest.mark.anyio
METHODS = ("get", "post", "put", "patch", "delete", "head")


@cache
def _document() -> dict[str, Any]:
    app = create_app(Service.build(Stores.in_memory()), KeyRing(()))
    document: dict[str, Any] = app.openapi()
    return document


def _operations() -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method, path, operations[method])
        for path, operations in _document()["paths"].items()
        for method in METHODS
        if method in operations
    ]


OPERATIONS = _operations()
IDS = [f"{method.upper()} {path}" for method, path, _ in OPERATIONS]


@pytest.mark.parametrize(("method", "path", "operation"), OPERATIONS, ids=IDS)
def test_every_success_has_a_model_and_a_real_description(
    method: str, path: str, operation: dict[str, Any]
) -> None:
    """Every 2xx names its body's schema (HEAD excepted) and says more than "Successful Response"."""
    successes = {s: r for s, r in operation["responses"].items() if s.startswith("2")}
    assert len(successes) == 1
    for response in successes.values():
        assert response["description"] != "Successful Response"
        if method != "head":
            assert response["content"]["application/json"]["schema"]


@pytest.mark.parametrize(("method", "path", "operation"), OPERATIONS, ids=IDS)
def test_no_route_lists_a_status_it_cannot_answer(
    method: str, path: str, operation: dict[str, Any]
) -> None:
    """Bodies' statuses only with a body, 404 only naming a resource, /v1 problems only on /v1."""
    statuses = {int(status) for status in operation["responses"]}
    has_body = "requestBody" in operation
    names_one = "{" in path
    assert (400 in statuses) == has_body
    assert (413 in statuses) == has_body
    if method in ("get", "head", "delete"):
        assert not has_body
        assert not statuses & {400, 409, 413}
    if 404 in statuses:
        assert names_one
    if path.startswith("/v1/"):
        assert {401, 403, 422, 500, 503} <= statuses
    else:
        assert statuses <= {200, 503}
    if 409 in statuses:
        assert method in ("post", "put", "patch")


def test_only_versioned_changes_and_ended_turns_list_409() -> None:
    """409 is on the routes whose changes are versioned and on ending a turn, on no other."""
    conflicting = {
        f"{method.upper()} {path}"
        for method, path, operation in OPERATIONS
        if "409" in operation["responses"]
    }
    assert conflicting == {
        "PUT /v1/agents/{agent_id}/profile",
        "PATCH /v1/agents/{agent_id}/profile",
        "POST /v1/goals",
        "PATCH /v1/goals/{item_id}",
        "POST /v1/goals/{item_id}/complete",
        "POST /v1/goals/{item_id}/abandon",
        "POST /v1/scratch",
        "POST /v1/scratch/{item_id}/resolve",
        "POST /v1/turns/{turn_id}/end",
    }


def test_path_parameters_say_what_they_name() -> None:
    """``agent_id`` is the key's agent, an ``item_id`` the item's id or handle: no shared wording."""
    described: dict[tuple[str, str], str] = {}
    for _, path, operation in OPERATIONS:
        for parameter in operation.get("parameters", []):
            if parameter["in"] == "path":
                described[(path, parameter["name"])] = parameter["description"]
    assert "agent" in described[("/v1/agents/{agent_id}/profile", "agent_id")]
    assert "handle" in described[("/v1/goals/{item_id}", "item_id")]
    assert "scratch" in described[("/v1/scratch/{item_id}/resolve", "item_id")]
    assert "An agent or item id." not in described.values()


async def test_a_get_with_an_oversized_body_is_not_refused_as_too_large() -> None:
    """A GET carrying a body over the limit is answered as a GET (the body is never read), not 413."""
    app = create_app(Service.build(Stores.in_memory()), KeyRing(()))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        answer = await client.request(
            "GET", "/healthz", content=b"x" * (DEFAULT_MAX_BODY_BYTES + 1)
        )
        posted = await client.post("/v1/turns", content=b"x" * (DEFAULT_MAX_BODY_BYTES + 1))
    assert answer.status_code == 200
    assert posted.status_code == 413


def test_the_reference_shows_the_turn_response_fields() -> None:
    """The rendered HTTP reference lists ``POST /v1/turns``'s response fields and no stock text."""
    markdown = _openapi_markdown()
    section = markdown.split("## `POST /v1/turns`", 1)[1].split("\n## ", 1)[0]
    assert "Response 200: `TurnOut`" in section
    for field in ("ready_for_router", "fragments", "text", "item_ids"):
        assert re.search(rf"^\| `{field}` \|", section, re.MULTILINE), field
    assert "Successful Response" not in markdown
    assert "An agent or item id" not in markdown
    trace = markdown.split("## `GET /v1/turns/{turn_id}/trace`", 1)[1].split("\n## ", 1)[0]
    assert "| 413 |" not in trace
    assert "| 400 |" not in trace
