"""Problem details: one shape for every error, sentences for people, no rejected values echoed."""

from __future__ import annotations

import json

import httpx
import pytest
from fastapi import FastAPI

from prefrontal.errors import OverloadedError
from prefrontal.serving.http.problems import PROBLEM_JSON, install, problem, sentence


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("no turn 't1' for this user", "No turn 't1' for this user."),
        ("Already a sentence.", "Already a sentence."),
        ("", "Error."),
    ],
)
def test_messages_become_sentences(message: str, expected: str) -> None:
    """A message gets a capital first letter and a full stop."""
    assert sentence(message) == expected


def test_a_problem_has_the_rfc_9457_members() -> None:
    """A problem response carries type, title, status and detail as application/problem+json."""
    response = problem(403, "This API key may not act for user 'sam'.")
    assert response.status_code == 403
    assert response.media_type == PROBLEM_JSON
    body = json.loads(bytes(response.body))
    assert body == {
        "type": "about:blank",
        "title": "Forbidden",
        "status": 403,
        "detail": "This API key may not act for user 'sam'.",
    }


@pytest.mark.anyio
async def test_an_overloaded_orchestrator_answers_503_with_retry_after() -> None:
    """OverloadedError becomes a 503 problem with a Retry-After header, not a 500."""
    app = FastAPI()
    install(app)

    @app.get("/turn")
    async def turn() -> None:
        raise OverloadedError("64 turns are in flight", retry_after_s=2.0)

    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        response = await client.get("/turn")
    assert response.status_code == 503
    assert response.headers["retry-after"] == "2"
    assert response.headers["content-type"] == PROBLEM_JSON
    assert "try again shortly" in response.json()["detail"]
