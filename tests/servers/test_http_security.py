"""The HTTP API refuses what it must, with the right status and a clear message, and leaks nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator

import anyio
import httpx
import pytest

from prefrontal.demo import DEMO_AGENT, DEMO_USER, SAMPLE_INPUT
from prefrontal.serving.keys import hash_key
from tests.servers.conftest import seeded
from tests.servers.harness import (
    AGENT_KEY,
    MAYA_ONLY_KEY,
    OTHER_AGENT_KEY,
    http_server,
)

PROBLEM = "application/problem+json"
TURN = {"user_id": DEMO_USER, "session_id": "s-sec", "user_input": SAMPLE_INPUT}
SECRETS = (AGENT_KEY, hash_key(AGENT_KEY), OTHER_AGENT_KEY, "Traceback", "sqlite", "SELECT")


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One HTTP server on a seeded SQLite file for every test of the module."""
    db = tmp_path_factory.mktemp("security") / "server.db"
    anyio.run(seeded, db)
    with http_server(db) as (base, _):
        yield base


@pytest.fixture
def client(server: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server, timeout=30) as client:
        yield client


@pytest.fixture
def maya_turn(client: httpx.Client) -> str:
    """A turn of the demo agent's user maya, started with the agent's key."""
    response = client.post("/v1/turns", json=TURN, headers=bearer(AGENT_KEY))
    assert response.status_code == 200
    turn_id: str = response.json()["turn_id"]
    return turn_id


def problem_of(response: httpx.Response, status: int) -> dict[str, object]:
    """The problem details of ``response``, checked for status, media type and leaks."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == PROBLEM
    body: dict[str, object] = response.json()
    assert body["status"] == status
    assert isinstance(body["detail"], str) and body["detail"].endswith(".")
    for secret in SECRETS:
        assert secret not in response.text
    return body


def test_no_key_is_401_with_a_bearer_challenge(client: httpx.Client) -> None:
    """A call without a key is refused with 401, a Bearer challenge and how to send the key."""
    response = client.post("/v1/turns", json=TURN)
    body = problem_of(response, 401)
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert body["detail"] == "An API key is required: send it as 'Authorization: Bearer <key>'."


def test_a_wrong_key_is_401(client: httpx.Client) -> None:
    """An unknown key is refused with 401, and the message does not echo it."""
    response = client.post("/v1/turns", json=TURN, headers=bearer("pf_not_a_key"))
    assert problem_of(response, 401)["detail"] == "The API key is not valid."
    assert "pf_not_a_key" not in response.text


def test_a_key_for_another_agent_cannot_name_this_agent(client: httpx.Client) -> None:
    """Another agent's key naming this agent is refused with 403."""
    body = TURN | {"agent_id": DEMO_AGENT}
    response = client.post("/v1/turns", json=body, headers=bearer(OTHER_AGENT_KEY))
    assert problem_of(response, 403)["detail"] == "This API key may not act for agent 'atlas'."


def test_a_key_for_another_agent_sees_none_of_this_agents_data(
    client: httpx.Client, maya_turn: str
) -> None:
    """Another agent's key runs turns on its own (empty) agent and cannot read this agent's turns."""
    own = client.post("/v1/turns", json=TURN, headers=bearer(OTHER_AGENT_KEY))
    assert own.status_code == 200
    assert own.json()["agent_id"] == "orion"
    assert "Atlas" not in own.json()["text"]
    assert "Lisbon" not in own.json()["text"]
    trace = client.get(
        f"/v1/turns/{maya_turn}/trace",
        params={"user_id": DEMO_USER},
        headers=bearer(OTHER_AGENT_KEY),
    )
    assert problem_of(trace, 404)["detail"] == f"No turn {maya_turn!r} for this user."


def test_a_key_used_for_a_user_it_may_not_act_for_is_403(client: httpx.Client) -> None:
    """A key bound to maya used for sam is refused with 403 on every resource."""
    headers = bearer(MAYA_ONLY_KEY)
    responses = [
        client.post("/v1/turns", json=TURN | {"user_id": "sam"}, headers=headers),
        client.post("/v1/memories", json={"user_id": "sam", "content": "x"}, headers=headers),
        client.post(
            "/v1/memories/search", json={"user_id": "sam", "query": "launch"}, headers=headers
        ),
        client.get("/v1/turns/t1/trace", params={"user_id": "sam"}, headers=headers),
        client.delete("/v1/memories/m1", params={"user_id": "sam"}, headers=headers),
        client.delete("/v1/users/sam", headers=headers),
    ]
    for response in responses:
        assert problem_of(response, 403)["detail"] == "This API key may not act for user 'sam'."


def test_another_users_turn_is_not_found(client: httpx.Client, maya_turn: str) -> None:
    """A key allowed for sam asking for maya's turn as sam gets 404, as for a turn that never was."""
    response = client.get(
        f"/v1/turns/{maya_turn}/trace", params={"user_id": "sam"}, headers=bearer(AGENT_KEY)
    )
    problem_of(response, 404)
    assert "Atlas" not in response.text


def test_an_oversized_body_is_413(client: httpx.Client) -> None:
    """A body over the limit is refused with 413, whether its length is announced or not."""
    big = json.dumps(TURN | {"user_input": "x" * 1_100_000})
    announced = client.post(
        "/v1/turns",
        content=big,
        headers=bearer(AGENT_KEY) | {"content-type": "application/json"},
    )
    body = problem_of(announced, 413)
    assert body["detail"] == "The request body is larger than the limit of 1048576 bytes."

    def chunks() -> Iterator[bytes]:
        for start in range(0, len(big), 65_536):
            yield big[start : start + 65_536].encode()

    streamed = client.post(
        "/v1/turns",
        content=chunks(),
        headers=bearer(AGENT_KEY) | {"content-type": "application/json"},
    )
    problem_of(streamed, 413)


def test_malformed_json_is_400(client: httpx.Client) -> None:
    """A body that is not JSON is refused with 400 and says so."""
    response = client.post(
        "/v1/turns",
        content=b'{"user_id": "maya", "session_id": ',
        headers=bearer(AGENT_KEY) | {"content-type": "application/json"},
    )
    body = problem_of(response, 400)
    assert body["detail"] == "The request body is not valid JSON of the expected shape."


def test_invalid_fields_are_422_naming_each_field_without_echoing_values(
    client: httpx.Client,
) -> None:
    """Wrong and unknown fields are refused with 422, each named, the values not echoed."""
    body = TURN | {"token_budget": 10, "colour": "secret-value-123"}
    response = client.post("/v1/turns", json=body, headers=bearer(AGENT_KEY))
    problem = problem_of(response, 422)
    locations = {e["location"] for e in problem["errors"]}  # type: ignore[attr-defined]
    assert locations == {"body.token_budget", "body.colour"}
    assert "secret-value-123" not in response.text


def test_unknown_resources_are_problems_too(client: httpx.Client) -> None:
    """An unknown path is a 404 problem; a wrong method a 405 problem."""
    problem_of(client.get("/v1/nothing-here", headers=bearer(AGENT_KEY)), 404)
    problem_of(client.get("/v1/turns", headers=bearer(AGENT_KEY)), 405)
