"""Problem details: one shape for every error, sentences for people, no rejected values echoed."""

from __future__ import annotations

import json

import pytest

from prefrontal.serving.http.problems import PROBLEM_JSON, problem, sentence


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
